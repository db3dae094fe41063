/* SPDX-License-Identifier: GPL-2.0-only */
/* The USDT sections (--calls, --gc, --imports); each writes nothing unless its mode was on. */
#ifndef PYBPFPROF_REPORT_USDT_H
#define PYBPFPROF_REPORT_USDT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

void report_usdt_text_counts(FILE *f, const struct profile *p);
void report_usdt_text_proc(FILE *f, const struct profile *p, const struct profile_target *pp,
			   const struct report_opts *o);
void report_usdt_json_counts(FILE *f, const struct profile *p);
void report_usdt_json_proc(FILE *f, const struct profile *p, const struct profile_target *pp);
/* --calls fields of a functions[] entry (t from profile_target__call_totals). */
void report_usdt_json_func(FILE *f, const struct profile *p, const struct profile_call_total *t,
			   uint32_t func);
/* functions[] entries for functions with calls but no samples (not in listed). */
void report_usdt_json_extra_funcs(FILE *f, const struct profile *p, const struct profile_target *pp,
				  const struct profile_call_total *t, const bool *listed,
				  bool first);

#endif
