/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What libdw may be given of a target's file (native_unwind.c). libdw
 * expands a file's compressed parts without a bound of its own: the
 * SHF_COMPRESSED and .zdebug sections (to their declared sizes, when the
 * module's DWARF is opened for its .debug_frame) and the xz-compressed
 * .gnu_debugdata (to its end, when a pc is named): a few KB of a target's
 * file made the profiler allocate and decompress GBs. So a file is checked
 * first, with libelf reading (never mapping) it.
 */
#ifndef PYBPFPROF_NATIVE_GUARD_H
#define PYBPFPROF_NATIVE_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* What the declared sizes of a file's compressed sections may add up to. */
#define NATIVE_GUARD_MAX_EXPANDED (256ULL << 20)
/* What its .gnu_debugdata may decompress to (a mini symbol table: real ones are a few MB). */
#define NATIVE_GUARD_MAX_DEBUGDATA (32ULL << 20)
/* What the copies of files the target could change (below) may add up to, per report. */
#define NATIVE_GUARD_MAX_COPIED (512ULL << 20)
/* And the sections looked at. */
#define NATIVE_GUARD_MAX_SECTIONS 65536

/*
 * 0 if the ELF file behind fd (read through its own offset-free reads) is
 * within the bounds above; else -ENOEXEC (not ELF, damaged headers) or
 * -EFBIG, with why (a sentence) saying what.
 */
int native_guard__check(int fd, char *why, size_t whylen);

/*
 * libdw maps the file it is given: if the target truncates it afterwards, a
 * read past the new end is a SIGBUS in the profiler (tried: libdw 0.188 dies
 * naming a pc). So a file the target could truncate (not root's, or writable
 * by group or others) is given as a sealed copy in a memfd, which nobody can
 * shrink; root's other files are given as they are (a target running as root
 * could do worse). fd (of st, a regular file) is consumed. Returns the fd to
 * give libdw, or -errno: -EFBIG past *copied's budget (NATIVE_GUARD_MAX_COPIED;
 * *copied counts the bytes copied), else the copy could not be made.
 */
int native_guard__stable_fd(int fd, const struct stat *st, uint64_t *copied);

#endif
