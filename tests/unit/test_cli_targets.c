/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command lines of the many-process modes: -a, a command after --, `top`,
 * --subprocesses, --merge, --threads, and the combinations that make no sense.
 */
#include <argp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cli/config.h"
#include "cli_args.h"

static void test_all(void **state)
{
	char *argv[] = { "pybpfprof", "-a", "--merge", "--threads", "-d", "3", NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(argv), argv, &cfg), 0);
	assert_true(cfg.all && cfg.merge && cfg.threads);
	assert_false(cfg.top || cfg.subprocesses);
	assert_int_equal(cfg.npids, 0);
	assert_null(cfg.command);
}

/* Options of the command stay the command's: -p and -d after -- are not ours. */
static void test_command(void **state)
{
	char *argv[] = { "pybpfprof", "--subprocesses", "-F", "199", "--",
			 "python3",   "app.py",		"-p", "7",   "-d",
			 NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(argv), argv, &cfg), 0);
	assert_true(cfg.subprocesses);
	assert_int_equal(cfg.frequency_hz, 199);
	assert_int_equal(cfg.npids, 0);
	assert_true(cfg.duration_s == 0);
	assert_non_null(cfg.command);
	assert_string_equal(cfg.command[0], "python3");
	assert_string_equal(cfg.command[3], "7");
	assert_string_equal(cfg.command[4], "-d");
	assert_null(cfg.command[5]);
}

static void test_top(void **state)
{
	char *argv[] = { "pybpfprof", "top", "-p", "42", NULL };
	char *launch[] = { "pybpfprof", "top", "--", "python3", "x.py", NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(argv), argv, &cfg), 0);
	assert_true(cfg.top);
	assert_int_equal(cfg.npids, 1);
	assert_int_equal(cfg.pids[0], 42);
	assert_int_equal(parse(ARGC(launch), launch, &cfg), 0);
	assert_true(cfg.top);
	assert_string_equal(cfg.command[1], "x.py");
}

static void test_errors(void **state)
{
	char *none[] = { "pybpfprof", "--merge", NULL };
	char *all_pid[] = { "pybpfprof", "-a", "-p", "1", NULL };
	char *all_cmd[] = { "pybpfprof", "-a", "--", "true", NULL };
	char *pid_cmd[] = { "pybpfprof", "-p", "1", "--", "true", NULL };
	char *all_sub[] = { "pybpfprof", "-a", "--subprocesses", NULL };
	char *empty_cmd[] = { "pybpfprof", "-d", "1", "--", NULL };
	char *stray[] = { "pybpfprof", "-p", "1", "python3", NULL };
	char *top_out[] = { "pybpfprof", "top", "-p", "1", "-o", "x.json", NULL };
	char *alloc_all[] = { "pybpfprof", "-a", "--mem=alloc", NULL };
	char *alloc_cmd[] = { "pybpfprof", "--mem=alloc", "--", "true", NULL };

	(void)state;
	expect_error(top_out, ARGC(top_out), "writes no file");
	expect_error(alloc_all, ARGC(alloc_all), "--mem=alloc traces the processes given with -p");
	expect_error(alloc_cmd, ARGC(alloc_cmd), "--mem=alloc traces the processes given with -p");
	expect_error(none, ARGC(none), "-a");
	expect_error(all_pid, ARGC(all_pid), "-a profiles every process");
	expect_error(all_cmd, ARGC(all_cmd), "-a profiles every process");
	expect_error(pid_cmd, ARGC(pid_cmd), "not both");
	expect_error(all_sub, ARGC(all_sub), "--subprocesses");
	expect_error(empty_cmd, ARGC(empty_cmd), "no command after --");
	expect_error(stray, ARGC(stray), "python3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
