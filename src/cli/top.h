/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `pybpfprof top`: a live view redrawn once a second with plain ANSI
 * escapes (no curses): processes, samples per second, drops; the busiest
 * processes, each by its role (as the report's process table names it) and
 * its busiest threads (tid and Python name); and the top functions over all
 * processes by self and total share, in the last second (what is hot now,
 * the order) and since the start; with --mode wall, under each off-CPU row
 * the lines that waited so. `q` quits; the terminal's mode
 * is restored on every way out.
 */
#ifndef PYBPFPROF_TOP_H
#define PYBPFPROF_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/profile.h"
#include "util/hashmap.h"

struct top_view {
	bool tty;	   /* stdin is a terminal whose mode we changed */
	long long next_ns; /* next redraw */
	uint64_t last_samples;
	long long last_ns;
	unsigned rows;		/* functions shown */
	struct func_stat *prev; /* per function id: self and total at the last redraw */
	size_t nprev;		/* its slots, zeroed until their function is seen */
	/* --mode wall: per (off-CPU pseudo-function, waiting line), its count at the last redraw */
	struct hashmap waits_prev;
	/* per running process (pid, 0) and thread (pid, tid): its samples at the last redraw */
	struct hashmap counts_prev;
};

#define TOP_PROCS_SHOWN 5    /* process rows, at most */
#define TOP_THREADS_SHOWN 3  /* threads named in a process's row */
#define TOP_THREADS_TEXT 256 /* bytes of them */

/* Puts stdin in non-canonical, no-echo mode (when a terminal) and clears the screen. */
void top__init(struct top_view *v, unsigned rows, long long now_ns);
/* Redraws when a second has passed; returns true when `q` was pressed. */
bool top__tick(struct top_view *v, const struct profile *p, uint64_t dropped, long long now_ns);
/* Restores the terminal. */
void top__end(struct top_view *v);
/* Restores the terminal's mode and cursor if top changed them; async-signal-safe, for _exit. */
void top__restore_terminal(void);

#endif
