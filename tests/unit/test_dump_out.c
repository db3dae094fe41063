/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pybpfprof dump's bounded output (src/dump/dump_out.c) and the asyncio
 * task graph's writers over it (src/dump/dump_async.c), on graphs built by
 * hand: an element is written whole or not at all, the output never passes
 * its bound, closers always fit; a task graph is drawn with each task once
 * however it is shaped (the 62-task DAG, a chain deeper than the
 * tree may go, cycles, a task awaiting itself, indices out of range), later
 * meetings named by id, and the JSON's awaited_by lists are the graph's.
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

/* An output to memory: text and length, for the checks. */
struct sink {
	char *text;
	size_t len;
	FILE *f;
	struct dump_out o;
};

static void sink_open(struct sink *s, uint64_t bound)
{
	memset(s, 0, sizeof(*s));
	s->f = open_memstream(&s->text, &s->len);
	assert_non_null(s->f);
	assert_int_equal(dump_out__init(&s->o, s->f, bound), 0);
}

static void sink_close(struct sink *s)
{
	dump_out__free(&s->o);
	fclose(s->f);
}

static bool item(struct dump_out *o, enum dump_el kind, size_t n, char c)
{
	FILE *f = dump_out__begin(o, kind);
	size_t i;

	if (!f)
		return false;
	for (i = 0; i < n; i++)
		fputc(c, f);
	return dump_out__end(o);
}

static void test_elements_whole_or_not(void **state)
{
	struct sink s;

	(void)state;
	sink_open(&s, 64 << 10);
	assert_true(dump_out__process(&s.o, 16 << 10));
	/* room for items: the process's bound less its closers' reserve */
	assert_int_equal(dump_out__room(&s.o), (16 << 10) - DUMP_PROC_RESERVE);
	assert_true(item(&s.o, DUMP_EL_ITEM, 10000, 'a'));
	/* too big for what is left: not written at all, and the process is full */
	assert_false(item(&s.o, DUMP_EL_ITEM, 5000, 'b'));
	assert_true(s.o.full);
	/* a small item after it: not written either (the output is a prefix) */
	assert_false(item(&s.o, DUMP_EL_ITEM, 1, 'c'));
	/* closers: from the reserve, up to the process's bound and not a byte more */
	assert_true(item(&s.o, DUMP_EL_CLOSE, DUMP_PROC_RESERVE, 'z'));
	assert_true(item(&s.o, DUMP_EL_CLOSE, (16 << 10) - 10000 - DUMP_PROC_RESERVE, 'z'));
	assert_false(item(&s.o, DUMP_EL_CLOSE, 1, 'y'));
	dump_out__process_end(&s.o);
	sink_close(&s);
	assert_int_equal(s.len, 16 << 10);
	assert_null(memchr(s.text, 'b', s.len));
	assert_null(memchr(s.text, 'c', s.len));
	free(s.text);
}

/* A process gets what the dump has left: its bound, or less; none once the dump is spent. */
static void test_process_within_dump(void **state)
{
	uint64_t bound = 48 << 10;
	struct sink s;
	int n = 0;

	(void)state;
	sink_open(&s, bound);
	while (dump_out__process(&s.o, 16 << 10)) {
		/* fills its room exactly, then its reserve */
		assert_true(item(&s.o, DUMP_EL_ITEM, (size_t)dump_out__room(&s.o), 'x'));
		assert_false(item(&s.o, DUMP_EL_ITEM, 1, 'x'));
		assert_true(item(&s.o, DUMP_EL_CLOSE, DUMP_PROC_RESERVE, 'y'));
		dump_out__process_end(&s.o);
		n++;
	}
	assert_int_equal(n, 3); /* 16, 16, then the rest of 48 less the dump's reserve: 12 */
	assert_true(item(&s.o, DUMP_EL_CLOSE, DUMP_OUT_RESERVE, 'e'));
	sink_close(&s);
	assert_int_equal(s.len, bound);
	free(s.text);
}

/* A process of n tasks named t0, t1, ..., one coroutine frame each, no awaits yet. */
static struct dump_process *tasks(size_t n)
{
	struct dump_process *dp = calloc(1, sizeof(*dp));
	size_t i;

	assert_non_null(dp);
	dp->tasks = calloc(n, sizeof(*dp->tasks));
	assert_non_null(dp->tasks);
	dp->ntasks = n;
	for (i = 0; i < n; i++) {
		struct dump_task *t = &dp->tasks[i];

		snprintf(t->name, sizeof(t->name), "t%zu", i);
		t->addr = 0x1000 + i;
		t->frames = calloc(1, sizeof(*t->frames));
		t->frames[0].func = strdup("node");
		t->frames[0].file = strdup("/app.py");
		t->frames[0].line = 7;
		t->nframes = 1;
	}
	return dp;
}

static void awaits(struct dump_process *dp, size_t from, size_t to)
{
	struct dump_task *t = &dp->tasks[from];

	assert_true(t->nawaits < PY_ASYNC_AWAITS);
	t->awaits[t->nawaits++] = (uint32_t)to;
}

static void tasks_free(struct dump_process *dp)
{
	dump_tasks_free(dp);
	free(dp);
}

/* The tree of dp's tasks, drawn within bound. */
static char *tree(struct dump_process *dp, uint64_t bound, size_t *len)
{
	struct sink s;

	sink_open(&s, bound);
	assert_true(dump_out__process(&s.o, bound));
	dump_tasks_text(&s.o, dp);
	dump_out__process_end(&s.o);
	sink_close(&s);
	assert_true(s.len <= bound);
	*len = s.len;
	return s.text;
}

/*
 * How many lines draw task i in full ("(T) ti", or with its id), and how
 * many name it again ("shown above", or closing a cycle).
 */
static void count_lines(const char *text, size_t i, size_t *full, size_t *again)
{
	char name[32], id[32], line[4096];
	const char *p = text, *nl, *at;
	size_t n;

	*full = *again = 0;
	snprintf(name, sizeof(name), "(T) t%zu", i);
	snprintf(id, sizeof(id), " (task #%zu)", i);
	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		n = (size_t)(nl - p) < sizeof(line) - 1 ? (size_t)(nl - p) : sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		at = strstr(line, name);
		if (!at || (at[strlen(name)] >= '0' && at[strlen(name)] <= '9'))
			continue;
		at += strlen(name);
		if (!*at || !strcmp(at, id))
			(*full)++;
		else if (strstr(at, "shown above)") || !strncmp(at, " (awaits itself", 15))
			(*again)++;
	}
}

/*
 * The program: 62 tasks, each awaiting the next two (a gather).
 * Drawn as a tree it has fib(62) subtrees; here 62 task lines, 60 of them
 * with their id, and one line per other await naming the task again.
 */
static void test_dag_each_task_once(void **state)
{
	struct dump_process *dp = tasks(62);
	size_t i, len, full, again, refs = 0;
	char *text;

	(void)state;
	for (i = 0; i + 2 < 62; i++) {
		awaits(dp, i, i + 1);
		awaits(dp, i, i + 2);
		dp->tasks[i].gather = true;
	}
	text = tree(dp, 1 << 20, &len);
	for (i = 0; i < 62; i++) {
		count_lines(text, i, &full, &again);
		assert_int_equal(full, 1);
		refs += again;
	}
	/* 120 awaits: 61 of them reach a task first (all but t0, a root), 59 again */
	assert_int_equal(refs, 59);
	assert_non_null(strstr(text, "(T) t2 (task #2)\n"));
	assert_non_null(strstr(text, "(T) t2 (task #2, shown above)\n"));
	assert_null(strstr(text, "(T) t0 (task #0")); /* awaited by none: no id needed */
	assert_int_equal(dp->cut.tasks, 0);
	assert_int_equal(dp->cut.frames, 0);
	/* "asyncio tasks" after a blank line, 62 task lines, 62 frame lines, 59 naming again */
	for (i = 0, refs = 0; i < len; i++)
		refs += text[i] == '\n';
	assert_int_equal(refs, 2 + 62 + 62 + 59);
	free(text);
	tasks_free(dp);
}

/* A chain deeper than the tree may go: the tasks past it are drawn below, each once. */
static void test_deep_chain(void **state)
{
	struct dump_process *dp = tasks(300);
	size_t i, len, full, again;
	char *text;

	(void)state;
	for (i = 0; i + 1 < 300; i++)
		awaits(dp, i, i + 1);
	text = tree(dp, 4 << 20, &len);
	for (i = 0; i < 300; i++) {
		count_lines(text, i, &full, &again);
		assert_int_equal(full, 1);
	}
	assert_non_null(strstr(text, "drawn below: the tree is 256 levels deep here"));
	assert_int_equal(dp->cut.tasks, 0);
	free(text);
	tasks_free(dp);
}

/* Cycles, a task awaiting itself, indices past the tasks: each task once, nothing read out of range. */
static void test_cycles_and_bad_indices(void **state)
{
	struct dump_process *dp = tasks(4);
	size_t i, len, full, again;
	char *text;

	(void)state;
	awaits(dp, 0, 1);
	awaits(dp, 1, 0);
	awaits(dp, 2, 2);
	awaits(dp, 3, 4000);
	awaits(dp, 3, 0);
	text = tree(dp, 1 << 20, &len);
	for (i = 0; i < 4; i++) {
		count_lines(text, i, &full, &again);
		assert_int_equal(full, 1);
	}
	assert_non_null(strstr(text, "(T) t2 (awaits itself through the tasks above: cycle)\n"));
	assert_int_equal(dp->cut.tasks, 0);
	free(text);
	tasks_free(dp);
}

/* A bound smaller than the tree: within it, a prefix, and the tasks not drawn counted. */
static void test_tree_bounded(void **state)
{
	struct dump_process *dp = tasks(4000);
	size_t i, len, full, again, drawn = 0;
	char *text;

	(void)state;
	for (i = 1; i < PY_ASYNC_AWAITS; i++)
		awaits(dp, 0, i * 60);
	for (i = 1; i + 1 < 4000; i++)
		awaits(dp, i, i + 1);
	text = tree(dp, 64 << 10, &len);
	for (i = 0; i < 4000; i++) {
		count_lines(text, i, &full, &again);
		assert_true(full <= 1);
		drawn += full;
	}
	assert_true(drawn > 10 && drawn < 4000);
	assert_int_equal(dp->cut.tasks, 4000 - drawn);
	assert_int_equal(dp->cut.frames, 4000 - drawn);
	free(text);
	tasks_free(dp);
}

/* The JSON: one object per task, awaited_by the graph's reverse, valid even when cut. */
static void test_json_awaited_by(void **state)
{
	struct dump_process *dp = tasks(62);
	json_t *doc, *list, *t;
	json_error_t jerr;
	struct sink s;
	size_t i;
	char *wrapped;

	(void)state;
	for (i = 0; i + 2 < 62; i++) {
		awaits(dp, i, i + 1);
		awaits(dp, i, i + 2);
	}
	for (int bound = 6 << 10; bound <= 64 << 10; bound += 58 << 10) {
		dp->cut = (struct dump_cuts){ 0 };
		sink_open(&s, 1 << 20);
		assert_true(dump_out__process(&s.o, (uint64_t)bound));
		dump_tasks_json(&s.o, dp);
		dump_out__process_end(&s.o);
		sink_close(&s);
		assert_true(s.len <= (size_t)bound);
		assert_true(asprintf(&wrapped, "{\"pid\": 1%.*s}", (int)s.len, s.text) > 0);
		doc = json_loads(wrapped, 0, &jerr);
		assert_non_null(doc);
		list = json_object_get(json_object_get(doc, "asyncio"), "tasks");
		assert_int_equal(json_array_size(list) + dp->cut.tasks, 62);
		json_array_foreach(list, i, t)
		{
			json_t *by = json_object_get(t, "awaited_by");

			/* task j awaits j + 1 and j + 2, for j up to 59 */
			size_t want = (i >= 1 && i - 1 <= 59) + (i >= 2 && i - 2 <= 59);

			assert_int_equal(json_integer_value(json_object_get(t, "id")), i);
			assert_int_equal(json_array_size(by), want);
			if (i >= 2)
				assert_int_equal(json_integer_value(json_array_get(by, 0)), i - 2);
		}
		if (bound > 60000)
			assert_int_equal(json_array_size(list), 62);
		json_decref(doc);
		free(wrapped);
		free(s.text);
	}
	tasks_free(dp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elements_whole_or_not),
		cmocka_unit_test(test_process_within_dump),
		cmocka_unit_test(test_dag_each_task_once),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_cycles_and_bad_indices),
		cmocka_unit_test(test_tree_bounded),
		cmocka_unit_test(test_json_awaited_by),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
