/* SPDX-License-Identifier: GPL-2.0-only */
/* The --threads sections: text blocks; a JSON "thread_functions" member. */
#ifndef PYBPFPROF_REPORT_THREADS_H
#define PYBPFPROF_REPORT_THREADS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

/* Threads listed in a process's text section, busiest first; the rest counted. */
#define REPORT_THREADS_SHOWN 8
/* The threads line of a process's text section (nothing for a process with none). */
void report_text_thread_list(FILE *f, const struct profile_target *pp);
void report_text_threads(FILE *f, const struct profile *p, const struct profile_target *pp,
			 const struct report_opts *o);
void report_json_threads(FILE *f, const struct profile *p, const struct profile_target *pp);

#endif
