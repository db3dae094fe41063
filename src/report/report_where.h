/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Python / native / system split of a process (profile_where.c) in the
 * text and JSON reports; written only when some sample's place is known.
 */
#ifndef PYBPFPROF_REPORT_WHERE_H
#define PYBPFPROF_REPORT_WHERE_H

#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

/* The text section: the process's shares, then per function and per line. */
void report_where_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o);
/* `, "where": {"python": N, "native": N, "system": N}`; nothing when split is NULL. */
void report_where_json(FILE *f, const uint64_t *split);

#endif
