/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `pybpfprof diff` on profiles built by hand: exact shares and deltas of
 * runs at different rates, totals counted once per stack under recursion,
 * the matching rules (virtualenvs, interpreters' standard libraries, the
 * same script under another directory, the longest suffix winning, no match
 * across names), the order of the rows, the refusals, and what the text,
 * JSON and differential flame graph say.
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

#include "saved/report_diff.h"
#include "util/outfile.h"

static const struct report_diff_opts opts = { .tool_version = "0.1.0",
					      .top_functions = 20,
					      .top_lines = 20 };

/* A stack of (qualname, file, line) frames, innermost first. */
struct fr {
	const char *q, *file;
	int line;
};

static void add(struct profile *p, const struct fr *frames, uint32_t n, uint64_t count)
{
	uint32_t ids[16], i;

	if (!p->ntargets)
		assert_non_null(profile__add_target(p, 100, "/usr/bin/python3", "python3 app.py",
						    "python3", "3.11.2"));
	for (i = 0; i < n; i++) {
		uint32_t fn = profile__func(p, frames[i].q, frames[i].file, 1, false);

		ids[i] = profile__frame(p, fn, frames[i].line);
	}
	assert_int_equal(profile_target__add_stack(&p->targets[0], 1, ids, n, count), 0);
	p->targets[0].samples += count;
}

#define APP "/tmp/run1/app.py"

/* BEFORE at 99 Hz: slow 75 %, fast 25 %; AFTER at 499 Hz, twice the samples: 50 % each. */
static void build_pair(struct profile *b, struct profile *a)
{
	const struct fr slow5[] = { { "slow", APP, 5 }, { "main", APP, 20 } };
	const struct fr slow6[] = { { "slow", APP, 6 }, { "main", APP, 20 } };
	const struct fr fast[] = { { "fast", APP, 10 }, { "main", APP, 21 } };

	profile__init(b, "cpu", 99);
	b->duration_s = 1.0;
	add(b, slow5, 2, 75);
	add(b, fast, 2, 25);
	profile__init(a, "cpu", 499);
	a->duration_s = 0.4;
	add(a, slow5, 2, 60);
	add(a, slow6, 2, 40);
	add(a, fast, 2, 100);
}

static const struct report_diff_row *find(const struct report_diff_row *rows, size_t n,
					  const char *q, int line)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].qualname, q) && (line < 0 || rows[i].line == line))
			return &rows[i];
	return NULL;
}

static void build_diff(struct report_diff *d, struct profile *b, struct profile *a)
{
	char why[256] = "";

	assert_int_equal(report_diff__build(d, b, "before.json", a, "after.json", why, sizeof(why)),
			 0);
}

static void test_shares_exact(void **state)
{
	struct profile b, a;
	struct report_diff d;
	const struct report_diff_row *r;

	(void)state;
	build_pair(&b, &a);
	build_diff(&d, &b, &a);
	assert_int_equal(d.side[DIFF_BEFORE].samples, 100);
	assert_int_equal(d.side[DIFF_AFTER].samples, 200);
	assert_int_equal(d.nfuncs, 3);
	r = find(d.funcs, d.nfuncs, "slow", -1);
	assert_non_null(r);
	assert_float_equal(r->self_pct[DIFF_BEFORE], 75.0, 1e-9);
	assert_float_equal(r->self_pct[DIFF_AFTER], 50.0, 1e-9);
	assert_float_equal(r->total_pct[DIFF_AFTER], 50.0, 1e-9);
	assert_int_equal(r->self[DIFF_AFTER], 100);
	r = find(d.funcs, d.nfuncs, "fast", -1);
	assert_float_equal(r->self_pct[DIFF_AFTER] - r->self_pct[DIFF_BEFORE], 25.0, 1e-9);
	r = find(d.funcs, d.nfuncs, "main", -1);
	assert_float_equal(r->self_pct[DIFF_BEFORE], 0.0, 1e-9);
	assert_float_equal(r->total_pct[DIFF_BEFORE], 100.0, 1e-9);
	assert_float_equal(r->total_pct[DIFF_AFTER], 100.0, 1e-9);
	/* main last: no change; slow and fast tie at 25 pp, then by name */
	assert_string_equal(d.funcs[0].qualname, "fast");
	assert_string_equal(d.funcs[1].qualname, "slow");
	assert_string_equal(d.funcs[2].qualname, "main");
	/* lines: slow:5 went from 75 % to 30 %, slow:6 is new with 20 % */
	r = find(d.lines, d.nlines, "slow", 5);
	assert_float_equal(r->self_pct[DIFF_BEFORE], 75.0, 1e-9);
	assert_float_equal(r->self_pct[DIFF_AFTER], 30.0, 1e-9);
	assert_string_equal(d.lines[0].qualname, "slow");
	assert_int_equal(d.lines[0].line, 5);
	r = find(d.lines, d.nlines, "slow", 6);
	assert_false(r->in[DIFF_BEFORE]);
	assert_true(r->in[DIFF_AFTER]);
	assert_float_equal(r->self_pct[DIFF_AFTER], 20.0, 1e-9);
	r = find(d.lines, d.nlines, "main", 20);
	assert_float_equal(r->total_pct[DIFF_BEFORE], 75.0, 1e-9);
	assert_float_equal(r->total_pct[DIFF_AFTER], 50.0, 1e-9);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

/* f calling itself three deep: its total is the stack's samples once, not three times. */
static void test_recursion_counted_once(void **state)
{
	const struct fr rec[] = { { "f", APP, 3 }, { "f", APP, 4 }, { "f", APP, 4 } };
	const struct fr other[] = { { "g", APP, 9 } };
	struct profile b, a;
	struct report_diff d;
	const struct report_diff_row *r;

	(void)state;
	profile__init(&b, "cpu", 99);
	add(&b, rec, 3, 30);
	add(&b, other, 1, 10);
	profile__init(&a, "cpu", 99);
	add(&a, rec, 3, 10);
	add(&a, other, 1, 30);
	build_diff(&d, &b, &a);
	r = find(d.funcs, d.nfuncs, "f", -1);
	assert_float_equal(r->total_pct[DIFF_BEFORE], 75.0, 1e-9);
	assert_float_equal(r->self_pct[DIFF_BEFORE], 75.0, 1e-9);
	assert_float_equal(r->total_pct[DIFF_AFTER], 25.0, 1e-9);
	r = find(d.lines, d.nlines, "f", 4);
	assert_float_equal(r->total_pct[DIFF_BEFORE], 75.0, 1e-9);
	assert_float_equal(r->self_pct[DIFF_BEFORE], 0.0, 1e-9);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

static void test_file_key(void **state)
{
	char buf[256];
	bool lib;

	(void)state;
	assert_string_equal(
		report_diff_file_key("/home/a/venv/lib/python3.11/site-packages/pkg/mod.py", &lib,
				     buf, sizeof(buf)),
		"pkg:pkg/mod.py");
	assert_true(lib);
	assert_string_equal(report_diff_file_key("/usr/lib/python3/dist-packages/requests/api.py",
						 &lib, buf, sizeof(buf)),
			    "pkg:requests/api.py");
	assert_string_equal(
		report_diff_file_key("/root/.pyenv/versions/3.13.1/lib/python3.13t/json/"
				     "decoder.py",
				     &lib, buf, sizeof(buf)),
		"lib:json/decoder.py");
	assert_string_equal(report_diff_file_key("/usr/lib64/python3.9/os.py", &lib, buf,
						 sizeof(buf)),
			    "lib:os.py");
	/* a program's own file, even in a directory called lib/ */
	assert_string_equal(report_diff_file_key("/srv/lib/pythonic/app.py", &lib, buf,
						 sizeof(buf)),
			    "/srv/lib/pythonic/app.py");
	assert_false(lib);
	assert_string_equal(report_diff_file_key("<frozen importlib._bootstrap>", &lib, buf,
						 sizeof(buf)),
			    "<frozen importlib._bootstrap>");
	assert_false(lib);
	assert_int_equal(report_diff_common_suffix("/tmp/run1/app.py", "/tmp/run2/app.py"), 1);
	assert_int_equal(report_diff_common_suffix("/a/x/y/app.py", "/b/x/y/app.py"), 3);
	assert_int_equal(report_diff_common_suffix("app.py", "/srv/app.py"), 1);
	assert_int_equal(report_diff_common_suffix("/a/myapp.py", "/b/app.py"), 0);
	assert_int_equal(report_diff_common_suffix("/x/app.py", "/x/app.py"), 2);
}

static size_t count_rows(const struct report_diff *d, const char *q)
{
	size_t i, n = 0;

	for (i = 0; i < d->nfuncs; i++)
		n += !strcmp(d->funcs[i].qualname, q);
	return n;
}

static void test_matching(void **state)
{
	const struct fr b1[] = { { "get", "/home/a/venv/lib/python3.11/site-packages/pkg/mod.py",
				   7 },
				 { "main", "/tmp/run1/app.py", 2 } };
	const struct fr a1[] = { { "get", "/opt/x/lib/python3.11/site-packages/pkg/mod.py", 7 },
				 { "main", "/tmp/run2/app.py", 2 } };
	/* two candidates before; after's file shares two components with the second */
	const struct fr b2[] = { { "work", "/a/x/app.py", 1 } };
	const struct fr b3[] = { { "work", "/a/y/app.py", 1 } };
	const struct fr a2[] = { { "work", "/b/y/app.py", 1 } };
	/* the same name in another file name, and another name in the same file: no match */
	const struct fr b4[] = { { "helper", "/tmp/run1/util.py", 1 } };
	const struct fr a4[] = { { "helper", "/tmp/run2/tools.py", 1 } };
	struct profile b, a;
	struct report_diff d;
	const struct report_diff_row *r;
	size_t i;

	(void)state;
	profile__init(&b, "cpu", 99);
	profile__init(&a, "cpu", 99);
	add(&b, b1, 2, 10);
	add(&a, a1, 2, 10);
	add(&b, b2, 1, 10);
	add(&b, b3, 1, 10);
	add(&a, a2, 1, 10);
	add(&b, b4, 1, 10);
	add(&a, a4, 1, 10);
	build_diff(&d, &b, &a);
	assert_int_equal(count_rows(&d, "get"), 1);
	assert_int_equal(count_rows(&d, "main"), 1);
	r = find(d.funcs, d.nfuncs, "main", -1);
	assert_true(r->in[DIFF_BEFORE] && r->in[DIFF_AFTER]);
	assert_string_equal(r->file, "/tmp/run2/app.py"); /* spelled as AFTER has it */
	assert_int_equal(count_rows(&d, "work"), 2);
	for (i = 0; i < d.nfuncs; i++)
		if (!strcmp(d.funcs[i].qualname, "work") && d.funcs[i].in[DIFF_AFTER]) {
			assert_true(d.funcs[i].in[DIFF_BEFORE]);
			assert_int_equal(d.funcs[i].self[DIFF_BEFORE], 10);
			assert_int_equal(d.funcs[i].self[DIFF_AFTER], 10);
		} else if (!strcmp(d.funcs[i].qualname, "work")) {
			assert_string_equal(d.funcs[i].file, "/a/x/app.py");
		}
	assert_int_equal(count_rows(&d, "helper"), 2);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

/*
 * Two AFTER functions of one qualname and file (defined twice: two first
 * lines) go to the one row their file was matched to by suffix.
 */
static void test_suffix_joins(void **state)
{
	struct profile b, a;
	struct report_diff d;
	uint32_t f, fr;

	(void)state;
	profile__init(&b, "cpu", 99);
	profile__init(&a, "cpu", 99);
	assert_non_null(profile__add_target(&b, 1, "", "", "", ""));
	assert_non_null(profile__add_target(&a, 1, "", "", "", ""));
	f = profile__func(&b, "handler", "/srv/v1/app.py", 10, false);
	fr = profile__frame(&b, f, 11);
	assert_int_equal(profile_target__add_stack(&b.targets[0], 1, &fr, 1, 40), 0);
	/* another candidate, as good: the first BEFORE lists is taken, this one stays */
	f = profile__func(&b, "handler", "/srv/v0/app.py", 10, false);
	fr = profile__frame(&b, f, 11);
	assert_int_equal(profile_target__add_stack(&b.targets[0], 1, &fr, 1, 5), 0);
	f = profile__func(&a, "handler", "/srv/v2/app.py", 10, false);
	fr = profile__frame(&a, f, 11);
	assert_int_equal(profile_target__add_stack(&a.targets[0], 1, &fr, 1, 30), 0);
	f = profile__func(&a, "handler", "/srv/v2/app.py", 50, false);
	fr = profile__frame(&a, f, 51);
	assert_int_equal(profile_target__add_stack(&a.targets[0], 1, &fr, 1, 10), 0);
	build_diff(&d, &b, &a);
	assert_int_equal(d.nfuncs, 2);
	assert_string_equal(d.funcs[0].file, "/srv/v2/app.py");
	assert_int_equal(d.funcs[0].self[DIFF_BEFORE], 40);
	assert_int_equal(d.funcs[0].self[DIFF_AFTER], 40);
	assert_string_equal(d.funcs[1].file, "/srv/v0/app.py");
	assert_false(d.funcs[1].in[DIFF_AFTER]);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

/* An exact match is never taken by a suffix match made first. */
static void test_exact_before_suffix(void **state)
{
	const struct fr b1[] = { { "run", "/srv/a/app.py", 1 } };
	const struct fr b2[] = { { "run", "/srv/b/app.py", 1 } };
	const struct fr a1[] = { { "run", "/home/b/app.py", 1 } };
	const struct fr a2[] = { { "run", "/srv/a/app.py", 1 } };
	struct profile b, a;
	struct report_diff d;
	size_t i;

	(void)state;
	profile__init(&b, "cpu", 99);
	profile__init(&a, "cpu", 99);
	add(&b, b1, 1, 10);
	add(&b, b2, 1, 30);
	add(&a, a1, 1, 20);
	add(&a, a2, 1, 20);
	build_diff(&d, &b, &a);
	assert_int_equal(d.nfuncs, 2);
	for (i = 0; i < d.nfuncs; i++) {
		assert_true(d.funcs[i].in[DIFF_BEFORE] && d.funcs[i].in[DIFF_AFTER]);
		if (!strcmp(d.funcs[i].file, "/srv/a/app.py"))
			assert_int_equal(d.funcs[i].self[DIFF_BEFORE], 10);
		else
			assert_int_equal(d.funcs[i].self[DIFF_BEFORE], 30);
	}
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

/*
 * Thousands of functions of one name in files of one name: each matched to
 * the one with most trailing components in common, and in linear time even
 * when none is better than another (each scan is bounded).
 */
static void test_many_same_name(void **state)
{
	enum { N = 3000 };
	struct profile b, a;
	struct report_diff d;
	char fb[64], fa[64];
	size_t i, both = 0;

	(void)state;
	profile__init(&b, "cpu", 99);
	profile__init(&a, "cpu", 99);
	for (i = 0; i < N; i++) {
		snprintf(fb, sizeof(fb), "/old/d%zu/__init__.py", i);
		snprintf(fa, sizeof(fa), "/new/d%zu/__init__.py", N - 1 - i);
		add(&b, (struct fr[]){ { "<module>", fb, 1 } }, 1, i + 1);
		add(&a, (struct fr[]){ { "<module>", fa, 1 } }, 1, N - i);
	}
	/* and as many that share only the file name: any pairing, all matched */
	for (i = 0; i < 4 * N; i++) {
		snprintf(fb, sizeof(fb), "/x%zu/run.py", i);
		snprintf(fa, sizeof(fa), "/y%zu/run.py", i);
		add(&b, (struct fr[]){ { "main", fb, 1 } }, 1, 1);
		add(&a, (struct fr[]){ { "main", fa, 1 } }, 1, 1);
	}
	build_diff(&d, &b, &a);
	assert_int_equal(d.nfuncs, 5 * N);
	for (i = 0; i < d.nfuncs; i++) {
		const struct report_diff_row *r = &d.funcs[i];

		both += r->in[DIFF_BEFORE] && r->in[DIFF_AFTER];
		/* dK before had K + 1 samples, and so did dK after */
		if (!strcmp(r->qualname, "<module>"))
			assert_int_equal(r->self[DIFF_BEFORE], r->self[DIFF_AFTER]);
	}
	assert_int_equal(both, 5 * N);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

static void test_order(void **state)
{
	const struct fr x[] = { { "x", APP, 1 } }, y[] = { { "y", APP, 1 } };
	const struct fr z[] = { { "z", APP, 1 } }, w[] = { { "w", APP, 1 } };
	struct profile b, a;
	struct report_diff d;
	size_t i;

	(void)state;
	profile__init(&b, "cpu", 99);
	profile__init(&a, "cpu", 99);
	add(&b, x, 1, 40); /* 40 -> 10: -30 */
	add(&b, y, 1, 30); /* 30 -> 35: +5 */
	add(&b, z, 1, 20); /* 20 -> 15: -5 */
	add(&b, w, 1, 10); /* 10 -> 40: +30 */
	add(&a, x, 1, 10);
	add(&a, y, 1, 35);
	add(&a, z, 1, 15);
	add(&a, w, 1, 40);
	build_diff(&d, &b, &a);
	assert_int_equal(d.nfuncs, 4);
	assert_string_equal(d.funcs[0].qualname, "w");
	assert_string_equal(d.funcs[1].qualname, "x");
	assert_string_equal(d.funcs[2].qualname, "y");
	assert_string_equal(d.funcs[3].qualname, "z");
	for (i = 1; i < d.nfuncs; i++)
		assert_true(report_diff_cmp(&d.funcs[i - 1], &d.funcs[i]) < 0);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

static void test_refusals(void **state)
{
	const struct fr x[] = { { "x", APP, 1 } };
	struct profile b, a, e;
	struct report_diff d;
	char why[256];

	(void)state;
	profile__init(&b, "cpu", 99);
	profile__init(&a, "cpu+mem", 99);
	profile__init(&e, "cpu", 99);
	add(&b, x, 1, 10);
	add(&a, x, 1, 10);
	assert_int_equal(report_diff__build(&d, &b, "b.json", &a, "a.json", why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "b.json is a cpu profile and a.json a cpu+mem one: diff compares "
				 "profiles of the same mode");
	assert_int_equal(report_diff__build(&d, &b, "b.json", &e, "e.json", why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "e.json has no samples with a Python stack: there are no shares "
				 "to compare");
	profile__free(&b);
	profile__free(&a);
	profile__free(&e);
}

static char *render(int (*w)(FILE *, const struct report_diff *, const struct report_diff_opts *),
		    const struct report_diff *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(w(f, d, &opts), 0);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	const struct fr gone[] = { { "old_helper", APP, 30 }, { "main", APP, 22 } };
	struct profile b, a;
	struct report_diff d;
	char *t, *slow, *fast, *only;

	(void)state;
	build_pair(&b, &a);
	add(&b, gone, 2, 100); /* BEFORE: 200 samples; slow 37.5 %, fast 12.5 % */
	build_diff(&d, &b, &a);
	t = render(report_diff_text, &d);
	assert_non_null(strstr(
		t, "before: before.json: 200 samples at 99 Hz in 1.00 s, 1 process (0 dropped, 0 "
		   "truncated, 0 unresolved, 0 partial)\n"));
	assert_non_null(strstr(
		t, "after:  after.json: 200 samples at 499 Hz in 0.40 s, 1 process (0 dropped, 0 "
		   "truncated, 0 unresolved, 0 partial)\n"));
	/* both grew, the bigger change first; then what only BEFORE has */
	/* the interval of +12.5pp of 200 and 200 samples: +2.8 to +21.9, 9.6 each side */
	slow = strstr(t, "   37.5%   50.0%   +12.5pp  ±9.6*     37.5%   50.0%   +12.5pp  slow  "
			 "/tmp/run1/app.py:1\n");
	fast = strstr(t, "   12.5%   50.0%   +37.5pp  ±8.3*     12.5%   50.0%   +37.5pp  fast  ");
	only = strstr(t, "Only in BEFORE: 1 function, 50.0% of its samples");
	assert_non_null(slow);
	assert_non_null(fast);
	assert_non_null(only);
	assert_true(fast < slow && slow < only);
	assert_non_null(strstr(t, "   50.0%    0.0%   -50.0pp  ±7.0*     50.0%    0.0%   -50.0pp  "
				  "old_helper  /tmp/run1/app.py:1\n"));
	assert_non_null(strstr(t, "   self%: before   after     delta  ±95%   total%: before   "
				  "after     delta  function  location\n"));
	assert_non_null(strstr(t, "\n±: half the 95 % interval of the self delta"));
	free(t);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

static void test_json(void **state)
{
	struct profile b, a;
	struct report_diff d;
	char *j;

	(void)state;
	build_pair(&b, &a);
	build_diff(&d, &b, &a);
	j = render(report_diff_json, &d);
	assert_non_null(strstr(j,
			       "{\"qualname\": \"slow\", \"file\": \"/tmp/run1/app.py\", "
			       "\"line\": 1, \"before_self_pct\": 75.0000, \"after_self_pct\": "
			       "50.0000, \"delta_self_pp\": -25.0000, \"delta_self_ci95\": "
			       "[-35.1335, -13.4377], \"delta_self_significant\": true, "
			       "\"before_total_pct\": 75.0000, \"after_total_pct\": 50.0000, "
			       "\"delta_total_pp\": -25.0000, \"delta_total_ci95\": [-35.1335, "
			       "-13.4377], \"delta_total_significant\": true, \"before_self\": 75, "
			       "\"after_self\": 100"));
	assert_non_null(
		strstr(j, "\"before\": {\"path\": \"before.json\", \"samples\": 100, "
			  "\"frequency_hz\": 99, \"duration_s\": 1.000, \"processes\": 1, "
			  "\"dropped\": 0, \"truncated\": 0, \"unresolved\": 0, \"partial\": 0}"));
	assert_non_null(strstr(j, "{\"qualname\": \"slow\", \"file\": \"/tmp/run1/app.py\", "
				  "\"line\": 6, \"before_self_pct\": 0.0000, \"after_self_pct\": "
				  "20.0000"));
	free(j);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

/*
 * --fail-above: a growth counts only when even the low end of its interval is
 * above PP. fast grew by 25 pp (25 of 100 to 100 of 200): its interval's low
 * end is +13.44 pp (Newcombe, as test_report_ci computes it).
 */
static void test_fail_above(void **state)
{
	const struct report_diff_row *fast, *slow, *main_;
	struct profile b, a;
	struct report_diff d;

	(void)state;
	build_pair(&b, &a);
	build_diff(&d, &b, &a);
	fast = find(d.funcs, d.nfuncs, "fast", -1);
	slow = find(d.funcs, d.nfuncs, "slow", -1);
	main_ = find(d.funcs, d.nfuncs, "main", -1);
	assert_float_equal(100.0 * fast->d_self.lo, 13.4377, 1e-4);
	assert_true(report_diff_row_over(fast, 0));
	assert_true(report_diff_row_over(fast, 13.4));
	assert_false(report_diff_row_over(fast, 13.5)); /* +25 pp, but not beyond chance */
	assert_false(report_diff_row_over(fast, 25));
	assert_false(report_diff_row_over(slow, 0));  /* shrank */
	assert_false(report_diff_row_over(main_, 0)); /* 0 of 100, 0 of 200 */
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

/* AFTER's tree by function, each node with BEFORE's samples at the same path. */
static void test_html_tree(void **state)
{
	struct profile b, a;
	struct report_diff d;
	char *h;

	(void)state;
	build_pair(&b, &a);
	build_diff(&d, &b, &a);
	h = render(report_diff_html, &d);
	/* rows in BEFORE's order of functions: slow 0, main 1, fast 2 */
	assert_non_null(
		strstr(h, "\"names\": [\n[\"slow\",\"/tmp/run1/app.py\"],\n"
			  "[\"main\",\"/tmp/run1/app.py\"],\n[\"fast\",\"/tmp/run1/app.py\"]]"));
	assert_non_null(strstr(h, "\"root\": [-1,[[1,[[0,[],100,75],[2,[],100,25]],200,100]],200,"
				  "100]"));
	assert_null(strstr(h, "<script src"));
	free(h);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	return buf;
}

/*
 * A target's names reach the text as printable characters only, and the
 * flame graph's script as such a string, which no "</script>" can end; both written
 * through report_diff_write into files put in place whole.
 */
static void test_hostile_strings(void **state)
{
	const struct fr evil[] = { { "\x1b]0;pwned\x07\x1b[31mred</script><b>", APP, 3 } };
	char dir[] = "/tmp/test_report_diff.XXXXXX", path[64], why[256];
	struct profile b, a;
	struct report_diff d;
	struct outfile of;
	char *t;

	(void)state;
	build_pair(&b, &a);
	add(&a, evil, 1, 50);
	build_diff(&d, &b, &a);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/d.txt", dir);
	assert_int_equal(outfile__open(&of, path, why, sizeof(why)), 0);
	assert_int_equal(report_diff_write(DIFF_TEXT, &of, &d, &opts, why, sizeof(why)), 0);
	outfile__close(&of);
	t = read_all(path);
	assert_null(strchr(t, '\x1b'));
	assert_null(strchr(t, '\x07'));
	assert_non_null(strstr(t, "?]0;pwned??[31mred</script><b>"));
	free(t);
	unlink(path);
	snprintf(path, sizeof(path), "%s/d.html", dir);
	assert_int_equal(outfile__open(&of, path, why, sizeof(why)), 0);
	assert_int_equal(report_diff_write(DIFF_HTML, &of, &d, &opts, why, sizeof(why)), 0);
	outfile__close(&of);
	t = read_all(path);
	assert_non_null(strstr(t, "?]0;pwned??[31mred\\u003c/script>\\u003cb>"));
	assert_null(strstr(t, "red</script>"));
	free(t);
	unlink(path);
	rmdir(dir);
	report_diff__free(&d);
	profile__free(&b);
	profile__free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_exact),
		cmocka_unit_test(test_recursion_counted_once),
		cmocka_unit_test(test_file_key),
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_exact_before_suffix),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_fail_above),
		cmocka_unit_test(test_html_tree),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_many_same_name),
		cmocka_unit_test(test_suffix_joins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
