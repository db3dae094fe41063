/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A saved JSON profile (`-o prof.json`) read back into the profile model,
 * for `pybpfprof report` (re-render it in any format) and `pybpfprof diff`.
 * The file is untrusted input: every type, index and size is checked, and a
 * file that fails any check is refused whole.
 */
#ifndef PYBPFPROF_REPORT_LOAD_H
#define PYBPFPROF_REPORT_LOAD_H

#include <stddef.h>
#include "profile/profile.h"
#include "report/report_writer.h" /* REPORT_SCHEMA, the version read back */

/* Largest file read: far beyond a long run's profile, small enough to parse in memory. */
#define REPORT_LOAD_MAX_BYTES (256u << 20)
/*
 * The most a file's parsed values may take (util/json_doc.h: 16 bytes a
 * value, at most 8 times the file's size): a file that would need more is
 * refused before any of it is taken. A real profile's take about 4 times its
 * size, so every file of a real run under the size limit above passes.
 */
#define REPORT_LOAD_MAX_DOC ((size_t)1 << 30)
/*
 * The most report_load_json_buf holds at once for a file of len bytes, its
 * own copy of the file aside: the parsed values (at most 8 bytes per byte,
 * plus the strings and each container's count), then the profile they make
 * beside them (a function, frame, thread or stack with its index entry, at
 * most about 18 bytes per byte of its text), with 64 KiB for the fixed
 * tables and buffers. tests/fuzz/fuzz_load_bound.c holds the loader to it.
 */
#define REPORT_LOAD_PEAK(len) (32 * (size_t)(len) + ((size_t)64 << 10))

/*
 * Reads the profile saved in path into p (not initialised by the caller).
 * 0: p holds it, free it with profile__free. Otherwise -errno (-EINVAL for
 * a file that is not a profile this version reads), p holds nothing, and
 * why has one sentence naming the file and what is wrong with it.
 */
int report_load_json(const char *path, struct profile *p, char *why, size_t whylen);
/* The same from bytes in memory; name stands for the file in messages. */
int report_load_json_buf(const char *buf, size_t len, const char *name, struct profile *p,
			 char *why, size_t whylen);

#endif
