/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The timeline's pure parts (profile_timeline.c, profile_offcpu.c): the
 * cap and what it drops, counted by kind; processes kept only with their
 * start, however many a target forks; an off-CPU interval placed by its
 * end and its kernel length, not by its block record's later stamp; times
 * since the run's start, an interval begun before it cut; each thread's
 * events in time; stacks and strings interned once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"

#define START 1000000000ULL /* the run's start on the monotonic clock */

static struct profile_target *timeline_profile(struct profile *p, uint64_t cap)
{
	struct profile_target *pp;

	profile__init(p, "wall", 100);
	p->wall = true;
	p->start_ns = START;
	profile__timeline_on(p, cap);
	pp = profile__add_target(p, 10, "/py", "py x", "py", "3.11");
	pp->tl_proc = profile__tl_proc(p, 10, "py", "py x", PROFILE_TL_FOUND, 0, START + 5);
	return pp;
}

static void cpu(struct profile *p, struct profile_target *pp, uint32_t tid, uint64_t at,
		const uint32_t *fr, uint32_t n)
{
	struct profile_tl_add a = { .kind = PROFILE_TL_CPU,
				    .tid = tid,
				    .ktime_ns = at,
				    .frames = fr,
				    .nframes = n };

	profile_target__tl_add(p, pp, &a);
}

static void test_cap_counts_drops(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t fr[2];
	int i;

	(void)state;
	pp = timeline_profile(&p, 4);
	assert_int_equal(pp->tl_proc, 1);
	fr[0] = profile__frame(&p, profile__func(&p, "work", "/x.py", 4, false), 5);
	fr[1] = profile__frame(&p, profile__func(&p, "main", "/x.py", 1, false), 9);
	for (i = 0; i < 5; i++)
		cpu(&p, pp, 11, START + 100 + (uint64_t)i, fr, 2);
	/* the START and 3 samples kept, 2 samples dropped; a fork and an exit dropped too */
	assert_int_equal(p.timeline.n, 4);
	assert_int_equal(p.timeline.dropped[PROFILE_TL_CPU], 2);
	profile__tl_proc_event(&p, 10, PROFILE_TL_FORK, 12, START + 200);
	profile__tl_proc_event(&p, 10, PROFILE_TL_EXIT, 0, START + 300);
	assert_int_equal(p.timeline.dropped[PROFILE_TL_FORK], 1);
	assert_int_equal(p.timeline.dropped[PROFILE_TL_EXIT], 1);
	assert_int_equal(profile_timeline__dropped(&p.timeline), 4);
	/* one stack for the three samples kept */
	assert_int_equal(p.timeline.nstacks, 1);
	assert_int_equal(p.timeline.events[1].ref, 0);
	assert_int_equal(p.timeline.events[3].t_ns, 102);
	profile__free(&p);
}

static void test_forks_bounded(void **state)
{
	struct profile p;
	struct profile_target *pp, *child;
	int pid;

	(void)state;
	pp = timeline_profile(&p, 100);
	(void)pp;
	/* a target forking 10000 children keeps at most cap processes */
	for (pid = 100; pid < 10100; pid++) {
		profile__tl_proc_event(&p, 10, PROFILE_TL_FORK, (uint32_t)pid, START + 10);
		profile__tl_proc(&p, pid, "py", "py x", PROFILE_TL_FORKED, 10, START + 10);
	}
	assert_true(p.timeline.nprocs <= 100);
	assert_int_equal(p.timeline.n, 100);
	assert_int_equal(p.timeline.n + profile_timeline__dropped(&p.timeline), 1 + 2 * 10000);
	/* a section whose process found no room: its events dropped, counted */
	child = profile__add_target(&p, 20000, "/py", "py x", "py", "3.11");
	child->tl_proc = profile__tl_proc(&p, 20000, "py", "py x", PROFILE_TL_FOUND, 0, START);
	assert_int_equal(child->tl_proc, 0);
	cpu(&p, child, 20000, START + 1, NULL, 0);
	assert_int_equal(p.timeline.n + profile_timeline__dropped(&p.timeline), 1 + 2 * 10000 + 2);
	profile__free(&p);
}

static void test_offcpu_placed_by_its_end(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t fr[1];
	const struct profile_tl_event *e;

	(void)state;
	pp = timeline_profile(&p, 100);
	fr[0] = profile__frame(&p, profile__func(&p, "work", "/x.py", 4, false), 5);
	/*
	 * Blocked at +1000 ns: its record is stamped after the stack walk, at +1500;
	 * back at +5000 after 4000 ns: it began at +1000, not +1500.
	 */
	profile_target__offcpu_block(pp, 11, fr, 1, PROFILE_OFFCPU_SLEEP, START + 1500, false);
	assert_int_equal(profile_target__offcpu_end(&p, pp, 11, 4000, START + 5000), 0);
	e = &p.timeline.events[p.timeline.n - 1];
	assert_int_equal(e->kind, PROFILE_TL_OFFCPU);
	assert_int_equal(e->t_ns, 1000);
	assert_int_equal(e->dur_ns, 4000);
	assert_int_equal(e->arg, PROFILE_OFFCPU_SLEEP);
	/* an interval begun before the run: the part before it cut */
	profile_target__offcpu_block(pp, 12, fr, 1, PROFILE_OFFCPU_IO, START - 300, false);
	assert_int_equal(profile_target__offcpu_end(&p, pp, 12, 1000, START + 700), 0);
	e = &p.timeline.events[p.timeline.n - 1];
	assert_int_equal(e->t_ns, 0);
	assert_int_equal(e->dur_ns, 700);
	profile__free(&p);
}

static void test_order_by_thread_then_time(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t *order;
	size_t i;

	(void)state;
	pp = timeline_profile(&p, 100);
	cpu(&p, pp, 12, START + 30, NULL, 0);
	cpu(&p, pp, 11, START + 20, NULL, 0);
	cpu(&p, pp, 12, START + 10, NULL, 0);
	cpu(&p, pp, 11, START + 20, NULL, 0);
	order = profile_timeline__order(&p.timeline);
	assert_non_null(order);
	/* the START (tid 10), then tid 11 in time (equal times as counted), then tid 12 */
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 4);
	assert_int_equal(order[3], 3);
	assert_int_equal(order[4], 1);
	for (i = 1; i < p.timeline.n; i++)
		assert_true(p.timeline.events[order[i - 1]].tid <= p.timeline.events[order[i]].tid);
	free(order);
	profile__free(&p);
}

static void test_interned(void **state)
{
	struct profile_timeline t;
	uint32_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 4 };

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(profile_timeline__stack(&t, a, 3), 0);
	assert_int_equal(profile_timeline__stack(&t, b, 3), 1);
	assert_int_equal(profile_timeline__stack(&t, a, 3), 0);
	assert_int_equal(profile_timeline__stack(&t, a, 2), 2);
	assert_int_equal(t.nframes, 8);
	assert_int_equal(profile_timeline__string(&t, "json"), 0);
	assert_int_equal(profile_timeline__string(&t, "json.decoder"), 1);
	assert_int_equal(profile_timeline__string(&t, "json"), 0);
	profile_timeline__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_counts_drops),
		cmocka_unit_test(test_forks_bounded),
		cmocka_unit_test(test_offcpu_placed_by_its_end),
		cmocka_unit_test(test_order_by_thread_then_time),
		cmocka_unit_test(test_interned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
