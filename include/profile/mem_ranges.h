/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mem: the address ranges one process mapped during the run, each with the
 * owner that mapped it (a memory stack's index), so that every munmap, mremap
 * and brk shrink is charged to the line that created the range it releases.
 * A sorted array of disjoint page ranges; adjacent ranges of one owner
 * mapped close in time are merged, so a loop mapping from one line costs one
 * entry, not one per call. Each range knows when it was mapped, so that what
 * is retained at the end can be told apart by age: held for a while (a leak
 * candidate) or mapped in the last moment (a temporary in flight).
 * Bounded: at max entries the ranges old enough for their age not to matter
 * any more are merged; if that frees nothing a new mapping is not tracked
 * (counted in untracked_*), so its release is later counted as
 * released-unknown.
 */
#ifndef PYBPFPROF_MEM_RANGES_H
#define PYBPFPROF_MEM_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* Owner of a range mapped by a thread with no Python stack to charge it to. */
#define MEM_RANGE_NO_STACK UINT32_MAX
/* Ranges tracked per process by default. */
#define MEM_RANGES_MAX 65536

/*
 * Retained memory mapped less than this before the end is "recent" (in
 * flight), the rest "held". Ranges older than this at a call merge whatever
 * their times when the table is full: their age can no longer change sides.
 */
#define MEM_RANGE_RECENT_NS 1000000000ULL
/*
 * Adjacent mappings of one owner merge while the range's parts were all
 * mapped within this long: its age (its newest part's) is at most this much
 * too young for any part of it.
 */
#define MEM_RANGE_MERGE_NS 100000000ULL

struct mem_range {
	uint64_t start, end; /* [start, end), page-aligned */
	uint64_t t_first;    /* when its oldest part was mapped (kernel monotonic) */
	uint64_t t_ns;	     /* when its newest part was mapped: the range's age */
	uint32_t owner;
};

struct mem_ranges {
	struct mem_range *r;
	size_t n, cap;
	size_t max;		  /* 0: MEM_RANGES_MAX */
	uint64_t untracked;	  /* mappings not tracked: the table was full */
	uint64_t untracked_bytes; /* their bytes */
};

/*
 * Called with bytes of owner's ranges released (unmapped) or still held at
 * the end, mapped at t_ns.
 */
typedef void (*mem_range_fn)(void *ctx, uint32_t owner, uint64_t bytes, uint64_t t_ns);

/*
 * [start, end) is unmapped: every tracked part is released through fn.
 * Returns the bytes of the range that no tracked mapping covered (mapped
 * before the run, or untracked).
 */
uint64_t mem_ranges__unmap(struct mem_ranges *rs, uint64_t start, uint64_t end, mem_range_fn fn,
			   void *ctx);
/*
 * [start, end) is mapped by owner at t_ns (calls come in time order); what it
 * covered before (MAP_FIXED) is released first, through fn. Returns that
 * overlap's untracked bytes.
 */
uint64_t mem_ranges__map(struct mem_ranges *rs, uint64_t start, uint64_t end, uint32_t owner,
			 uint64_t t_ns, mem_range_fn fn, void *ctx);
/*
 * mremap at t_ns: [old, old + old_len) now at [new, new + new_len). The kept
 * part moves with its owners and times; a shrink releases the tail; a growth
 * is owner's, from t_ns. Returns the released bytes no tracked mapping
 * covered.
 */
uint64_t mem_ranges__remap(struct mem_ranges *rs, uint64_t old, uint64_t old_len, uint64_t new,
			   uint64_t new_len, uint32_t owner, uint64_t t_ns, mem_range_fn fn,
			   void *ctx);
/* Every range still tracked, through fn (the retained bytes), then empties rs. */
void mem_ranges__drain(struct mem_ranges *rs, mem_range_fn fn, void *ctx);
void mem_ranges__free(struct mem_ranges *rs);

#endif
