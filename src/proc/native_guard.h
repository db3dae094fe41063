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

#include <stdbool.h>
#include <stddef.h>
#include <libelf.h>

/* What the declared sizes of a file's compressed sections may add up to. */
#define NATIVE_GUARD_MAX_EXPANDED (256ULL << 20)
/* What its .gnu_debugdata may decompress to (a mini symbol table: real ones are a few MB). */
#define NATIVE_GUARD_MAX_DEBUGDATA (32ULL << 20)
/* What a file libdw wants whole (*whole below) may weigh. */
#define NATIVE_GUARD_MAX_WHOLE (64ULL << 20)
/* And the sections looked at. */
#define NATIVE_GUARD_MAX_SECTIONS 65536

/*
 * 0 if the ELF file behind fd (read through its own offset-free reads) is
 * within the bounds above; else -ENOEXEC (not ELF, damaged headers) or
 * -EFBIG, with why (a sentence) saying what.
 *
 * *whole is set when libdw will ask libelf for the whole file: libdw 0.188
 * finds a file's CFI by its section named .eh_frame; without one it goes by
 * PT_GNU_EH_FRAME and takes the whole file (elf_rawfile). An Elf reading
 * with pread then no longer frees the sections it had read before (tried:
 * the name table, on every report of such a file). So such a file is to be
 * read whole first, before any section; past NATIVE_GUARD_MAX_WHOLE it is
 * -EFBIG.
 */
int native_guard__check(int fd, bool *whole, char *why, size_t whylen);

/*
 * The .gnu_debugdata of a checked file, decompressed (malloc'd, *len bytes),
 * or NULL: none, damaged, or past NATIVE_GUARD_MAX_DEBUGDATA.
 */
void *native_guard__debugdata(Elf *elf, size_t *len);

#endif
