/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * USDT probe detection and the refusal rules: the .note.stapsdt reader on
 * this machine's Debian python3.11 (which has the probes) and on this test's
 * own executable (which has none), and usdt__check's decision and sentence
 * for each kind of interpreter.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "session/usdt.h"

static void test_notes_debian(void **state)
{
	struct usdt_probes pr;

	(void)state;
	if (access("/usr/bin/python3.11", R_OK))
		skip();
	assert_int_equal(usdt_probes__read("/usr/bin/python3.11", &pr), 0);
	assert_int_equal(pr.total, 8);
	assert_true(pr.function_entry && pr.function_return && pr.line);
	assert_true(pr.gc_start && pr.gc_done && pr.import_start && pr.import_done);
}

static void test_notes_none(void **state)
{
	struct usdt_probes pr;

	(void)state;
	assert_int_equal(usdt_probes__read("/proc/self/exe", &pr), 0);
	assert_int_equal(pr.total, 0);
	assert_int_equal(usdt_probes__read("/nonexistent/python", &pr), -ENOENT);
}

static struct target target(unsigned minor)
{
	struct target t = { .pid = 42, .version = 0x03000000u | (minor << 16) };

	snprintf(t.version_str, sizeof(t.version_str), "3.%u.1", minor);
	snprintf(t.python_elf, sizeof(t.python_elf), "/usr/bin/python3.%u", minor);
	return t;
}

static void test_check_rules(void **state)
{
	struct usdt_probes all = { .total = 8,
				   .function_entry = true,
				   .function_return = true,
				   .line = true,
				   .gc_start = true,
				   .gc_done = true,
				   .import_start = true,
				   .import_done = true };
	struct usdt_probes no_func = all, none = {};
	struct target t9 = target(9), t11 = target(11), t13 = target(13), t15 = target(15);
	char why[512];

	(void)state;
	no_func.function_entry = no_func.function_return = no_func.line = false;
	assert_int_equal(usdt__check(&t9, &all, USDT_CALLS | USDT_GC, false, why, sizeof(why)), 0);
	assert_int_equal(usdt__check(&t15, &all, USDT_CALLS, false, why, sizeof(why)), 0);

	why[0] = '\0';
	assert_int_equal(usdt__check(&t13, &no_func, USDT_CALLS, false, why, sizeof(why)),
			 -ENOTSUP);
	assert_non_null(strstr(why, "Python 3.13.1"));
	assert_non_null(strstr(why, "sampling"));
	assert_int_equal(usdt__check(&t13, &no_func, USDT_GC | USDT_IMPORTS, false, why,
				     sizeof(why)),
			 0);

	assert_int_equal(usdt__check(&t11, &all, USDT_CALLS, false, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "--calls-py311-line"));
	assert_non_null(strstr(why, "30 times"));
	assert_int_equal(usdt__check(&t11, &all, USDT_CALLS, true, why, sizeof(why)), 0);
	assert_int_equal(usdt__check(&t11, &all, USDT_GC, false, why, sizeof(why)), 0);

	assert_int_equal(usdt__check(&t9, &none, USDT_IMPORTS, false, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "without USDT probes"));
	assert_non_null(strstr(why, "--imports"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notes_debian),
		cmocka_unit_test(test_notes_none),
		cmocka_unit_test(test_check_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
