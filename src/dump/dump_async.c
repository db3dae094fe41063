// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump --async: the asyncio tasks of a process (cpython/py_async.c
 * reads them), with each coroutine frame's function and file:line, printed
 * as the tree `python -m asyncio pstree` prints (a task, its coroutine stack
 * outermost first, and under its innermost frame the tasks it awaits) or as
 * JSON tasks with ids, awaits and awaited_by lists.
 *
 * Who awaits whom is a graph, not a tree: drawn as pstree draws it, a task
 * awaited by two tasks is drawn under each, and 62 tasks each awaiting the
 * next two through gather() made 2^30 subtrees (2.7 GB in 10 s, never
 * ending). Here each task is drawn once, where it is first reached; where
 * it is reached again, a line names it by its id ("(task #5, shown above)"),
 * the id its first drawing and the JSON give it. The text is so linear in
 * the tasks and their awaits, and bounded besides (dump_out.c).
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

	if (dp->tasks_state.out_of_time) {
		dump_budget_spent(dp);
		dp->cut.task_lists = true;
	}
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
			if (!dump_frame_resolve(dp, cc, t, &pt[i].frames[k], &dt->frames[k]))
				break;
			dt->nframes++;
		}
		dt->frames_cut = pt[i].nframes - dt->nframes;
	}
	if (n > 0 && !dp->tasks)
		dp->tasks_err = -ENOMEM;
	free(pt);
}

void dump_tasks_free(struct dump_process *dp)
{
	size_t i, k;

	for (i = 0; i < dp->ntasks; i++) {
		for (k = 0; k < dp->tasks[i].nframes; k++)
			dump_frame_free(&dp->tasks[i].frames[k]);
		free(dp->tasks[i].frames);
	}
	free(dp->tasks);
	dp->tasks = NULL;
	dp->ntasks = 0;
}

enum { NOT_SHOWN, ON_PATH, SHOWN };

/* The tree being drawn: the prefix of its current level, and where each task stands. */
struct tree {
	struct dump_out *o;
	struct dump_process *dp;
	char prefix[TREE_LEVELS * 6 + 1]; /* "│   " is 6 bytes */
	size_t plen;
	unsigned levels;
	uint8_t *state;	 /* NOT_SHOWN, ON_PATH (drawn, its awaits being drawn), SHOWN */
	uint32_t *indeg; /* how many await lists hold it */
	size_t shown;	 /* tasks drawn */
	size_t frames;	 /* coroutine frames drawn */
};

static void branch(FILE *f, const struct tree *t, bool last)
{
	fputs(t->prefix, f);
	fputs(last ? "└── " : "├── ", f);
}

/* One level down (the caller checks there is room for it). */
static void down(struct tree *t, bool last)
{
	const char *add = last ? "    " : "│   ";

	memcpy(t->prefix + t->plen, add, strlen(add) + 1);
	t->plen += strlen(add);
	t->levels++;
}

static void up(struct tree *t, size_t plen, unsigned levels)
{
	t->plen = plen;
	t->levels = levels;
	t->prefix[plen] = 0;
}

/*
 * The coroutine frames of dt, outermost first, each the only child of the
 * one before, as deep as the tree may go: how many were drawn.
 */
static size_t tree_frames(FILE *f, struct tree *t, const struct dump_task *dt)
{
	size_t k;

	for (k = 0; k < dt->nframes && t->levels < TREE_LEVELS; k++) {
		const struct dump_frame *df = &dt->frames[k];

		branch(f, t, true);
		fputs(" ", f);
		text_put_clean(f, df->func ? df->func : "<unreadable code object>");
		fputc(' ', f);
		text_put_clean(f, df->file);
		if (df->line > 0)
			fprintf(f, ":%d", df->line);
		fputs(k + 1 == dt->nframes && dt->truncated && !dt->frames_cut ?
			      " (coroutine stack truncated)\n" :
			      "\n",
		      f);
		down(t, true);
	}
	if (k < dt->nframes || dt->frames_cut) {
		branch(f, t, true);
		fprintf(f, "... %zu more coroutine frames not shown (%s)\n",
			dt->nframes - k + dt->frames_cut,
			k < dt->nframes ? "the tree is too deep here" : "cut short");
	}
	return k;
}

/*
 * Task i, drawn once: its line, its coroutine frames and the tasks it
 * awaits; a task reached again is one line that names it. As deep as
 * TREE_LEVELS: a task reached deeper is drawn later, as a root.
 */
static void tree_task(struct tree *t, size_t i, bool last)
{
	const struct dump_task *dt = &t->dp->tasks[i];
	size_t plen = t->plen, k, drawn;
	unsigned levels = t->levels;
	FILE *f = dump_out__begin(t->o, DUMP_EL_ITEM);

	if (!f)
		return;
	branch(f, t, last);
	fputs("(T) ", f);
	text_put_clean(f, dt->name);
	if (t->state[i] == ON_PATH)
		fputs(" (awaits itself through the tasks above: cycle)\n", f);
	else if (t->state[i] == SHOWN)
		fprintf(f, " (task #%zu, shown above)\n", i);
	else if (t->levels >= TREE_LEVELS)
		fprintf(f, " (task #%zu, drawn below: the tree is %d levels deep here)\n", i,
			TREE_LEVELS);
	if (t->state[i] != NOT_SHOWN || t->levels >= TREE_LEVELS) {
		dump_out__end(t->o);
		return;
	}
	fputs(t->indeg[i] > 1 ? "" : "\n", f);
	if (t->indeg[i] > 1)
		fprintf(f, " (task #%zu)\n", i);
	down(t, last);
	drawn = tree_frames(f, t, dt);
	if (!dump_out__end(t->o)) {
		up(t, plen, levels);
		return;
	}
	t->shown++;
	t->frames += drawn;
	t->state[i] = ON_PATH;
	for (k = 0; k < dt->nawaits; k++)
		if (dt->awaits[k] < t->dp->ntasks)
			tree_task(t, dt->awaits[k], k + 1 == dt->nawaits);
	t->state[i] = SHOWN;
	up(t, plen, levels);
}

/* "asyncio tasks: N pending (...)" or why there are none: false if it did not fit. */
static bool tasks_head(struct dump_out *o, const struct dump_process *dp)
{
	const struct py_async_state *st = &dp->tasks_state;
	FILE *f = dump_out__begin(o, DUMP_EL_ITEM);

	if (!f)
		return false;
	fputs("\nasyncio tasks: ", f);
	if (dp->tasks_err) {
		fprintf(f, "unreadable (%s)\n",
			dp->tasks_err == -ENOTSUP ? "not supported for this Python build" :
						    strerror(-dp->tasks_err));
		return dump_out__end(o);
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
	return dump_out__end(o);
}

/* The frames of the tasks not drawn (and those cut from the ones drawn): counted. */
static void tasks_cut(struct dump_process *dp, size_t shown, size_t frames_shown)
{
	size_t i, frames = 0;

	for (i = 0; i < dp->ntasks; i++)
		frames += dp->tasks[i].nframes + dp->tasks[i].frames_cut;
	dp->cut.tasks += dp->ntasks - shown;
	dp->cut.frames += frames - frames_shown;
}

void dump_tasks_text(struct dump_out *o, struct dump_process *dp)
{
	struct tree *t = calloc(1, sizeof(*t));
	size_t i, k;

	if (!tasks_head(o, dp) || !t || !dp->ntasks) {
		tasks_cut(dp, 0, 0);
		free(t);
		return;
	}
	t->o = o;
	t->dp = dp;
	t->state = calloc(dp->ntasks, 1);
	t->indeg = calloc(dp->ntasks, sizeof(*t->indeg));
	for (i = 0; t->indeg && i < dp->ntasks; i++)
		for (k = 0; k < dp->tasks[i].nawaits; k++)
			if (dp->tasks[i].awaits[k] < dp->ntasks)
				t->indeg[dp->tasks[i].awaits[k]]++;
	/* the roots: tasks no task awaits; then the first of each cycle not reached from them */
	for (i = 0; t->state && t->indeg && i < dp->ntasks; i++)
		if (!t->indeg[i])
			tree_task(t, i, true);
	for (i = 0; t->state && t->indeg && i < dp->ntasks; i++)
		if (t->state[i] != SHOWN)
			tree_task(t, i, true);
	tasks_cut(dp, t->shown, t->frames);
	free(t->state);
	free(t->indeg);
	free(t);
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

/*
 * Who awaits each task, once for all (the awaited_by lists): by[at[i] ..
 * at[i + 1]) are the tasks awaiting task i, in the order of their ids.
 */
struct awaited_by {
	size_t *at;
	uint32_t *by;
};

static int awaited_by_index(const struct dump_process *dp, struct awaited_by *ab)
{
	size_t i, k, n = 0, *fill;

	ab->at = calloc(dp->ntasks + 1, sizeof(*ab->at));
	for (i = 0; ab->at && i < dp->ntasks; i++)
		for (k = 0; k < dp->tasks[i].nawaits; k++)
			if (dp->tasks[i].awaits[k] < dp->ntasks) {
				ab->at[dp->tasks[i].awaits[k] + 1]++;
				n++;
			}
	ab->by = malloc((n ? n : 1) * sizeof(*ab->by));
	fill = calloc(dp->ntasks + 1, sizeof(*fill));
	if (!ab->at || !ab->by || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < dp->ntasks; i++)
		ab->at[i + 1] += ab->at[i];
	for (i = 0; i < dp->ntasks; i++)
		for (k = 0; k < dp->tasks[i].nawaits; k++) {
			uint32_t to = dp->tasks[i].awaits[k];

			if (to < dp->ntasks)
				ab->by[ab->at[to] + fill[to]++] = (uint32_t)i;
		}
	free(fill);
	return 0;
}

static void json_task(FILE *f, const struct dump_process *dp, size_t i, const struct awaited_by *ab)
{
	const struct dump_task *dt = &dp->tasks[i];
	size_t k;

	fprintf(f, "%s{\"id\": %zu, \"address\": \"0x%" PRIx64 "\", \"name\": ", i ? ", " : "", i,
		dt->addr);
	json_string(f, dt->name);
	fputs(", \"state\": \"pending\", \"coroutine_stack\": [", f);
	json_frames(f, dt);
	fprintf(f,
		"], \"coroutine_stack_truncated\": %s, \"coroutine_frames_not_shown\": %zu, "
		"\"awaits_gather\": %s, \"awaits\": [",
		dt->truncated ? "true" : "false", dt->frames_cut, dt->gather ? "true" : "false");
	for (k = 0; k < dt->nawaits; k++)
		fprintf(f, "%s%u", k ? ", " : "", dt->awaits[k]);
	fputs("], \"awaited_by\": [", f);
	for (k = ab->at[i]; k < ab->at[i + 1]; k++)
		fprintf(f, "%s%u", k > ab->at[i] ? ", " : "", ab->by[k]);
	fputs("]}", f);
}

/* The "asyncio" object's fields up to its tasks' opening bracket. */
static void json_tasks_head(FILE *f, const struct dump_process *dp)
{
	const struct py_async_state *st = &dp->tasks_state;

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
}

void dump_tasks_json(struct dump_out *o, struct dump_process *dp)
{
	struct awaited_by ab = { 0 };
	size_t i = 0, frames = 0;
	FILE *f = dump_out__begin(o, DUMP_EL_ITEM);

	if (f)
		json_tasks_head(f, dp);
	if (!f || !dump_out__end(o)) {
		tasks_cut(dp, 0, 0);
		return;
	}
	if (!awaited_by_index(dp, &ab))
		for (i = 0; i < dp->ntasks; i++) {
			f = dump_out__begin(o, DUMP_EL_ITEM);
			if (f)
				json_task(f, dp, i, &ab);
			if (!f || !dump_out__end(o))
				break;
			frames += dp->tasks[i].nframes;
		}
	tasks_cut(dp, i, frames);
	free(ab.at);
	free(ab.by);
	f = dump_out__begin(o, DUMP_EL_CLOSE);
	fputs("]}", f);
	dump_out__end(o);
}
