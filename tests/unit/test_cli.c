/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Command-line parsing: argument vectors in, config or a clear sentence out.
 * argp runs with ARGP_SILENT, so nothing is printed and nothing exits.
 */
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/config.h"
#include "cli_args.h"
#include "cli/launch.h"

static void test_defaults(void **state)
{
	char *argv[] = { "pybpfprof", "-p", "42", NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(argv), argv, &cfg), 0);
	assert_int_equal(cfg.npids, 1);
	assert_int_equal(cfg.pids[0], 42);
	assert_int_equal(cfg.frequency_hz, 99);
	assert_int_equal(cfg.max_depth, 127);
	assert_true(cfg.duration_s == 0);
	assert_null(cfg.format);
	assert_int_equal(cfg.noutputs, 0);
	assert_int_equal(cfg.line_report, 5);
	assert_int_equal(cfg.max_cache_mb, 64);
}

/* --max-cache-mb: 1 to 65536 MiB, anything else refused with the range. */
static void test_max_cache_mb(void **state)
{
	char *small[] = { "pybpfprof", "-p", "1", "--max-cache-mb", "1", NULL };
	char *large[] = { "pybpfprof", "-p", "1", "--max-cache-mb=65536", NULL };
	char *zero[] = { "pybpfprof", "-p", "1", "--max-cache-mb", "0", NULL };
	char *over[] = { "pybpfprof", "-p", "1", "--max-cache-mb", "65537", NULL };
	char *word[] = { "pybpfprof", "-p", "1", "--max-cache-mb", "lots", NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(small), small, &cfg), 0);
	assert_int_equal(cfg.max_cache_mb, 1);
	assert_int_equal(parse(ARGC(large), large, &cfg), 0);
	assert_int_equal(cfg.max_cache_mb, 65536);
	expect_error(zero, ARGC(zero), "expected 1 to 65536 MiB");
	expect_error(over, ARGC(over), "'65537'");
	expect_error(word, ARGC(word), "--max-cache-mb 'lots'");
}

static void test_all_options(void **state)
{
	// clang-format off
	char *argv[] = { "pybpfprof", "-p", "1,2", "--pid=3", "-d", "2.5", "-F", "999",
			 "-f", "json", "-o", "out.json", "--max-depth", "300", "-n", "5",
			 "--lines", "7", "-vv", "-o", "flame.html", "--line-report=3", NULL };
	// clang-format on
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(argv), argv, &cfg), 0);
	assert_int_equal(cfg.npids, 3);
	assert_int_equal(cfg.pids[2], 3);
	assert_true(cfg.duration_s == 2.5);
	assert_int_equal(cfg.frequency_hz, 999);
	assert_string_equal(cfg.format, "json");
	assert_int_equal(cfg.noutputs, 2);
	assert_string_equal(cfg.outputs[0], "out.json");
	assert_string_equal(cfg.outputs[1], "flame.html");
	assert_int_equal(cfg.line_report, 3);
	assert_int_equal(cfg.max_depth, 300);
	assert_int_equal(cfg.top_functions, 5);
	assert_int_equal(cfg.top_lines, 7);
	assert_int_equal(cfg.verbose, 2);
}

static void test_errors(void **state)
{
	char *no_pid[] = { "pybpfprof", "-d", "1", NULL };
	char *bad_pid[] = { "pybpfprof", "-p", "12x", NULL };
	char *zero_pid[] = { "pybpfprof", "-p", "0", NULL };
	char *neg_pid[] = { "pybpfprof", "-p", "-5", NULL };
	char *bad_hz[] = { "pybpfprof", "-p", "1", "-F", "0", NULL };
	char *big_hz[] = { "pybpfprof", "-p", "1", "-F", "50000", NULL };
	char *bad_dur[] = { "pybpfprof", "-p", "1", "-d", "-3", NULL };
	char *nan_dur[] = { "pybpfprof", "-p", "1", "-d", "soon", NULL };
	char *bad_fmt[] = { "pybpfprof", "-p", "1", "-f", "xml", NULL };
	char *bad_depth[] = { "pybpfprof", "-p", "1", "--max-depth", "5000", NULL };
	char *extra[] = { "pybpfprof", "-p", "1", "stray", NULL };

	(void)state;
	expect_error(no_pid, ARGC(no_pid), "-p PID");
	expect_error(bad_pid, ARGC(bad_pid), "12x");
	expect_error(zero_pid, ARGC(zero_pid), "'0'");
	expect_error(neg_pid, ARGC(neg_pid), "-5");
	expect_error(bad_hz, ARGC(bad_hz), "frequency '0'");
	expect_error(big_hz, ARGC(big_hz), "50000");
	expect_error(bad_dur, ARGC(bad_dur), "duration '-3'");
	expect_error(nan_dur, ARGC(nan_dur), "soon");
	expect_error(bad_fmt, ARGC(bad_fmt),
		     "text, json, folded, flamegraph, speedscope, pstats, "
		     "pprof, svg, tree, dot, perfetto, trace-json, heatmap");
	expect_error(bad_depth, ARGC(bad_depth), "1024");
	expect_error(extra, ARGC(extra), "stray");
}

/* Each option's refusal, word for word: the table's bounds and sentences. */
static void test_option_sentences(void **state)
{
	static const struct {
		const char *option, *value, *sentence;
	} cases[] = {
		{ "-p", "1,x", "invalid pid 'x': expected a positive number" },
		{ "-p", "2147483648", "invalid pid '2147483648': expected a positive number" },
		{ "-d", "0", "invalid duration '0': expected seconds, greater than 0" },
		{ "-d", "31536001",
		  "invalid duration '31536001': expected seconds, greater "
		  "than 0" },
		{ "-F", "20001",
		  "invalid frequency '20001': expected 1 to 20000 samples per "
		  "second" },
		{ "--max-depth", "0", "invalid --max-depth '0': expected 1 to 1024 frames" },
		{ "--max-cache-mb", "", "invalid --max-cache-mb '': expected 1 to 65536 MiB" },
		{ "-f", "xml",
		  "unknown format 'xml': expected one of text, json, folded, "
		  "flamegraph, speedscope, pstats, pprof, svg, tree, dot, perfetto, trace-json, heatmap" },
		{ "--prune", "100.5",
		  "invalid --prune '100.5': expected a percentage from 0 to 100" },
		{ "--prune", "-1", "invalid --prune '-1': expected a percentage from 0 to 100" },
		{ "--min-share", "101",
		  "invalid --min-share '101': expected a percentage from 0 to 100" },
		{ "--prune", "nan", "invalid --prune 'nan': expected a percentage from 0 to 100" },
		{ "-n", "-1", "invalid count '-1': expected a number of rows" },
		{ "--lines", "100001", "invalid count '100001': expected a number of rows" },
		{ "--line-report", "x", "invalid count 'x': expected a number of rows" },
		{ "--mem=", "fault",
		  "invalid --mem 'fault': expected --mem, --mem=faults or "
		  "--mem=alloc" },
		{ "--alloc-period", "1099511627777",
		  "invalid --alloc-period '1099511627777': "
		  "expected 1 to 2^40 bytes" },
		{ "--mem-period", "1000001",
		  "invalid --mem-period '1000001': expected 1 to "
		  "1000000 page faults" },
		{ "--user=", "", "--user needs a user name or a numeric uid" },
	};
	char joined[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {
			"pybpfprof", "-p", "1", (char *)cases[i].option, (char *)cases[i].value,
			NULL
		};
		struct pyprof_config cfg;
		int argc = ARGC(argv);

		/* an option ending in '=' takes its value in the same argument */
		if (cases[i].option[strlen(cases[i].option) - 1] == '=') {
			snprintf(joined, sizeof(joined), "%s%s", cases[i].option, cases[i].value);
			argv[3] = joined;
			argv[4] = NULL;
			argc--;
		}
		assert_int_not_equal(parse(argc, argv, &cfg), 0);
		assert_string_equal(cfg.error, cases[i].sentence);
	}
}

/*
 * A command typed without `--`: its first word is refused before its own
 * options are read as ours, and the sentence shows where `--` goes.
 */
static void test_command_without_dashes(void **state)
{
	char *argv[] = { "pybpfprof", "-d", "2", "python3", "-c", "pass", NULL };
	char *top[] = { "pybpfprof", "top", "python3", NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_not_equal(parse(ARGC(argv), argv, &cfg), 0);
	assert_string_equal(cfg.error, "unexpected argument 'python3'; to run a command put `--` "
				       "before it: pybpfprof [OPTION...] -- python3 -c ...");
	assert_int_not_equal(parse(ARGC(top), top, &cfg), 0);
	assert_string_equal(cfg.error, "unexpected argument 'python3'; to run a command put `--` "
				       "before it: pybpfprof top [OPTION...] -- python3");
}

/* The bounds themselves are accepted; a memory file turns --mem on. */
static void test_option_bounds(void **state)
{
	char *high[] = { "pybpfprof",
			 "-p",
			 "2147483647",
			 "-F",
			 "20000",
			 "--max-depth=1024",
			 "--alloc-period",
			 "1099511627776",
			 "--mem-period",
			 "1000000",
			 "-n",
			 "100000",
			 "--mem-timeline",
			 "rss.svg",
			 "-d",
			 "31536000",
			 NULL };
	char *low[] = { "pybpfprof",   "-p",
			"1",	       "-F",
			"1",	       "--max-depth=1",
			"--mem=alloc", "--alloc-period",
			"1",	       "--mem-period",
			"1",	       "-n",
			"0",	       "--lines",
			"0",	       "--line-report",
			"0",	       "--mem-folded",
			"m.folded",    NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(high), high, &cfg), 0);
	assert_int_equal(cfg.pids[0], 2147483647);
	assert_int_equal(cfg.frequency_hz, 20000);
	assert_int_equal(cfg.max_depth, 1024);
	assert_true(cfg.alloc_period == 1UL << 40);
	assert_int_equal(cfg.mem_period, 1000000);
	assert_int_equal(cfg.top_functions, 100000);
	assert_int_equal(cfg.mem, PYPROF_MEM_FAULTS);
	assert_string_equal(cfg.mem_timeline, "rss.svg");
	assert_true(cfg.duration_s == 31536000);
	assert_int_equal(parse(ARGC(low), low, &cfg), 0);
	assert_int_equal(cfg.frequency_hz, 1);
	assert_int_equal(cfg.max_depth, 1);
	assert_int_equal(cfg.mem, PYPROF_MEM_ALLOC);
	assert_true(cfg.alloc_period == 1);
	assert_int_equal(cfg.mem_period, 1);
	assert_int_equal(cfg.top_functions, 0);
	assert_int_equal(cfg.top_lines, 0);
	assert_int_equal(cfg.line_report, 0);
	assert_string_equal(cfg.mem_folded, "m.folded");
}

/* --user goes with a launched command only; the default (no --user) is root. */
static void test_user(void **state)
{
	char *name[] = { "pybpfprof", "--user", "nobody", "--", "python3", "app.py", NULL };
	char *uid[] = { "pybpfprof", "--user=12345", "--", "python3", NULL };
	char *none[] = { "pybpfprof", "--", "python3", NULL };
	char *with_pid[] = { "pybpfprof", "--user", "nobody", "-p", "42", NULL };
	char *with_all[] = { "pybpfprof", "-a", "--user", "nobody", NULL };
	char *empty[] = { "pybpfprof", "--user=", "--", "python3", NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(name), name, &cfg), 0);
	assert_string_equal(cfg.user, "nobody");
	assert_string_equal(cfg.command[0], "python3");
	assert_int_equal(parse(ARGC(uid), uid, &cfg), 0);
	assert_string_equal(cfg.user, "12345");
	assert_int_equal(parse(ARGC(none), none, &cfg), 0);
	assert_null(cfg.user);
	expect_error(with_pid, ARGC(with_pid), "give the command after --");
	expect_error(with_all, ARGC(with_all), "give the command after --");
	expect_error(empty, ARGC(empty), "user name or a numeric uid");
}

/* NAME or UID to uid, gid and groups; a uid without a passwd entry gets gid = uid. */
static void test_user_resolve(void **state)
{
	struct launch_user u;
	char why[256];

	(void)state;
	assert_int_equal(launch_user__resolve("root", &u, why, sizeof(why)), 0);
	assert_true(u.set && u.uid == 0 && u.gid == 0);
	assert_string_equal(u.name, "root");
	assert_int_equal(launch_user__resolve("nobody", &u, why, sizeof(why)), 0);
	assert_true(u.uid == 65534 && u.ngroups >= 1);
	assert_string_equal(u.name, "nobody");
	assert_int_equal(launch_user__resolve("65534", &u, why, sizeof(why)), 0);
	assert_true(u.uid == 65534);
	assert_string_equal(u.name, "nobody");
	/* 54321: no passwd entry on a test machine */
	assert_int_equal(launch_user__resolve("54321", &u, why, sizeof(why)), 0);
	assert_true(u.set && u.uid == 54321 && u.gid == 54321 && u.ngroups == 0);
	assert_string_equal(u.name, "");
	assert_int_equal(launch_user__resolve("no-such-user-here", &u, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no such user"));
	assert_int_equal(launch_user__resolve("99999999999", &u, why, sizeof(why)), -EINVAL);
	assert_int_equal(launch_user__resolve("4294967295", &u, why, sizeof(why)), -EINVAL);
}

/* `pybpfprof report` takes the run's output options from the same table, read the same way. */
static void test_report_options(void **state)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;
	struct argp_option o[32] = {};
	size_t n = cli_report_options(o, 31), i;
	const char *names = "";
	char buf[256] = "";

	(void)state;
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s ", o[i].name);
	names = buf;
	assert_string_equal(
		names,
		"pid match thread merge format output top lines line-report prune "
		"merge-lines min-share threads mem-timeline mem-folded mem-retained-folded mem-pprof "
		"verbose ");
	assert_int_equal(cli_report_apply('a', NULL, &cfg), ARGP_ERR_UNKNOWN);
	/* report's -p selects from the saved processes, read as a run reads it */
	assert_int_equal(cli_report_apply('p', "7,9", &cfg), 0);
	assert_int_equal(cfg.npids, 2);
	assert_int_equal(cfg.pids[1], 9);
	assert_int_equal(cli_report_apply('o', "a.svg", &cfg), 0);
	assert_int_equal(cli_report_apply('n', "3", &cfg), 0);
	assert_int_equal(cfg.top_functions, 3);
	assert_int_equal(cli_report_apply('f', "nope", &cfg), -EINVAL);
	/* the list itself grows with the writers */
	assert_true(!strncmp(cfg.error, "unknown format 'nope': expected one of text, json, ", 50));
	assert_int_equal(cfg.noutputs, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),      cmocka_unit_test(test_report_options),
		cmocka_unit_test(test_max_cache_mb),  cmocka_unit_test(test_all_options),
		cmocka_unit_test(test_errors),	      cmocka_unit_test(test_option_sentences),
		cmocka_unit_test(test_option_bounds), cmocka_unit_test(test_user),
		cmocka_unit_test(test_user_resolve),  cmocka_unit_test(test_command_without_dashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
