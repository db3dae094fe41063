/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mem: the memory events' attachment (page-fault perf events, memory
 * system-call raw tracepoints) and the userspace half of the view: a
 * resident-size timeline read from /proc/PID/statm while the run lasts, and
 * the peak read back from the kernel at the end. Samples themselves arrive
 * through the common ring buffer (collector.h).
 */
#ifndef PYBPFPROF_MEM_H
#define PYBPFPROF_MEM_H

#include <stddef.h>
#include "session/collector.h"
#include "session/session.h"
#include "session/perf_sampler.h"

/* --mem: what memory events are collected besides the CPU samples. */
enum pyprof_mem_mode {
	PYPROF_MEM_OFF = 0,
	PYPROF_MEM_FAULTS, /* page faults and memory system calls (the default --mem) */
	PYPROF_MEM_ALLOC,  /* the above, and the C allocator's calls through uprobes */
};

struct mem {
	struct perf_sampler faults; /* page-fault programs, one per CPU */
	unsigned period;	    /* mean page faults per sample */
	struct bpf_link *sys_enter, *sys_exit;
	struct bpf_link **uprobes; /* --mem=alloc: allocator probes of every target */
	size_t nuprobes, cap_uprobes;
	long long last_rss_ns;
	long page_size;
};

/* Interval between two resident-size readings of each target. */
#define MEM_RSS_INTERVAL_NS 50000000LL
/* Mean interval between two redraws of the page-fault sampling period. */
#define MEM_REDRAW_NS 20000000.0

/*
 * Between session__open and session__load: loads the memory programs of
 * mode only (none with PYPROF_MEM_OFF). Each one inlines the stack walk, so
 * verifying the unused ones would slow every start.
 */
void mem__prepare(struct session *s, enum pyprof_mem_mode mode);

/*
 * Starts the memory events: page faults (period faults per sample) and
 * memory system calls; with alloc_period, also the allocator probes of every
 * target in c (alloc_period bytes per sample). 0, or -errno with a reason in why.
 */
int mem__attach(struct mem *m, struct session *s, struct collector *c, unsigned period,
		uint64_t alloc_period, char *why, size_t whylen);
/*
 * The libc a process has mapped, held open: *fd is a descriptor of that very
 * file (the mapping itself through /proc/PID/map_files, else its path as the
 * process sees it, checked to be the mapped regular file, opened
 * non-blocking), which the caller closes; shown is its name in the maps, for
 * messages. Nothing is opened twice by name, so the target cannot swap
 * another file (a FIFO) in behind the check. 0, or -errno.
 */
int mem__find_libc(int pid, char *shown, size_t len, int *fd);
/*
 * Redraws the page-fault period when due, and reads each live target's
 * resident size when MEM_RSS_INTERVAL_NS has passed since the last.
 */
void mem__tick(struct mem *m, struct collector *c, long long now_ns);
/* How long the main loop may sleep before mem__tick has work: at most idle_ms. */
int mem__timeout_ms(const struct mem *m, int idle_ms, long long now_ns);
/* Stops the memory events (before the ring buffer is drained). */
void mem__detach(struct mem *m);
/*
 * After the drain: the peak resident sizes the kernel saw, and the sampled
 * allocations still live (--mem=alloc), into the profile.
 */
void mem__finish(struct mem *m, struct session *s, struct collector *c);

#endif
