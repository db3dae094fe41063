/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mem: the address ranges one process mapped during the run, each with the
 * owner that mapped it (a memory stack's index), so that every munmap, mremap
 * and brk shrink is charged to the line that created the range it releases.
 * A sorted array of disjoint page ranges; adjacent ranges of one owner are
 * merged, so a loop mapping from one line costs one entry, not one per call.
 * Bounded: at max entries a new mapping is not tracked (counted in
 * untracked_*), so its release is later counted as released-unknown.
 */
#ifndef PYBPFPROF_MEM_RANGES_H
#define PYBPFPROF_MEM_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* Owner of a range mapped by a thread with no Python stack to charge it to. */
#define MEM_RANGE_NO_STACK UINT32_MAX
/* Ranges tracked per process by default. */
#define MEM_RANGES_MAX 65536

struct mem_range {
	uint64_t start, end; /* [start, end), page-aligned */
	uint32_t owner;
};

struct mem_ranges {
	struct mem_range *r;
	size_t n, cap;
	size_t max;		  /* 0: MEM_RANGES_MAX */
	uint64_t untracked;	  /* mappings not tracked: the table was full */
	uint64_t untracked_bytes; /* their bytes */
};

/* Called with bytes of owner's ranges released (unmapped) or still held at the end. */
typedef void (*mem_range_fn)(void *ctx, uint32_t owner, uint64_t bytes);

/*
 * [start, end) is unmapped: every tracked part is released through fn.
 * Returns the bytes of the range that no tracked mapping covered (mapped
 * before the run, or untracked).
 */
uint64_t mem_ranges__unmap(struct mem_ranges *rs, uint64_t start, uint64_t end, mem_range_fn fn,
			   void *ctx);
/*
 * [start, end) is mapped by owner; what it covered before (MAP_FIXED) is
 * released first, through fn. Returns that overlap's untracked bytes.
 */
uint64_t mem_ranges__map(struct mem_ranges *rs, uint64_t start, uint64_t end, uint32_t owner,
			 mem_range_fn fn, void *ctx);
/*
 * mremap: [old, old + old_len) now at [new, new + new_len). The kept part
 * moves with its owners; a shrink releases the tail; a growth is owner's.
 * Returns the released bytes no tracked mapping covered.
 */
uint64_t mem_ranges__remap(struct mem_ranges *rs, uint64_t old, uint64_t old_len, uint64_t new,
			   uint64_t new_len, uint32_t owner, mem_range_fn fn, void *ctx);
/* Every range still tracked, through fn (the retained bytes), then empties rs. */
void mem_ranges__drain(struct mem_ranges *rs, mem_range_fn fn, void *ctx);
void mem_ranges__free(struct mem_ranges *rs);

#endif
