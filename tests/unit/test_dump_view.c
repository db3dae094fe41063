/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pybpfprof dump as a debugger's view, on processes built by hand: native
 * frames placed among Python frames by the eval calls of the unwind
 * (src/dump/dump_native.c), a process's descendants through parents of any
 * kind (src/proc/procfs.c), and the writers (src/dump/dump_write.c): the
 * arguments apart from the other locals and in their signature's names,
 * locals not bound yet counted but not shown, a lock's state and an RLock's
 * owner in JSON, native frames in their places in text and JSON, and what a
 * bound cuts still counted.
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
#include <jansson.h>

#include "dump/dump.h"
#include "proc/procfs.h"
#include "session/native_merge.h"

enum { O = NATIVE_PC_OTHER, E = NATIVE_PC_EVAL };

/*
 * Three Python frames, innermost first: f and g run by one eval call (g,
 * the first it ran, flagged), h by another. Native, innermost first: libc,
 * time_sleep, the eval call of f and g, a callback, qsort, the eval call
 * of h, main.
 */
static void test_place_between(void **state)
{
	static const uint8_t kinds[] = { O, O, E, O, O, E, O };
	uint64_t entries[2] = { (1 << 1) | (1 << 2), 0 }; /* g and h began their eval calls */
	int32_t at[7];
	uint32_t placed;

	(void)state;
	assert_int_equal(dump_native_place(kinds, 7, 3, entries, 128, false, at, &placed),
			 DUMP_NATIVE_PLACED);
	assert_int_equal(placed, 3);
	/* below f; the eval call runs f and g; then callback and qsort below h; main out */
	assert_int_equal(at[0], 0);
	assert_int_equal(at[1], 0);
	assert_int_equal(at[2], -1);
	assert_int_equal(at[3], 2);
	assert_int_equal(at[4], 2);
	assert_int_equal(at[5], -1);
	assert_int_equal(at[6], -1);
}

static void test_place_partial_and_disagree(void **state)
{
	static const uint8_t one_eval[] = { O, E, O };
	static const uint8_t no_eval[] = { O, O, O };
	static const uint8_t three_evals[] = { O, E, O, E, O, E };
	uint64_t entries[2] = { 0x7, 0 }; /* every frame its own eval call */
	int32_t at[6];
	uint32_t placed;

	(void)state;
	/* the unwind ended after the first eval call: the outer frames are partial */
	assert_int_equal(dump_native_place(one_eval, 3, 3, entries, 128, false, at, &placed),
			 DUMP_NATIVE_PARTIAL);
	assert_int_equal(placed, 1);
	assert_int_equal(at[0], 0);
	assert_int_equal(at[2], 1);
	/* no eval call at all: everything unwound was called by the innermost frame */
	assert_int_equal(dump_native_place(no_eval, 3, 3, entries, 128, false, at, &placed),
			 DUMP_NATIVE_PARTIAL);
	assert_true(at[0] == 0 && at[1] == 0 && at[2] == 0);
	/* more eval calls than Python frames: below the innermost, up to the first eval call */
	assert_int_equal(dump_native_place(three_evals, 6, 2, entries, 128, false, at, &placed),
			 DUMP_NATIVE_BELOW);
	assert_int_equal(placed, 0);
	assert_int_equal(at[0], 0);
	assert_true(at[1] == -1 && at[2] == -1 && at[4] == -1);
	/* ... unless the Python stack was cut short: then it is expected */
	assert_int_equal(dump_native_place(three_evals, 6, 2, entries, 128, true, at, &placed),
			 DUMP_NATIVE_PLACED);
	/* no entries known: each eval call takes every frame left */
	assert_int_equal(dump_native_place(one_eval, 3, 3, NULL, 0, false, at, &placed),
			 DUMP_NATIVE_PLACED);
	assert_int_equal(at[2], -1);
}

static const struct proc_parent tree[] = {
	{ 10, 1 },  { 11, 10 }, { 12, 10 }, { 20, 11 },
	{ 21, 12 }, { 30, 99 }, { 99, 30 }, /* a cycle elsewhere */
	{ 10, 21 }, /* the root listed again as a descendant's child (pid reuse, races) */
	{ 40, 40 },
};

/* The descendants of root in tree (a copy: the call sorts and consumes its links). */
static size_t descendants(pid_t root, pid_t *out, size_t max)
{
	struct proc_parent links[sizeof(tree) / sizeof(tree[0])];

	memcpy(links, tree, sizeof(links));
	return proc_descendants_of(links, sizeof(links) / sizeof(links[0]), root, out, max);
}

/* A tree with a cycle and a self-parent: each descendant once, parents first, bounded. */
static void test_descendants(void **state)
{
	pid_t out[8];

	(void)state;
	assert_int_equal(descendants(10, out, 8), 4);
	assert_true((out[0] == 11 && out[1] == 12) || (out[0] == 12 && out[1] == 11));
	assert_true((out[2] == 20 && out[3] == 21) || (out[2] == 21 && out[3] == 20));
	/* a cycle not through the root is walked once */
	assert_int_equal(descendants(30, out, 8), 1);
	assert_int_equal(out[0], 99);
	/* room for one: the count says more were found */
	assert_true(descendants(10, out, 1) > 1);
	assert_int_equal(descendants(20, out, 8), 0);
	assert_int_equal(descendants(40, out, 8), 0);
}

/* One process: a thread with a frame of arguments, locals, an unbound local, locks. */
static struct dump_process *process(void)
{
	struct dump_process *dp = calloc(1, sizeof(*dp));
	struct dump_thread *t;
	struct dump_frame *f;
	struct dump_local *l;

	dp->pid = 100;
	snprintf(dp->version, sizeof(dp->version), "3.11.2");
	dp->threads = calloc(2, sizeof(*dp->threads));
	dp->nthreads = dp->cap = 2;
	t = &dp->threads[1];
	t->tid = 101;
	t->python = true;
	t->ident = 0x7f00;
	snprintf(t->pyname, sizeof(t->pyname), "holder");
	t = &dp->threads[0];
	t->tid = 100;
	t->python = true;
	t->syscall = 230;
	t->state = 'S';
	t->frames = calloc(2, sizeof(*t->frames));
	t->nframes = 2;
	f = &t->frames[0];
	f->func = strdup("zoo");
	f->file = strdup("/app.py");
	f->line = 7;
	f->locals = l = calloc(4, sizeof(*l));
	f->nlocals = 4;
	f->total_locals = 6; /* and one unbound hidden, one not read */
	f->unbound_hidden = 1;
	snprintf(l[0].name, 64, "a");
	l[0].param = PY_PARAM_POS;
	l[0].value = strdup("1");
	snprintf(l[1].name, 64, "rest");
	l[1].param = PY_PARAM_VARARGS;
	l[1].value = strdup("(4, 5)");
	snprintf(l[2].name, 64, "kw");
	l[2].param = PY_PARAM_VARKW;
	l[2].value = strdup("{}");
	snprintf(l[3].name, 64, "mine");
	l[3].value = strdup("<locked _thread.RLock object ...>");
	l[3].info = (struct py_value_info){ .lock = 2, .locked = 1, .owner = 0x7f00, .count = 2 };
	f = &t->frames[1];
	f->func = strdup("<module>");
	f->file = strdup("/app.py");
	f->line = 9;
	/* native: two below zoo, one between zoo and <module> */
	t->native = calloc(3, sizeof(*t->native));
	t->nnative = 3;
	t->native_status = DUMP_NATIVE_PLACED;
	t->native[0] = (struct dump_nframe){ strdup("clock_nanosleep"), strdup("/libc.so.6"), 1,
					     0 };
	t->native[1] = (struct dump_nframe){ strdup("time_sleep"), strdup("/python"), 2, 0 };
	t->native[2] = (struct dump_nframe){ strdup("qsort"), strdup("/libc.so.6"), 3, 1 };
	return dp;
}

static char *written(struct dump_process *dp, bool json, uint64_t bound)
{
	struct dump_report rep = { .locals = true, .native = true, .json = json };
	struct dump_out o;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(dump_out__init(&o, f, 1 << 20), 0);
	assert_true(dump_out__process(&o, bound));
	assert_true(dump_write_process(&o, &rep, dp, true));
	dump_out__process_end(&o);
	dump_out__free(&o);
	fclose(f);
	return text;
}

static void test_text_view(void **state)
{
	struct dump_process *dp = process();
	char *text = written(dp, false, 1 << 20);
	const char *want = "    [native] clock_nanosleep (/libc.so.6)\n"
			   "    [native] time_sleep (/python)\n"
			   "    zoo (/app.py:7)\n"
			   "        arguments:\n"
			   "          a = 1\n"
			   "          *rest = (4, 5)\n"
			   "          **kw = {}\n"
			   "        locals:\n"
			   "          mine = <locked _thread.RLock object ...>\n"
			   "        (1 not bound yet, not shown: --unbound shows them)\n"
			   "        ... 1 more locals\n"
			   "    [native] qsort (/libc.so.6)\n"
			   "    <module> (/app.py:9)\n";

	(void)state;
	assert_non_null(strstr(text, want));
	free(text);
	dump_process_free(dp);
	free(dp);
}

static void test_json_view(void **state)
{
	struct dump_process *dp = process();
	char *text = written(dp, true, 1 << 20);
	json_t *root, *th, *frames, *loc, *lock;
	json_error_t err;

	(void)state;
	/* the process's object, whole */
	root = json_loads(text, 0, &err);
	assert_non_null(root);
	th = json_array_get(json_object_get(root, "threads"), 0);
	frames = json_object_get(th, "frames");
	assert_int_equal(json_array_size(frames), 5);
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 0), "kind")),
			    "native");
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 2),
							      "function")),
			    "zoo");
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 3),
							      "function")),
			    "qsort");
	loc = json_object_get(json_array_get(frames, 2), "locals");
	assert_string_equal(json_string_value(json_object_get(json_array_get(loc, 1), "argument")),
			    "var_positional");
	assert_true(json_is_null(json_object_get(json_array_get(loc, 3), "argument")));
	lock = json_object_get(json_array_get(loc, 3), "lock");
	assert_int_equal(json_integer_value(json_object_get(lock, "owner_tid")), 101);
	assert_string_equal(json_string_value(json_object_get(lock, "owner_name")), "holder");
	assert_int_equal(json_integer_value(json_object_get(lock, "count")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(frames, 2),
							    "locals_unbound_hidden")),
			 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(th, "native"),
							      "status")),
			    "placed");
	assert_int_equal(json_integer_value(json_object_get(th, "frames_not_shown")), 0);
	json_decref(root);
	free(text);
	dump_process_free(dp);
	free(dp);
}

/*
 * A bound that cuts the stack before its second Python frame: that frame and
 * the native frame shown before it are counted as left out, not lost.
 */
static void test_cut_counts_native(void **state)
{
	struct dump_process *dp = process();
	char *text, *big = malloc(6000);

	(void)state;
	memset(big, 'x', 5999);
	big[5999] = 0;
	dp->threads[0].frames[1].source = big;
	text = written(dp, false, 8192);
	assert_non_null(strstr(text, "    zoo (/app.py:7)\n"));
	assert_null(strstr(text, "qsort"));
	assert_null(strstr(text, "<module>"));
	assert_int_equal(dp->cut.frames, 2);
	free(text);
	dump_process_free(dp);
	free(dp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_between),
		cmocka_unit_test(test_place_partial_and_disagree),
		cmocka_unit_test(test_descendants),
		cmocka_unit_test(test_text_view),
		cmocka_unit_test(test_json_view),
		cmocka_unit_test(test_cut_counts_native),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
