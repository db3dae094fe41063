/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The profile model: interning, stack counting, and the self/total and
 * per-line summaries every writer relies on, checked on a hand-built profile
 * whose answers are known exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "profile/profile.h"

static void test_interning(void **state)
{
	struct profile p;
	uint32_t a, b, c;

	(void)state;
	profile__init(&p, "cpu", 99);
	a = profile__func(&p, "f", "/x.py", 1, false);
	b = profile__func(&p, "f", "/x.py", 1, false);
	c = profile__func(&p, "f", "/y.py", 1, false);
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
	assert_int_not_equal(profile__func(&p, "f", "/x.py", 1, true), a);
	assert_int_equal(profile__frame(&p, a, 3), profile__frame(&p, a, 3));
	assert_int_not_equal(profile__frame(&p, a, 3), profile__frame(&p, a, 4));
	profile__free(&p);
}

/*
 * Stacks (innermost first), all in one process:
 *   10 x  leaf:7 <- mid:3 <- main:1
 *    5 x  mid:4 <- main:1
 *    2 x  rec:9 <- rec:9 <- main:1   (recursion: total counts rec once)
 */
static void test_stats(void **state)
{
	struct profile p;
	struct profile_target *pp;
	struct func_stat *fs;
	struct line_stat *ls;
	uint32_t fmain, fmid, fleaf, frec, s1[3], s2[2], s3[3];
	size_t n, i;

	(void)state;
	profile__init(&p, "cpu", 100);
	pp = profile__add_target(&p, 7, "/usr/bin/python3.11", "python3 x.py", "python3", "3.11.2");
	assert_non_null(pp);
	fmain = profile__func(&p, "main", "/x.py", 1, false);
	fmid = profile__func(&p, "mid", "/x.py", 2, false);
	fleaf = profile__func(&p, "leaf", "/x.py", 6, false);
	frec = profile__func(&p, "rec", "/x.py", 8, false);
	s1[0] = profile__frame(&p, fleaf, 7);
	s1[1] = profile__frame(&p, fmid, 3);
	s1[2] = profile__frame(&p, fmain, 1);
	s2[0] = profile__frame(&p, fmid, 4);
	s2[1] = s1[2];
	s3[0] = s3[1] = profile__frame(&p, frec, 9);
	s3[2] = s1[2];
	for (i = 0; i < 10; i++)
		assert_int_equal(profile_target__add_stack(pp, 7, s1, 3, 1), 0);
	assert_int_equal(profile_target__add_stack(pp, 7, s2, 2, 5), 0);
	assert_int_equal(profile_target__add_stack(pp, 7, s3, 3, 2), 0);
	assert_int_equal(pp->nstacks, 3);
	/* the same frames on another thread are another stack */
	assert_int_equal(profile_target__add_stack(pp, 8, s2, 2, 0), 0);
	assert_int_equal(pp->nstacks, 4);

	assert_int_equal(profile_target__func_stats(&p, pp, &fs, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(fs[0].func, fleaf);
	assert_int_equal(fs[0].self, 10);
	assert_int_equal(fs[0].total, 10);
	assert_int_equal(fs[1].func, fmid);
	assert_int_equal(fs[1].self, 5);
	assert_int_equal(fs[1].total, 15);
	assert_int_equal(fs[2].func, frec);
	assert_int_equal(fs[2].self, 2);
	assert_int_equal(fs[2].total, 2);
	assert_int_equal(fs[3].func, fmain);
	assert_int_equal(fs[3].self, 0);
	assert_int_equal(fs[3].total, 17);
	free(fs);

	assert_int_equal(profile_target__line_stats(&p, pp, &ls, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ls[0].frame, s1[0]);
	assert_int_equal(ls[0].self, 10);
	assert_int_equal(ls[1].frame, s2[0]);
	assert_int_equal(ls[1].self, 5);
	assert_int_equal(ls[2].frame, s3[0]);
	assert_int_equal(ls[2].self, 2);
	/* a line's total: every stack it is in, once each (rec's recursion) */
	assert_int_equal(ls[0].total, 10);
	assert_int_equal(ls[1].total, 5);
	assert_int_equal(ls[2].total, 2);
	free(ls);
	profile__free(&p);
}

/* A line's own samples: those of the native code it called and of its waits too. */
static void test_line_own(void **state)
{
	struct profile p;
	struct profile_target *pp;
	struct line_stat *ls;
	uint32_t fmain, fnat, fwait, s1[2], s2[2], s3[1];
	size_t n;

	(void)state;
	profile__init(&p, "wall", 100);
	pp = profile__add_target(&p, 7, "/usr/bin/python3.11", "python3 x.py", "python3", "3.11.2");
	assert_non_null(pp);
	fmain = profile__func(&p, "main", "/x.py", 1, false);
	fnat = profile__func_kind(&p, "memcpy", "libc.so.6", 0, false, PROFILE_FUNC_NATIVE);
	fwait = profile__func(&p, "<off-CPU: sleep>", PROFILE_OFFCPU_FILE, 0, false);
	s1[0] = profile__frame(&p, fnat, -1);
	s1[1] = profile__frame(&p, fmain, 2);
	s2[0] = profile__frame(&p, fwait, -1);
	s2[1] = profile__frame(&p, fmain, 3);
	s3[0] = profile__frame(&p, fwait, -1); /* a wait with no Python frame: no line's */
	assert_int_equal(profile_target__add_stack(pp, 7, s1, 2, 4), 0);
	assert_int_equal(profile_target__add_stack(pp, 7, s2, 2, 9), 0);
	assert_int_equal(profile_target__add_stack(pp, 7, s3, 1, 1), 0);
	assert_int_equal(profile__innermost_line(&p, &pp->stacks[0]), 1);
	assert_int_equal(profile__innermost_line(&p, &pp->stacks[2]), 1);
	assert_int_equal(profile_target__line_stats(&p, pp, &ls, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ls[0].frame, s2[1]);
	assert_int_equal(ls[0].self, 9);
	assert_int_equal(ls[1].frame, s1[1]);
	assert_int_equal(ls[1].self, 4);
	free(ls);
	profile__free(&p);
}

static void test_procs_and_threads(void **state)
{
	struct profile p;
	struct profile_target *a;
	struct profile_thread *t;

	(void)state;
	profile__init(&p, "cpu", 99);
	assert_non_null(profile__add_target(&p, 10, "", "", "", ""));
	assert_non_null(profile__add_target(&p, 11, "", "", "", ""));
	/* a reused pid belongs to the newest process */
	assert_non_null(profile__add_target(&p, 10, "/new", "", "", ""));
	a = profile__find_target(&p, 10);
	assert_string_equal(a->exe, "/new");
	assert_null(profile__find_target(&p, 12));
	t = profile_target__thread(a, 5);
	t->samples = 3;
	assert_int_equal(profile_target__thread(a, 5)->samples, 3);
	assert_int_equal(a->nthreads, 1);
	profile__free(&p);
}

/* Role of a process with this command line, origin and parent. */
static void role_is(const char *cmdline, enum profile_origin origin, int ppid, const char *want)
{
	struct profile_target pp = { .pid = 300, .ppid = ppid, .origin = origin };
	char buf[PROFILE_ROLE];

	pp.cmdline = (char *)cmdline;
	pp.comm = (char *)"python3";
	assert_string_equal(profile_target__role(&pp, buf, sizeof(buf)), want);
}

static void test_roles(void **state)
{
	(void)state;
	role_is("/usr/bin/python3 -B -c from multiprocessing.spawn import spawn_main; "
		"spawn_main(tracker_fd=27, pipe_handle=31) --multiprocessing-fork",
		PROFILE_EXECED, 200, "spawn worker of 200");
	role_is("python3 -c from multiprocessing.forkserver import main; main(4, 5, ['__main__'])",
		PROFILE_EXECED, 200, "forkserver of 200");
	role_is("python3 -c from multiprocessing.resource_tracker import main;main(5)",
		PROFILE_FOUND, 200, "resource tracker of 200");
	/* a fork keeps its parent's command line, a spawn worker's or a forkserver's too */
	role_is("python3 -c from multiprocessing.forkserver import main", PROFILE_FORKED, 201,
		"fork of 201");
	role_is("/usr/bin/python3 -u /srv/a/b/very/long/directory/name/for/the/app/serve.py --port 1",
		PROFILE_FOUND, 1, "serve.py");
	role_is("python3 -X dev -m package.module --flag", PROFILE_LAUNCHED, 1,
		"-m package.module --flag");
	role_is("python3 -c print(1)", PROFILE_EXECED, 1, "exec of 300: -c print(1)");
	role_is("python3 -c "
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		PROFILE_FOUND, 1, "-c xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	role_is("python3", PROFILE_FOUND, 1, "python3"); /* no script: its comm */
	role_is("", PROFILE_FOUND, 1, "python3");
	{
		struct profile_target none = { .cmdline = (char *)"", .comm = (char *)"" };
		char buf[PROFILE_ROLE];

		assert_string_equal(profile_target__role(&none, buf, sizeof(buf)), "?");
	}
	assert_int_equal(profile_origin_of(profile_origin_name(PROFILE_EXECED)), PROFILE_EXECED);
	assert_int_equal(profile_origin_of("adopted"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interning), cmocka_unit_test(test_stats),
		cmocka_unit_test(test_line_own),  cmocka_unit_test(test_procs_and_threads),
		cmocka_unit_test(test_roles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
