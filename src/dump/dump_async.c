// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump --async: the asyncio tasks of a process (cpython/py_async.c
 * reads them), with each coroutine frame's function and file:line, printed
 * as the tree `python -m asyncio pstree` prints (a task, its coroutine stack
 * outermost first, and under its innermost frame the tasks it awaits) or as
 * JSON tasks with ids, awaits and awaited_by lists.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "report/report_common.h"
#include "util/text.h"

#define TREE_LEVELS 256 /* levels of the printed tree, at most */

void dump_read_tasks(struct py_reader *r, struct code_cache *cc, const struct target *t,
		     struct dump_process *dp)
{
	struct py_async_task *pt = malloc(PY_ASYNC_TASKS * sizeof(*pt));
	int n = pt ? py_async_tasks(r, t, pt, PY_ASYNC_TASKS, &dp->tasks_state) : -ENOMEM;
	size_t i, k;

	dp->tasks_err = n < 0 ? n : 0;
	dp->tasks = n > 0 ? calloc((size_t)n, sizeof(*dp->tasks)) : NULL;
	for (i = 0; dp->tasks && i < (size_t)n; i++) {
		struct dump_task *dt = &dp->tasks[dp->ntasks++];

		dt->addr = pt[i].addr;
		memcpy(dt->name, pt[i].name, sizeof(dt->name));
		dt->truncated = pt[i].frames_truncated;
		dt->gather = pt[i].gather;
		dt->nawaits = pt[i].nawaits;
		memcpy(dt->awaits, pt[i].awaits, sizeof(dt->awaits));
		dt->frames = calloc(pt[i].nframes ? pt[i].nframes : 1, sizeof(*dt->frames));
		for (k = 0; dt->frames && k < pt[i].nframes; k++) {
			const struct py_dump_frame *pf = &pt[i].frames[k];
			const struct code_info *ci = code_cache__get(cc, t, pf->code,
								     pf->fingerprint);
			struct dump_frame *df = &dt->frames[dt->nframes++];

			df->line = -1;
			if (ci) {
				df->func = strdup(ci->qualname);
				df->file = strdup(ci->filename);
				df->line = code_info__line(ci, &t->layout, pf->instr);
			}
		}
	}
	if (n > 0 && !dp->tasks)
		dp->tasks_err = -ENOMEM;
	free(pt);
}

void dump_tasks_free(struct dump_process *dp)
{
	size_t i, k;

	for (i = 0; i < dp->ntasks; i++) {
		for (k = 0; k < dp->tasks[i].nframes; k++) {
			free(dp->tasks[i].frames[k].func);
			free(dp->tasks[i].frames[k].file);
		}
		free(dp->tasks[i].frames);
	}
	free(dp->tasks);
	dp->tasks = NULL;
	dp->ntasks = 0;
}

/* One line of the tree: prefix, branch, label. */
struct tree {
	FILE *f;
	const struct dump_process *dp;
	char prefix[TREE_LEVELS * 6 + 1]; /* "│   " is 6 bytes */
	size_t plen;
	unsigned levels;
	uint8_t *on_path; /* tasks on the way from the root: a cycle ends there */
	uint8_t *shown;	  /* tasks printed at least once */
};

static void branch(struct tree *t, bool last)
{
	fputs(t->prefix, t->f);
	fputs(last ? "└── " : "├── ", t->f);
}

/* Goes one level down; false (nothing changed) when the tree is as deep as it may be. */
static bool down(struct tree *t, bool last)
{
	const char *add = last ? "    " : "│   ";

	if (t->levels >= TREE_LEVELS)
		return false;
	memcpy(t->prefix + t->plen, add, strlen(add) + 1);
	t->plen += strlen(add);
	t->levels++;
	return true;
}

static void up(struct tree *t, size_t plen, unsigned levels)
{
	t->plen = plen;
	t->levels = levels;
	t->prefix[plen] = 0;
}

static void tree_task(struct tree *t, size_t i, bool last)
{
	const struct dump_task *dt = &t->dp->tasks[i];
	size_t plen = t->plen, k;
	unsigned levels = t->levels;

	branch(t, last);
	fputs("(T) ", t->f);
	text_put_clean(t->f, dt->name);
	t->shown[i] = 1;
	if (t->on_path[i]) {
		fputs(" (awaits itself through the tasks above: cycle)\n", t->f);
		return;
	}
	fputc('\n', t->f);
	if (!down(t, last))
		return;
	/* the coroutine frames, outermost first, each the only child of the one before */
	for (k = 0; k < dt->nframes; k++) {
		const struct dump_frame *df = &dt->frames[k];

		branch(t, true);
		fputs(" ", t->f);
		text_put_clean(t->f, df->func ? df->func : "<unreadable code object>");
		fputc(' ', t->f);
		text_put_clean(t->f, df->file);
		if (df->line > 0)
			fprintf(t->f, ":%d", df->line);
		fputs(k + 1 == dt->nframes && dt->truncated ? " (coroutine stack truncated)\n" :
							      "\n",
		      t->f);
		if (!down(t, true))
			break;
	}
	t->on_path[i] = 1;
	for (k = 0; k < dt->nawaits && t->levels < TREE_LEVELS; k++)
		tree_task(t, dt->awaits[k], k + 1 == dt->nawaits);
	t->on_path[i] = 0;
	up(t, plen, levels);
}

void dump_tasks_text(FILE *f, const struct dump_process *dp)
{
	const struct py_async_state *st = &dp->tasks_state;
	uint8_t *awaited = calloc(dp->ntasks + 1, 3);
	struct tree t = { .f = f, .dp = dp };
	size_t i, k;

	fputs("\nasyncio tasks: ", f);
	if (dp->tasks_err) {
		fprintf(f, "unreadable (%s)\n",
			dp->tasks_err == -ENOTSUP ? "not supported for this Python build" :
						    strerror(-dp->tasks_err));
		free(awaited);
		return;
	}
	if (st->no_asyncio)
		fputs("none (asyncio.tasks is not imported)\n", f);
	else
		fprintf(f, "%zu pending", dp->ntasks);
	if (!st->no_asyncio && (st->finished || st->skipped || st->unreadable || st->left_out))
		fprintf(f, " (%zu finished not shown, %zu not C tasks, %zu unreadable%s)",
			st->finished, st->skipped, st->unreadable,
			st->left_out ? ", more left out" : "");
	if (!st->no_asyncio)
		fputc('\n', f);
	if (!awaited)
		return;
	t.on_path = awaited + dp->ntasks + 1;
	t.shown = t.on_path + dp->ntasks + 1;
	for (i = 0; i < dp->ntasks; i++)
		for (k = 0; k < dp->tasks[i].nawaits; k++)
			awaited[dp->tasks[i].awaits[k]] = 1;
	/* the roots: tasks no task awaits; then the first of each cycle not reached from them */
	for (i = 0; i < dp->ntasks; i++)
		if (!awaited[i])
			tree_task(&t, i, true);
	for (i = 0; i < dp->ntasks; i++)
		if (!t.shown[i])
			tree_task(&t, i, true);
	free(awaited);
}

static void json_frames(FILE *f, const struct dump_task *dt)
{
	size_t k;

	for (k = 0; k < dt->nframes; k++) {
		const struct dump_frame *df = &dt->frames[k];

		fputs(k ? ", {\"function\": " : "{\"function\": ", f);
		if (df->func)
			json_string(f, df->func);
		else
			fputs("null", f);
		fputs(", \"file\": ", f);
		if (df->file)
			json_string(f, df->file);
		else
			fputs("null", f);
		if (df->line > 0)
			fprintf(f, ", \"line\": %d}", df->line);
		else
			fputs(", \"line\": null}", f);
	}
}

void dump_tasks_json(FILE *f, const struct dump_process *dp)
{
	const struct py_async_state *st = &dp->tasks_state;
	size_t i, j, k, n;

	fputs(", \"asyncio\": {\"error\": ", f);
	if (dp->tasks_err)
		json_string(f, dp->tasks_err == -ENOTSUP ? "not supported for this Python build" :
							   strerror(-dp->tasks_err));
	else
		fputs("null", f);
	fprintf(f,
		", \"asyncio_imported\": %s, \"finished\": %zu, \"not_c_tasks\": %zu, "
		"\"unreadable\": %zu, \"left_out\": %s, \"tasks\": [",
		st->no_asyncio ? "false" : "true", st->finished, st->skipped, st->unreadable,
		st->left_out ? "true" : "false");
	for (i = 0; i < dp->ntasks; i++) {
		const struct dump_task *dt = &dp->tasks[i];

		fprintf(f,
			"%s{\"id\": %zu, \"address\": \"0x%" PRIx64 "\", \"name\": ", i ? ", " : "",
			i, dt->addr);
		json_string(f, dt->name);
		fputs(", \"state\": \"pending\", \"coroutine_stack\": [", f);
		json_frames(f, dt);
		fprintf(f,
			"], \"coroutine_stack_truncated\": %s, \"awaits_gather\": %s, \"awaits\": [",
			dt->truncated ? "true" : "false", dt->gather ? "true" : "false");
		for (k = 0; k < dt->nawaits; k++)
			fprintf(f, "%s%u", k ? ", " : "", dt->awaits[k]);
		fputs("], \"awaited_by\": [", f);
		for (j = 0, n = 0; j < dp->ntasks; j++)
			for (k = 0; k < dp->tasks[j].nawaits; k++)
				if (dp->tasks[j].awaits[k] == i)
					fprintf(f, "%s%zu", n++ ? ", " : "", j);
		fputs("]}", f);
	}
	fputs("]}", f);
}
