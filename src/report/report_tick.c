// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the ticks said beyond the stacks, in the text and JSON reports: time
 * spent handling exceptions, by function (with --exceptions or --mode
 * exception every CPU sample's exception state is read at its tick), and
 * with --opcodes each line split by the instruction its frame was running,
 * specialised names and all. The figures are profile_tick.c's sums of the
 * stacks' counts.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "report/report_common.h"
#include "util/hashmap.h"
#include "report_tick.h"

/* Columns of a function's name and of its file:line in the exception table. */
#define EXC_NAME 40
#define EXC_LOC 60

void report_tick_text_counts(FILE *f, const struct profile *p)
{
	uint64_t out = 0, unknown = 0, kept = 0;
	size_t i;

	if (!p->exc_only)
		return;
	for (i = 0; i < p->ntargets; i++) {
		out += p->targets[i].exc_left_out;
		unknown += p->targets[i].exc_unknown_left_out;
		kept += p->targets[i].samples;
	}
	fprintf(f,
		"exception mode: %llu samples kept (their thread handling an exception), %llu "
		"left out (not handling one), %llu left out (state not read)\n",
		(unsigned long long)kept, (unsigned long long)out, (unsigned long long)unknown);
}

/* Function ids with exception samples, by self then total (most first), then by id. */
static int cmp_exc(const void *a, const void *b, void *arg)
{
	const struct exc_stat *st = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (st[x].self != st[y].self)
		return st[x].self < st[y].self ? 1 : -1;
	if (st[x].total != st[y].total)
		return st[x].total < st[y].total ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* Each function's own samples (it innermost), by id: the share its exceptions took of them. */
static uint64_t *self_by_func(const struct profile *p, const struct profile_target *pp)
{
	uint64_t *self = calloc(p->nfuncs + 1, sizeof(*self));
	size_t i;

	for (i = 0; self && i < pp->nstacks; i++)
		if (pp->stacks[i].nframes)
			self[p->frames[pp->stacks[i].frames[0]].func] += pp->stacks[i].count;
	return self;
}

static void print_exc_funcs(FILE *f, const struct profile *p, const struct profile_target *pp,
			    const struct exc_stat *st, size_t top)
{
	uint32_t *ids = malloc((p->nfuncs + 1) * sizeof(*ids));
	uint64_t *self = self_by_func(p, pp);
	char num[16], name[REPORT_FIELD], loc[REPORT_FIELD];
	size_t i, n = 0;

	if (!ids || !self) {
		fprintf(f, "    (out of memory)\n");
		goto out;
	}
	for (i = 0; i < p->nfuncs; i++)
		if (st[i].total)
			ids[n++] = (uint32_t)i;
	qsort_r(ids, n, sizeof(*ids), cmp_exc, (void *)st);
	fprintf(f, "     self    total  %%of self  function  (top %zu of %zu)\n", n < top ? n : top,
		n);
	for (i = 0; i < n && i < top; i++) {
		const struct profile_func *fn = &p->funcs[ids[i]];

		/* a target's names and paths, cleaned: they reach a terminal */
		fprintf(f, "  %7llu  %7llu    %5.1f%%  %s  ", (unsigned long long)st[ids[i]].self,
			(unsigned long long)st[ids[i]].total,
			report_pct(st[ids[i]].self, self[ids[i]]),
			report_fit(name, sizeof(name), fn->qualname, EXC_NAME, REPORT_FIT_RIGHT));
		snprintf(loc, sizeof(loc), "%s:%s", fn->file,
			 report_line_str(fn->firstline, num, sizeof(num)));
		fprintf(f, "%s\n", report_fit(name, sizeof(name), loc, EXC_LOC, REPORT_FIT_LEFT));
	}
out:
	free(ids);
	free(self);
}

void report_exc_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		     const struct report_opts *o)
{
	struct exc_stat *st;
	uint64_t exc, unknown;

	if (!p->exc_known)
		return;
	if (profile_target__exc_stats(p, pp, &st, &exc, &unknown)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	if (exc || p->exc_only) {
		fprintf(f,
			"\n  Exception handling: %llu samples (%.1f%%, %.2f s), their thread in an "
			"except block or in code called from one; %llu whose state could not be "
			"read\n",
			(unsigned long long)exc, report_pct(exc, pp->samples),
			report_seconds(p, exc), (unsigned long long)unknown);
		if (p->exc_only)
			fprintf(f,
				"  --mode exception: %llu samples of the process left out, not "
				"handling one; %llu whose state could not be read\n",
				(unsigned long long)pp->exc_left_out,
				(unsigned long long)pp->exc_unknown_left_out);
		fprintf(f, "  (self: the function was running; total: it was on the stack; "
			   "%% of self: of its own samples)\n");
		print_exc_funcs(f, p, pp, st, o->top_functions);
	}
	free(st);
}

void report_exc_json_proc(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	uint64_t exc, unknown;

	if (!p->exc_known || profile_target__exc_stats(p, pp, NULL, &exc, &unknown))
		return;
	fprintf(f,
		", \"exception\": {\"samples\": %llu, \"unknown\": %llu, \"left_out\": %llu, "
		"\"unknown_left_out\": %llu}",
		(unsigned long long)exc, (unsigned long long)unknown,
		(unsigned long long)pp->exc_left_out, (unsigned long long)pp->exc_unknown_left_out);
}

void report_exc_json_func(FILE *f, const struct exc_stat *st)
{
	if (st)
		fprintf(f, ", \"exception\": {\"self\": %llu, \"total\": %llu}",
			(unsigned long long)st->self, (unsigned long long)st->total);
}

/* The first index of st (sorted by frame, its leading key) at frame, or n. */
static size_t op_first(const struct op_stat *st, size_t n, uint32_t frame)
{
	return report_lower_bound(st, n, sizeof(*st), frame);
}

void report_op_json_line(FILE *f, const struct profile *p, const struct op_stat *st, size_t n,
			 uint32_t frame)
{
	size_t i = op_first(st, n, frame), k;

	if (!p->opcodes)
		return;
	fputs(", \"opcodes\": [", f);
	for (k = 0; i < n && st[i].frame == frame; i++, k++) {
		const struct profile_opname *op = &p->opnames[st[i].op];

		fputs(k ? ", {\"opcode\": " : "{\"opcode\": ", f);
		json_string(f, op->name);
		fputs(", \"base\": ", f);
		json_string(f, p->opnames[op->base].name);
		fprintf(f, ", \"samples\": %llu}", (unsigned long long)st[i].samples);
	}
	fputc(']', f);
}

/* "BINARY_OP_ADD_INT (BINARY_OP)": a specialised instruction with the one it specialises. */
static void print_opname(FILE *f, const struct profile *p, uint32_t op)
{
	const struct profile_opname *o = &p->opnames[op];

	if (o->base != op)
		fprintf(f, "%s (%s)\n", o->name, p->opnames[o->base].name);
	else
		fprintf(f, "%s\n", o->name);
}

/* One line's instructions, most first, then the samples whose instruction was not read. */
static void print_line_ops(FILE *f, const struct profile *p, const struct op_stat *st, size_t n,
			   uint32_t frame, uint64_t self)
{
	size_t i = op_first(st, n, frame);
	uint64_t sum = 0;
	char num[16];
	bool first = true;

	for (; i < n && st[i].frame == frame; i++, first = false) {
		fprintf(f, "    %5s  %7llu  %5.1f%%  ",
			first ? report_line_str(p->frames[frame].line, num, sizeof(num)) : "",
			(unsigned long long)st[i].samples, report_pct(st[i].samples, self));
		print_opname(f, p, st[i].op);
		sum += st[i].samples;
	}
	if (self > sum)
		fprintf(f, "    %5s  %7llu  %5.1f%%  (not read)\n",
			first ? report_line_str(p->frames[frame].line, num, sizeof(num)) : "",
			(unsigned long long)(self - sum), report_pct(self - sum, self));
}

void report_op_text_func(FILE *f, const struct profile *p, const struct profile_target *pp,
			 uint32_t func, const int *lines, const uint64_t *self, size_t nlines)
{
	struct op_stat *st;
	size_t n, i;

	if (!p->opcodes)
		return;
	if (profile_target__op_stats(p, pp, &st, &n)) {
		fprintf(f, "    (out of memory)\n");
		return;
	}
	fprintf(f, "    Instructions running at the line's own samples (--opcodes):\n");
	fprintf(f, "     line  samples   %%line  instruction\n");
	for (i = 0; i < nlines; i++) {
		uint32_t frame;

		if (!self[i])
			continue;
		frame = profile__frame_find(p, func, lines[i]);
		if (frame == UINT32_MAX)
			continue;
		print_line_ops(f, p, st, n, frame, self[i]);
	}
	free(st);
}
