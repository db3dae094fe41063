/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ticks' facts in the text and JSON reports (report_tick.c): exception
 * handling by function, and --opcodes' instructions by line. The source
 * heatmap's per-line instructions come from profile_target__op_stats, as
 * these do.
 */
#ifndef PYBPFPROF_REPORT_TICK_H
#define PYBPFPROF_REPORT_TICK_H

#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

/* --mode exception: the header's line of samples kept and left out. */
void report_tick_text_counts(FILE *f, const struct profile *p);
/* The text section of a process's exception handling by function, when there was any. */
void report_exc_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		     const struct report_opts *o);
/* `, "exception": {...}` of a process, and of a function (nothing when st is NULL). */
void report_exc_json_proc(FILE *f, const struct profile *p, const struct profile_target *pp);
void report_exc_json_func(FILE *f, const struct exc_stat *st);
/*
 * Under a function's line-by-line table: the instructions of its lines
 * (lines[i], whose own samples are self[i]), most first.
 */
void report_op_text_func(FILE *f, const struct profile *p, const struct profile_target *pp,
			 uint32_t func, const int *lines, const uint64_t *self, size_t nlines);
/* `, "opcodes": [{"opcode": NAME, "base": NAME, "samples": N}...]` of a line (frame). */
void report_op_json_line(FILE *f, const struct profile *p, const struct op_stat *st, size_t n,
			 uint32_t frame);

#endif
