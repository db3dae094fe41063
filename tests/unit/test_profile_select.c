/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --pid, --match, --thread: a profile cut to what they select, with what
 * was left out counted, the kept sections exactly as they were, the stack
 * index still finding the kept stacks, and the refusals (a merged profile,
 * per-process figures under --thread, a bad or too long pattern).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"

/*
 * Three processes: 10 (a parent, threads 10 "python3" and 11 "sel-alpha"),
 * 20 (a spawn worker, one thread), 30 (idle, no command line: its comm).
 */
static void build3(struct profile *p, uint32_t fr[3])
{
	struct profile_target *pp;
	uint32_t fa, fb, fw;

	profile__init(p, "cpu", 99);
	fa = profile__func(p, "alpha", "/w.py", 1, false);
	fb = profile__func(p, "main", "/w.py", 9, false);
	fw = profile__func(p, "work", "/w.py", 5, false);
	fr[0] = profile__frame(p, fa, 2);
	fr[1] = profile__frame(p, fb, 10);
	fr[2] = profile__frame(p, fw, 6);
	pp = profile__add_target(p, 10, "/usr/bin/python3", "python3 w.py", "python3", "3.11");
	assert_int_equal(profile_target__add_stack(pp, 10, &fr[1], 1, 7), 0);
	assert_int_equal(profile_target__add_stack(pp, 11, &fr[0], 2, 40), 0);
	assert_int_equal(profile_target__add_stack(pp, 10, &fr[0], 1, 3), 0);
	pp->samples = 50;
	pp->truncated = 2;
	strcpy(profile_target__thread(pp, 10)->name, "python3");
	profile_target__thread(pp, 10)->samples = 10;
	strcpy(profile_target__thread(pp, 11)->name, "sel-alpha");
	profile_target__thread(pp, 11)->samples = 40;
	pp = profile__add_target(p, 20, "/usr/bin/python3",
				 "python3 -c from multiprocessing.spawn import spawn_main",
				 "python3", "3.11");
	assert_int_equal(profile_target__add_stack(pp, 20, &fr[2], 1, 25), 0);
	pp->samples = 25;
	strcpy(profile_target__thread(pp, 20)->name, "python3");
	profile_target__thread(pp, 20)->samples = 25;
	pp = profile__add_target(p, 30, "/usr/bin/python3", "", "idler", "3.11");
	profile_target__thread(pp, 30);
}

static void test_select_pid(void **state)
{
	const int pids[] = { 20, 99 };
	const struct profile_select sel = { .pids = pids, .npids = 2 };
	struct profile p;
	uint32_t fr[3];
	char why[256];

	(void)state;
	build3(&p, fr);
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), 0);
	assert_int_equal(p.ntargets, 1);
	assert_int_equal(p.targets[0].pid, 20);
	assert_int_equal(p.targets[0].samples, 25);
	assert_int_equal(p.targets[0].nthreads, 1);
	assert_int_equal(p.sel_procs_out, 2);
	assert_int_equal(p.sel_threads_out, 3);
	assert_int_equal(p.sel_samples_out, 50);
	assert_false(p.sel_threads_cut);
	assert_string_equal(p.selection, "--pid 20,99");
	profile__free(&p);
}

static void test_select_match(void **state)
{
	const struct profile_select sel = { .match = "spawn_main|^idl" };
	struct profile p;
	uint32_t fr[3];
	char why[256];

	(void)state;
	build3(&p, fr);
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), 0);
	/* the idle one has no command line: its comm is what it is known by */
	assert_int_equal(p.ntargets, 2);
	assert_int_equal(p.targets[0].pid, 20);
	assert_int_equal(p.targets[1].pid, 30);
	assert_int_equal(p.sel_procs_out, 1);
	assert_int_equal(p.sel_samples_out, 50);
	assert_string_equal(p.selection, "--match 'spawn_main|^idl'");
	profile__free(&p);
}

static void test_select_thread(void **state)
{
	const struct profile_select sel = { .match = "w\\.py", .thread = "^sel-" };
	struct profile p;
	struct profile_target *pp;
	uint32_t fr[3];
	char why[256];

	(void)state;
	build3(&p, fr);
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), 0);
	/* 20 matches the command but has no such thread: left out with 30 */
	assert_int_equal(p.ntargets, 1);
	pp = &p.targets[0];
	assert_int_equal(pp->pid, 10);
	assert_int_equal(pp->nthreads, 1);
	assert_int_equal(pp->threads[0].tid, 11);
	assert_int_equal(pp->nstacks, 1);
	assert_int_equal(pp->stacks[0].tid, 11);
	assert_int_equal(pp->samples, 40);
	assert_int_equal(pp->truncated, 2); /* not kept by thread: the process's, said so */
	assert_true(p.sel_threads_cut);
	assert_int_equal(p.sel_procs_out, 2);
	assert_int_equal(p.sel_threads_out, 3); /* 10's main thread, 20's and 30's */
	assert_int_equal(p.sel_samples_out, 10 + 25);
	assert_string_equal(p.selection, "--match 'w\\.py' --thread '^sel-'");
	/* the stack index finds the kept stack where it is now */
	assert_int_equal(profile_target__add_stack(pp, 11, &fr[0], 2, 1), 0);
	assert_int_equal(pp->nstacks, 1);
	assert_int_equal(pp->stacks[0].count, 41);
	profile__free(&p);
}

static void test_select_again(void **state)
{
	const struct profile_select a = { .match = "python3" }, b = { .thread = "python3" };
	struct profile p;
	uint32_t fr[3];
	char why[256];

	(void)state;
	build3(&p, fr);
	assert_int_equal(profile__select(&p, &a, why, sizeof(why)), 0);
	assert_int_equal(profile__select(&p, &b, why, sizeof(why)), 0);
	/* a report of a selected run: the counts add up, the options follow */
	assert_string_equal(p.selection, "--match 'python3' --thread 'python3'");
	assert_int_equal(p.ntargets, 2);
	assert_int_equal(p.sel_procs_out, 1);
	assert_int_equal(p.sel_threads_out, 2);
	assert_int_equal(p.sel_samples_out, 40);
	profile__free(&p);
}

static void test_select_refused(void **state)
{
	char longer[PROFILE_PATTERN_MAX + 2], why[256];
	const int pids[] = { 10 };
	struct profile_select sel = { .match = "(" };
	struct profile p;
	uint32_t fr[3];

	(void)state;
	build3(&p, fr);
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--match '(' is not a regular expression"));
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	sel = (struct profile_select){ .thread = longer };
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--thread takes a pattern of at most 1024 bytes"));
	p.mem = true;
	sel = (struct profile_select){ .thread = "x" };
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "memory figures are per process"));
	p.mem = false;
	assert_int_equal(profile__merge(&p), 0);
	sel = (struct profile_select){ .pids = pids, .npids = 1 };
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "recorded with --merge"));
	/* nothing was changed by a refusal */
	assert_null(p.selection);
	assert_int_equal(p.ntargets, 1);
	assert_int_equal(p.targets[0].samples, 75);
	/* a merged profile keeps its threads: --thread still selects */
	sel = (struct profile_select){ .thread = "alpha" };
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), 0);
	assert_int_equal(p.targets[0].samples, 40);
	profile__free(&p);
}

static void test_select_bounded(void **state)
{
	char pat[PROFILE_PATTERN_MAX + 1], why[256];
	const struct profile_select sel = { .match = pat, .thread = pat };
	struct profile p;
	uint32_t fr[3];
	int i;

	(void)state;
	memset(pat, '.', sizeof(pat) - 1);
	pat[0] = '^';
	pat[1] = '|';
	pat[sizeof(pat) - 1] = '\0';
	build3(&p, fr);
	/* selections of selections: the description stays within its bound */
	for (i = 0; i < 10; i++)
		assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), 0);
	assert_true(strlen(p.selection) <= PROFILE_SELECTION_MAX);
	assert_non_null(strstr(p.selection, "(earlier selections) --match '^|"));
	/* 30's one thread has no name, which no pattern matches */
	assert_int_equal(p.ntargets, 2);
	profile__free(&p);
}

static void test_thread_names(void **state)
{
	struct profile_thread th = { .tid = 1 };
	const char *names[PROFILE_THREAD_NAMES];

	(void)state;
	assert_int_equal(profile_thread__names(&th, names), 0);
	strcpy(th.name, "sel-beta");
	assert_int_equal(profile_thread__names(&th, names), 1);
	assert_string_equal(names[0], "sel-beta");
	/* a name field without its NUL (a hostile saved file's) is no name */
	memset(th.name, 'x', sizeof(th.name));
	assert_int_equal(profile_thread__names(&th, names), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select_pid),     cmocka_unit_test(test_select_match),
		cmocka_unit_test(test_select_thread),  cmocka_unit_test(test_select_again),
		cmocka_unit_test(test_select_refused), cmocka_unit_test(test_select_bounded),
		cmocka_unit_test(test_thread_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
