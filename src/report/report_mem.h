/* SPDX-License-Identifier: GPL-2.0-only */
/* The --mem sections of a process in the text and JSON reports; written only when p->mem. */
#ifndef PYBPFPROF_REPORT_MEM_H
#define PYBPFPROF_REPORT_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

void report_mem_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		     const struct report_opts *o);
void report_mem_json(FILE *f, const struct profile *p, const struct profile_target *pp);

#endif
