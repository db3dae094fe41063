/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --merge: two process sections become one holding all their stacks and
 * threads, with the counts summed and every function ranked over both.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"

static void test_merge_two(void **state)
{
	struct profile p;
	struct profile_target *a, *b;
	struct func_stat *st;
	uint32_t work, main_fn, fw, fm, stack[2];
	size_t n;

	(void)state;
	profile__init(&p, "cpu", 99);
	work = profile__func(&p, "work", "/w.py", 3, false);
	main_fn = profile__func(&p, "main", "/w.py", 10, false);
	fw = profile__frame(&p, work, 4);
	fm = profile__frame(&p, main_fn, 12);
	stack[0] = fw;
	stack[1] = fm;

	a = profile__add_target(&p, 10, "/usr/bin/python3.11", "python3 w.py", "python3", "3.11.2");
	assert_non_null(a);
	assert_int_equal(profile_target__add_stack(a, 10, stack, 2, 30), 0);
	assert_int_equal(profile_target__add_stack(a, 10, &fm, 1, 5), 0);
	a->samples = 35;
	a->unresolved = 1;
	a->exited = true;
	strcpy(profile_target__thread(a, 10)->name, "python3");
	profile_target__thread(a, 10)->samples = 35;

	b = profile__add_target(&p, 20, "/opt/py/bin/python3.13", "python3 w.py", "python3",
				"3.13.5");
	assert_non_null(b);
	assert_int_equal(profile_target__add_stack(b, 20, stack, 2, 60), 0);
	b->samples = 60;
	b->truncated = 2;
	profile_target__thread(b, 20)->samples = 60;
	/* --gil and --mode wall figures of a thread and a stack come along */
	profile_target__thread(b, 20)->gil_unknown = 3;
	profile_target__thread(b, 20)->offcpu_ns[PROFILE_OFFCPU_IO] = 7;
	b->stacks[0].gil_held = 50;

	assert_int_equal(profile__merge(&p), 0);
	assert_int_equal(p.ntargets, 1);
	a = &p.targets[0];
	assert_int_equal(a->pid, 0);
	assert_string_equal(a->cmdline, "2 processes merged: 10 20");
	/* named by every process it holds, not the first's alone */
	assert_int_equal(p.nmerged, 2);
	assert_int_equal(p.merged_pids[0], 10);
	assert_int_equal(p.merged_pids[1], 20);
	assert_string_equal(a->python, "3.11.2, 3.13.5");
	assert_string_equal(a->exe, "/usr/bin/python3.11, /opt/py/bin/python3.13");
	assert_int_equal(a->samples, 95);
	assert_int_equal(a->unresolved, 1);
	assert_int_equal(a->truncated, 2);
	assert_false(a->exited); /* one of the two still runs */
	assert_int_equal(a->nthreads, 2);
	assert_string_equal(a->threads[0].name, "python3");
	assert_int_equal(a->threads[1].samples, 60);
	assert_int_equal(a->threads[1].gil_unknown, 3);
	assert_int_equal(a->threads[1].offcpu_ns[PROFILE_OFFCPU_IO], 7);
	assert_int_equal(a->stacks[a->nstacks - 1].gil_held, 50);

	assert_int_equal(profile_target__func_stats(&p, a, &st, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(st[0].func, work);
	assert_int_equal(st[0].self, 90);
	assert_int_equal(st[0].total, 90);
	assert_int_equal(st[1].func, main_fn);
	assert_int_equal(st[1].self, 5);
	assert_int_equal(st[1].total, 95);
	free(st);
	profile__free(&p);
}

static void test_merge_empty(void **state)
{
	struct profile p;

	(void)state;
	profile__init(&p, "cpu", 99);
	assert_int_equal(profile__merge(&p), 0);
	assert_int_equal(p.ntargets, 0);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two),
		cmocka_unit_test(test_merge_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
