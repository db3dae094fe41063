// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ranges a process mapped, by owner (mem_ranges.h). A sorted array, not
 * a tree: a Python process holds a few thousand mappings at most once
 * adjacent ones of one line are merged (the allocator's arenas), and one
 * memmove of that is cheaper than the system call that caused it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "profile/mem_ranges.h"
#include "util/vec.h"

static size_t limit(const struct mem_ranges *rs)
{
	return rs->max ? rs->max : MEM_RANGES_MAX;
}

/* Index of the first range ending after addr (rs->n if none). */
static size_t first_after(const struct mem_ranges *rs, uint64_t addr)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_at(struct mem_ranges *rs, size_t i, struct mem_range r)
{
	if (vec_grow((void **)&rs->r, &rs->cap, rs->n + 1, sizeof(*rs->r)))
		return -1;
	memmove(&rs->r[i + 1], &rs->r[i], (rs->n - i) * sizeof(*rs->r));
	rs->r[i] = r;
	rs->n++;
	return 0;
}

static void release(mem_range_fn fn, void *ctx, uint32_t owner, uint64_t bytes)
{
	if (fn && bytes)
		fn(ctx, owner, bytes);
}

/* A hole punched in the middle of one range: it becomes two. */
static void split(struct mem_ranges *rs, size_t i, uint64_t start, uint64_t end)
{
	struct mem_range tail = { end, rs->r[i].end, rs->r[i].owner };

	rs->r[i].end = start;
	/* Splits may pass max (the mapping was admitted), but not twice over. */
	if (rs->n >= 2 * limit(rs) || insert_at(rs, i + 1, tail)) {
		rs->untracked++;
		rs->untracked_bytes += tail.end - tail.start;
	}
}

uint64_t mem_ranges__unmap(struct mem_ranges *rs, uint64_t start, uint64_t end, mem_range_fn fn,
			   void *ctx)
{
	size_t i = first_after(rs, start), j;
	uint64_t found = 0;
	struct mem_range *r;

	if (end <= start)
		return 0;
	if (i < rs->n && rs->r[i].start < start) {
		r = &rs->r[i];
		if (r->end > end) {
			release(fn, ctx, r->owner, end - start);
			split(rs, i, start, end);
			return 0;
		}
		found += r->end - start;
		release(fn, ctx, r->owner, r->end - start);
		r->end = start;
		i++;
	}
	/* ranges wholly inside go in one move */
	for (j = i; j < rs->n && rs->r[j].end <= end; j++) {
		found += rs->r[j].end - rs->r[j].start;
		release(fn, ctx, rs->r[j].owner, rs->r[j].end - rs->r[j].start);
	}
	if (j < rs->n && rs->r[j].start < end) {
		r = &rs->r[j];
		found += end - r->start;
		release(fn, ctx, r->owner, end - r->start);
		r->start = end;
	}
	if (j > i) { /* (never with an empty table, whose array may be NULL) */
		memmove(&rs->r[i], &rs->r[j], (rs->n - j) * sizeof(*rs->r));
		rs->n -= j - i;
	}
	return end - start - found;
}

uint64_t mem_ranges__map(struct mem_ranges *rs, uint64_t start, uint64_t end, uint32_t owner,
			 mem_range_fn fn, void *ctx)
{
	uint64_t unknown;
	size_t i;
	bool left, right;

	if (end <= start)
		return 0;
	unknown = mem_ranges__unmap(rs, start, end, fn, ctx);
	i = first_after(rs, start);
	left = i > 0 && rs->r[i - 1].end == start && rs->r[i - 1].owner == owner;
	right = i < rs->n && rs->r[i].start == end && rs->r[i].owner == owner;
	if (left && right) {
		rs->r[i - 1].end = rs->r[i].end;
		memmove(&rs->r[i], &rs->r[i + 1], (rs->n - i - 1) * sizeof(*rs->r));
		rs->n--;
	} else if (left) {
		rs->r[i - 1].end = end;
	} else if (right) {
		rs->r[i].start = start;
	} else if (rs->n >= limit(rs) ||
		   insert_at(rs, i, (struct mem_range){ start, end, owner })) {
		rs->untracked++;
		rs->untracked_bytes += end - start;
	}
	return unknown;
}

/* The tracked pieces of [start, end), clipped, into *out (the caller frees it); -1 if no memory. */
static long pieces(const struct mem_ranges *rs, uint64_t start, uint64_t end,
		   struct mem_range **out)
{
	size_t i = first_after(rs, start), j;
	long n = 0;

	for (j = i; j < rs->n && rs->r[j].start < end; j++)
		;
	*out = malloc((j - i + 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (; i < j; i++) {
		struct mem_range p = rs->r[i];

		p.start = p.start < start ? start : p.start;
		p.end = p.end > end ? end : p.end;
		(*out)[n++] = p;
	}
	return n;
}

uint64_t mem_ranges__remap(struct mem_ranges *rs, uint64_t old, uint64_t old_len, uint64_t new,
			   uint64_t new_len, uint32_t owner, mem_range_fn fn, void *ctx)
{
	uint64_t keep = old_len < new_len ? old_len : new_len, unknown = 0;
	struct mem_range *moved = NULL;
	long n = 0, k;

	/* old_len 0 duplicates a shared mapping: a new one, the old stays */
	if (!old_len)
		return mem_ranges__map(rs, new, new + new_len, owner, fn, ctx), 0;
	if (new_len < old_len)
		unknown = mem_ranges__unmap(rs, old + new_len, old + old_len, fn, ctx);
	if (new != old) {
		n = pieces(rs, old, old + keep, &moved);
		if (n < 0) { /* no memory to move them: forgotten, counted */
			rs->untracked++;
			rs->untracked_bytes += keep -
					       mem_ranges__unmap(rs, old, old + keep, NULL, NULL);
			n = 0;
		} else {
			mem_ranges__unmap(rs, old, old + keep, NULL, NULL);
		}
		/* whatever was at the destination (MREMAP_FIXED) is gone */
		mem_ranges__unmap(rs, new, new + new_len, fn, ctx);
		for (k = 0; k < n; k++)
			mem_ranges__map(rs, moved[k].start - old + new, moved[k].end - old + new,
					moved[k].owner, NULL, NULL);
		free(moved);
	}
	if (new_len > old_len)
		mem_ranges__map(rs, new + old_len, new + new_len, owner, fn, ctx);
	return unknown;
}

void mem_ranges__drain(struct mem_ranges *rs, mem_range_fn fn, void *ctx)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		release(fn, ctx, rs->r[i].owner, rs->r[i].end - rs->r[i].start);
	rs->n = 0;
}

void mem_ranges__free(struct mem_ranges *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}
