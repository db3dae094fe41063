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
