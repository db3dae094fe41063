/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Perf-event samplers: one software perf event per CPU, each running a BPF
 * program, with a period redrawn at random. The CPU sampler (cpu-clock,
 * session.c) and the page-fault sampler of --mem (mem.c) are both one.
 *
 * Why random periods: a sampler with a fixed period falls into step with a
 * program that repeats itself. At exactly 100 Hz, a loop that spent 2.5 ms
 * of every 10 ms tick in one function gave it 0% of the CPU samples instead
 * of 25%, and a loop that faulted 16 pages on one line and 112 on another
 * gave the first line 0% of the page-fault samples instead of 12.5%. So the
 * period is redrawn for blocks of random length: each redraw restarts the
 * event at a moment unrelated to the target, and within a block the period
 * differs from the target's rhythm, so samples fall at every point of it.
 */
#ifndef PYBPFPROF_PERF_SAMPLER_H
#define PYBPFPROF_PERF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>

struct jitter {
	uint64_t state;	   /* xorshift64* */
	long long next_ns; /* CLOCK_MONOTONIC of the next redraw */
	double offset;	   /* the current block's draw, in [-1, 1) */
	double length;	   /* the current pair's block length, times the mean */
	bool second;	   /* the current block is the second of its pair */
};

struct perf_sampler {
	struct bpf_link **links; /* one per CPU; NULL for an offline CPU */
	int *fds;		 /* our copies of the events' fds, to change the period; -1: none */
	int ncpus;
	struct jitter jitter;
};

/*
 * Opens attr's event on every online CPU and attaches prog to each; `what`
 * names the event in messages ("cpu-clock"). The first redraw comes within
 * first_redraw_ns. On failure, why says what failed; perf_sampler__close
 * frees what was opened.
 */
int perf_sampler__open(struct perf_sampler *ps, struct perf_event_attr *attr,
		       struct bpf_program *prog, const char *what, long long first_redraw_ns,
		       char *why, size_t whylen);
/* Sets the sample period of every CPU's event. */
void perf_sampler__set_period(struct perf_sampler *ps, uint64_t period);
/* Detaches and closes everything; safe on a sampler never opened (zeroed). */
void perf_sampler__close(struct perf_sampler *ps);

/* Uniform in [0, 1). */
double jitter__uniform(struct jitter *j);
/*
 * Whether a new block starts; if so, j->offset is its draw, which the caller
 * scales into a period, and the next block starts mean_ns (+-50%) later.
 * Blocks come in pairs of one length with opposite offsets, so that over
 * every pair the rate is the nominal one. A process busy for 0.6 s, 30 runs
 * at 199 Hz: its sample count over its CPU time had an sd of 5.1% with
 * independent draws, 1.5% with pairs.
 */
bool jitter__due(struct jitter *j, long long now_ns, double mean_ns);

#endif
