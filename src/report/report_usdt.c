// SPDX-License-Identifier: GPL-2.0-only
/*
 * The USDT sections of the text and JSON reports (--calls, --gc, --imports),
 * written only when their mode was on. Shared by report_text.c and
 * report_json.c so both show the same figures.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report_usdt.h"
#include "util/text.h"

/* Histograms shown per process: the functions with the most inclusive time. */
#define TOP_HISTOGRAMS 5
#define TOP_GC_STACKS 10
#define TOP_IMPORTS 10

struct call_row {
	uint32_t func;
	struct profile_call_total t;
};

static int cmp_call_row(const void *a, const void *b)
{
	const struct call_row *x = a, *y = b;

	if (x->t.inclusive_ns != y->t.inclusive_ns)
		return x->t.inclusive_ns < y->t.inclusive_ns ? 1 : -1;
	if (x->t.calls != y->t.calls)
		return x->t.calls < y->t.calls ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Functions with calls, by inclusive time. */
static int call_rows(const struct profile *p, const struct profile_target *pp,
		     struct call_row **out, size_t *n)
{
	struct profile_call_total *t;
	struct call_row *rows;
	size_t i, k = 0;

	if (profile_target__call_totals(p, pp, &t))
		return -ENOMEM;
	rows = calloc(p->nfuncs + 1, sizeof(*rows));
	if (!rows) {
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < p->nfuncs; i++)
		if (t[i].calls)
			rows[k++] = (struct call_row){ .func = i, .t = t[i] };
	free(t);
	qsort(rows, k, sizeof(*rows), cmp_call_row);
	*out = rows;
	*n = k;
	return 0;
}

static const struct profile_call_hist *find_hist(const struct profile_target *pp, uint32_t func)
{
	size_t i;

	for (i = 0; i < pp->nhists; i++)
		if (pp->hists[i].func == func)
			return &pp->hists[i];
	return NULL;
}

static int cmp_gc_stack(const void *a, const void *b)
{
	const struct profile_gc_stack *x = *(const struct profile_gc_stack *const *)a;
	const struct profile_gc_stack *y = *(const struct profile_gc_stack *const *)b;

	if (x->stat.total_ns != y->stat.total_ns)
		return x->stat.total_ns < y->stat.total_ns ? 1 : -1;
	if (x->stat.collections != y->stat.collections)
		return x->stat.collections < y->stat.collections ? 1 : -1;
	return 0;
}

/* GC stacks by total pause, as pointers (NULL on allocation failure). */
static const struct profile_gc_stack **gc_stacks_sorted(const struct profile_target *pp)
{
	const struct profile_gc_stack **v = calloc(pp->gc.nstacks + 1, sizeof(*v));
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < pp->gc.nstacks; i++)
		v[i] = &pp->gc.stacks[i];
	qsort(v, pp->gc.nstacks, sizeof(*v), cmp_gc_stack);
	return v;
}

static const struct profile_import **imports_by_time(const struct profile_target *pp)
{
	const struct profile_import **v = calloc(pp->nimports + 1, sizeof(*v));
	size_t i, j;

	if (!v)
		return NULL;
	for (i = 0; i < pp->nimports; i++)
		v[i] = &pp->imports[i];
	/* insertion sort: imports number in the hundreds */
	for (i = 1; i < pp->nimports; i++)
		for (j = i; j > 0 && v[j - 1]->ns < v[j]->ns; j--) {
			const struct profile_import *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v;
}

/* ------------------------------------------------------------------------ JSON */

static void json_call_fields(FILE *f, const struct profile_call_total *t)
{
	fprintf(f,
		", \"calls\": %llu, \"inclusive_ns\": %llu, \"exclusive_ns\": %llu, "
		"\"max_ns\": %llu",
		(unsigned long long)t->calls, (unsigned long long)t->inclusive_ns,
		(unsigned long long)t->exclusive_ns, (unsigned long long)t->max_ns);
}

static void json_func_ref(FILE *f, const struct profile *p, uint32_t func)
{
	const struct profile_func *fn = &p->funcs[func];

	fputs("\"qualname\": ", f);
	json_string(f, fn->qualname);
	fputs(", \"file\": ", f);
	json_string(f, fn->file);
	fprintf(f, ", \"line\": %d", fn->firstline);
}

void report_usdt_json_func(FILE *f, const struct profile *p, const struct profile_call_total *t,
			   uint32_t func)
{
	if (p->calls_mode)
		json_call_fields(f, &t[func]);
}

void report_usdt_json_extra_funcs(FILE *f, const struct profile *p, const struct profile_target *pp,
				  const struct profile_call_total *t, const bool *listed,
				  bool first)
{
	size_t i;

	if (!p->calls_mode)
		return;
	for (i = 0; i < p->nfuncs; i++) {
		if (!t[i].calls || listed[i])
			continue;
		fprintf(f, "%s\n       {", first ? "" : ",");
		first = false;
		json_func_ref(f, p, i);
		fputs(", \"self\": 0, \"total\": 0", f);
		if (p->funcs[i].unresolved)
			fputs(", \"unresolved\": true", f);
		json_call_fields(f, &t[i]);
		fputc('}', f);
	}
}

static void json_frames(FILE *f, const struct profile *p, const uint32_t *frames, uint32_t n)
{
	uint32_t i;

	fputs("\"frames\": [", f);
	for (i = 0; i < n; i++) {
		const struct profile_frame *fr = &p->frames[frames[i]];

		fprintf(f, "%s{", i ? ", " : "");
		json_func_ref(f, p, fr->func);
		fprintf(f, ", \"at\": %d}", fr->line);
	}
	fputc(']', f);
}

static void json_gc_stat(FILE *f, const struct profile_gc_stat *s)
{
	fprintf(f,
		"\"collections\": %llu, \"total_ns\": %llu, \"max_ns\": %llu, "
		"\"collected\": %llu",
		(unsigned long long)s->collections, (unsigned long long)s->total_ns,
		(unsigned long long)s->max_ns, (unsigned long long)s->collected);
}

static void json_import_tree(FILE *f, const struct profile_target *pp, int32_t parent, int depth)
{
	bool first = true;
	size_t i;

	fputc('[', f);
	for (i = 0; i < pp->nimports; i++) {
		const struct profile_import *im = &pp->imports[i];

		if (im->parent != parent)
			continue;
		fprintf(f, "%s{\"module\": ", first ? "" : ", ");
		first = false;
		json_string(f, im->module);
		if (im->done)
			fprintf(f, ", \"ns\": %llu, \"found\": %s", (unsigned long long)im->ns,
				im->found ? "true" : "false");
		else
			fputs(", \"ns\": null, \"done\": false", f);
		fprintf(f, ", \"tid\": %u, \"children\": ", im->tid);
		/* parents always precede their children, so depth is bounded by nimports */
		json_import_tree(f, pp, (int32_t)i, depth + 1);
		fputc('}', f);
	}
	fputc(']', f);
}

static const char *const usdt_trace_names[] = {
	[PROFILE_USDT_FROM_START] = "from_start",
	[PROFILE_USDT_LATE] = "late",
	[PROFILE_USDT_NOT_TRACED] = "not_traced",
};

void report_usdt_json_proc(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	size_t i, j, n = 0;

	if (p->calls_mode || p->gc_mode || p->imports_mode) {
		fprintf(f, ",\n     \"usdt_trace\": \"%s\", \"usdt_note\": ",
			usdt_trace_names[pp->usdt_trace]);
		if (pp->usdt_note)
			json_string(f, pp->usdt_note);
		else
			fputs("null", f);
	}
	if (p->calls_mode) {
		struct call_row *rows = NULL;

		call_rows(p, pp, &rows, &n);
		fputs(",\n     \"histograms\": [", f);
		for (i = 0, j = 0; i < n && j < TOP_HISTOGRAMS; i++) {
			const struct profile_call_hist *h = find_hist(pp, rows[i].func);
			size_t b;
			bool first = true;

			if (!h)
				continue;
			fprintf(f, "%s\n       {", j++ ? "," : "");
			json_func_ref(f, p, rows[i].func);
			fputs(", \"log2_ns\": [", f);
			for (b = 0; b < PROFILE_HIST_BUCKETS; b++) {
				if (!h->buckets[b])
					continue;
				fprintf(f, "%s{\"from_ns\": %llu, \"count\": %llu}",
					first ? "" : ", ", 1ULL << b,
					(unsigned long long)h->buckets[b]);
				first = false;
			}
			fputs("]}", f);
		}
		fputs("]", f);
		free(rows);
	}
	if (p->gc_mode) {
		const struct profile_gc_stack **st = gc_stacks_sorted(pp);

		fputs(",\n     \"gc\": {", f);
		json_gc_stat(f, &pp->gc.all);
		fputs(", \"by_generation\": [", f);
		for (i = 0, j = 0; i < PROFILE_GC_GENS; i++) {
			if (!pp->gc.gen[i].collections)
				continue;
			fprintf(f, "%s{\"generation\": %zu, ", j++ ? ", " : "", i);
			json_gc_stat(f, &pp->gc.gen[i]);
			fputc('}', f);
		}
		fputs("], \"stacks\": [", f);
		for (i = 0; st && i < pp->gc.nstacks && i < TOP_GC_STACKS; i++) {
			fprintf(f, "%s\n       {", i ? "," : "");
			json_gc_stat(f, &st[i]->stat);
			fputs(", ", f);
			json_frames(f, p, st[i]->frames, st[i]->nframes);
			fputc('}', f);
		}
		fputs("]}", f);
		free(st);
	}
	if (p->imports_mode) {
		fputs(",\n     \"imports\": ", f);
		json_import_tree(f, pp, -1, 0);
	}
}

void report_usdt_json_counts(FILE *f, const struct profile *p)
{
	const struct profile_usdt_counts *u = &p->usdt;

	if (!p->calls_mode && !p->gc_mode && !p->imports_mode)
		return;
	fprintf(f,
		" \"usdt\": {\"calls\": %s, \"gc\": %s, \"imports\": %s, "
		"\"calls_unmatched\": %llu, \"calls_too_deep\": %llu, \"calls_no_code\": %llu, "
		"\"calls_mismatch\": %llu, \"calls_map_full\": %llu, \"calls_unresolved\": %llu, "
		"\"gc_unmatched\": %llu, \"imports_unmatched\": %llu, \"events_dropped\": %llu, "
		"\"records_dropped\": %llu, \"probe_misses\": %llu, \"procs_late\": %llu, "
		"\"procs_untraced\": %llu},\n",
		p->calls_mode ? "true" : "false", p->gc_mode ? "true" : "false",
		p->imports_mode ? "true" : "false", (unsigned long long)u->calls_unmatched,
		(unsigned long long)u->calls_too_deep, (unsigned long long)u->calls_no_code,
		(unsigned long long)u->calls_mismatch, (unsigned long long)u->calls_map_full,
		(unsigned long long)u->calls_unresolved, (unsigned long long)u->gc_unmatched,
		(unsigned long long)u->imports_unmatched, (unsigned long long)u->events_dropped,
		(unsigned long long)u->records_dropped, (unsigned long long)u->probe_misses,
		(unsigned long long)u->procs_late, (unsigned long long)u->procs_untraced);
}

/* ------------------------------------------------------------------------ text */

/* "qualname  file:line" of a function or, with line > 0, of one of its lines. */
static void text_func_line(FILE *f, const struct profile_func *fn, int line)
{
	char num[16];

	text_put_clean(f, fn->qualname);
	fputs("  ", f);
	text_put_clean(f, fn->file[0] ? fn->file : "?");
	fprintf(f, ":%s", report_line_str(line, num, sizeof(num)));
}

static void text_func(FILE *f, const struct profile *p, uint32_t func)
{
	text_func_line(f, &p->funcs[func], p->funcs[func].firstline);
}

static void text_calls(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o)
{
	struct call_row *rows = NULL;
	size_t n = 0, i, j, shown;

	if (call_rows(p, pp, &rows, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_functions ? n : o->top_functions;
	fprintf(f, "\n  Exact calls, by inclusive time (top %zu of %zu functions)\n", shown, n);
	fprintf(f, "       calls   inclusive s   exclusive s    mean us     max us  function\n");
	for (i = 0; i < shown; i++) {
		const struct profile_call_total *t = &rows[i].t;

		fprintf(f, "  %10llu  %12.6f  %12.6f  %9.2f  %9.2f  ", (unsigned long long)t->calls,
			t->inclusive_ns / 1e9, t->exclusive_ns / 1e9,
			t->calls ? t->inclusive_ns / 1e3 / t->calls : 0, t->max_ns / 1e3);
		text_func(f, p, rows[i].func);
		fputc('\n', f);
	}
	for (i = 0, j = 0; i < n && j < TOP_HISTOGRAMS; i++) {
		const struct profile_call_hist *h = find_hist(pp, rows[i].func);
		uint64_t most = 0;
		size_t b;

		if (!h)
			continue;
		j++;
		for (b = 0; b < PROFILE_HIST_BUCKETS; b++)
			if (h->buckets[b] > most)
				most = h->buckets[b];
		fprintf(f, "\n  Latency of ");
		text_func(f, p, rows[i].func);
		fputc('\n', f);
		for (b = 0; b < PROFILE_HIST_BUCKETS; b++) {
			int bar;

			if (!h->buckets[b])
				continue;
			bar = most ? (int)(40 * h->buckets[b] / most) : 0;
			fprintf(f, "    %12llu ns and up  %10llu  %.*s\n", 1ULL << b,
				(unsigned long long)h->buckets[b], bar > 0 ? bar : 1,
				"########################################");
		}
	}
	free(rows);
}

static void text_gc(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	const struct profile_gc_stack **st = gc_stacks_sorted(pp);
	size_t i;
	uint32_t k;

	fprintf(f,
		"\n  Garbage collections: %llu, %.6f s in total, longest %.6f s, %llu objects "
		"collected\n",
		(unsigned long long)pp->gc.all.collections, pp->gc.all.total_ns / 1e9,
		pp->gc.all.max_ns / 1e9, (unsigned long long)pp->gc.all.collected);
	for (i = 0; i < PROFILE_GC_GENS; i++)
		if (pp->gc.gen[i].collections)
			fprintf(f,
				"    generation %zu: %8llu collections, %.6f s total, max %.6f s, "
				"%llu collected\n",
				i, (unsigned long long)pp->gc.gen[i].collections,
				pp->gc.gen[i].total_ns / 1e9, pp->gc.gen[i].max_ns / 1e9,
				(unsigned long long)pp->gc.gen[i].collected);
	for (i = 0; st && i < pp->gc.nstacks && i < TOP_GC_STACKS; i++) {
		fprintf(f, "    triggered %llu times, %.6f s total, at:\n",
			(unsigned long long)st[i]->stat.collections, st[i]->stat.total_ns / 1e9);
		if (!st[i]->nframes)
			fprintf(f, "      (no Python frame: interpreter start or shutdown)\n");
		for (k = 0; k < st[i]->nframes && k < 8; k++) {
			const struct profile_frame *fr = &p->frames[st[i]->frames[k]];

			fputs("      ", f);
			text_func_line(f, &p->funcs[fr->func], fr->line);
			fputc('\n', f);
		}
		if (st[i]->nframes > 8)
			fprintf(f, "      ... %u more frames\n", st[i]->nframes - 8);
	}
	free((void *)st);
}

static void text_import_tree(FILE *f, const struct profile_target *pp, int32_t parent, int depth,
			     size_t *budget)
{
	int indent = 2 * (depth < 20 ? depth : 20);
	size_t i;

	for (i = 0; i < pp->nimports && *budget; i++) {
		const struct profile_import *im = &pp->imports[i];

		if (im->parent != parent)
			continue;
		(*budget)--;
		if (im->done)
			fprintf(f, "    %10.3f ms  %*s", im->ns / 1e6, indent, "");
		else
			fprintf(f, "    %10s     %*s", "?", indent, "");
		text_put_clean(f, im->module);
		fputs(!im->done ? " (not finished)\n" : im->found ? "\n" : " (not found)\n", f);
		text_import_tree(f, pp, (int32_t)i, depth + 1, budget);
	}
}

static void text_imports(FILE *f, const struct profile_target *pp)
{
	const struct profile_import **v = imports_by_time(pp);
	size_t i, budget = 200;

	fprintf(f, "\n  Imports: %zu; slowest (inclusive of nested imports)\n", pp->nimports);
	for (i = 0; v && i < pp->nimports && i < TOP_IMPORTS; i++)
		if (v[i]->done) {
			fprintf(f, "    %10.3f ms  ", v[i]->ns / 1e6);
			text_put_clean(f, v[i]->module);
			fputc('\n', f);
		}
	free((void *)v);
	if (pp->nimports) {
		fprintf(f, "  Import tree (first %zu imports)\n",
			budget < pp->nimports ? budget : pp->nimports);
		text_import_tree(f, pp, -1, 0, &budget);
	}
}

void report_usdt_text_proc(FILE *f, const struct profile *p, const struct profile_target *pp,
			   const struct report_opts *o)
{
	if (pp->usdt_note && (p->calls_mode || p->gc_mode || p->imports_mode)) {
		fprintf(f, "usdt: %s ",
			pp->usdt_trace == PROFILE_USDT_NOT_TRACED ? "not traced (sampled only):" :
								    "counted late:");
		text_put_clean(f, pp->usdt_note);
		fputc('\n', f);
	}
	if (p->calls_mode)
		text_calls(f, p, pp, o);
	if (p->gc_mode)
		text_gc(f, p, pp);
	if (p->imports_mode)
		text_imports(f, pp);
}

void report_usdt_text_counts(FILE *f, const struct profile *p)
{
	const struct profile_usdt_counts *u = &p->usdt;

	if (p->calls_mode)
		fprintf(f,
			"calls: %llu returns without an entry (began before attach), %llu too deep, "
			"%llu unreadable code, %llu mismatched (repaired), %llu not recorded "
			"(map full), %llu unresolved\n",
			(unsigned long long)u->calls_unmatched,
			(unsigned long long)u->calls_too_deep, (unsigned long long)u->calls_no_code,
			(unsigned long long)u->calls_mismatch,
			(unsigned long long)u->calls_map_full,
			(unsigned long long)u->calls_unresolved);
	if (p->gc_mode && u->gc_unmatched)
		fprintf(f,
			"gc: %llu collections ended without a start seen (began before attach)\n",
			(unsigned long long)u->gc_unmatched);
	if (u->records_dropped)
		fprintf(f, "usdt: %llu GC and call records lost (ring buffer full)\n",
			(unsigned long long)u->records_dropped);
	if (p->imports_mode)
		fprintf(f, "imports: %llu ended without a start seen, %llu events dropped\n",
			(unsigned long long)u->imports_unmatched,
			(unsigned long long)u->events_dropped);
	if (u->procs_late || u->procs_untraced)
		fprintf(f,
			"usdt: %llu processes counted late (calls before their probes are "
			"missing), %llu not traced (no usable probes: sampled only)\n",
			(unsigned long long)u->procs_late, (unsigned long long)u->procs_untraced);
	if (u->probe_misses)
		fprintf(f,
			"usdt: %llu probe hits missed (the kernel skipped the BPF program while "
			"another BPF program ran on that CPU): figures may be short by that many\n",
			(unsigned long long)u->probe_misses);
}
