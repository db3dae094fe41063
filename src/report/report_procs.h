/* SPDX-License-Identifier: GPL-2.0-only */
/* The process table that opens the text report, and which processes get a section. */
#ifndef PYBPFPROF_REPORT_PROCS_H
#define PYBPFPROF_REPORT_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

/* Rows of the process table at most; the rest are counted on one line. */
#define REPORT_PROCS_SHOWN 16

/*
 * The indices of p's sections, busiest first (equal counts in their order),
 * malloc'ed; NULL on ENOMEM.
 */
size_t *report_procs_order(const struct profile *p);
/*
 * Whether pp gets a section of its own in the text report: the only one,
 * or one with samples and at least o->min_share % of them (every one at 0).
 */
bool report_proc_shown(const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o);
/* The table (order: report_procs_order's), and what it leaves out; nothing merged or alone. */
void report_text_procs(FILE *f, const struct profile *p, const size_t *order,
		       const struct report_opts *o);

#endif
