/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mode wall and --gil sections of the text and JSON reports: on-CPU and
 * off-CPU time per thread, function and line, off-CPU time by class, and
 * the GIL held, waiting and released.
 */
#ifndef PYBPFPROF_REPORT_WALL_H
#define PYBPFPROF_REPORT_WALL_H

#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

/* One function's or line's wall-time split, in samples. */
struct wall_stat {
	uint64_t on, off, cls[PROFILE_OFFCPU_NCLASSES];
	uint64_t held, released, unknown, waiting; /* --gil */
};

/*
 * Per function (indexed by function id, each counted once per stack, as a
 * total) and per line (indexed by frame id: the innermost Python frame of
 * each stack, the line that ran or blocked). calloc'ed; 0 or -ENOMEM.
 */
int report_wall_stats(const struct profile *p, const struct profile_target *pp,
		      struct wall_stat **funcs, struct wall_stat **lines);
/* Whether the wall sections apply: --mode wall or --gil. */
bool report_wall_on(const struct profile *p);

void report_wall_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		      const struct report_opts *o);
/* JSON: a thread's additions (after its "samples"), a function's and a line's. */
void report_wall_json_thread(FILE *f, const struct profile *p, const struct profile_target *pp,
			     const struct profile_thread *th);
void report_wall_json_stat(FILE *f, const struct profile *p, const struct wall_stat *w);

/*
 * The flame graphs' colour: per frame id, the share of its samples (stacks
 * counted once) that were off the CPU; NULL when the profile has none (or
 * out of memory). Frames at OFFCPU_MOSTLY or more are drawn blue.
 */
float *report_wall_frame_offshare(const struct profile *p);
#define OFFCPU_MOSTLY 0.5f

#endif
