/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The saved JSON profile read back: a profile built in memory (the writers'
 * fixture, then one with every optional mode's data) is written as JSON and
 * loaded again, and every writer must write the loaded profile byte for byte
 * as it wrote the original. Then files that are not profiles, or are
 * hostile, must be refused with the sentence the user sees.
 */
#define _GNU_SOURCE
#include <errno.h>
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
#include "saved/report_load.h"
#include "fixture_profile.h"
#include "golden.h"

static const struct report_opts opts = { .top_functions = 20,
					 .top_lines = 20,
					 .line_report = 5,
					 .tool_version = "0.1.0",
					 .threads = true,
					 .prune_pct = 1 };

/* Adds what --calls, --gc, --imports and --mem record to the fixture (frames 0-4, funcs 0-3). */
static void build_all(struct profile *p)
{
	struct profile_target *a;
	struct profile_call_edge e = { .calls = 7,
				       .inclusive_ns = 7000,
				       .exclusive_ns = 5000,
				       .max_ns = 2000 };
	uint64_t h[PROFILE_HIST_BUCKETS] = { [10] = 3, [11] = 4 };
	uint32_t st[2] = { 0, 1 }; /* Klass.hot:5 called from main:12 */

	build(p);
	p->mode = "cpu+mem";
	p->calls_mode = p->gc_mode = p->imports_mode = true;
	p->mem = true;
	p->mem_period = 64;
	p->page_size = 4096;
	p->duration_s = 2.0 / 3;		  /* printed with 17 digits, read back exactly */
	p->start_unix_ns = 1700000000123456789LL; /* pprof's time_nanos */
	p->usdt.calls_unmatched = 2;
	p->usdt.probe_misses = 1;
	p->mem_counts.dropped = 9;
	a = &p->targets[0];
	a->start_time = 1700000000.25;
	assert_int_equal(profile_target__add_call(a, 1, 0, &e), 0);
	assert_int_equal(profile_target__add_call(a, 0, UINT32_MAX, &e), 0);
	assert_int_equal(profile_target__add_hist(a, 1, h), 0);
	assert_int_equal(profile_target__add_gc(a, st, 2, 1, 3000, 12), 0);
	assert_int_equal(profile_target__add_gc(a, NULL, 0, 0, 500, 0), 0);
	assert_int_equal(profile_target__import_start(a, 0, "json", 100), 0);
	assert_int_equal(profile_target__import_start(a, 0, "json.decoder", 110), 0);
	assert_int_equal(profile_target__import_done(a, 0, true, 150), 1);
	assert_int_equal(profile_target__import_done(a, 0, true, 190), 0);
	assert_int_equal(profile_target__import_start(a, 0, "never_done", 200), 0);
	assert_true(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, st, 2, 1 << 20, 0.5, true) >=
		    0);
	assert_true(profile_target__add_mem(a, PROFILE_MEM_MAPPED, st, 1, 8 << 20, 0.75, false) >=
		    0);
	assert_int_equal(profile_target__add_rss(a, 0.25, 10 << 20), 0);
	assert_int_equal(profile_target__add_rss(a, 1.0 / 3, 30 << 20), 0);
}

/* What w writes for p. */
static char *write_with(const struct report_writer *w, const struct profile *p, size_t *len)
{
	return golden_write(w, p, &opts, len);
}

/* p written as JSON, loaded back into q. */
static void round_trip(const struct profile *p, struct profile *q)
{
	char why[512] = "";
	size_t len;
	char *json = write_with(&report_json, p, &len);

	if (report_load_json_buf(json, len, "t.json", q, why, sizeof(why)))
		fail_msg("%s", why);
	free(json);
}

static void same_output(const struct profile *p, const struct profile *q)
{
	const struct report_writer *ws[] = {
		&report_text,	&report_json,	    &report_folded,  &report_flame,
		&report_pstats, &report_pprof,	    &report_svg,     &report_tree,
		&report_dot,	&report_speedscope, &report_mem_svg, &report_mem_folded
	};
	size_t i, a, b;

	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		char *x, *y;

		if (!p->mem && (ws[i] == &report_mem_svg || ws[i] == &report_mem_folded))
			continue;
		x = write_with(ws[i], p, &a);
		y = write_with(ws[i], q, &b);
		if (a != b || memcmp(x, y, a))
			fail_msg(
				"%s differs after a round trip (%zu bytes, then %zu):\n%s\n---\n%s",
				ws[i]->name, a, b, x, y);
		free(x);
		free(y);
	}
}

static void test_round_trip_cpu(void **state)
{
	struct profile p, q = {};

	(void)state;
	build(&p);
	round_trip(&p, &q);
	assert_int_equal(q.nfuncs, p.nfuncs);
	assert_int_equal(q.nframes, p.nframes);
	assert_int_equal(q.ntargets, 2);
	assert_int_equal(q.targets[0].nstacks, 3);
	assert_int_equal(q.targets[0].stacks[0].count, 150);
	assert_string_equal(q.funcs[2].qualname, "say \"hi\"\\");
	assert_string_equal(q.mode, "cpu");
	same_output(&p, &q);
	profile__free(&p);
	profile__free(&q);
}

/* A selected profile keeps what its selection left out, and says so again. */
static void test_round_trip_selected(void **state)
{
	const struct profile_select sel = { .match = "app", .thread = "^work" };
	struct profile p, q = {};
	char why[256];

	(void)state;
	build(&p);
	assert_int_equal(profile__select(&p, &sel, why, sizeof(why)), 0);
	round_trip(&p, &q);
	assert_string_equal(q.selection, "--match 'app' --thread '^work'");
	assert_int_equal(q.sel_procs_out, 1);
	assert_int_equal(q.sel_threads_out, 2);
	assert_int_equal(q.sel_samples_out, 182);
	assert_true(q.sel_threads_cut);
	assert_int_equal(q.ntargets, 1);
	assert_int_equal(q.targets[0].samples, 20);
	same_output(&p, &q);
	profile__free(&p);
	profile__free(&q);
}

static void test_round_trip_all_modes(void **state)
{
	struct profile p, q = {};

	(void)state;
	build_all(&p);
	round_trip(&p, &q);
	assert_true(q.mem && q.calls_mode && q.gc_mode && q.imports_mode);
	assert_true(q.duration_s == 2.0 / 3);
	assert_int_equal(q.targets[0].nimports, 3);
	assert_int_equal(q.targets[0].imports[1].parent, 0);
	assert_int_equal(q.targets[0].mem.nstacks, 2);
	assert_int_equal(q.targets[0].mem.nrss, 2);
	assert_int_equal(q.targets[0].gc.nstacks, 2);
	same_output(&p, &q);
	profile__free(&p);
	profile__free(&q);
}

/* Loads text (as a file named x.json) and expects it refused with why. */
static void refused(const char *text, const char *why_want)
{
	struct profile q = {};
	char why[512] = "";

	assert_int_equal(report_load_json_buf(text, strlen(text), "x.json", &q, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, why_want);
	assert_int_equal(q.nfuncs, 0);
}

/* The fixture's JSON with from replaced by to (the first time). */
static void refused_edit(const char *from, const char *to, const char *why_want)
{
	struct profile p;
	size_t len;
	char *json, *at, *edited;

	build(&p);
	json = write_with(&report_json, &p, &len);
	at = strstr(json, from);
	if (!at)
		fail_msg("no %s in the fixture's JSON", from);
	assert_true(asprintf(&edited, "%.*s%s%s", (int)(at - json), json, to, at + strlen(from)) >
		    0);
	refused(edited, why_want);
	free(edited);
	free(json);
	profile__free(&p);
}

/*
 * A thread name the run could not write as UTF-8 (the kernel cut a
 * character at 15 bytes; a target's own bytes) was written with U+FFFD, 3
 * bytes each: read back cut at its last whole character, not refused.
 */
static void test_round_trip_cut_names(void **state)
{
	struct profile p, q = {};

	(void)state;
	build(&p);
	memcpy(p.targets[0].threads[1].name, "sel-\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3",
	       16);
	memset(p.targets[0].threads[0].name, 0xff, 15);
	round_trip(&p, &q);
	assert_string_equal(q.targets[0].threads[1].name,
			    "sel-\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	assert_string_equal(q.targets[0].threads[0].name,
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	profile__free(&p);
	profile__free(&q);
	/* longer than any name a run writes: refused */
	refused_edit("[1, \"worker\"", "[1, \"0123456789012345678901234567890123456789012345\"",
		     "x.json: not a valid pybpfprof profile: model.processes[0].threads[1]: a "
		     "string of 46 bytes, more than 45");
}

static void test_refused(void **state)
{
	(void)state;
	refused("", "x.json: not JSON: a value expected (line 1, column 1)");
	refused("[1]", "x.json: not a pybpfprof profile (not a JSON object)");
	refused("{\"tool\": \"x\"}", "x.json: not a pybpfprof profile (no \"schema\")");
	refused("{\"schema\": 7}",
		"x.json: schema 7 is newer than this pybpfprof reads (1): upgrade pybpfprof");
	refused("{\"schema\": \"1\"}",
		"x.json: not a pybpfprof profile (\"schema\" is not a version)");
	refused("{\"schema\": 1}", "x.json: not a pybpfprof profile (no \"model\")");
	refused("{\"schema\": 1, \"schema\": 1}",
		"x.json: not JSON: a member named \"schema\" twice in one object (line 1, column "
		"26)");
	refused_edit("[0,12]", "[9,12]",
		     "x.json: not a valid pybpfprof profile: model.frames[1]: 9 is out of range "
		     "(0 to 3)");
	refused_edit("[0, 150, [0,1]]", "[0, 150, [0,99]]",
		     "x.json: not a valid pybpfprof profile: model.processes[0].stacks[0][2][1]: "
		     "frame 99 does not exist (5 frames)");
	refused_edit("[0, 150, [0,1]]", "[0, -150, [0,1]]",
		     "x.json: not a valid pybpfprof profile: model.processes[0].stacks[0]: -150 "
		     "is out of range (0 to 9223372036854775807)");
	refused_edit("[0, 150, [0,1]]", "[7, 150, [0,1]]",
		     "x.json: not a valid pybpfprof profile: model.processes[0].stacks[0]: "
		     "thread 7 is not in the process's threads");
	refused_edit("[\"main\"", "[\"main\", \"/nonexistent/app.py\", 10, false], [\"main\"",
		     "x.json: not a valid pybpfprof profile: model.functions[1]: the same "
		     "function as model.functions[0]");
	refused_edit("\"frequency_hz\": 100, \"duration_s\": 2,",
		     "\"frequency_hz\": 1.5, \"duration_s\": 2,",
		     "x.json: not a valid pybpfprof profile: model.frequency_hz: not an integer");
	refused_edit("[0, 150, [0,1]]", "[0, 150, []]",
		     "x.json: not a valid pybpfprof profile: model.processes[0].stacks[0][2]: a "
		     "stack without frames");
	refused_edit("[1, \"worker\", 20, ", "[1, \"worker\", 20, 5, ",
		     "x.json: not a valid pybpfprof profile: model.processes[0].threads[1]: 5 "
		     "entries, more than 4");
	refused_edit("[1, \"worker\", 20, ", "[1, \"worker\", 20, 5], [2, \"x\", 0, ",
		     "x.json: not a valid pybpfprof profile: model.processes[0].threads[1]: not "
		     "a string");
	refused_edit("[0, \"python3\", 180]", "[0, \"python3\"]",
		     "x.json: not a valid pybpfprof profile: model.processes[0].threads[0]: 2 "
		     "entries, fewer than 3");
	refused_edit("\"origin\": \"forked\", \"exited\"", "\"origin\": \"adopted\", \"exited\"",
		     "x.json: not a valid pybpfprof profile: model.processes[1].origin: "
		     "\"adopted\" is no origin (found, launched, forked, execed)");
	refused_edit("\"ppid\": 41, \"origin\": \"forked\", \"exited\"",
		     "\"ppid\": -41, \"origin\": \"forked\", \"exited\"",
		     "x.json: not a valid pybpfprof profile: model.processes[1].ppid: -41 is out "
		     "of range (0 to 2147483647)");
	refused_edit("\"comm\": \"python3\"", "\"comm\": 3",
		     "x.json: not a valid pybpfprof profile: model.processes[0].comm: not a "
		     "string");
	refused_edit("\"mode\": \"cpu\", \"frequency_hz\": 100, \"duration_s\": 2,",
		     "\"mode\": \"cpu\", \"duration_s\": 2,",
		     "x.json: not a valid pybpfprof profile: model: no \"frequency_hz\"");
}

static void test_file(void **state)
{
	struct profile q = {};
	char why[512], path[] = "/tmp/pybpfprof-load-XXXXXX";
	int fd;

	(void)state;
	assert_int_equal(report_load_json("/nonexistent/p.json", &q, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "/nonexistent/p.json: cannot open it: No such file or directory");
	assert_int_equal(report_load_json("/tmp", &q, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "/tmp: not a regular file: give a JSON profile written by -o");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, REPORT_LOAD_MAX_BYTES + 1ULL), 0);
	close(fd);
	assert_int_equal(report_load_json(path, &q, why, sizeof(why)), -EFBIG);
	assert_non_null(strstr(why, ": too large for a pybpfprof profile (268435457 bytes, at most "
				    "256 MiB)"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_cpu),
		cmocka_unit_test(test_round_trip_selected),
		cmocka_unit_test(test_round_trip_cut_names),
		cmocka_unit_test(test_round_trip_all_modes),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
