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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_registry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
