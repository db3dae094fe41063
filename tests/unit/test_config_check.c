/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * config_check(): the rules between options, on configs built by hand (no
 * argp). One test per rule: what it derives, or the exact sentence it refuses
 * with, and the nearest combination it lets through.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "cli/config.h"
#include "session/usdt.h"

static char *command[] = { "python3", "app.py", NULL };

/* The defaults, and one target given with -p. */
static struct pyprof_config with_pid(void)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;

	cfg.pids[0] = 42;
	cfg.npids = 1;
	return cfg;
}

static struct pyprof_config with_command(void)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;

	cfg.command = command;
	return cfg;
}

static struct pyprof_config with_all(void)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;

	cfg.all = true;
	return cfg;
}

static void expect_ok(struct pyprof_config cfg)
{
	char why[256] = "";

	assert_int_equal(config_check(&cfg, why, sizeof(why)), 0);
	assert_string_equal(why, "");
}

static void expect_refused(struct pyprof_config cfg, const char *sentence)
{
	char why[256] = "";

	assert_int_equal(config_check(&cfg, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, sentence);
}

static void test_one_target_kind(void **state)
{
	(void)state;
	expect_ok(with_pid());
	expect_ok(with_command());
	expect_ok(with_all());
}

static void test_no_target(void **state)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;

	(void)state;
	cfg.merge = true;
	expect_refused(cfg, "no target: give -p PID, -a, or a command after --");
}

static void test_all_alone(void **state)
{
	struct pyprof_config pid = with_all(), cmd = with_all();

	(void)state;
	pid.npids = 1;
	cmd.command = command;
	expect_refused(pid, "-a profiles every process already: it takes no -p or command");
	expect_refused(cmd, "-a profiles every process already: it takes no -p or command");
}

static void test_pid_or_command(void **state)
{
	struct pyprof_config cfg = with_pid();

	(void)state;
	cfg.command = command;
	expect_refused(cfg, "give either -p PID or a command after --, not both");
}

static void test_user_needs_command(void **state)
{
	struct pyprof_config cmd = with_command(), pid = with_pid(), all = with_all();
	const char *sentence = "--user runs a launched command as that user: give the command "
			       "after -- (profiled processes keep their own users)";

	(void)state;
	cmd.user = pid.user = all.user = "nobody";
	expect_ok(cmd);
	expect_refused(pid, sentence);
	expect_refused(all, sentence);
}

static void test_subprocesses_not_all(void **state)
{
	struct pyprof_config pid = with_pid(), cmd = with_command(), all = with_all();

	(void)state;
	pid.subprocesses = cmd.subprocesses = all.subprocesses = true;
	expect_ok(pid);
	expect_ok(cmd);
	expect_refused(all, "--subprocesses goes with -p or a command; -a sees every process "
			    "already");
}

/* The probes follow new processes (issue 17): every way of choosing targets takes them. */
static void test_usdt_every_target_kind(void **state)
{
	struct pyprof_config pid = with_pid(), cmd = with_command(), all = with_all();
	struct pyprof_config sub = with_pid(), cmdsub = with_command();

	(void)state;
	pid.usdt_modes = cmd.usdt_modes = all.usdt_modes = USDT_CALLS | USDT_GC | USDT_IMPORTS;
	sub.usdt_modes = USDT_IMPORTS;
	cmdsub.usdt_modes = USDT_CALLS;
	sub.subprocesses = cmdsub.subprocesses = true;
	expect_ok(pid);
	expect_ok(cmd);
	expect_ok(all);
	expect_ok(sub);
	expect_ok(cmdsub);
}

static void test_merge_not_gc_imports(void **state)
{
	struct pyprof_config calls = with_pid(), gc = with_pid(), imports = with_pid();
	const char *sentence = "--gc and --imports report per process: they do not go with "
			       "--merge";

	(void)state;
	calls.merge = gc.merge = imports.merge = true;
	calls.usdt_modes = USDT_CALLS;
	gc.usdt_modes = USDT_GC;
	imports.usdt_modes = USDT_IMPORTS;
	expect_ok(calls);
	expect_refused(gc, sentence);
	expect_refused(imports, sentence);
}

static void test_select_patterns(void **state)
{
	struct pyprof_config ok = with_pid(), mem = with_pid(), calls = with_pid(),
			     bad = with_pid();
	struct pyprof_config top = with_pid();
	const char *per_process = "--thread keeps CPU samples by thread, and the figures of "
				  "--mem, --calls, --gc and --imports are per process: use "
				  "--match, or leave those out";
	char why[256] = "";

	(void)state;
	ok.match = "spawn_main";
	ok.thread = "^worker-[0-9]+$";
	expect_ok(ok);
	mem.thread = calls.thread = "x";
	mem.mem_timeline = "rss.svg"; /* implies --mem */
	calls.usdt_modes = USDT_CALLS;
	expect_refused(mem, per_process);
	expect_refused(calls, per_process);
	top.top = true;
	top.match = "x";
	expect_refused(top, "top shows every process it samples: --match and --thread select "
			    "what a report shows");
	/* a bad pattern is refused before anything is sampled */
	bad.match = "(";
	assert_int_equal(config_check(&bad, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--match '(' is not a regular expression (POSIX extended)"));
}

static void test_py311_line_needs_calls(void **state)
{
	struct pyprof_config calls = with_pid(), gc = with_pid(), none = with_pid();
	const char *sentence = "--calls-py311-line only makes sense with --calls";

	(void)state;
	calls.py311_line = gc.py311_line = none.py311_line = true;
	calls.usdt_modes = USDT_CALLS;
	gc.usdt_modes = USDT_GC;
	expect_ok(calls);
	expect_refused(gc, sentence);
	expect_refused(none, sentence);
}

static void test_top_writes_no_file(void **state)
{
	struct pyprof_config top = with_pid(), out = with_pid(), svg = with_pid();
	struct pyprof_config folded = with_pid();
	const char *sentence = "top shows a live view and writes no file: drop -o, "
			       "--mem-timeline and --mem-folded, or record without top";

	(void)state;
	top.top = out.top = svg.top = folded.top = true;
	out.outputs[out.noutputs++] = "x.json";
	svg.mem_timeline = "rss.svg";
	folded.mem_folded = "mem.folded";
	expect_ok(top);
	expect_refused(out, sentence);
	expect_refused(svg, sentence);
	expect_refused(folded, sentence);
}

static void test_mem_alloc_pids_only(void **state)
{
	struct pyprof_config pid = with_pid(), cmd = with_command(), all = with_all();
	struct pyprof_config sub = with_pid(), faults = with_all();
	const char *sentence = "--mem=alloc traces the processes given with -p only, not -a, a "
			       "command or --subprocesses (--mem works with all of them)";

	(void)state;
	pid.mem = cmd.mem = all.mem = sub.mem = PYPROF_MEM_ALLOC;
	sub.subprocesses = true;
	faults.mem = PYPROF_MEM_FAULTS;
	expect_ok(pid);
	expect_ok(faults);
	expect_refused(cmd, sentence);
	expect_refused(all, sentence);
	expect_refused(sub, sentence);
}

/* A memory file asks for the memory samples; a mode given with --mem stays. */
static void test_mem_files_imply_mem(void **state)
{
	struct pyprof_config svg = with_pid(), folded = with_pid(), alloc = with_pid();
	struct pyprof_config none = with_pid();
	char why[256];

	(void)state;
	svg.mem_timeline = "rss.svg";
	folded.mem_folded = "mem.folded";
	alloc.mem_timeline = "rss.svg";
	alloc.mem = PYPROF_MEM_ALLOC;
	assert_int_equal(config_check(&svg, why, sizeof(why)), 0);
	assert_int_equal(svg.mem, PYPROF_MEM_FAULTS);
	assert_int_equal(config_check(&folded, why, sizeof(why)), 0);
	assert_int_equal(folded.mem, PYPROF_MEM_FAULTS);
	assert_int_equal(config_check(&alloc, why, sizeof(why)), 0);
	assert_int_equal(alloc.mem, PYPROF_MEM_ALLOC);
	assert_int_equal(config_check(&none, why, sizeof(why)), 0);
	assert_int_equal(none.mem, PYPROF_MEM_OFF);
}

/*
 * A timeline output, or --timeline-events, keeps the timeline: by the file's
 * ending (.trace.json over .json), or by -f's format for a name without one.
 * The timeline keeps every process and thread: not beside --match or
 * --thread, nor --pid in `pybpfprof report`, which cut the report.
 */
static void test_timeline_outputs(void **state)
{
	static const char refused[] = "the timeline keeps every process and thread of the run, "
				      "and --pid, --match and --thread cut the report: write the "
				      "timeline without them";
	struct pyprof_config trace = with_pid(), pf = with_pid(), json = with_pid();
	struct pyprof_config fmt = with_pid(), events = with_pid(), match = with_pid();
	struct pyprof_config report = with_pid();
	char why[256] = "";

	(void)state;
	trace.outputs[0] = "run.trace.json";
	trace.noutputs = 1;
	pf.outputs[0] = "run.pftrace";
	pf.noutputs = 1;
	json.outputs[0] = "run.json";
	json.noutputs = 1;
	fmt.format = "perfetto";
	fmt.outputs[0] = "trace";
	fmt.noutputs = 1;
	events.timeline_events = 100;
	expect_ok(trace);
	assert_int_equal(config_check(&trace, why, sizeof(why)), 0);
	assert_true(trace.timeline);
	assert_int_equal(config_check(&pf, why, sizeof(why)), 0);
	assert_true(pf.timeline);
	assert_int_equal(config_check(&json, why, sizeof(why)), 0);
	assert_false(json.timeline);
	assert_int_equal(config_check(&fmt, why, sizeof(why)), 0);
	assert_true(fmt.timeline);
	assert_int_equal(config_check(&events, why, sizeof(why)), 0);
	assert_true(events.timeline);
	match.timeline = true;
	match.match = "worker";
	expect_refused(match, refused);
	match.match = NULL;
	match.thread = "^w";
	expect_refused(match, refused);
	/* -p is a target in a run, a cut in report */
	report.timeline = true;
	why[0] = '\0';
	assert_int_equal(config_check_timeline(&report, false, why, sizeof(why)), 0);
	assert_int_equal(config_check_timeline(&report, true, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, refused);
}

/* The outputs' formats: one of pid's -o files is path; format the -f given (NULL: none). */
static int check_output(const char *path, const char *format, char *why, size_t whylen)
{
	struct pyprof_config cfg = with_pid();

	cfg.outputs[0] = "first.json";
	cfg.outputs[1] = path;
	cfg.noutputs = 2;
	cfg.format = format;
	why[0] = '\0';
	return config_check_outputs(&cfg, why, whylen);
}

/*
 * An extension no writer claims is refused, naming it and the known ones,
 * unless -f names the format; names without an extension take the -f format.
 */
static void test_output_extensions(void **state)
{
	static const char *const ok[] = {
		"p.svg", "/x/p.pb.gz", "p.speedscope.json",  "p.prof",	"p.html",
		"p.txt", "profile",    "/tmp/dir.d/profile", ".hidden", "name.",
		"-",	 "/dev/null",
	};
	char why[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(check_output(ok[i], NULL, why, sizeof(why)), 0);
		assert_string_equal(why, "");
	}
	assert_int_equal(check_output("/tmp/profile.xyz", NULL, why, sizeof(why)), -EINVAL);
	assert_string_equal(
		why,
		"unknown extension '.xyz' in -o /tmp/profile.xyz: use one of "
		".txt, .json, .folded, .html, .speedscope.json, .speedscope, "
		".pstats, .prof, .pb.gz, .pprof, .svg, .tree, .dot, .gv, .perfetto-trace, .pftrace, .trace.json, .heat.html, or give the format with -f");
	assert_int_equal(check_output("p.gz", NULL, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "'.gz'"));
	/* -f names the format of every file whose name does not */
	assert_int_equal(check_output("/tmp/profile.xyz", "json", why, sizeof(why)), 0);
}

/* The first rule broken is the one reported, in the order above. */
static void test_first_rule_wins(void **state)
{
	struct pyprof_config cfg = with_all();

	(void)state;
	cfg.npids = 1;
	cfg.subprocesses = true;
	cfg.usdt_modes = USDT_GC;
	cfg.merge = true;
	expect_refused(cfg, "-a profiles every process already: it takes no -p or command");
}

/* A short buffer gets the start of the sentence, terminated. */
static void test_short_buffer(void **state)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;
	char why[10];

	(void)state;
	assert_int_equal(config_check(&cfg, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "no target");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_target_kind),
		cmocka_unit_test(test_no_target),
		cmocka_unit_test(test_all_alone),
		cmocka_unit_test(test_pid_or_command),
		cmocka_unit_test(test_user_needs_command),
		cmocka_unit_test(test_subprocesses_not_all),
		cmocka_unit_test(test_usdt_every_target_kind),
		cmocka_unit_test(test_merge_not_gc_imports),
		cmocka_unit_test(test_select_patterns),
		cmocka_unit_test(test_py311_line_needs_calls),
		cmocka_unit_test(test_top_writes_no_file),
		cmocka_unit_test(test_mem_alloc_pids_only),
		cmocka_unit_test(test_mem_files_imply_mem),
		cmocka_unit_test(test_first_rule_wins),
		cmocka_unit_test(test_timeline_outputs),
		cmocka_unit_test(test_output_extensions),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
