/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The call tree (-f tree) and the call graph (-f dot) against golden files
 * made from the shared hand-built profile; the library-path test the tree
 * collapses with; colours only when asked for; and hostile target strings:
 * no escape sequence reaches the tree, and a DOT label shows exactly the
 * sanitized qualname once Graphviz's dot (if installed) has drawn it.
 * UPDATE_GOLDEN=1 rewrites the golden files.
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
#include "report/report_common.h"
#include "fixture_profile.h"
#include "golden.h"

static const struct report_opts opts = {
	.top_functions = 20, .top_lines = 20, .tool_version = "0.1.0", .prune_pct = 1.0
};

static void test_tree_golden(void **state)
{
	struct profile p;

	(void)state;
	build(&p);
	golden_check(&report_tree, &p, &opts, "report.tree");
	profile__free(&p);
}

static void test_dot_golden(void **state)
{
	struct profile p;

	(void)state;
	build(&p);
	golden_check(&report_dot, &p, &opts, "report.dot");
	profile__free(&p);
}

static void test_registry(void **state)
{
	(void)state;
	assert_ptr_equal(report_find("tree"), &report_tree);
	assert_ptr_equal(report_find("dot"), &report_dot);
	assert_ptr_equal(report_for_path("a.tree"), &report_tree);
	assert_ptr_equal(report_for_path("a.dot"), &report_dot);
	assert_ptr_equal(report_for_path("/x/a.gv"), &report_dot);
}

static void test_library_paths(void **state)
{
	static const char *const lib[] = {
		"/usr/lib/python3.11/random.py",
		"/usr/lib/python3.9/concurrent/futures/thread.py",
		"/usr/local/lib/python3.13/json/decoder.py",
		"/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py",
		"/usr/lib64/python3.12/asyncio/events.py",
		"/usr/lib/python3/dist-packages/yaml/__init__.py",
		"/srv/venv/lib/python3.11/site-packages/requests/api.py",
		"/opt/app/.venv/site-packages/x.py",
		"<frozen importlib._bootstrap>",
	};
	static const char *const own[] = {
		"/srv/app/main.py",
		"/home/u/lib/python/tool.py", /* no version: a user's own folder */
		"/home/u/library/python3.11.py",
		"/srv/libpython3.11/x.py",
		"/usr/lib/python3.11", /* the folder itself is no file in it */
		"<string>",
		"<stdin>",
		"",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lib) / sizeof(lib[0]); i++)
		if (!report_is_library(lib[i]))
			fail_msg("%s not taken for library code", lib[i]);
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (report_is_library(own[i]))
			fail_msg("%s taken for library code", own[i]);
}

/*
 * main -> helper (user code) -> Random.randint -> Random.randrange ->
 * Random._randbelow (stdlib) -> callback (user code called back): the three
 * stdlib frames become one line, with the hidden two's self time and file,
 * and the callback shows under it; tiny() is under the 1% line.
 */
static void build_lib(struct profile *p)
{
	struct profile_target *pp;
	uint32_t fmain, fhelp, fri, frr, frb, fcb, ftiny, s1[5], s2[6], s3[2], s4[2];

	profile__init(p, "cpu", 100);
	pp = profile__add_target(p, 9, "/usr/bin/python3", "python3 app.py", "python3", "3.11");
	fmain = profile__func(p, "main", "/app/app.py", 1, false);
	fhelp = profile__func(p, "helper", "/app/app.py", 5, false);
	fri = profile__func(p, "Random.randint", "/usr/lib/python3.11/random.py", 362, false);
	frr = profile__func(p, "Random.randrange", "/usr/lib/python3.11/random.py", 291, false);
	frb = profile__func(p, "Random._randbelow", "/usr/lib/python3.11/random.py", 235, false);
	fcb = profile__func(p, "callback", "/app/app.py", 9, false);
	ftiny = profile__func(p, "tiny", "/app/app.py", 12, false);
	s1[4] = profile__frame(p, fmain, 2);
	s1[3] = profile__frame(p, fhelp, 6);
	s1[2] = profile__frame(p, fri, 363);
	s1[1] = profile__frame(p, frr, 300);
	s1[0] = profile__frame(p, frb, 240);
	memcpy(s2 + 1, s1, sizeof(s1));
	s2[0] = profile__frame(p, fcb, 10);
	s3[1] = s1[4];
	s3[0] = s1[3];
	s4[1] = s1[4];
	s4[0] = profile__frame(p, ftiny, 13);
	profile_target__add_stack(pp, 9, s1, 5, 300);
	profile_target__add_stack(pp, 9, s2, 6, 500);
	profile_target__add_stack(pp, 9, s3, 2, 195);
	profile_target__add_stack(pp, 9, s4, 2, 5);
	pp->samples = 1000;
}

static void test_tree_library(void **state)
{
	struct profile p;
	size_t len;
	char *got;

	(void)state;
	build_lib(&p);
	got = golden_write(&report_tree, &p, &opts, &len);
	if (!strstr(got, "total%   self%  function  file:line\n"
			 "100.0%    0.0%  main  /app/app.py:1\n"
			 "├─  99.5%   19.5%  helper  /app/app.py:5\n"
			 "│  └─  80.0%   30.0%  Random.randint  /usr/lib/python3.11/random.py:362"
			 "  [2 library frames hidden: random.py]\n"
			 "│     └─  50.0%   50.0%  callback  /app/app.py:9\n"
			 "└─   0.5%  [1 frame hidden, each under 1.0%]\n"))
		fail_msg("unexpected tree:\n%s", got);
	free(got);
	profile__free(&p);
}

/* Colours when asked for (a terminal), never otherwise; shares keep their place. */
static void test_tree_color(void **state)
{
	struct report_opts o = opts;
	struct profile p;
	size_t len;
	char *got;

	(void)state;
	build_lib(&p);
	got = golden_write(&report_tree, &p, &o, &len);
	assert_null(strchr(got, '\033'));
	free(got);
	o.color = true;
	got = golden_write(&report_tree, &p, &o, &len);
	if (!strstr(got, "\033[31m100.0%\033[0m \033[2m   0.0%\033[0m  main\033[2m  /app/app.py:1"))
		fail_msg("no colours on the root's line:\n%s", got);
	if (!strstr(got, "│     └─ \033[31m 50.0%\033[0m \033[31m  50.0%\033[0m  callback"))
		fail_msg("no colours on callback's line:\n%s", got);
	free(got);
	profile__free(&p);
}

/* A recursion 2000 frames deep: every level a line, the indentation capped, no overflow. */
static void test_tree_deep(void **state)
{
	struct profile_target *pp;
	uint32_t fr[2000], i;
	struct profile p;
	size_t len, lines = 0;
	char *got, *c;

	(void)state;
	profile__init(&p, "cpu", 100);
	pp = profile__add_target(&p, 5, "/usr/bin/python3", "python3 r.py", "python3", "3.11");
	fr[0] = profile__frame(&p, profile__func(&p, "rec", "/r.py", 1, false), 2);
	for (i = 1; i < 2000; i++)
		fr[i] = fr[0];
	assert_int_equal(profile_target__add_stack(pp, 5, fr, 2000, 7), 0);
	pp->samples = 7;
	got = golden_write(&report_tree, &p, &opts, &len);
	for (c = got; (c = strstr(c, "rec  /r.py:1\n")); c++)
		lines++;
	assert_int_equal(lines, 2000);
	assert_non_null(strstr(got, "└─ 100.0%  100.0%  rec  /r.py:1\n"));
	free(got);
	profile__free(&p);
}

#define HOSTILE "evil\"\\n\\\\\x1b]0;pwn\x07\n<b>&amp;</b>\xff"

static void build_hostile(struct profile *p)
{
	struct profile_target *pp;
	uint32_t fr[2];

	profile__init(p, "cpu", 100);
	pp = profile__add_target(p, 3, "/usr/bin/python3", "python3 \x1b[2J\"x\"", "python3",
				 "3.11");
	fr[1] = profile__frame(p, profile__func(p, "main", "/a\"b\\.py", 1, false), 2);
	fr[0] = profile__frame(p, profile__func(p, HOSTILE, "/x/\x1b[31m.py", 1, false), 2);
	profile_target__add_stack(pp, 3, fr, 2, 10);
	pp->samples = 10;
}

static void test_tree_hostile(void **state)
{
	struct report_opts o = opts;
	struct profile p;
	size_t len;
	char *got, *c;

	(void)state;
	build_hostile(&p);
	o.color = true;
	got = golden_write(&report_tree, &p, &o, &len);
	/* with colours on, every ESC is one of ours: an SGR sequence "ESC [ digits m" */
	for (c = got; (c = strchr(c, '\033')); c++) {
		size_t d = strspn(c + 2, "0123456789");

		if (c[1] != '[' || !d || c[2 + d] != 'm')
			fail_msg("an escape sequence that is not ours: %.12s", c + 1);
	}
	if (!strstr(got, "evil\"\\n\\\\?]0;pwn?"
			 "?<b>&amp;</b>?") ||
	    !strstr(got, "python3 ?[2J\"x\"") || strstr(got, "\007"))
		fail_msg("hostile strings not sanitized:\n%s", got);
	free(got);
	profile__free(&p);
}

/* dot, when installed, draws the graph without a warning: the label is the sanitized name. */
static void check_with_dot(const char *dotfile)
{
	char cmd[512], svg[] = "/tmp/pybpfprof-dot-svg-XXXXXX", *out;
	size_t len;
	FILE *f;
	int fd, status;

	if (access("/usr/bin/dot", X_OK))
		skip();
	fd = mkstemp(svg);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "/usr/bin/dot -Tsvg -o %s %s 2>&1", svg, dotfile);
	f = popen(cmd, "r");
	assert_non_null(f);
	out = calloc(1, 4096);
	assert_non_null(out);
	len = fread(out, 1, 4095, f);
	status = pclose(f);
	if (status || len)
		fail_msg("dot exited %d: %s", status, out);
	free(out);
	f = fopen(svg, "r");
	assert_non_null(f);
	out = slurp(f, &len);
	fclose(f);
	/* SVG text is XML: the label's '"', '<', '>' and '&' come back as entities */
	if (!strstr(out, ">evil&quot;\\n\\\\?]0;pwn??&lt;b&gt;&amp;amp;&lt;/b&gt;?</text>") ||
	    !strstr(out, ">/a&quot;b\\.py:1</text>"))
		fail_msg("the labels dot drew are not the sanitized names:\n%s", out);
	free(out);
	unlink(svg);
}

static void test_dot_hostile(void **state)
{
	char path[] = "/tmp/pybpfprof-dot-XXXXXX";
	struct profile p;
	size_t len;
	char *got;
	FILE *f;
	int fd;

	(void)state;
	build_hostile(&p);
	got = golden_write(&report_dot, &p, &opts, &len);
	profile__free(&p);
	if (!strstr(got, "label=\"evil\\\"\\\\n\\\\\\\\?]0;pwn?"
			 "?<b>&amp;amp;</b>?\\n/x/?[31m.py:1\\n") ||
	    strchr(got, '\033') || strchr(got, '\007'))
		fail_msg("hostile qualname not escaped for DOT:\n%s", got);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(got, 1, len, f), len);
	fclose(f);
	free(got);
	check_with_dot(path);
	unlink(path);
}

/*
 * --calls: exact counts on the boxes and the edges, including an edge no
 * sample saw (dashed); --prune 0 keeps every function with samples or calls.
 */
static void test_dot_calls(void **state)
{
	struct report_opts o = opts;
	struct profile_target *pp;
	struct profile p;
	uint32_t fr[2];
	size_t len;
	char *got;

	(void)state;
	profile__init(&p, "cpu", 100);
	p.calls_mode = true;
	pp = profile__add_target(&p, 7, "/usr/bin/python3", "python3 x.py", "python3", "3.9.2");
	assert_int_equal(profile__func(&p, "work", "/x.py", 20, false), 0);
	assert_int_equal(profile__func(&p, "tick", "/x.py", 1, false), 1);
	assert_int_equal(profile__func(&p, "tock", "/x.py", 4, false), 2);
	fr[1] = profile__frame(&p, 0, 21);
	fr[0] = profile__frame(&p, 1, 2);
	assert_int_equal(profile_target__add_stack(pp, 7, fr, 2, 99), 0);
	assert_int_equal(profile_target__add_stack(pp, 7, fr + 1, 1, 1), 0);
	pp->samples = 100;
	assert_int_equal(profile_target__add_call(pp, 0, UINT32_MAX,
						  &(struct profile_call_edge){ .calls = 1 }),
			 0);
	assert_int_equal(profile_target__add_call(pp, 1, 0,
						  &(struct profile_call_edge){ .calls = 5000 }),
			 0);
	assert_int_equal(profile_target__add_call(pp, 2, 0,
						  &(struct profile_call_edge){ .calls = 10000 }),
			 0);
	got = golden_write(&report_dot, &p, &o, &len);
	if (!strstr(got, "\"p0_f1\" [label=\"tick\\n/x.py:1\\ntotal 99.00%\\nself 99.00%\\n"
			 "5000 calls\"") ||
	    !strstr(got, "\"p0_f0\" -> \"p0_f1\" [label=\"99.00%\\n5000 calls\"") ||
	    strstr(got, "tock") || !strstr(got, "; 1 function under 1.00% not shown"))
		fail_msg("unexpected graph with --prune 1:\n%s", got);
	free(got);
	o.prune_pct = 0;
	got = golden_write(&report_dot, &p, &o, &len);
	if (!strstr(got, "\"p0_f0\" -> \"p0_f2\" [label=\"0.00%\\n10000 calls\"") ||
	    !strstr(got, "style=dashed") || strstr(got, "not shown"))
		fail_msg("unexpected graph with --prune 0:\n%s", got);
	free(got);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_golden),  cmocka_unit_test(test_dot_golden),
		cmocka_unit_test(test_registry),     cmocka_unit_test(test_library_paths),
		cmocka_unit_test(test_tree_library), cmocka_unit_test(test_tree_color),
		cmocka_unit_test(test_tree_hostile), cmocka_unit_test(test_dot_hostile),
		cmocka_unit_test(test_dot_calls),    cmocka_unit_test(test_tree_deep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
