// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mem's range table (mem_ranges.h) on any sequence of memory calls, as a
 * target process may make them (the addresses and lengths are its own),
 * against a model that keeps one owner per page: after every call, the
 * bytes released per owner and the owner of every page must agree, and the
 * table must stay sorted, disjoint and within its bound. A second table
 * with a bound of 4 runs the same calls for the bound's paths (structure
 * only: refusals make it differ from the model by design). Every call
 * comes a little later than the one before, and the model keeps when each
 * page was mapped: the table's times of a range must span its pages' own,
 * and a range still young enough to count as recent must span no more than
 * MEM_RANGE_MERGE_NS (its age is then its newest part's, at most that much
 * too young for any of them).
 *
 * Input: 6 bytes per call: op (mmap, munmap, mremap, brk-like unmap of a
 * top) in the low 2 bits and the time since the call before (in 40 ms
 * steps) above them, owner, start page, length in pages, and for mremap the
 * new start and length (the next two bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "profile/mem_ranges.h"

#define PAGES 512
#define PG 4096ULL
#define OWNERS 8
#define NONE (-1)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct model {
	int owner[PAGES];
	uint64_t t[PAGES];	       /* when each page was mapped */
	uint64_t released[OWNERS + 1]; /* [OWNERS]: MEM_RANGE_NO_STACK */
	uint64_t now;
};

static void count(void *ctx, uint32_t owner, uint64_t bytes, uint64_t t_ns)
{
	uint64_t *released = ctx;

	(void)t_ns;
	if (owner != MEM_RANGE_NO_STACK && owner >= OWNERS)
		abort(); /* an owner nobody gave */
	released[owner == MEM_RANGE_NO_STACK ? OWNERS : owner] += bytes;
}

static void model_release(struct model *m, unsigned from, unsigned to)
{
	for (unsigned p = from; p < to && p < PAGES; p++) {
		if (m->owner[p] != NONE)
			m->released[m->owner[p]] += PG;
		m->owner[p] = NONE;
	}
}

static void model_map(struct model *m, unsigned from, unsigned to, int owner)
{
	model_release(m, from, to);
	for (unsigned p = from; p < to && p < PAGES; p++) {
		m->owner[p] = owner;
		m->t[p] = m->now;
	}
}

/* The table's order as mem_ranges__remap does it: tail, move, destination, growth. */
static void model_remap(struct model *m, unsigned old, unsigned old_len, unsigned new,
			unsigned new_len, int owner)
{
	unsigned keep = old_len < new_len ? old_len : new_len;
	uint64_t saved_t[PAGES];
	int saved[PAGES];

	if (!old_len) {
		model_map(m, new, new + new_len, owner);
		return;
	}
	if (new_len < old_len)
		model_release(m, old + new_len, old + old_len);
	if (new != old) {
		for (unsigned k = 0; k < keep; k++) {
			saved[k] = m->owner[old + k];
			saved_t[k] = m->t[old + k];
			m->owner[old + k] = NONE;
		}
		model_release(m, new, new + new_len);
		for (unsigned k = 0; k < keep; k++) {
			m->owner[new + k] = saved[k];
			m->t[new + k] = saved_t[k];
		}
	}
	if (new_len > old_len)
		model_map(m, new + old_len, new + new_len, owner);
}

static void check_structure(const struct mem_ranges *rs, size_t bound)
{
	for (size_t i = 0; i < rs->n; i++) {
		if (rs->r[i].start >= rs->r[i].end || rs->r[i].start % PG || rs->r[i].end % PG)
			abort();
		if (i && rs->r[i - 1].end > rs->r[i].start)
			abort();
	}
	if (rs->n > 2 * bound)
		abort();
}

/* Every page's owner in the table is the model's, and its range's times span its own. */
static void check_pages(const struct mem_ranges *rs, const struct model *m)
{
	int seen[PAGES];

	for (unsigned p = 0; p < PAGES; p++)
		seen[p] = NONE;
	for (size_t i = 0; i < rs->n; i++) {
		const struct mem_range *r = &rs->r[i];

		if (r->t_first > r->t_ns || r->t_ns > m->now ||
		    (r->t_ns + MEM_RANGE_RECENT_NS > m->now &&
		     r->t_ns - r->t_first > MEM_RANGE_MERGE_NS))
			abort();
		for (uint64_t a = r->start; a < r->end; a += PG) {
			if (a / PG >= PAGES)
				abort();
			seen[a / PG] = r->owner == MEM_RANGE_NO_STACK ? OWNERS : (int)r->owner;
			if (m->t[a / PG] < r->t_first || m->t[a / PG] > r->t_ns)
				abort();
		}
	}
	if (memcmp(seen, m->owner, sizeof(seen)))
		abort();
}

static void apply(struct mem_ranges *rs, const uint8_t *c, uint64_t *released, struct model *m,
		  uint64_t now)
{
	unsigned op = c[0] % 4, start = c[2] % 256, len = c[3] % 64, new = c[4] % 256,
		 new_len = c[5] % 64;
	int owner = c[1] % (OWNERS + 1);
	uint32_t o = owner == OWNERS ? MEM_RANGE_NO_STACK : (uint32_t)owner;

	switch (op) {
	case 0:
		mem_ranges__map(rs, start * PG, (start + len) * PG, o, now, count, released);
		if (m)
			model_map(m, start, start + len, owner);
		break;
	case 1:
	case 3: /* a brk shrink is an unmap of the heap's top */
		mem_ranges__unmap(rs, start * PG, (start + len) * PG, count, released);
		if (m)
			model_release(m, start, start + len);
		break;
	case 2:
		mem_ranges__remap(rs, start * PG, len * PG, new *PG, new_len * PG, o, now, count,
				  released);
		if (m)
			model_remap(m, start, len, new, new_len, owner);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem_ranges big = { .max = 4096 }, small = { .max = 4 };
	uint64_t released[OWNERS + 1] = { 0 }, ignored[OWNERS + 1] = { 0 };
	struct model m;

	for (unsigned p = 0; p < PAGES; p++) {
		m.owner[p] = NONE;
		m.t[p] = 0;
	}
	memset(m.released, 0, sizeof(m.released));
	m.now = 0;
	for (size_t at = 0; at + 6 <= size; at += 6) {
		m.now += (uint64_t)(data[at] >> 2) * 40000000ULL;
		apply(&big, data + at, released, &m, m.now);
		apply(&small, data + at, ignored, NULL, m.now);
		check_structure(&big, big.max);
		check_structure(&small, small.max);
		check_pages(&big, &m);
		if (memcmp(released, m.released, sizeof(released)) || big.untracked)
			abort();
	}
	mem_ranges__free(&big);
	mem_ranges__free(&small);
	return 0;
}
