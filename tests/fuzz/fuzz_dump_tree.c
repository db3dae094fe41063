// SPDX-License-Identifier: GPL-2.0-only
/*
 * dump --async's writers of the task graph (src/dump/dump_async.c) over
 * hostile graphs: whatever the tasks await (themselves, each other in
 * cycles, one task from everywhere, indices past the tasks), the text tree
 * and the JSON stay within their bound, draw each task at most once, and
 * count every task they leave out; the JSON is valid.
 *
 * Input: byte 0 the number of tasks less one, byte 1 the bound (in KiB, from
 * 6), byte 2 the format (bit 0: JSON); then per task a byte of coroutine
 * frames (low 2 bits) and cut frames (bit 2), a byte of awaits (up to 16),
 * and that many bytes of awaited indices (modulo the tasks plus two: some
 * point past them). Tasks are named t0, t1, ... so that their lines can be
 * told apart.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "dump/dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The graph the input describes (at least one task). */
static struct dump_process *graph(const uint8_t *data, size_t size)
{
	struct dump_process *dp = calloc(1, sizeof(*dp));
	size_t n = (size_t)data[0] + 1, at = 3, i, k;

	dp->tasks = calloc(n, sizeof(*dp->tasks));
	dp->ntasks = n;
	for (i = 0; i < n; i++) {
		struct dump_task *t = &dp->tasks[i];
		uint8_t shape = at < size ? data[at++] : 0, na = at < size ? data[at++] % 17 : 0;

		snprintf(t->name, sizeof(t->name), "t%zu", i);
		t->nframes = shape & 3;
		t->frames_cut = (shape >> 2) & 1;
		t->truncated = (shape >> 3) & 1;
		t->frames = calloc(t->nframes ? t->nframes : 1, sizeof(*t->frames));
		for (k = 0; k < t->nframes; k++) {
			t->frames[k].func = strdup(k & 1 ? "inner" : "outer\x1b[2J");
			t->frames[k].file = strdup("/app.py");
			t->frames[k].line = (int)k - 1;
		}
		for (k = 0; k < na && at < size; k++)
			t->awaits[t->nawaits++] = data[at++] % (n + 2);
	}
	return dp;
}

/* Each task drawn in full at most once (a line "(T) tI", or with " (task #I)"): how many. */
static size_t drawn_once(const char *text, size_t len, size_t n)
{
	uint8_t *seen = calloc(n, 1);
	const char *p = text, *end = text + len, *nl;
	size_t drawn = 0, i;
	char id[32];

	for (; p < end; p = nl + 1) {
		const char *t;
		char *rest;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			abort(); /* every line ends */
		t = memmem(p, (size_t)(nl - p), "(T) t", 5);
		if (!t)
			continue;
		i = strtoul(t + 5, &rest, 10);
		if (i >= n)
			abort();
		snprintf(id, sizeof(id), " (task #%zu)\n", i);
		if (*rest != '\n' && strncmp(rest, id, strlen(id)))
			continue; /* named again, or drawn below */
		if (seen[i]++)
			abort(); /* drawn twice */
		drawn++;
	}
	free(seen);
	return drawn;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump_process *dp;
	struct dump_out o;
	uint64_t bound;
	size_t len = 0, ntasks;
	char *text = NULL, *wrapped;
	json_t *doc;
	FILE *f;

	if (size < 3)
		return 0;
	bound = (6 + (uint64_t)data[1]) << 10;
	dp = graph(data, size);
	ntasks = dp->ntasks;
	f = open_memstream(&text, &len);
	if (!f || dump_out__init(&o, f, 1 << 30) || !dump_out__process(&o, bound))
		abort();
	if (data[2] & 1)
		dump_tasks_json(&o, dp);
	else
		dump_tasks_text(&o, dp);
	dump_out__process_end(&o);
	dump_out__free(&o);
	fclose(f);
	if (len > bound || dp->cut.tasks > ntasks)
		abort();
	if (!(data[2] & 1) && drawn_once(text, len, ntasks) + dp->cut.tasks != ntasks)
		abort();
	if (data[2] & 1) {
		if (asprintf(&wrapped, "{\"pid\": 1%.*s}", (int)len, text) < 0)
			abort();
		doc = json_loads(wrapped, 0, NULL);
		if (!doc ||
		    json_array_size(json_object_get(json_object_get(doc, "asyncio"), "tasks")) +
				    dp->cut.tasks !=
			    ntasks)
			abort();
		json_decref(doc);
		free(wrapped);
	}
	free(text);
	dump_tasks_free(dp);
	free(dp);
	return 0;
}
