/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The memory model (--mem) and its writers: bytes per kind added to stacks,
 * by-line and by-function summaries (a recursive function's total counted
 * once per stack), the peak stack, and the text, JSON and SVG output of a
 * hand-built profile against golden files (UPDATE_GOLDEN=1 rewrites them).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include <argp.h>
#include "cli/config.h"
#include "report/report.h"
#include "golden.h"
#include "cli_args.h"

#define MIB (1024 * 1024ULL)

struct ids {
	uint32_t big[2], keep[2], rec[3];
};

static void build(struct profile *p, struct ids *id)
{
	struct profile_target *a;
	uint32_t fmain, fgrow, frec;
	int i;

	profile__init(p, "cpu+mem", 99);
	p->mem = true;
	p->mem_period = 64;
	p->mem_alloc = true;
	p->alloc_period = 512 * 1024;
	p->page_size = 4096;
	p->duration_s = 1.0;
	/* Memory records' own losses, apart from the CPU samples' (which stay 0). */
	p->mem_counts.dropped = 3;
	p->mem_counts.truncated = 2;
	p->mem_counts.no_python = 5;
	a = profile__add_target(p, 7, "/usr/bin/python3.11", "python3 grow.py", "python3",
				"3.11.2");
	fmain = profile__func(p, "main", "/nonexistent/grow.py", 20, false);
	fgrow = profile__func(p, "grow", "/nonexistent/grow.py", 10, false);
	frec = profile__func(p, "rec<&>", "/nonexistent/grow.py", 30, false);
	id->big[0] = profile__frame(p, fgrow, 11);
	id->big[1] = profile__frame(p, fmain, 21);
	id->keep[0] = profile__frame(p, fgrow, 12);
	id->keep[1] = id->big[1];
	/* rec -> rec -> main: rec's total must count this stack once */
	id->rec[0] = profile__frame(p, frec, 31);
	id->rec[1] = profile__frame(p, frec, 32);
	id->rec[2] = profile__frame(p, fmain, 22);
	for (i = 0; i < 10; i++) {
		double t = 0.1 * i;

		assert_int_equal(profile_target__add_rss(a, t, (100 + 30 * i) * MIB), 0);
		assert_true(profile_target__add_mem(a, PROFILE_MEM_MAPPED, id->big, 2, 200 * MIB,
						    t + 0.01, false) >= 0);
		assert_true(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, id->big, 2,
						    256 * 1024 * 800, t + 0.02, i == 6) >= 0);
		assert_true(profile_target__add_mem(a, PROFILE_MEM_UNMAPPED, id->keep, 2, 190 * MIB,
						    t + 0.03, false) >= 0);
	}
	assert_true(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, id->rec, 3, 256 * 1024, 0.5,
					    false) >= 0);
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, id->keep, 0, 1, 0.5,
						 false),
			 -EINVAL);
	/* a stack seen before keeps its index */
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_ALLOCATED, id->keep, 2, 5 * MIB,
						 0.9, false),
			 1);
	a->mem.stacks[1].bytes[PROFILE_MEM_LIVE] = 5 * MIB;
	/* the range matching's figures (test_mem_ranges checks how they are made) */
	a->mem.stacks[0].bytes[PROFILE_MEM_RELEASED] = 1800 * MIB;
	a->mem.stacks[0].bytes[PROFILE_MEM_RETAINED] = 200 * MIB;
	a->mem.released_unknown = 3 * MIB;
	a->mem.retained_no_stack = 1 * MIB;
}

static void test_model(void **state)
{
	uint64_t tot[PROFILE_MEM_NKINDS];
	struct mem_line_stat *ls;
	struct mem_func_stat *fs;
	struct profile p;
	struct ids id;
	size_t n, i;

	(void)state;
	build(&p, &id);
	struct profile_target *a = &p.targets[0];

	assert_int_equal(a->mem.nstacks, 3);
	profile_target__mem_totals(a, tot);
	assert_int_equal(tot[PROFILE_MEM_TOUCHED], 10 * 256 * 1024 * 800ULL + 256 * 1024);
	assert_int_equal(tot[PROFILE_MEM_MAPPED], 2000 * MIB);
	assert_int_equal(tot[PROFILE_MEM_UNMAPPED], 1900 * MIB);
	assert_int_equal(a->mem.peak_stack, 1); /* the big stack, first added */
	assert_true(a->mem.peak_t_s > 0.61 && a->mem.peak_t_s < 0.63);
	assert_int_equal(a->mem.peak_rss, 370 * MIB);
	assert_int_equal(a->mem.nevents, 32);

	assert_int_equal(profile_target__mem_line_stats(&p, a, &ls, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ls[0].frame, id.big[0]); /* most touched first */
	assert_int_equal(ls[1].frame, id.rec[0]);
	assert_int_equal(ls[2].frame, id.keep[0]);
	assert_int_equal(ls[2].self[PROFILE_MEM_UNMAPPED], 1900 * MIB);
	free(ls);

	assert_int_equal(profile_target__mem_func_stats(&p, a, &fs, &n), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++) {
		const char *name = p.funcs[fs[i].func].qualname;

		if (!strcmp(name, "rec<&>")) {
			assert_int_equal(fs[i].self[PROFILE_MEM_TOUCHED], 256 * 1024);
			assert_int_equal(fs[i].total[PROFILE_MEM_TOUCHED], 256 * 1024);
		} else if (!strcmp(name, "main")) {
			assert_int_equal(fs[i].self[PROFILE_MEM_TOUCHED], 0);
			assert_int_equal(fs[i].total[PROFILE_MEM_TOUCHED],
					 tot[PROFILE_MEM_TOUCHED]);
			assert_int_equal(fs[i].total[PROFILE_MEM_MAPPED], 2000 * MIB);
		} else {
			assert_string_equal(name, "grow");
			assert_int_equal(fs[i].self[PROFILE_MEM_UNMAPPED], 1900 * MIB);
		}
	}
	assert_string_equal(p.funcs[fs[0].func].qualname, "grow");
	free(fs);
	profile__free(&p);
}

static void check_golden(const struct report_writer *w, const char *name)
{
	struct report_opts o = { .top_functions = 20, .top_lines = 20, .tool_version = "0.1.0" };
	struct profile p;
	struct ids id;

	build(&p, &id);
	golden_check(w, &p, &o, name);
	profile__free(&p);
}

static void test_text_golden(void **state)
{
	(void)state;
	check_golden(&report_text, "mem_report.txt");
}

static void test_json_golden(void **state)
{
	(void)state;
	check_golden(&report_json, "mem_report.json");
}

static void test_svg_golden(void **state)
{
	(void)state;
	check_golden(&report_mem_svg, "mem_timeline.svg");
}

/*
 * The timeline's labels with a hostile command line and qualname: markup,
 * quotes, control characters, bytes that are not UTF-8 and U+FFFF come out
 * escaped or as '?', so the SVG stays well-formed XML.
 */
static void test_svg_hostile_strings(void **state)
{
	struct report_opts o = { .tool_version = "0.1.0" };
	const char *bad = "<&'\"\x1b[31m\xff\xef\xbf\xbf>";
	struct profile p;
	struct ids id;
	size_t len;
	char *got;

	(void)state;
	build(&p, &id);
	free(p.targets[0].cmdline);
	p.targets[0].cmdline = strdup(bad);
	free(p.funcs[p.frames[id.big[0]].func].qualname);
	p.funcs[p.frames[id.big[0]].func].qualname = strdup(bad);
	assert_non_null(p.targets[0].cmdline);
	got = golden_write(&report_mem_svg, &p, &o, &len);
	assert_non_null(strstr(got, "pid 7: &lt;&amp;&apos;&quot;?[31m??&gt;"));
	assert_non_null(strstr(got, " &lt;&amp;&apos;&quot;?[31m??&gt;</text>"));
	assert_null(strchr(got, '\x1b'));
	assert_null(strstr(got, "\xff"));
	assert_null(strstr(got, "\xef\xbf\xbf"));
	free(got);
	profile__free(&p);
}

/*
 * A saw over a rising floor: 200 MiB peaks given back at once (one line),
 * 10 MiB kept per step (another). The baseline's label names the keeping
 * line with its retained bytes; the peaks are labelled transient, by the
 * line that mapped them.
 */
static void test_svg_baseline(void **state)
{
	struct report_opts o = { .tool_version = "0.1.0" };
	struct profile_target *a;
	uint32_t fbig, fkeep;
	struct profile p;
	long big, keep;
	size_t len;
	char *got;
	int i;

	(void)state;
	profile__init(&p, "cpu+mem", 99);
	p.mem = true;
	p.duration_s = 4.0;
	a = profile__add_target(&p, 8, "/usr/bin/python3", "python3 saw.py", "python3", "3.11.2");
	fbig = profile__frame(&p, profile__func(&p, "saw", "/x/saw.py", 1, false), 2);
	fkeep = profile__frame(&p, profile__func(&p, "saw", "/x/saw.py", 1, false), 4);
	for (i = 0; i < 40; i++) {
		double t = 0.1 * i;

		assert_int_equal(profile_target__add_rss(a, t,
							 (100 + 10 * (i / 2) + (i % 2 ? 200 : 0)) *
								 MIB),
				 0);
		if (i % 2)
			assert_true(profile_target__add_mem(a, PROFILE_MEM_MAPPED, &fbig, 1,
							    200 * MIB, t - 0.01, false) >= 0);
	}
	keep = profile_target__add_mem(a, PROFILE_MEM_MAPPED, &fkeep, 1, 200 * MIB, 0.5, false);
	big = profile_target__add_mem(a, PROFILE_MEM_MAPPED, &fbig, 1, 0, 0.5, false);
	a->mem.stacks[keep].bytes[PROFILE_MEM_RETAINED] = 200 * MIB;
	a->mem.stacks[big].bytes[PROFILE_MEM_RETAINED] = 4 * MIB; /* under 5%: not named */
	got = golden_write(&report_mem_svg, &p, &o, &len);
	/*
	 * The floor: 100 MiB in the first second, 250 MiB in the second after
	 * 2.9 s (the last reading with a whole second after it).
	 */
	assert_non_null(strstr(got, "class=\"baseline\" text-anchor=\"end\">baseline +150.0 MiB, "
				    "retained by saw.py:4 saw (200.0 MiB)</text>"));
	assert_non_null(strstr(got, ">transient +200.0 MiB saw.py:2 saw</text>"));
	assert_null(strstr(got, "retained by saw.py:4 saw (200.0 MiB), saw.py:2"));
	free(got);
	profile__free(&p);
}

static void test_folded_golden(void **state)
{
	(void)state;
	check_golden(&report_mem_folded, "mem_stacks.folded");
	/* weighted by retained bytes: only the big stack holds any */
	check_golden(&report_mem_retained_folded, "mem_retained.folded");
}

/* The memory options: modes, periods, files that imply --mem, and refusals. */
static void test_options(void **state)
{
	char *none[] = { "pybpfprof", "-p", "1", NULL };
	char *mem[] = { "pybpfprof", "-p", "1", "--mem", NULL };
	char *alloc[] = { "pybpfprof", "-p",	       "1", "--mem=alloc", "--alloc-period",
			  "4096",      "--mem-period", "8", NULL };
	char *timeline[] = { "pybpfprof", "-p",		  "1",	      "--mem-timeline",
			     "r.svg",	  "--mem-folded", "m.folded", NULL };
	char *bad_mode[] = { "pybpfprof", "-p", "1", "--mem=heap", NULL };
	char *bad_period[] = { "pybpfprof", "-p", "1", "--mem-period", "0", NULL };
	char *bad_alloc[] = { "pybpfprof", "-p", "1", "--alloc-period", "-1", NULL };
	char *retained[] = { "pybpfprof",   "-p",      "1",
			     "--mem-pprof", "m.pb.gz", "--mem-retained-folded",
			     "r.folded",    NULL };
	struct pyprof_config cfg;

	(void)state;
	assert_int_equal(parse(ARGC(none), none, &cfg), 0);
	assert_int_equal(cfg.mem, PYPROF_MEM_OFF);
	assert_int_equal(cfg.mem_period, 64);
	assert_int_equal(cfg.alloc_period, 512 * 1024);
	assert_int_equal(parse(ARGC(mem), mem, &cfg), 0);
	assert_int_equal(cfg.mem, PYPROF_MEM_FAULTS);
	assert_int_equal(parse(ARGC(alloc), alloc, &cfg), 0);
	assert_int_equal(cfg.mem, PYPROF_MEM_ALLOC);
	assert_int_equal(cfg.alloc_period, 4096);
	assert_int_equal(cfg.mem_period, 8);
	assert_int_equal(parse(ARGC(timeline), timeline, &cfg), 0);
	assert_int_equal(cfg.mem, PYPROF_MEM_FAULTS);
	assert_string_equal(cfg.mem_timeline, "r.svg");
	assert_string_equal(cfg.mem_folded, "m.folded");
	/* the retained-bytes outputs imply --mem too */
	assert_int_equal(parse(ARGC(retained), retained, &cfg), 0);
	assert_int_equal(cfg.mem, PYPROF_MEM_FAULTS);
	assert_string_equal(cfg.mem_pprof, "m.pb.gz");
	assert_string_equal(cfg.mem_retained_folded, "r.folded");
	expect_error(bad_mode, ARGC(bad_mode), "--mem 'heap'");
	expect_error(bad_period, ARGC(bad_period), "--mem-period '0'");
	expect_error(bad_alloc, ARGC(bad_alloc), "--alloc-period '-1'");
}

static void mem_call(struct profile_target *pp, enum profile_mem_op op, uint64_t addr, uint64_t len,
		     uint32_t owner)
{
	struct profile_mem_call c = { .op = op, .addr = addr, .len = len };

	profile_target__mem_call(pp, &c, owner);
}

/* The agent's --mem interval cut: figures moved out, held bytes as RETAINED, the table compacted. */
static void test_mem_cut(void **state)
{
	const uint64_t pg = 4096;
	struct profile p;
	struct profile_target *a;
	struct profile_mem out;
	uint32_t f[4];
	long pins[3] = { 3, 99, -1 };
	size_t i;

	(void)state;
	profile__init(&p, "cpu+mem", 99);
	a = profile__add_target(&p, 7, "/usr/bin/python3.11", "python3 x.py", "python3", "3.11");
	for (i = 0; i < 4; i++)
		f[i] = profile__frame(&p, profile__func(&p, "f", "/x.py", 1, false), 10 + i);
	/* keep (0) and churn (1) map; touch (2) only touches; a pinned one (3) */
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_MAPPED, &f[0], 1, 10 * pg, 0, 0),
			 0);
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_MAPPED, &f[1], 1, 100 * pg, 0, 0),
			 1);
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, &f[2], 1, 64 * pg, 0, 0),
			 2);
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, &f[3], 1, pg, 0, 0), 3);
	mem_call(a, PROFILE_MEM_OP_MMAP, 100 * pg, 10 * pg, 0);
	mem_call(a, PROFILE_MEM_OP_MMAP, 200 * pg, 100 * pg, 1);
	mem_call(a, PROFILE_MEM_OP_MUNMAP, 200 * pg, 100 * pg, 2);
	mem_call(a, PROFILE_MEM_OP_MMAP, 400 * pg, pg, MEM_RANGE_NO_STACK);
	assert_int_equal(profile_target__mem_cut(a, &out, pins, 3, 0), 0);
	assert_int_equal(out.nstacks, 4);
	assert_int_equal(out.stacks[0].bytes[PROFILE_MEM_RETAINED], 10 * pg);
	assert_int_equal(out.stacks[1].bytes[PROFILE_MEM_RELEASED], 100 * pg);
	assert_int_equal(out.stacks[1].bytes[PROFILE_MEM_RETAINED], 0);
	assert_int_equal(out.stacks[2].bytes[PROFILE_MEM_TOUCHED], 64 * pg);
	assert_int_equal(out.retained_no_stack, pg);
	profile_mem__free(&out);
	/* kept: the holder (0) and the pinned one (now 1); the pins renumbered */
	assert_int_equal(a->mem.nstacks, 2);
	assert_int_equal(a->mem.stacks[1].frames[0], f[3]);
	assert_int_equal(pins[0], 1);
	assert_int_equal(pins[1], -1);
	assert_int_equal(pins[2], -1);
	assert_int_equal(a->mem.stacks[0].bytes[PROFILE_MEM_MAPPED], 0);
	/* the next interval: the same stack found again, its range grown */
	assert_int_equal(profile_target__add_mem(a, PROFILE_MEM_MAPPED, &f[0], 1, 5 * pg, 0, 0), 0);
	mem_call(a, PROFILE_MEM_OP_MMAP, 110 * pg, 5 * pg, 0);
	assert_int_equal(profile_target__mem_cut(a, &out, NULL, 0, 0), 0);
	/* in use grew by what was mapped less what was released: 15 - 10 = 5 - 0 */
	assert_int_equal(out.nstacks, 1);
	assert_int_equal(out.stacks[0].bytes[PROFILE_MEM_RETAINED], 15 * pg);
	assert_int_equal(out.stacks[0].bytes[PROFILE_MEM_MAPPED], 5 * pg);
	assert_int_equal(out.retained_no_stack, pg);
	profile_mem__free(&out);
	assert_int_equal(a->mem.nstacks, 1); /* the pin let go: only the holder stays */
	assert_int_equal(a->mem.ranges.r[0].owner, 0);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_svg_golden),
		cmocka_unit_test(test_svg_hostile_strings),
		cmocka_unit_test(test_svg_baseline),
		cmocka_unit_test(test_folded_golden),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_mem_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
