/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --mode wall's pure parts: the off-CPU class table (bpf/offcpu_class.h, the
 * one the BPF program runs), the ns-to-samples conversion with its carried
 * remainder, and the interval accounting of profile_offcpu.c (pending
 * stacks, charges, the flush at the end, --idle).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "../../bpf/offcpu_class.h"

#define GIL 0x7f0000001000ULL

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(py_offcpu_classify(PY_NR_nanosleep, 0x1234, GIL), PY_OFFCPU_SLEEP);
	assert_int_equal(py_offcpu_classify(PY_NR_clock_nanosleep, 1, GIL), PY_OFFCPU_SLEEP);
	/* select/poll: on no descriptor a sleep, else I/O */
	assert_int_equal(py_offcpu_classify(PY_NR_select, 0, GIL), PY_OFFCPU_SLEEP);
	assert_int_equal(py_offcpu_classify(PY_NR_select, 4, GIL), PY_OFFCPU_IO);
	assert_int_equal(py_offcpu_classify(PY_NR_poll, 0, 0), PY_OFFCPU_SLEEP);
	assert_int_equal(py_offcpu_classify(PY_NR_ppoll, 0x7ffd0000, 0), PY_OFFCPU_IO);
	assert_int_equal(py_offcpu_classify(PY_NR_read, 3, GIL), PY_OFFCPU_IO);
	assert_int_equal(py_offcpu_classify(PY_NR_recvfrom, 3, GIL), PY_OFFCPU_IO);
	assert_int_equal(py_offcpu_classify(PY_NR_epoll_wait, 5, GIL), PY_OFFCPU_IO);
	assert_int_equal(py_offcpu_classify(PY_NR_accept4, 5, GIL), PY_OFFCPU_IO);
	/* a futex word inside the GIL's struct: its cond or mutex */
	assert_int_equal(py_offcpu_classify(PY_NR_futex, GIL, GIL), PY_OFFCPU_GIL);
	assert_int_equal(py_offcpu_classify(PY_NR_futex, GIL + 0x20, GIL), PY_OFFCPU_GIL);
	assert_int_equal(py_offcpu_classify(PY_NR_futex, GIL + PY_GIL_STRUCT_SIZE - 4, GIL),
			 PY_OFFCPU_GIL);
	assert_int_equal(py_offcpu_classify(PY_NR_futex, GIL + PY_GIL_STRUCT_SIZE, GIL),
			 PY_OFFCPU_LOCK);
	assert_int_equal(py_offcpu_classify(PY_NR_futex, GIL - 4, GIL), PY_OFFCPU_LOCK);
	/* GIL unknown: every futex is a lock */
	assert_int_equal(py_offcpu_classify(PY_NR_futex, GIL, 0), PY_OFFCPU_LOCK);
	assert_int_equal(py_offcpu_classify(PY_NR_flock, 3, GIL), PY_OFFCPU_LOCK);
	assert_int_equal(py_offcpu_classify(61 /* wait4 */, 0, GIL), PY_OFFCPU_OTHER);
	assert_int_equal(py_offcpu_classify(-1, 0, GIL), PY_OFFCPU_OTHER);
}

static void test_ns_to_samples(void **state)
{
	uint64_t rem = 0, total = 0;
	int i;

	(void)state;
	assert_int_equal(profile_ns_to_samples(100, 1000000000, &rem), 100);
	assert_int_equal(rem, 0);
	/* 1000 intervals of 3 ms at 99 Hz: 297 samples, none lost to rounding */
	for (i = 0; i < 1000; i++)
		total += profile_ns_to_samples(99, 3000000, &rem);
	assert_int_equal(total, 297);
	/* a huge interval does not overflow */
	rem = 0;
	assert_int_equal(profile_ns_to_samples(20000, 100000000000000ULL, &rem), 2000000000ULL);
}

/* Stacks: [pseudo, work:5, main:1] charged; the samples and ns where they belong. */
static void test_intervals(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t fr[2];
	size_t i;
	int cls = -2;

	(void)state;
	profile__init(&p, "wall", 100);
	p.wall = true;
	pp = profile__add_target(&p, 10, "/py", "py x", "py", "3.11");
	fr[0] = profile__frame(&p, profile__func(&p, "work", "/x.py", 4, false), 5);
	fr[1] = profile__frame(&p, profile__func(&p, "main", "/x.py", 1, false), 1);
	/* an end with no start: not charged, counted */
	assert_int_equal(profile_target__offcpu_end(&p, pp, 11, 5000000, 0), -2 /* -ENOENT */);
	assert_int_equal(p.offcpu_unmatched, 1);
	/* 4 ms of waiting for a CPU at 100 Hz: no sample yet, so no stack and no
	 * frame (a frame without weight would be drawn on-CPU by the flame graph) */
	assert_int_equal(profile_target__offcpu_block(pp, 11, fr, 2, PROFILE_OFFCPU_RUNQUEUE, 0,
						      false),
			 0);
	assert_int_equal(profile_target__offcpu_end(&p, pp, 11, 4000000, 0), 0);
	assert_int_equal(pp->nstacks, 0);
	assert_int_equal(p.nframes, 2);
	assert_int_equal(profile_target__thread(pp, 11)->offcpu_ns[PROFILE_OFFCPU_RUNQUEUE],
			 4000000);
	/* 250 ms asleep: 25 samples, on [<off-CPU: sleep>, work:5, main:1] */
	assert_int_equal(profile_target__offcpu_block(pp, 11, fr, 2, PROFILE_OFFCPU_SLEEP, 1000,
						      false),
			 0);
	assert_int_equal(profile_target__offcpu_end(&p, pp, 11, 250000000, 0), 0);
	assert_int_equal(pp->nstacks, 1);
	assert_int_equal(pp->stacks[0].count, 25);
	assert_int_equal(pp->stacks[0].nframes, 3);
	assert_memory_equal(pp->stacks[0].frames + 1, fr, sizeof(fr));
	cls = profile__offcpu_class(&p, &pp->stacks[0]);
	assert_int_equal(cls, PROFILE_OFFCPU_SLEEP);
	assert_int_equal(pp->samples, 25);
	assert_int_equal(profile_target__thread(pp, 11)->offcpu_ns[PROFILE_OFFCPU_SLEEP],
			 250000000);
	/* closed: a second end is unmatched */
	assert_int_equal(profile_target__offcpu_end(&p, pp, 11, 1, 0), -2);
	/* blocked where it blocked last time: the same stack, 100 ms more, as I/O now */
	assert_int_equal(profile_target__offcpu_again(pp, 11, PROFILE_OFFCPU_IO, 5), 0);
	assert_int_equal(profile_target__offcpu_end(&p, pp, 11, 100000000, 0), 0);
	assert_int_equal(pp->nstacks, 2);
	assert_int_equal(pp->stacks[1].count, 10);
	assert_memory_equal(pp->stacks[1].frames + 1, fr, sizeof(fr));
	assert_int_equal(profile__offcpu_class(&p, &pp->stacks[1]), PROFILE_OFFCPU_IO);
	/* no stack known for that thread: refused (its end is then unmatched) */
	assert_int_equal(profile_target__offcpu_again(pp, 99, PROFILE_OFFCPU_IO, 5), -2);
	/* the value the kernel packs: ns and class back out */
	assert_int_equal(PY_OFFCPU_END_SAME(123456789ULL, PY_OFFCPU_LOCK) & PY_OFFCPU_NS_MASK,
			 123456789);
	assert_int_equal(PY_OFFCPU_END_CLASS(PY_OFFCPU_END_SAME(1ULL, PY_OFFCPU_LOCK)),
			 PY_OFFCPU_LOCK);
	/* open at the end: charged to the end; blocked all run (primed): only with --idle */
	profile_target__offcpu_block(pp, 11, fr, 1, PROFILE_OFFCPU_IO, 1000000000, false);
	profile_target__offcpu_block(pp, 12, fr, 2, PROFILE_OFFCPU_LOCK, 0, true);
	profile__offcpu_flush(&p, 1500000000);
	assert_int_equal(pp->samples, 25 + 10 + 50);
	assert_int_equal(p.offcpu_idle_hidden, 1);
	for (i = 0; i < pp->nstacks; i++)
		assert_int_not_equal(pp->stacks[i].tid, 12);
	p.idle = true;
	profile_target__offcpu_block(pp, 12, fr, 2, PROFILE_OFFCPU_LOCK, 0, true);
	profile__offcpu_flush(&p, 1500000000);
	assert_int_equal(pp->samples, 25 + 10 + 50 + 150);
	/* an on-CPU stack has no class */
	profile_target__add_stack(pp, 11, fr, 2, 1);
	assert_int_equal(profile__offcpu_class(&p, &pp->stacks[pp->last_stack]), -1);
	profile__free(&p);
}

/*
 * The end of a run as the kernel saw it: what it still holds open is
 * charged (a repeat block's too, whose stack it never sent), what only this
 * side thought open (its closing record lost) is not.
 */
static void test_end_of_run(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t fr[1];

	(void)state;
	profile__init(&p, "wall", 100);
	p.wall = true;
	pp = profile__add_target(&p, 10, "/py", "py x", "py", "3.11");
	fr[0] = profile__frame(&p, profile__func(&p, "work", "/x.py", 4, false), 5);
	/* 21: slept 100 ms, then slept again at the same place from 1 s: no record */
	profile_target__offcpu_block(pp, 21, fr, 1, PROFILE_OFFCPU_SLEEP, 0, false);
	profile_target__offcpu_end(&p, pp, 21, 100000000, 0);
	/* 22: its closing record was lost: this side still thinks it off the CPU */
	profile_target__offcpu_block(pp, 22, fr, 1, PROFILE_OFFCPU_IO, 0, false);
	/* 23: blocked at 2 s, but its record never came: the stack known is older */
	profile_target__offcpu_block(pp, 23, fr, 1, PROFILE_OFFCPU_LOCK, 1000, false);
	profile_target__offcpu_end(&p, pp, 23, 1000, 0);
	/* 24: blocked at 1.5 s, its record came (stamped a little after) */
	profile_target__offcpu_block(pp, 24, fr, 1, PROFILE_OFFCPU_IO, 1500000100, false);
	assert_int_equal(pp->samples, 10);
	profile__offcpu_close_all(&p);
	assert_int_equal(profile_target__offcpu_open_at_end(pp, 21, PROFILE_OFFCPU_SLEEP,
							    1000000000, true),
			 0);
	assert_int_equal(profile_target__offcpu_open_at_end(pp, 23, PROFILE_OFFCPU_LOCK, 2000000000,
							    false),
			 -2);
	assert_int_equal(profile_target__offcpu_open_at_end(pp, 24, PROFILE_OFFCPU_IO, 1500000000,
							    false),
			 0);
	/* nothing known of 25 */
	assert_int_equal(profile_target__offcpu_open_at_end(pp, 25, PROFILE_OFFCPU_IO, 1, true),
			 -2);
	profile__offcpu_flush(&p, 3000000000ULL);
	/* 21: 2 s more; 24: 1.5 s; 22 and 23 nothing */
	assert_int_equal(profile_target__thread(pp, 21)->offcpu_ns[PROFILE_OFFCPU_SLEEP],
			 2100000000ULL);
	assert_int_equal(profile_target__thread(pp, 24)->offcpu_ns[PROFILE_OFFCPU_IO],
			 1500000000ULL);
	assert_int_equal(profile_target__thread(pp, 22)->offcpu_ns[PROFILE_OFFCPU_IO], 0);
	assert_int_equal(profile_target__thread(pp, 23)->offcpu_ns[PROFILE_OFFCPU_LOCK], 1000);
	assert_int_equal(pp->samples, 10 + 200 + 150);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_ns_to_samples),
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_end_of_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
