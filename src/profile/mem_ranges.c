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

static void release(mem_range_fn fn, void *ctx, const struct mem_range *r, uint64_t bytes)
{
	if (fn && bytes)
		fn(ctx, r->owner, bytes, r->t_ns);
}

/* A hole punched in the middle of one range: it becomes two. */
static void split(struct mem_ranges *rs, size_t i, uint64_t start, uint64_t end)
{
	struct mem_range tail = rs->r[i];

	tail.start = end;

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
			release(fn, ctx, r, end - start);
			split(rs, i, start, end);
			return 0;
		}
		found += r->end - start;
		release(fn, ctx, r, r->end - start);
		r->end = start;
		i++;
	}
	/* ranges wholly inside go in one move */
	for (j = i; j < rs->n && rs->r[j].end <= end; j++) {
		found += rs->r[j].end - rs->r[j].start;
		release(fn, ctx, &rs->r[j], rs->r[j].end - rs->r[j].start);
	}
	if (j < rs->n && rs->r[j].start < end) {
		r = &rs->r[j];
		found += end - r->start;
		release(fn, ctx, r, end - r->start);
		r->start = end;
	}
	if (j > i) { /* (never with an empty table, whose array may be NULL) */
		memmove(&rs->r[i], &rs->r[j], (rs->n - j) * sizeof(*rs->r));
		rs->n -= j - i;
	}
	return end - start - found;
}

static uint64_t newest(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t oldest(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Whether r may take in the mapping c next to it (and, if given, other too). */
static bool joins(const struct mem_range *r, const struct mem_range *c,
		  const struct mem_range *other)
{
	uint64_t first = oldest(r->t_first, c->t_first), last = newest(r->t_ns, c->t_ns);

	if (other) {
		first = oldest(first, other->t_first);
		last = newest(last, other->t_ns);
	}
	return r->owner == c->owner && last - first <= MEM_RANGE_MERGE_NS;
}

/* r takes in what [t_first, t_ns] was mapped: its times widen. */
static void widen(struct mem_range *r, uint64_t t_first, uint64_t t_ns)
{
	r->t_first = oldest(r->t_first, t_first);
	r->t_ns = newest(r->t_ns, t_ns);
}

/*
 * The table full: neighbours of one owner both mapped MEM_RANGE_RECENT_NS or
 * more before now merge (no later end can count them recent). Returns how
 * many entries it freed.
 */
static size_t settle(struct mem_ranges *rs, uint64_t now)
{
	size_t i, n = 0, before = rs->n;

	for (i = 0; i < rs->n; i++) {
		struct mem_range *last = n ? &rs->r[n - 1] : NULL, *r = &rs->r[i];

		if (last && last->end == r->start && last->owner == r->owner &&
		    last->t_ns + MEM_RANGE_RECENT_NS <= now &&
		    r->t_ns + MEM_RANGE_RECENT_NS <= now) {
			last->end = r->end;
			widen(last, r->t_first, r->t_ns);
			continue;
		}
		rs->r[n++] = *r;
	}
	rs->n = n;
	return before - n;
}

/* c (its pages, owner and times) into the table, released what it covered first. */
static uint64_t place(struct mem_ranges *rs, struct mem_range c, mem_range_fn fn, void *ctx)
{
	uint64_t unknown;
	size_t i;
	bool left, right;

	if (c.end <= c.start)
		return 0;
	unknown = mem_ranges__unmap(rs, c.start, c.end, fn, ctx);
	i = first_after(rs, c.start);
	left = i > 0 && rs->r[i - 1].end == c.start && joins(&rs->r[i - 1], &c, NULL);
	right = i < rs->n && rs->r[i].start == c.end && joins(&rs->r[i], &c, NULL);
	/* both only when all three were mapped close enough together */
	if (left && right && !joins(&rs->r[i - 1], &c, &rs->r[i]))
		right = false;
	if (left && right) {
		rs->r[i - 1].end = rs->r[i].end;
		widen(&rs->r[i - 1], rs->r[i].t_first, rs->r[i].t_ns);
		widen(&rs->r[i - 1], c.t_first, c.t_ns);
		memmove(&rs->r[i], &rs->r[i + 1], (rs->n - i - 1) * sizeof(*rs->r));
		rs->n--;
	} else if (left) {
		rs->r[i - 1].end = c.end;
		widen(&rs->r[i - 1], c.t_first, c.t_ns);
	} else if (right) {
		rs->r[i].start = c.start;
		widen(&rs->r[i], c.t_first, c.t_ns);
	} else {
		if (rs->n >= limit(rs) && settle(rs, c.t_ns))
			i = first_after(rs, c.start);
		if (rs->n >= limit(rs) || insert_at(rs, i, c)) {
			rs->untracked++;
			rs->untracked_bytes += c.end - c.start;
		}
	}
	return unknown;
}

uint64_t mem_ranges__map(struct mem_ranges *rs, uint64_t start, uint64_t end, uint32_t owner,
			 uint64_t t_ns, mem_range_fn fn, void *ctx)
{
	return place(rs, (struct mem_range){ start, end, t_ns, t_ns, owner }, fn, ctx);
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
			   uint64_t new_len, uint32_t owner, uint64_t t_ns, mem_range_fn fn,
			   void *ctx)
{
	uint64_t keep = old_len < new_len ? old_len : new_len, unknown = 0;
	struct mem_range *moved = NULL;
	long n = 0, k;

	/* old_len 0 duplicates a shared mapping: a new one, the old stays */
	if (!old_len)
		return mem_ranges__map(rs, new, new + new_len, owner, t_ns, fn, ctx), 0;
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
		for (k = 0; k < n; k++) {
			moved[k].start += new - old;
			moved[k].end += new - old;
			place(rs, moved[k], NULL, NULL);
		}
		free(moved);
	}
	if (new_len > old_len)
		mem_ranges__map(rs, new + old_len, new + new_len, owner, t_ns, fn, ctx);
	return unknown;
}

void mem_ranges__drain(struct mem_ranges *rs, mem_range_fn fn, void *ctx)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		release(fn, ctx, &rs->r[i], rs->r[i].end - rs->r[i].start);
	rs->n = 0;
}

void mem_ranges__free(struct mem_ranges *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}
