/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The heatmap's figures from a hand-built profile: a line's self samples go
 * to the innermost Python frame through native and off-CPU frames, its total
 * counts a recursive stack once, a sample whose innermost Python frame has
 * no line is counted apart, bytes come from the memory stacks, each process
 * has its own counts, a target's "</script>" cannot end the page's data, and
 * the registry picks it by name and by its file ending.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "proc/source.h"
#include "report/report.h"
#include "report/report_ci.h"
#include "report/report_writer.h"

static const struct report_opts opts = { .tool_version = "test" };

struct frames {
	uint32_t main3, f11, f12, g2, native, off, unres, hostile;
};

static void build(struct profile *p, struct frames *fr)
{
	uint32_t fmain, ff, fg, fn, foff, fun, fh;

	profile__init(p, "cpu", 100);
	p->wall = true;
	p->mem = true;
	fmain = profile__func(p, "main", "/app.py", 1, false);
	ff = profile__func(p, "f", "/app.py", 10, false);
	fg = profile__func(p, "g", "/lib.py", 1, false);
	fn = profile__func_kind(p, "memcpy", "/lib/libc.so.6", 0, false, PROFILE_FUNC_NATIVE);
	foff = profile__func(p, "<off-CPU: sleep>", PROFILE_OFFCPU_FILE, 0, false);
	fun = profile__func(p, "[unresolved]", "", 0, true);
	fh = profile__func(p, "</script><b>x</b>", "/h</script>.py", 1, false);
	fr->main3 = profile__frame(p, fmain, 3);
	fr->f11 = profile__frame(p, ff, 11);
	fr->f12 = profile__frame(p, ff, 12);
	fr->g2 = profile__frame(p, fg, 2);
	fr->native = profile__frame(p, fn, -1);
	fr->off = profile__frame(p, foff, -1);
	fr->unres = profile__frame(p, fun, -1);
	fr->hostile = profile__frame(p, fh, 2);
}

static char *write_page(const struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(report_heatmap.write(f, p, &opts), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* The part of the page from the entry of file name of process proc to its end. */
static char *file_entry(const char *page, const char *name, int proc)
{
	char key[128], *at, *end, *out;

	snprintf(key, sizeof(key), "{\"n\":\"%s\",\"p\":%d,", name, proc);
	at = strstr(page, key);
	assert_non_null(at);
	end = strstr(at, "]}");
	assert_non_null(end);
	out = strndup(at, end - at + 2);
	assert_non_null(out);
	return out;
}

static void has(const char *s, const char *want)
{
	if (!strstr(s, want))
		fail_msg("%s not in %s", want, s);
}

static void test_lines(void **state)
{
	struct profile p;
	struct frames fr;
	struct profile_target *a;
	struct report_ci c = report_ci_wilson(14, 28);
	char *page, *app, *lib, want[128];

	(void)state;
	build(&p, &fr);
	a = profile__add_target(&p, 7, "/usr/bin/python3", "python3 app.py", "python3", "3.11");
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.f11, fr.main3 }, 2, 10);
	/* a native frame below f: f's line ran it */
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.native, fr.f12, fr.main3 }, 3, 5);
	/* off the CPU in g */
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.off, fr.g2, fr.main3 }, 3, 7);
	/* f recursing at line 11: its total counts the stack once */
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.f11, fr.f11, fr.main3 }, 3, 4);
	/* innermost Python frame unresolved: no line's self */
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.unres, fr.main3 }, 2, 2);
	a->samples = 28;
	assert_true(profile_target__add_mem(a, PROFILE_MEM_TOUCHED, (uint32_t[]){ fr.g2, fr.main3 },
					    2, 4096, 0, false) >= 0);
	page = write_page(&p);
	app = file_entry(page, "/app.py", 0);
	lib = file_entry(page, "/lib.py", 0);
	snprintf(want, sizeof(want), "[11,14,14,%.3f,%.3f,%.3f,%.3f,0,0,0,0,0,0,", 100 * c.lo,
		 100 * c.hi, 100 * c.lo, 100 * c.hi);
	has(app, want);
	has(app, "[12,5,5,");
	has(app,
	    "[3,0,28,0.000,12.064,87.936,100.000,0,7,0,4096,0,0,"); /* off-CPU and bytes in total */
	has(app, "[3,0,28,");
	has(app, "[\"f\",10,19,19]");
	has(app, "[\"main\",1,0,28]");
	has(lib, "[2,7,7,");
	has(lib, ",7,7,4096,4096,0,0,0,"); /* all of g's samples off the CPU, and the bytes */
	/* the process: 28 samples, 2 of them with no line */
	has(page, ",28,2]]");
	/* no source without the process's rights: the file says why */
	has(app, "\"err\":\"the process's user is unknown");
	free(app);
	free(lib);
	free(page);
	profile__free(&p);
}

static void test_processes_apart(void **state)
{
	struct profile p;
	struct frames fr;
	struct profile_target *a, *b;
	char *page, *app;

	(void)state;
	build(&p, &fr);
	a = profile__add_target(&p, 7, "/usr/bin/python3", "python3 app.py", "python3", "3.11");
	b = profile__add_target(&p, 8, "/usr/bin/python3", "python3 app.py", "python3", "3.11");
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.f11, fr.main3 }, 2, 10);
	a->samples = 10;
	profile_target__add_stack(b, 2, (uint32_t[]){ fr.f12, fr.main3 }, 2, 3);
	b->samples = 3;
	page = write_page(&p);
	app = file_entry(page, "/app.py", 1);
	has(app, "[12,3,3,");
	has(app, "[3,0,3,");
	assert_null(strstr(app, "[11,")); /* the other process's line */
	assert_null(strstr(page, "/lib.py"));
	free(app);
	free(page);
	profile__free(&p);
}

static void test_hostile_names(void **state)
{
	struct profile p;
	struct frames fr;
	struct profile_target *a;
	char *page, *s;
	int ends = 0;

	(void)state;
	build(&p, &fr);
	a = profile__add_target(&p, 7, "/usr/bin/python3", "python3 </script>", "python3", "3.11");
	profile_target__add_stack(a, 1, (uint32_t[]){ fr.hostile }, 1, 1);
	a->samples = 1;
	page = write_page(&p);
	for (s = page; (s = strstr(s, "</script>")); s++)
		ends++;
	assert_int_equal(ends, 2); /* the data's and the script's own */
	has(page, "\"/h\\u003c/script>.py\"");
	has(page, "\"\\u003c/script>\\u003cb>x\\u003c/b>\"");
	free(page);
	profile__free(&p);
}

/* A file read with the process's rights that is not there: the page says so. */
static void test_missing_file(void **state)
{
	struct profile p;
	struct profile_target *a;
	uint32_t fr;
	char *page;

	(void)state;
	profile__init(&p, "cpu", 100);
	fr = profile__frame(&p, profile__func(&p, "f", "/nonexistent/heat.py", 1, false), 2);
	a = profile__add_target(&p, 7, "/usr/bin/python3", "python3 heat.py", "python3", "3.11");
	a->sources->creds[0].kind = SOURCE_CREDS_SELF; /* made here: our own rights */
	a->sources->ncreds = 1;
	profile_target__add_stack(a, 1, &fr, 1, 3);
	a->samples = 3;
	page = write_page(&p);
	has(page, "\"err\":\"not found (no such file, or not that line in it)\"");
	free(page);
	profile__free(&p);
}

/* -f heatmap, and the .heat.html ending over the flame graph's .html */
static void test_registry(void **state)
{
	(void)state;
	assert_ptr_equal(report_find("heatmap"), &report_heatmap);
	assert_ptr_equal(report_for_path("/x/src.heat.html"), &report_heatmap);
	assert_ptr_equal(report_for_path("/x/heat.html"), &report_flame);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),	      cmocka_unit_test(test_processes_apart),
		cmocka_unit_test(test_hostile_names), cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_registry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
