/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The file-format writers (folded, flame graph, speedscope, pstats, pprof)
 * against golden files made from the shared hand-built profile; pprof is
 * compared after gunzip, so the golden file is the plain protobuf that
 * `protoc --decode` reads. pstats is also loaded by Python's own pstats
 * module, once from samples and once from exact --calls statistics, and
 * checked value by value. UPDATE_GOLDEN=1 rewrites the golden files.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "util/outfile.h"
#include "report/report.h"
#include "proc/source.h"
#include "fixture_profile.h"
#include "golden.h"

static const struct report_opts opts = {
	.top_functions = 20, .top_lines = 20, .line_report = 5, .tool_version = "0.1.0"
};

/* The same with --merge-lines: a function's frames at several lines are one. */
static const struct report_opts merged_opts = { .top_functions = 20,
						.top_lines = 20,
						.line_report = 5,
						.tool_version = "0.1.0",
						.merge_lines = true };

static void check_golden(const struct report_writer *w, const char *name)
{
	struct profile p;

	build(&p);
	golden_check(w, &p, &opts, name);
	profile__free(&p);
}

static void test_folded_golden(void **state)
{
	(void)state;
	check_golden(&report_folded, "report.folded");
}

static void test_speedscope_golden(void **state)
{
	(void)state;
	check_golden(&report_speedscope, "report.speedscope.json");
}

/* --merge-lines: one frame for Klass.hot (line 3, its first), its stacks' weights unchanged. */
static void test_speedscope_merged_golden(void **state)
{
	struct profile p;

	(void)state;
	build(&p);
	golden_check(&report_speedscope, &p, &merged_opts, "report.merged.speedscope.json");
	profile__free(&p);
}

static void test_flame_golden(void **state)
{
	(void)state;
	check_golden(&report_flame, "report.html");
}

static void test_svg_golden(void **state)
{
	(void)state;
	check_golden(&report_svg, "report.svg");
}

static void test_pstats_golden(void **state)
{
	(void)state;
	check_golden(&report_pstats, "report.pstats");
}

/* gzip, then the protobuf as golden. */
static void check_pprof_golden(const struct report_opts *o, const char *name)
{
	unsigned char *plain = NULL;
	struct profile p;
	z_stream z = {};
	size_t len, cap = 1 << 20;
	char *gz;
	int ret;

	build(&p);
	gz = golden_write(&report_pprof, &p, o, &len);
	profile__free(&p);
	assert_true(len > 18);
	assert_int_equal((unsigned char)gz[0], 0x1f); /* gzip magic */
	assert_int_equal((unsigned char)gz[1], 0x8b);
	plain = malloc(cap);
	assert_non_null(plain);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)gz;
	z.avail_in = len;
	z.next_out = plain;
	z.avail_out = cap;
	ret = inflate(&z, Z_FINISH);
	assert_int_equal(ret, Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* nothing after the gzip member */
	golden_compare(name, (char *)plain, z.total_out);
	inflateEnd(&z);
	free(plain);
	free(gz);
}

static void test_pprof_golden(void **state)
{
	(void)state;
	check_pprof_golden(&opts, "report.pb");
}

/* --merge-lines: one Location for Klass.hot, at line 3 (its first), and a comment saying so. */
static void test_pprof_merged_golden(void **state)
{
	(void)state;
	check_pprof_golden(&merged_opts, "report.merged.pb");
}

/*
 * Loads file with Python's pstats and compares its stats dict with the
 * Python literal want; print_callers must run too. Skips if python3 is absent.
 */
static void check_with_pstats(const char *file, const char *want)
{
	char cmd[512];
	FILE *py;
	int status;

	if (access("/usr/bin/python3", X_OK))
		skip();
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 - %s >&2", file);
	py = popen(cmd, "w");
	assert_non_null(py);
	fprintf(py,
		"import io, pstats, sys\n"
		"s = pstats.Stats(sys.argv[1], stream=io.StringIO())\n"
		"want = %s\n"
		"if s.stats != want:\n"
		"    sys.exit('pstats read %%r, expected %%r' %% (s.stats, want))\n"
		"s.sort_stats('tottime').print_stats()\n"
		"s.print_callers()\n",
		want);
	status = pclose(py);
	assert_int_equal(status, 0);
}

static void write_file(const struct report_writer *w, const struct profile *p, char *path)
{
	int fd = mkstemp(path);
	struct outfile of;
	char why[256];

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(outfile__open(&of, path, why, sizeof(why)), 0);
	assert_int_equal(report_write(w, &of, p, &opts, why, sizeof(why)), 0);
	outfile__close(&of);
}

/* Sample estimates: seconds = samples / 100 Hz, a "call" = a sample on the stack. */
static void test_pstats_python_samples(void **state)
{
	char path[] = "/tmp/pybpfprof-pstats-XXXXXX";
	struct profile p;

	(void)state;
	build(&p);
	write_file(&report_pstats, &p, path);
	profile__free(&p);
	check_with_pstats(
		path, "{('/nonexistent/app.py', 3, 'Klass.hot'): (180, 180, 1.8, 1.8, "
		      "  {('/nonexistent/app.py', 10, 'main'): (180, 180, 1.8, 1.8)}),"
		      " ('/nonexistent/odd\\tname.py', 1, 'say \"hi\"\\\\'): (20, 20, 0.2, 0.2, "
		      "  {('/nonexistent/app.py', 10, 'main'): (20, 20, 0.2, 0.2)}),"
		      " ('/nonexistent/app.py', 10, 'main'): (200, 200, 0.0, 2.0, {}),"
		      " ('~', 0, '[unresolved]'): (2, 2, 0.02, 0.02, {})}");
	unlink(path);
}

/*
 * Exact statistics from --calls win over samples: main calls work 3 times,
 * work calls rec twice, rec calls itself 5 times (not primitive calls).
 */
static void test_pstats_python_calls(void **state)
{
	char path[] = "/tmp/pybpfprof-pstats-XXXXXX";
	struct profile_call_edge edges[] = {
		{ .func = 0,
		  .caller = UINT32_MAX,
		  .calls = 1,
		  .inclusive_ns = 3500000000ULL,
		  .exclusive_ns = 500000000ULL },
		{ .func = 1,
		  .caller = 0,
		  .calls = 3,
		  .inclusive_ns = 3000000000ULL,
		  .exclusive_ns = 2000000000ULL },
		{ .func = 2,
		  .caller = 1,
		  .calls = 2,
		  .inclusive_ns = 1000000000ULL,
		  .exclusive_ns = 500000000ULL },
		{ .func = 2,
		  .caller = 2,
		  .calls = 5,
		  .inclusive_ns = 0,
		  .exclusive_ns = 500000000ULL },
	};
	struct profile_target *pp;
	struct profile p;
	uint32_t fr[2];

	(void)state;
	profile__init(&p, "cpu", 100);
	pp = profile__add_target(&p, 7, "/usr/bin/python3", "python3 x.py", "python3", "3.11.2");
	assert_non_null(pp);
	assert_int_equal(profile__func(&p, "main", "/x.py", 10, false), 0);
	assert_int_equal(profile__func(&p, "work", "/x.py", 20, false), 1);
	assert_int_equal(profile__func(&p, "rec", "/x.py", 30, false), 2);
	/* samples that must not show: the exact figures replace them */
	fr[0] = profile__frame(&p, 1, 21);
	fr[1] = profile__frame(&p, 0, 11);
	assert_int_equal(profile_target__add_stack(pp, 7, fr, 2, 1000), 0);
	pp->calls = malloc(sizeof(edges));
	assert_non_null(pp->calls);
	memcpy(pp->calls, edges, sizeof(edges));
	pp->ncalls = pp->cap_calls = 4;
	write_file(&report_pstats, &p, path);
	profile__free(&p);
	check_with_pstats(
		path,
		"{('/x.py', 10, 'main'): (1, 1, 0.5, 3.5, {}),"
		" ('/x.py', 20, 'work'): (3, 3, 2.0, 3.0, {('/x.py', 10, 'main'): (3, 3, 2.0, 3.0)}),"
		" ('/x.py', 30, 'rec'): (2, 7, 1.0, 1.0, {('/x.py', 20, 'work'): (2, 2, 0.5, 1.0),"
		"   ('/x.py', 30, 'rec'): (5, 0, 0.5, 0.0)})}");
	unlink(path);
}

/* Counts past 2^31 take marshal's long form; Python must read them back. */
static void test_pstats_big_counts(void **state)
{
	char path[] = "/tmp/pybpfprof-pstats-XXXXXX";
	struct profile_target *pp;
	struct profile p;
	uint32_t fr;

	(void)state;
	profile__init(&p, "cpu", 1000);
	pp = profile__add_target(&p, 7, "/usr/bin/python3", "", "python3", "3.11.2");
	fr = profile__frame(&p, profile__func(&p, "spin", "/x.py", 1, false), 2);
	assert_int_equal(profile_target__add_stack(pp, 7, &fr, 1, 5000000000ULL), 0);
	write_file(&report_pstats, &p, path);
	profile__free(&p);
	check_with_pstats(path, "{('/x.py', 1, 'spin'): (5000000000, 5000000000, 5000000.0, "
				"5000000.0, {})}");
	unlink(path);
}

/* Occurrences of needle in s. */
static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/*
 * The SVG flame graph with the target's worst strings: markup, quotes,
 * control characters, bytes that are not UTF-8 and U+FFFF all escaped or
 * replaced, so the file stays well-formed XML and the script is the only one.
 */
static void test_svg_hostile_strings(void **state)
{
	struct profile p;
	struct profile_target *t;
	uint32_t fn, fr;
	size_t len;
	char *got;

	(void)state;
	profile__init(&p, "cpu", 99);
	t = profile__add_target(&p, 7, "/usr/bin/python3", "python3", "py<thon>", "3.11.2");
	fn = profile__func(&p, "</script><script>alert(1)//&\"'\x1b[31m\xff\xef\xbf\xbf]]>",
			   "/x/a]]>b\x01.py", 1, false);
	fr = profile__frame(&p, fn, 3);
	profile_target__add_stack(t, 0, &fr, 1, 10);
	got = golden_write(&report_svg, &p, &opts, &len);
	assert_int_equal(strlen(got), len);
	assert_non_null(strstr(got, "data-n=\"&lt;/script&gt;&lt;script&gt;alert(1)//&amp;&quot;"
				    "&apos;?[31m??]]&gt;\""));
	assert_non_null(strstr(got, "data-l=\"/x/a]]&gt;b?.py:3\""));
	assert_int_equal(count_of(got, "<script"), 1);
	assert_int_equal(count_of(got, "]]>"), 1);
	assert_null(strchr(got, '\x1b'));
	assert_null(strchr(got, '\x01'));
	assert_null(strstr(got, "\xff"));
	assert_null(strstr(got, "\xef\xbf\xbf"));
	free(got);
	profile__free(&p);
}

/*
 * A profile too big to draw whole: frames under 0.1% are left out, then
 * beyond SVG_MAX_FRAMES (10000) the narrowest, whole levels of ties at once,
 * and the subtitle counts them. 1000 chains of 24 distinct frames, chain i
 * with i + 1 samples: 24000 frames, 12000 of them at least 0.1% (chains of
 * 501 samples and more); the 10001st widest has 584 samples, so the chains
 * of 585 to 1000 are drawn: 416 * 24 frames and the root.
 */
static void test_svg_bounded(void **state)
{
	uint32_t fn, frames[24];
	struct profile_target *t;
	struct profile p;
	unsigned i, k;
	size_t len;
	char *got;

	(void)state;
	profile__init(&p, "cpu", 99);
	t = profile__add_target(&p, 7, "/usr/bin/python3", "python3", "python3", "3.11.2");
	fn = profile__func(&p, "f", "/x.py", 1, false);
	for (i = 0; i < 1000; i++) {
		for (k = 0; k < 24; k++)
			frames[k] = profile__frame(&p, fn, 1 + i * 24 + k);
		profile_target__add_stack(t, 0, frames, 24, i + 1);
	}
	t->samples = 500500;
	got = golden_write(&report_svg, &p, &opts, &len);
	assert_int_equal(count_of(got, "<g class=\"f\""), 416 * 24 + 1);
	assert_non_null(strstr(got, "500500 samples (0 dropped, 0 truncated, 0 unresolved, 0 "
				    "partial); 14016 frames narrower than 0.117% of the samples "
				    "not drawn</text>"));
	free(got);
	profile__free(&p);
}

static void test_registry(void **state)
{
	(void)state;
	assert_ptr_equal(report_for_path("a.folded"), &report_folded);
	assert_ptr_equal(report_for_path("a.html"), &report_flame);
	assert_ptr_equal(report_for_path("/x/a.speedscope.json"), &report_speedscope);
	assert_ptr_equal(report_for_path("/x/a.json"), &report_json);
	assert_ptr_equal(report_for_path("a.pstats"), &report_pstats);
	assert_ptr_equal(report_for_path("a.prof"), &report_pstats);
	assert_ptr_equal(report_for_path("a.pb.gz"), &report_pprof);
	assert_ptr_equal(report_for_path("a.pprof"), &report_pprof);
	assert_ptr_equal(report_for_path("a.txt"), &report_text);
	assert_null(report_for_path("a.gz"));
	assert_null(report_for_path(".json")); /* a name that is only an ending */
	assert_ptr_equal(report_find("flamegraph"), &report_flame);
	assert_ptr_equal(report_find("pprof"), &report_pprof);
	assert_ptr_equal(report_for_path("/x/flame.svg"), &report_svg);
	assert_ptr_equal(report_find("svg"), &report_svg);
}

/*
 * The line-by-line table of the text report on a real source file: lines in
 * order with inclusive and self samples and their text; a note when the file
 * is newer than the process, and when it cannot be read.
 */
static void test_line_report(void **state)
{
	char src[] = "/tmp/pybpfprof-lines-XXXXXX", *got;
	struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
	struct profile_target *pp;
	struct profile p;
	uint32_t fouter, finner, s1[2], s2[2], s3[1];
	size_t len;
	FILE *f;
	int fd = mkstemp(src);

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("def inner(b):\n    return sum(b)\n\ndef outer(a, b):\n    n = 0\n"
	      "    for x in a:\n        if x in b:  # hot\n            n += inner(b)\n"
	      "    return n\n",
	      f);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, src, old, 0), 0);
	profile__init(&p, "cpu", 100);
	pp = profile__add_target(&p, 1, "/usr/bin/python3", "python3 x.py", "python3", "3.11.2");
	pp->start_time = 1000000100.0; /* the file is older than the process */
	pp->sources->creds[0].kind = SOURCE_CREDS_SELF;
	pp->sources->ncreds = 1;
	finner = profile__func(&p, "inner", src, 1, false);
	fouter = profile__func(&p, "outer", src, 4, false);
	s1[0] = profile__frame(&p, fouter, 7);
	s2[0] = profile__frame(&p, finner, 2);
	s2[1] = profile__frame(&p, fouter, 8);
	s3[0] = profile__frame(&p, fouter, 6);
	profile_target__add_stack(pp, 1, s1, 1, 90);
	profile_target__add_stack(pp, 1, s2, 2, 6);
	profile_target__add_stack(pp, 1, s3, 1, 4);
	pp->samples = 100;
	got = golden_write(&report_text, &p, &opts, &len);
	if (!strstr(got, "  Line by line: outer  ") ||
	    !strstr(got, "(100 samples, 100.0% of the process; 94.0% in the function itself)\n"
			 "     line   samples   %func  %total     self  source\n"
			 "        6         4    4.0%    4.0%        4  for x in a:\n"
			 "        7        90   90.0%   90.0%       90  if x in b:  # hot\n"
			 "        8         6    6.0%    6.0%        0  n += inner(b)\n") ||
	    !strstr(got, "        2         6  100.0%    6.0%        6  return sum(b)\n") ||
	    strstr(got, "modified after"))
		fail_msg("unexpected line report:\n%s", got);
	free(got);

	pp->start_time = 999999000.0; /* the file changed after the process started */
	got = golden_write(&report_text, &p, &opts, &len);
	if (!strstr(got, "was modified after the process started"))
		fail_msg("no note for a changed source file:\n%s", got);
	free(got);

	unlink(src);
	/* sources are read once per process: a fresh reader sees the file gone */
	proc_sources__free(pp->sources);
	pp->sources = proc_sources__new();
	assert_non_null(pp->sources);
	pp->sources->creds[0].kind = SOURCE_CREDS_SELF;
	pp->sources->ncreds = 1;
	got = golden_write(&report_text, &p, &opts, &len);
	if (!strstr(got, "source: cannot read ") || !strstr(got, ": No such file or directory\n"
								 "     line   samples"))
		fail_msg("no note for a missing source file:\n%s", got);
	free(got);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_golden),
		cmocka_unit_test(test_speedscope_golden),
		cmocka_unit_test(test_speedscope_merged_golden),
		cmocka_unit_test(test_flame_golden),
		cmocka_unit_test(test_svg_golden),
		cmocka_unit_test(test_svg_hostile_strings),
		cmocka_unit_test(test_svg_bounded),
		cmocka_unit_test(test_pstats_golden),
		cmocka_unit_test(test_pprof_golden),
		cmocka_unit_test(test_pprof_merged_golden),
		cmocka_unit_test(test_pstats_python_samples),
		cmocka_unit_test(test_pstats_python_calls),
		cmocka_unit_test(test_pstats_big_counts),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_line_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
