/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mode wall and --gil: the sched_switch program (bpf/offcpu.bpf.c), each
 * process's GIL address for it, and the threads already blocked when the
 * run starts, read from outside so that their wait is charged from the run's
 * first moment.
 */
#ifndef PYBPFPROF_WALL_H
#define PYBPFPROF_WALL_H

#include <stdbool.h>
#include <stddef.h>
#include "session/collector.h"
#include "session/session.h"
#include "util/hashmap.h"

enum wall_mode {
	WALL_OFF = 0,
	WALL_GIL_ONLY = 1, /* --gil alone: GIL waits only, and the GIL state of CPU samples */
	WALL_ON = 2,	   /* --mode wall: every off-CPU interval */
};

struct bpf_link;

struct wall {
	enum wall_mode mode;
	struct bpf_link *link;
	size_t gil_known, gil_unknown; /* processes whose GIL address was (not) found */
	struct hashmap gil_pids;       /* pids whose GIL is in the kernel's map */
	long long last_tick_ns, end_ns;
};

/* Before load: the program kept or not, and what it follows. */
void wall__prepare(struct session *s, enum wall_mode mode);
/*
 * Every target's GIL address into the kernel's map, the blocked threads
 * primed (their stack and since when), then the tracepoint attached.
 * 0, or -errno with a sentence in why.
 */
int wall__attach(struct wall *w, struct session *s, struct collector *c, enum wall_mode mode,
		 char *why, size_t whylen);
/*
 * Now and then during the run: the GIL of targets found since (fork, exec,
 * -a), or whose interpreter had none yet (a launched command, read at its
 * exec), looked for again.
 */
void wall__tick(struct wall *w, struct session *s, struct collector *c, long long now);
/*
 * After the last records: the intervals the kernel still holds open (its
 * map read through) charged up to the end of sampling.
 */
void wall__finish(struct wall *w, struct session *s, struct collector *c);
void wall__detach(struct wall *w);

#endif
