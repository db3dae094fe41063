/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Random sampling periods. A sampler with a fixed period falls into step with
 * a program that repeats itself: at exactly 100 Hz, a loop that spent 2.5 ms
 * of every 10 ms tick in one function gave it 0% of the CPU samples instead
 * of 25%, and a loop that faulted 16 pages on one line and 112 on another
 * gave the first line 0% of the page-fault samples instead of 12.5%. So both
 * samplers redraw their perf events' period at random, for blocks of random
 * length: each redraw restarts the event at a moment unrelated to the target,
 * and within a block the period differs from the target's rhythm, so samples
 * fall at every point of it.
 */
#ifndef PYBPFPROF_JITTER_H
#define PYBPFPROF_JITTER_H

#include <stdbool.h>
#include <stdint.h>

struct jitter {
	uint64_t state;		/* xorshift64* */
	long long next_ns;	/* CLOCK_MONOTONIC of the next redraw */
};

/* Seeds from the clock and pid; the first redraw comes within first_ns. */
void jitter_init(struct jitter *j, long long now_ns, long long first_ns);
/* Uniform in [0, 1). */
double jitter_uniform(struct jitter *j);
/* Whether a redraw is due; if so, the next one comes mean_ns (+-50%) later. */
bool jitter_due(struct jitter *j, long long now_ns, double mean_ns);
/* Sets the sample period of every perf event fd that is not -1. */
void jitter_set_period(const int *fds, int n, uint64_t period);
long long jitter_now_ns(void);

#endif
