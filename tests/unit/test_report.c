/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writers against golden files: a hand-built profile (two processes, one of
 * them exited, an unresolved frame, a name that needs JSON escaping) is
 * written by each writer and compared byte for byte with tests/golden/.
 * Run with UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate
 * format change, then review the diff.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/report.h"
#include "report/report_common.h"
#include "fixture_profile.h"
#include "golden.h"

static void check_golden(const struct report_writer *w, const char *name)
{
	struct report_opts o = { .top_functions = 20,
				 .top_lines = 20,
				 .line_report = 5,
				 .tool_version = "0.1.0" };
	struct profile p;

	build(&p);
	golden_check(w, &p, &o, name);
	profile__free(&p);
}

static void test_text_golden(void **state)
{
	(void)state;
	check_golden(&report_text, "report.txt");
}

static void test_json_golden(void **state)
{
	(void)state;
	check_golden(&report_json, "report.json");
}

/*
 * The title line of the flame graphs and pprof's comment: the process with
 * the most samples by pid and role, its thread with the most by tid and
 * name, the name cleaned (a target's escape is not sent on); the lead moved
 * to the other process moves both; nothing without samples.
 */
static void test_busiest(void **state)
{
	char buf[REPORT_BUSIEST_LEN];
	struct profile p;

	(void)state;
	build(&p);
	p.targets[0].pid = 4242;
	p.targets[1].pid = 4243;
	assert_string_equal(report_busiest(&p, buf, sizeof(buf)),
			    "busiest: pid 4242 (app.py), 99.0% of the samples; its thread 0 "
			    "(python3), 89.1%");
	profile_target__thread(&p.targets[0], 1)->samples = 190;
	assert_string_equal(report_busiest(&p, buf, sizeof(buf)),
			    "busiest: pid 4242 (app.py), 99.0% of the samples; its thread 1 "
			    "(w\xc3\xb6rker-1 ?[2J), 94.1%");
	p.targets[1].samples = 300;
	profile_target__thread(&p.targets[1], 0)->samples = 300;
	assert_string_equal(report_busiest(&p, buf, sizeof(buf)),
			    "busiest: pid 4243 (fork of 41), 60.0% of the samples; its thread 0 "
			    "(?), 60.0%");
	p.targets[0].samples = p.targets[1].samples = 0;
	assert_string_equal(report_busiest(&p, buf, sizeof(buf)), "");
	profile__free(&p);
}

/*
 * Eleven threads: the text lists the busiest 8, busiest first (equal counts
 * by tid), each by its Python name if it has one (its comm beside when the
 * comm is its own), else its comm, else "?";
 * the other 3 are counted with their samples.
 */
static void test_thread_list_bounded(void **state)
{
	struct report_opts o = { .top_functions = 20, .tool_version = "0.1.0" };
	struct profile p;
	struct profile_thread *th;
	size_t len;
	char *got;
	uint32_t tid;

	(void)state;
	build(&p);
	for (tid = 100; tid < 109; tid++) {
		th = profile_target__thread(&p.targets[0], tid);
		th->samples = tid == 100 ? 500 : tid - 100;
		if (tid != 108)
			snprintf(th->pyname, sizeof(th->pyname), "pool-%u", tid);
	}
	got = golden_write(&report_text, &p, &o, &len);
	assert_non_null(strstr(got, "  threads: 11, busiest first (samples, tid, name)\n"
				    "         500      100  pool-100\n"
				    "         180        0  python3\n"
				    "          20        1  w\xc3\xb6rker-1 ?[2J (comm worker)\n"
				    "           8      108  ?\n"
				    "           7      107  pool-107\n"
				    "           6      106  pool-106\n"
				    "           5      105  pool-105\n"
				    "           4      104  pool-104\n"
				    "    3 more threads, with 6 samples in all\n"));
	free(got);
	profile__free(&p);
}

/* Every line of got at most width columns (bytes: the fixture's strings are ASCII). */
static void assert_lines_within(const char *got, size_t width)
{
	const char *ln, *end;

	for (ln = got; *ln; ln = *end ? end + 1 : end) {
		end = strchrnul(ln, '\n');
		if ((size_t)(end - ln) > width)
			fail_msg("a line of %zu columns: %.*s", (size_t)(end - ln), (int)(end - ln),
				 ln);
	}
}

/*
 * Thirty-one more processes, one with an executable path of 319 characters
 * and a command line of 419: the pids line shows the pids that fit, a run
 * of one interpreter named once, and counts the rest; no line is over 100
 * columns (the paths cut from the left, the command line at the end).
 */
static void test_pids_line_bounded(void **state)
{
	struct report_opts o = { .top_functions = 20,
				 .top_lines = 20,
				 .line_report = 5,
				 .tool_version = "0.1.0" };
	char exe[320], cmd[420];
	struct profile p;
	size_t len;
	char *got;
	int pid;

	(void)state;
	build(&p);
	memset(exe, 'd', sizeof(exe) - 1);
	exe[0] = '/';
	exe[sizeof(exe) - 1] = '\0';
	memcpy(exe + sizeof(exe) - 10, "/python3X", 10);
	memset(cmd, 'c', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	assert_non_null(profile__add_target(&p, 4000, exe, cmd, "python3", "3.11.2"));
	for (pid = 5000; pid < 5030; pid++)
		assert_non_null(profile__add_target(&p, pid, "/usr/bin/python3.11", "python3 w.py",
						    "python3", "3.11.2"));
	got = golden_write(&report_text, &p, &o, &len);
	assert_non_null(strstr(got, "\npids: 0 (Python 3.11.2, /usr/bin/python3.11), 32 more\n"));
	assert_non_null(strstr(got, "\npid 4000  ccccc"));
	assert_lines_within(got, 100);
	free(got);
	profile__free(&p);
	/* a run of one interpreter named once */
	profile__init(&p, "cpu", 100);
	for (pid = 5000; pid < 5030; pid++)
		assert_non_null(profile__add_target(&p, pid, "/usr/bin/python3.11", "python3 w.py",
						    "python3", "3.11.2"));
	got = golden_write(&report_text, &p, &o, &len);
	assert_non_null(strstr(got, "\npids: 5000, 5001, 5002, 5003, 5004, 5005, 5006 (Python "
				    "3.11.2, /usr/bin/python3.11), 23 more\n"));
	assert_lines_within(got, 100);
	free(got);
	profile__free(&p);
}

static void test_registry(void **state)
{
	(void)state;
	assert_ptr_equal(report_find("json"), &report_json);
	assert_ptr_equal(report_find("text"), &report_text);
	assert_null(report_find("xml"));
	assert_ptr_equal(report_for_path("/tmp/x.json"), &report_json);
	assert_null(report_for_path("/tmp/x"));
	assert_null(report_for_path(NULL));
}

/* Names and paths fitted to a column: a native name's +0xOFFSET is never cut. */
static void test_fit(void **state)
{
	const char *lib = "_multiarray_umath.cpython-311-x86_64-linux-gnu.so+0x174b96";
	char buf[REPORT_FIELD];

	(void)state;
	assert_string_equal(report_fit(buf, sizeof(buf), lib, 200, REPORT_FIT_NAME), lib);
	assert_string_equal(report_fit(buf, sizeof(buf), lib, 30, REPORT_FIT_NAME),
			    "_multiarray_umath....+0x174b96");
	assert_int_equal(report_cols(buf), 30);
	/* an offset wider than the column is kept whole all the same */
	assert_string_equal(report_fit(buf, sizeof(buf), lib, 10, REPORT_FIT_NAME),
			    "_...+0x174b96");
	/* not an offset: "+0x" followed by something else is cut like any name */
	assert_string_equal(report_fit(buf, sizeof(buf), "f+0xzz_long_name", 10, REPORT_FIT_NAME),
			    "f+0xzz_...");
	assert_string_equal(report_fit(buf, sizeof(buf), "/usr/lib/a/b/libz.so", 12,
				       REPORT_FIT_LEFT),
			    "...b/libz.so");
	/* columns are characters, not bytes; a control character is cleaned first */
	assert_string_equal(report_fit(buf, sizeof(buf), "\xc3\xa9t\xc3\xa9\n_long", 6,
				       REPORT_FIT_RIGHT),
			    "\xc3\xa9t\xc3\xa9...");
	assert_int_equal(report_cols("\xc3\xa9t\xc3\xa9?_long"), 9);
}

/* --merge-lines: the folded stacks of a function's lines (app.py:5 and :6) become one. */
static void test_folded_merge_lines(void **state)
{
	struct report_opts o = { .tool_version = "0.1.0", .merge_lines = true };
	char *out = NULL;
	size_t len = 0;
	struct profile p;
	FILE *f;

	(void)state;
	build(&p);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(report_folded.write(f, &p, &o), 0);
	fclose(f);
	profile__free(&p);
	assert_non_null(strstr(out, ";Klass.hot (/nonexistent/app.py) 180\n"));
	assert_null(strstr(out, "Klass.hot (/nonexistent/app.py:"));
	free(out);
}

/*
 * The frames speedscope and pprof list: every one, or with --merge-lines one
 * per function (Klass.hot's frames at lines 5 and 6 take one place), at its
 * first line.
 */
static void test_frame_places(void **state)
{
	/* frames hot:5, main:12, hot:6, say:2, [unresolved] */
	const uint32_t merged[] = { 0, 1, 0, 2, 3 };
	struct profile p;
	uint32_t *place;
	size_t i, n;

	(void)state;
	build(&p);
	assert_int_equal(p.nframes, 5);
	place = report_frame_places(&p, false, &n);
	assert_non_null(place);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++)
		assert_int_equal(place[i], i);
	free(place);
	place = report_frame_places(&p, true, &n);
	assert_non_null(place);
	assert_int_equal(n, 4);
	for (i = 0; i < p.nframes; i++)
		assert_int_equal(place[i], merged[i]);
	free(place);
	assert_int_equal(report_frame_line(&p, 2, false), 6);
	assert_int_equal(report_frame_line(&p, 2, true), 3);
	assert_int_equal(report_frame_line(&p, 4, false), -1);
	assert_true(report_frame_line(&p, 4, true) < 1); /* unknown: left out */
	profile__free(&p);
}

/* The first element at a key or after it, by the elements' leading uint32_t. */
static void test_lower_bound(void **state)
{
	struct {
		uint32_t key, other;
		uint64_t v;
	} a[] = { { 1, 9, 0 }, { 3, 0, 0 }, { 3, 1, 0 }, { 7, 0, 0 }, { 0xffffffffu, 0, 0 } };
	size_t n = sizeof(a) / sizeof(a[0]);

	(void)state;
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 0), 0);
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 1), 0);
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 2), 1);
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 3), 1);
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 4), 3);
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 8), 4);
	assert_int_equal(report_lower_bound(a, n, sizeof(a[0]), 0xffffffffu), 4);
	assert_int_equal(report_lower_bound(a, 0, sizeof(a[0]), 5), 0);
	assert_int_equal(report_lower_bound(a, 4, sizeof(a[0]), 0xffffffffu), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_thread_list_bounded),
		cmocka_unit_test(test_busiest),
		cmocka_unit_test(test_pids_line_bounded),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_folded_merge_lines),
		cmocka_unit_test(test_frame_places),
		cmocka_unit_test(test_lower_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
