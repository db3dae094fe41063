/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a target process's memory with process_vm_readv, never writing it,
 * and decoding the CPython objects we need (str, bytes) with every length
 * bounded. The decoders are pure and take the bytes already read.
 */
#ifndef PYBPFPROF_REMOTE_MEM_H
#define PYBPFPROF_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct py_layout;

/* Longest str / bytes object read from a target (names, file paths, line tables). */
#define REMOTE_MAX_STR 4096
#define REMOTE_MAX_BYTES (1 << 20)

/* Reads exactly len bytes at addr. 0, or -errno (-EFAULT also for a short read). */
int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Reads a str object as UTF-8 into out (NUL-terminated, truncated to outlen - 1). 0 or -errno. */
int remote_read_str(pid_t pid, const struct py_layout *L, uint64_t addr, char *out, size_t outlen);

/* Reads a bytes object into a malloc'ed buffer of *len bytes (at most max). 0 or -errno. */
int remote_read_bytes(pid_t pid, const struct py_layout *L, uint64_t addr, size_t max,
		      uint8_t **out, size_t *len);

/*
 * Pure: transcodes n code points of the given kind (1 latin-1, 2 UCS-2, 4
 * UCS-4) to UTF-8 into out, NUL-terminated, never splitting a character.
 * U+DC80-U+DCFF, the bytes a str could not decode (a file name in a
 * directory named caf\xe9: os.fsdecode's surrogateescape), become those
 * bytes again, as os.fsencode makes them. Returns the bytes written
 * (without the NUL), or -1 on an invalid code point.
 */
int ucs_to_utf8(const void *data, size_t n, int kind, char *out, size_t outlen);

#endif
