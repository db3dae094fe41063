/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Python / native / system split: per-stack counts, their charge to the
 * innermost Python frame (native and kernel frames below it skipped), the
 * text and JSON figures, and the JSON round trip through `report`, on a
 * hand-built profile whose answers are known exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "report/report_writer.h"
#include "saved/report_load.h"
#include "golden.h"

static const struct report_opts opts = {
	.top_functions = 20, .top_lines = 20, .line_report = 5, .tool_version = "0.1.0"
};

/*
 * Thread 1 (innermost first):
 *   main:3 (python 6, native 0, system 0), sampled 3 times more with no place
 *   [zlib deflate] <- comp:9 <- main:4 (python 1, native 8, system 1)
 *   comp:9 <- main:4 (system 2)
 */
static void build(struct profile *p)
{
	struct profile_target *pp;
	uint32_t fmain, fcomp, fz, s1[1], s2[3];
	const uint64_t w1[3] = { 6, 0, 0 }, w2[3] = { 1, 8, 1 }, w3[3] = { 0, 0, 2 };

	profile__init(p, "cpu", 100);
	p->duration_s = 1;
	pp = profile__add_target(p, 7, "/usr/bin/python3.11", "python3 x.py", "python3", "3.11.2");
	assert_non_null(pp);
	assert_non_null(profile_target__thread(pp, 1));
	fmain = profile__func(p, "main", "/x.py", 1, false);
	fcomp = profile__func(p, "comp", "/x.py", 8, false);
	fz = profile__func_kind(p, "deflate", "/usr/lib/x86_64-linux-gnu/libz.so.1", 0, false,
				PROFILE_FUNC_NATIVE);
	assert_int_not_equal(fz, profile__func(p, "deflate", "/usr/lib/x86_64-linux-gnu/libz.so.1",
					       0, false));
	s1[0] = profile__frame(p, fmain, 3);
	s2[0] = profile__frame(p, fz, -1);
	s2[1] = profile__frame(p, fcomp, 9);
	s2[2] = profile__frame(p, fmain, 4);
	assert_int_equal(profile_target__add_stack_where(pp, 1, s1, 1, 6, w1), 0);
	assert_int_equal(profile_target__add_stack(pp, 1, s1, 1, 3), 0);
	assert_int_equal(profile_target__add_stack_where(pp, 1, s2, 3, 10, w2), 0);
	assert_int_equal(profile_target__add_stack_where(pp, 1, s2 + 1, 2, 2, w3), 0);
	pp->samples = 21;
	pp->threads[0].samples = 21;
}

static void test_split(void **state)
{
	profile_where_split *fn, *fr, total;
	struct profile p;
	uint32_t comp9;

	(void)state;
	build(&p);
	assert_int_equal(p.targets[0].nstacks, 3);
	assert_int_equal(p.targets[0].stacks[0].count, 9);
	assert_int_equal(p.targets[0].stacks[0].where[PROFILE_WHERE_PYTHON], 6);
	assert_int_equal(profile_target__where_stats(&p, &p.targets[0], &fn, &fr, total), 0);
	assert_int_equal(total[0], 7);
	assert_int_equal(total[1], 8);
	assert_int_equal(total[2], 3);
	/* the native frame is skipped: comp:9 gets the stack's split */
	assert_int_equal(fn[1][PROFILE_WHERE_NATIVE], 8);
	assert_int_equal(fn[1][PROFILE_WHERE_SYSTEM], 3);
	assert_int_equal(fn[1][PROFILE_WHERE_PYTHON], 1);
	assert_int_equal(fn[2][0] + fn[2][1] + fn[2][2], 0);
	assert_int_equal(fn[3][0] + fn[3][1] + fn[3][2], 0);
	assert_int_equal(fn[0][PROFILE_WHERE_PYTHON], 6);
	comp9 = profile__frame(&p, 1, 9);
	assert_int_equal(fr[comp9][PROFILE_WHERE_NATIVE], 8);
	free(fn);
	free(fr);
	/* a process with no known place has no split */
	p.targets[0].nstacks = 1;
	memset(p.targets[0].stacks[0].where, 0, sizeof(p.targets[0].stacks[0].where));
	assert_int_equal(profile_target__where_stats(&p, &p.targets[0], &fn, &fr, total), 0);
	assert_null(fn);
	assert_null(fr);
	p.targets[0].nstacks = 3;
	profile__free(&p);
}

static void test_reports(void **state)
{
	struct profile p, q = { 0 };
	char why[256] = "", *text, *json, *again;
	size_t len, len2;

	(void)state;
	build(&p);
	text = golden_write(&report_text, &p, &opts, &len);
	assert_non_null(strstr(text, "Python / native / system: 38.9% / 44.4% / 16.7% "
				     "(of 18 samples whose place is known)"));
	assert_non_null(strstr(text, "    8.3%   66.7%   25.0%       12  comp  /x.py:8\n"));
	json = golden_write(&report_json, &p, &opts, &len);
	assert_non_null(strstr(json, "\"where\": {\"python\": 1, \"native\": 8, \"system\": 3}}"));
	assert_non_null(strstr(json, "[1, 10, [1,2,3], [1, 8, 1]]"));
	assert_non_null(strstr(json,
			       "\"/usr/lib/x86_64-linux-gnu/libz.so.1\", 0, false, \"native\"]"));
	/* `pybpfprof report`: the same JSON again */
	if (report_load_json_buf(json, len, "t.json", &q, why, sizeof(why)))
		fail_msg("%s", why);
	again = golden_write(&report_json, &q, &opts, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(json, again, len);
	free(text);
	free(json);
	free(again);
	profile__free(&p);
	profile__free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_reports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
