/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mem's range matching (mem_ranges.h, profile_target__mem_call): every
 * release charged to the owner that mapped the range, exactly, through
 * partial munmaps, mremap moves, growths and shrinks, brk, ranges mapped
 * before the run, and the table's bound.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"

#define PG 4096ULL
#define OWNERS 4

/* Bytes released (or retained) per owner; [OWNERS]: MEM_RANGE_NO_STACK. */
struct tally {
	uint64_t by[OWNERS + 1];
	unsigned calls;
};

static void count(void *ctx, uint32_t owner, uint64_t bytes, uint64_t t_ns)
{
	struct tally *t = ctx;

	(void)t_ns;
	t->by[owner == MEM_RANGE_NO_STACK ? OWNERS : owner] += bytes;
	t->calls++;
}

/* The ranges held, as "start-end:owner" in pages, for exact comparison. */
static const char *shape(const struct mem_ranges *rs)
{
	static char buf[512];
	size_t i, at = 0;

	buf[0] = 0;
	for (i = 0; i < rs->n && at < sizeof(buf) - 40; i++)
		at += snprintf(buf + at, sizeof(buf) - at, "%s%llu-%llu:%u", i ? " " : "",
			       (unsigned long long)(rs->r[i].start / PG),
			       (unsigned long long)(rs->r[i].end / PG), rs->r[i].owner);
	return buf;
}

static void test_partial_munmap(void **state)
{
	struct mem_ranges rs = { 0 };
	struct tally t = { 0 };

	(void)state;
	mem_ranges__map(&rs, 100 * PG, 200 * PG, 1, 0, count, &t);
	assert_int_equal(t.calls, 0); /* fresh address space: nothing released */
	/* head, tail, then a hole in the middle */
	assert_int_equal(mem_ranges__unmap(&rs, 100 * PG, 110 * PG, count, &t), 0);
	assert_int_equal(mem_ranges__unmap(&rs, 190 * PG, 200 * PG, count, &t), 0);
	assert_int_equal(mem_ranges__unmap(&rs, 140 * PG, 150 * PG, count, &t), 0);
	assert_string_equal(shape(&rs), "110-140:1 150-190:1");
	assert_int_equal(t.by[1], 30 * PG);
	/* one call across both pieces and the hole between them, and beyond the end */
	assert_int_equal(mem_ranges__unmap(&rs, 130 * PG, 210 * PG, count, &t), 30 * PG);
	assert_string_equal(shape(&rs), "110-130:1");
	assert_int_equal(t.by[1], 80 * PG);
	memset(&t, 0, sizeof(t));
	mem_ranges__drain(&rs, count, &t);
	assert_int_equal(t.by[1], 20 * PG); /* mapped 100 = released 80 + retained 20 */
	assert_int_equal(rs.n, 0);
	mem_ranges__free(&rs);
}

static void test_owners_merge_and_overlay(void **state)
{
	struct mem_ranges rs = { 0 };
	struct tally t = { 0 };

	(void)state;
	/* a loop mapping upwards from one line: one entry */
	mem_ranges__map(&rs, 10 * PG, 20 * PG, 2, 0, count, &t);
	mem_ranges__map(&rs, 20 * PG, 30 * PG, 2, 0, count, &t);
	mem_ranges__map(&rs, 0, 10 * PG, 2, 0, count, &t);
	assert_string_equal(shape(&rs), "0-30:2");
	/* another owner's MAP_FIXED over the middle releases what it covers */
	mem_ranges__map(&rs, 5 * PG, 8 * PG, 3, 0, count, &t);
	assert_string_equal(shape(&rs), "0-5:2 5-8:3 8-30:2");
	assert_int_equal(t.by[2], 3 * PG);
	/* filling the gap between two pieces of one owner joins them */
	mem_ranges__unmap(&rs, 5 * PG, 8 * PG, count, &t);
	assert_int_equal(t.by[3], 3 * PG);
	mem_ranges__map(&rs, 5 * PG, 8 * PG, 2, 0, count, &t);
	assert_string_equal(shape(&rs), "0-30:2");
	mem_ranges__map(&rs, 40 * PG, 50 * PG, MEM_RANGE_NO_STACK, 0, count, &t);
	assert_int_equal(mem_ranges__unmap(&rs, 40 * PG, 50 * PG, count, &t), 0);
	assert_int_equal(t.by[OWNERS], 10 * PG);
	mem_ranges__free(&rs);
}

static void test_mremap(void **state)
{
	struct mem_ranges rs = { 0 };
	struct tally t = { 0 };

	(void)state;
	mem_ranges__map(&rs, 100 * PG, 110 * PG, 1, 0, count, &t);
	/* grow in place: the growth is the caller's */
	assert_int_equal(mem_ranges__remap(&rs, 100 * PG, 10 * PG, 100 * PG, 15 * PG, 2, 0, count,
					   &t),
			 0);
	assert_string_equal(shape(&rs), "100-110:1 110-115:2");
	/* shrink in place: the tail is released, by its owner */
	mem_ranges__remap(&rs, 100 * PG, 15 * PG, 100 * PG, 12 * PG, 3, 0, count, &t);
	assert_string_equal(shape(&rs), "100-110:1 110-112:2");
	assert_int_equal(t.by[2], 3 * PG);
	/* move and grow: the pieces keep their owners at the new place */
	mem_ranges__remap(&rs, 100 * PG, 12 * PG, 500 * PG, 20 * PG, 3, 0, count, &t);
	assert_string_equal(shape(&rs), "500-510:1 510-512:2 512-520:3");
	assert_int_equal(t.by[1], 0); /* a move releases nothing */
	/* move and shrink onto a mapped place (MREMAP_FIXED): the tail and the place are released */
	mem_ranges__map(&rs, 900 * PG, 904 * PG, 0, 0, count, &t);
	mem_ranges__remap(&rs, 500 * PG, 20 * PG, 900 * PG, 4 * PG, 3, 0, count, &t);
	assert_string_equal(shape(&rs), "900-904:1");
	assert_int_equal(t.by[0], 4 * PG);
	assert_int_equal(t.by[1], 6 * PG);
	assert_int_equal(t.by[2], 3 * PG + 2 * PG);
	assert_int_equal(t.by[3], 8 * PG);
	/* a range mapped before the run moves untracked, and its shrink is unknown */
	assert_int_equal(mem_ranges__remap(&rs, 0, 8 * PG, 300 * PG, 6 * PG, 2, 0, count, &t),
			 2 * PG);
	assert_string_equal(shape(&rs), "900-904:1");
	mem_ranges__free(&rs);
}

static void test_bound(void **state)
{
	struct mem_ranges rs = { .max = 4 };
	struct tally t = { 0 };
	uint64_t i;

	(void)state;
	for (i = 0; i < 6; i++) /* apart, so not merged */
		mem_ranges__map(&rs, i * 10 * PG, (i * 10 + 5) * PG, 1, 0, count, &t);
	assert_int_equal(rs.n, 4);
	assert_int_equal(rs.untracked, 2);
	assert_int_equal(rs.untracked_bytes, 10 * PG);
	/* their release cannot be matched: unknown, not charged */
	assert_int_equal(mem_ranges__unmap(&rs, 50 * PG, 55 * PG, count, &t), 5 * PG);
	assert_int_equal(t.by[1], 0);
	/* a merge needs no entry: still tracked at the bound */
	mem_ranges__map(&rs, 5 * PG, 6 * PG, 1, 0, count, &t);
	assert_int_equal(rs.untracked, 2);
	/* splits may pass the bound up to twice it, then the tail is forgotten and counted */
	for (i = 0; i < 4; i++)
		mem_ranges__unmap(&rs, (i * 10 + 2) * PG, (i * 10 + 3) * PG, count, &t);
	assert_int_equal(rs.n, 8);
	mem_ranges__unmap(&rs, 1 * PG, 2 * PG, count, &t); /* a head: no split */
	assert_int_equal(rs.n, 8);
	mem_ranges__unmap(&rs, 4 * PG, 5 * PG, count, &t); /* 3-6's middle would split */
	assert_int_equal(rs.n, 8);
	assert_int_equal(rs.untracked, 3);
	assert_int_equal(rs.untracked_bytes, 11 * PG);
	mem_ranges__free(&rs);
}

/* Through the profile: brk, munmap of a range from before the run, retained at the end. */
static void test_profile_calls(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t fr[2];
	long big, keep;
	struct profile_mem_call
		brk_up = { .op = PROFILE_MEM_OP_BRK,
			   .addr = 0x1000010,
			   .new_addr = 0x1000010 + 40 * PG },
		brk_down = { .op = PROFILE_MEM_OP_BRK,
			     .addr = 0x1000010 + 40 * PG,
			     .new_addr = 0x1000010 + 25 * PG },
		before = { .op = PROFILE_MEM_OP_MUNMAP, .addr = 0x7000000, .len = 3 * PG },
		map_big = { .op = PROFILE_MEM_OP_MMAP, .addr = 0x40000000, .len = 51200 * PG },
		unmap_big = { .op = PROFILE_MEM_OP_MUNMAP, .addr = 0x40000000, .len = 51200 * PG },
		map_keep = { .op = PROFILE_MEM_OP_MMAP, .addr = 0x50000000, .len = 1280 * PG };

	(void)state;
	profile__init(&p, "cpu+mem", 99);
	pp = profile__add_target(&p, 7, "/usr/bin/python3", "python3 x.py", "python3", "3.11.2");
	assert_non_null(pp);
	fr[0] = profile__frame(&p, profile__func(&p, "f", "/x.py", 1, false), 2);
	fr[1] = profile__frame(&p, profile__func(&p, "f", "/x.py", 1, false), 3);
	big = profile_target__add_mem(pp, PROFILE_MEM_MAPPED, &fr[0], 1, 51200 * PG, 0.1, false);
	keep = profile_target__add_mem(pp, PROFILE_MEM_MAPPED, &fr[1], 1, 1280 * PG, 0.1, false);
	assert_true(big >= 0 && keep >= 0);
	profile_target__mem_call(pp, &brk_up, keep); /* rounded up: pages 0x1001-0x1029 */
	profile_target__mem_call(pp, &brk_down, big);
	assert_int_equal(pp->mem.stacks[keep].bytes[PROFILE_MEM_RELEASED], 15 * PG);
	profile_target__mem_call(pp, &before, big);
	assert_int_equal(pp->mem.released_unknown, 3 * PG);
	profile_target__mem_call(pp, &map_big, big);
	profile_target__mem_call(pp, &map_keep, keep);
	profile_target__mem_call(pp, &unmap_big, MEM_RANGE_NO_STACK);
	profile_target__mem_retain(pp, 0);
	assert_int_equal(pp->mem.stacks[big].bytes[PROFILE_MEM_RELEASED], 51200 * PG);
	assert_int_equal(pp->mem.stacks[big].bytes[PROFILE_MEM_RETAINED], 0);
	assert_int_equal(pp->mem.stacks[keep].bytes[PROFILE_MEM_RETAINED], 1280 * PG + 25 * PG);
	assert_int_equal(pp->mem.released_unknown, 3 * PG);
	assert_int_equal(pp->mem.ranges.n, 0);
	profile__free(&p);
}

/* Each range's age: merged only with a neighbour mapped close in time, retained split by it. */
static void test_ages(void **state)
{
	const uint64_t s = 1000000000ULL;
	struct mem_ranges rs = { 0 };
	struct profile p;
	struct profile_target *pp;
	struct tally t = { 0 };
	uint32_t fr;
	long keep, temp;
	struct profile_mem_call call = { .op = PROFILE_MEM_OP_MMAP };

	(void)state;
	/* one owner, adjacent: 50 ms apart merge (the newest time kept), 2 s apart do not */
	mem_ranges__map(&rs, 0, 10 * PG, 1, 10 * s, count, &t);
	mem_ranges__map(&rs, 10 * PG, 20 * PG, 1, 10 * s + 50000000, count, &t);
	mem_ranges__map(&rs, 20 * PG, 30 * PG, 1, 12 * s, count, &t);
	assert_string_equal(shape(&rs), "0-20:1 20-30:1");
	assert_int_equal(rs.r[0].t_ns, 10 * s + 50000000);
	/* a split keeps its time; a move (mremap) too, its growth is new */
	mem_ranges__unmap(&rs, 5 * PG, 6 * PG, count, &t);
	assert_int_equal(rs.r[1].t_ns, 10 * s + 50000000);
	mem_ranges__remap(&rs, 20 * PG, 10 * PG, 100 * PG, 12 * PG, 2, 13 * s, count, &t);
	assert_string_equal(shape(&rs), "0-5:1 6-20:1 100-110:1 110-112:2");
	assert_int_equal(rs.r[2].t_ns, 12 * s);
	assert_int_equal(rs.r[3].t_ns, 13 * s);
	mem_ranges__free(&rs);
	/* full: ranges a second old or more merge to make room; the new ones never */
	rs.max = 3;
	mem_ranges__map(&rs, 0, PG, 1, 1 * s, count, &t);
	mem_ranges__map(&rs, PG, 2 * PG, 1, 3 * s, count, &t);
	mem_ranges__map(&rs, 2 * PG, 3 * PG, 1, 5 * s, count, &t);
	assert_int_equal(rs.n, 3);
	mem_ranges__map(&rs, 10 * PG, 11 * PG, 1, 5 * s + 1, count, &t);
	assert_string_equal(shape(&rs), "0-2:1 2-3:1 10-11:1");
	assert_int_equal(rs.r[0].t_ns, 3 * s);
	assert_int_equal(rs.untracked, 0);
	mem_ranges__map(&rs, 20 * PG, 21 * PG, 1, 5 * s + 2, count, &t);
	assert_int_equal(rs.untracked, 1); /* nothing old enough to merge */
	mem_ranges__free(&rs);

	/* through the profile: held 1 s or more, or mapped in the run's last second */
	profile__init(&p, "cpu+mem", 99);
	pp = profile__add_target(&p, 7, "/usr/bin/python3", "python3 x.py", "python3", "3.11.2");
	fr = profile__frame(&p, profile__func(&p, "f", "/x.py", 1, false), 2);
	keep = profile_target__add_mem(pp, PROFILE_MEM_MAPPED, &fr, 1, 3 * PG, 0.1, false);
	fr = profile__frame(&p, profile__func(&p, "f", "/x.py", 1, false), 3);
	temp = profile_target__add_mem(pp, PROFILE_MEM_MAPPED, &fr, 1, 100 * PG, 0.1, false);
	for (int i = 0; i < 3; i++) { /* a page a round, every 2 s */
		call.addr = 0x10000000 + i * PG;
		call.len = PG;
		call.t_ns = (uint64_t)(2 * i + 1) * s + s / 2;
		profile_target__mem_call(pp, &call, keep);
	}
	call.addr = 0x20000000;
	call.len = 100 * PG;
	call.t_ns = 5 * s + 300000000;
	profile_target__mem_call(pp, &call, temp);
	call.addr = 0x30000000; /* no stack, long held */
	call.len = 2 * PG;
	call.t_ns = 1 * s;
	profile_target__mem_call(pp, &call, MEM_RANGE_NO_STACK);
	profile_target__mem_retain(pp, 6 * s);
	assert_int_equal(pp->mem.retained_at_ns, 6 * s);
	assert_int_equal(pp->mem.stacks[keep].bytes[PROFILE_MEM_RETAINED], 3 * PG);
	assert_int_equal(pp->mem.stacks[keep].bytes[PROFILE_MEM_RETAINED_RECENT], PG);
	assert_int_equal(pp->mem.stacks[temp].bytes[PROFILE_MEM_RETAINED], 100 * PG);
	assert_int_equal(pp->mem.stacks[temp].bytes[PROFILE_MEM_RETAINED_RECENT], 100 * PG);
	assert_int_equal(pp->mem.retained_no_stack, 2 * PG);
	assert_int_equal(pp->mem.retained_recent_no_stack, 0);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_munmap),
		cmocka_unit_test(test_owners_merge_and_overlay),
		cmocka_unit_test(test_mremap),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_profile_calls),
		cmocka_unit_test(test_ages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
