// SPDX-License-Identifier: GPL-2.0-only
/*
 * The call graph in Graphviz's DOT language, drawn the way gprof2dot draws
 * pstats: one box per function of each process (a cluster per process)
 * labelled with its qualname, file:line, total and self share of the
 * process's samples and, when --calls measured them, its exact calls; an
 * edge from caller to callee for the samples in which the callee ran under
 * that caller (counted once per sample, as a function's total is), labelled
 * with their share and the exact calls. Boxes and edges are coloured by heat
 * from blue (cold) to red (hot); functions under --prune's share are left
 * out and counted in the cluster's label. Every target string is sanitized
 * and escaped for a quoted DOT string.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "util/hashmap.h"
#include "util/text.h"
#include "util/vec.h"

#define NONE UINT32_MAX

struct dot_edge {
	uint32_t caller, callee;
	uint64_t samples, calls;
	size_t last_stack; /* 1 + the stack that last counted it: once per sample */
};

struct graph {
	const struct profile *p;
	const struct profile_target *pp;
	size_t proc;
	uint64_t whole; /* the process's samples */
	double prune_pct;
	uint64_t *self, *total;		  /* by function id */
	struct profile_call_total *calls; /* by function id; NULL without --calls */
	struct dot_edge *e;
	size_t ne, cap;
	struct hashmap index; /* caller << 32 | callee -> edge */
};

/*
 * A target's string inside a quoted DOT string: control characters and bad
 * UTF-8 sanitized, '"' and '\' escaped (so no "\n", "\N" or "\l" of Graphviz
 * can appear), and '&' written as "&amp;" since Graphviz reads HTML entities
 * in plain labels too: the label shows exactly the sanitized string.
 */
static void report_dot_string(FILE *f, const char *s)
{
	char *copy = strdup(s), *c;

	if (!copy) {
		fputc('?', f);
		return;
	}
	text_sanitize(copy);
	for (c = copy; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '&')
			fputs("&amp;", f);
		else
			fputc(*c, f);
	}
	free(copy);
}

static struct dot_edge *graph__edge(struct graph *g, uint32_t caller, uint32_t callee)
{
	uint64_t key = hash_u64((uint64_t)caller << 32 | callee), *slot;

	for (;; key++) {
		slot = hashmap__find(&g->index, key);
		if (!slot)
			break;
		if (g->e[*slot].caller == caller && g->e[*slot].callee == callee)
			return &g->e[*slot];
	}
	if (vec_grow((void **)&g->e, &g->cap, g->ne + 1, sizeof(*g->e)))
		return NULL;
	if (hashmap__set(&g->index, key, g->ne))
		return NULL;
	g->e[g->ne] = (struct dot_edge){ .caller = caller, .callee = callee };
	return &g->e[g->ne++];
}

/* Edges from the sampled stacks, then the exact calls of --calls. 0 or -ENOMEM. */
static int graph__edges(struct graph *g)
{
	const struct profile_target *pp = g->pp;
	struct dot_edge *e;
	size_t i, k;

	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		for (k = 1; k < s->nframes; k++) {
			e = graph__edge(g, g->p->frames[s->frames[k]].func,
					g->p->frames[s->frames[k - 1]].func);
			if (!e)
				return -ENOMEM;
			if (e->last_stack == i + 1)
				continue; /* recursion: this sample is counted already */
			e->last_stack = i + 1;
			e->samples += s->count;
		}
	}
	for (i = 0; i < pp->ncalls; i++) {
		if (pp->calls[i].caller == NONE)
			continue;
		e = graph__edge(g, pp->calls[i].caller, pp->calls[i].func);
		if (!e)
			return -ENOMEM;
		e->calls += pp->calls[i].calls;
	}
	return 0;
}

static int graph__build(struct graph *g)
{
	struct func_stat *st;
	size_t n, i;
	int err;

	g->self = calloc(g->p->nfuncs + 1, sizeof(*g->self));
	g->total = calloc(g->p->nfuncs + 1, sizeof(*g->total));
	if (!g->self || !g->total)
		return -ENOMEM;
	err = profile_target__func_stats(g->p, g->pp, &st, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		g->self[st[i].func] = st[i].self;
		g->total[st[i].func] = st[i].total;
	}
	free(st);
	if (g->pp->ncalls) {
		err = profile_target__call_totals(g->p, g->pp, &g->calls);
		if (err)
			return err;
	}
	return graph__edges(g);
}

static bool graph__present(const struct graph *g, uint32_t func)
{
	return g->total[func] || (g->calls && g->calls[func].calls);
}

static bool graph__kept(const struct graph *g, uint32_t func)
{
	return graph__present(g, func) && report_pct(g->total[func], g->whole) >= g->prune_pct;
}

/*
 * Heat: hue from blue (240 degrees) for none of the samples to red (0) for
 * all of them, through cyan, green and yellow; the square root spreads the
 * small shares most functions have. The text is black or white, whichever
 * reads better on the colour.
 */
static void heat(double share, double value, char rgb[8], bool *dark)
{
	double h = 4.0 * (1.0 - sqrt(share < 0 ? 0 : share > 1 ? 1 : share)), x, r, gr, b;
	int sector = (int)h;

	x = 1.0 - fabs(fmod(h, 2.0) - 1.0);
	r = sector == 0 || sector == 4 ? 1 : sector == 1 ? x : 0;
	gr = sector == 0 ? x : sector <= 2 ? 1 : sector == 3 ? x : 0;
	b = sector <= 1 ? 0 : sector == 2 ? x : 1;
	if (sector == 4) /* exactly blue */
		r = 0, gr = 0, b = 1;
	r = 0.15 + 0.85 * r * value;
	gr = 0.15 + 0.85 * gr * value;
	b = 0.15 + 0.85 * b * value;
	snprintf(rgb, 8, "#%02x%02x%02x", (int)(r * 255 + 0.5), (int)(gr * 255 + 0.5),
		 (int)(b * 255 + 0.5));
	*dark = 0.299 * r + 0.587 * gr + 0.114 * b < 0.55;
}

static void write_node(FILE *f, const struct graph *g, uint32_t func)
{
	const struct profile_func *fn = &g->p->funcs[func];
	double total = report_pct(g->total[func], g->whole);
	char rgb[8];
	bool dark;

	heat(total / 100, 0.9, rgb, &dark);
	fprintf(f, "\t\t\"p%zu_f%u\" [label=\"", g->proc, func);
	report_dot_string(f, fn->qualname);
	if (fn->file[0]) {
		fputs("\\n", f);
		report_dot_string(f, fn->file);
		if (fn->firstline > 0)
			fprintf(f, ":%d", fn->firstline);
	}
	fprintf(f, "\\ntotal %.2f%%\\nself %.2f%%", total, report_pct(g->self[func], g->whole));
	if (g->calls)
		fprintf(f, "\\n%llu calls", (unsigned long long)g->calls[func].calls);
	fprintf(f, "\", fillcolor=\"%s\", fontcolor=\"%s\"];\n", rgb, dark ? "#ffffff" : "#000000");
}

static void write_edge(FILE *f, const struct graph *g, const struct dot_edge *e)
{
	double share = report_pct(e->samples, g->whole);
	char rgb[8];
	bool dark;

	heat(share / 100, 0.75, rgb, &dark);
	fprintf(f, "\t\t\"p%zu_f%u\" -> \"p%zu_f%u\" [label=\"%.2f%%", g->proc, e->caller, g->proc,
		e->callee, share);
	if (g->calls)
		fprintf(f, "\\n%llu calls", (unsigned long long)e->calls);
	fprintf(f, "\", color=\"%s\", fontcolor=\"%s\", penwidth=%.2f, arrowsize=%.2f%s];\n", rgb,
		rgb, 1.0 + 5.0 * share / 100, 0.5 + 0.5 * share / 100,
		e->samples ? "" : ", style=dashed");
}

/* One process as a cluster: its label, the functions kept, the edges between them. */
static void write_cluster(FILE *f, const struct graph *g)
{
	const struct profile_target *pp = g->pp;
	size_t i, present = 0, kept = 0;
	char time[128];

	for (i = 0; i < g->p->nfuncs; i++) {
		present += graph__present(g, i);
		kept += graph__kept(g, i);
	}
	fprintf(f, "\tsubgraph \"cluster_%zu\" {\n\t\tlabel=\"", g->proc);
	if (!report_is_merged(g->p, pp))
		fprintf(f, "pid %d  ", pp->pid);
	report_dot_string(f, pp->cmdline[0] ? pp->cmdline : pp->comm);
	fprintf(f, "\\n%llu samples (%s)", (unsigned long long)pp->samples,
		report_samples_time(g->p, pp, time, sizeof(time)));
	if (present > kept)
		fprintf(f, "; %zu function%s under %.2f%% not shown", present - kept,
			present - kept == 1 ? "" : "s", g->prune_pct);
	fputs("\";\n", f);
	for (i = 0; i < g->p->nfuncs; i++)
		if (graph__kept(g, i))
			write_node(f, g, i);
	for (i = 0; i < g->ne; i++)
		if (graph__kept(g, g->e[i].caller) && graph__kept(g, g->e[i].callee))
			write_edge(f, g, &g->e[i]);
	fputs("\t}\n", f);
}

static int write_process(FILE *f, const struct profile *p, size_t proc, const struct report_opts *o)
{
	struct graph g = { .p = p,
			   .pp = &p->targets[proc],
			   .proc = proc,
			   .prune_pct = o->prune_pct };
	int err;

	g.whole = g.pp->samples;
	hashmap__init(&g.index);
	err = graph__build(&g);
	if (!err)
		write_cluster(f, &g);
	hashmap__free(&g.index);
	free(g.self);
	free(g.total);
	free(g.calls);
	free(g.e);
	return err;
}

static int write_dot(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char counts[200];
	size_t i;
	int err = 0;

	fprintf(f,
		"digraph \"pybpfprof\" {\n"
		"\tgraph [label=\"pybpfprof %s: %s profile at %u Hz, %.2f s; %s\", labelloc=t, "
		"ranksep=0.3, nodesep=0.2];\n"
		"\tnode [shape=box, style=\"filled,rounded\", fontsize=10];\n"
		"\tedge [fontsize=9];\n",
		o->tool_version, p->mode, p->frequency_hz, p->duration_s,
		report_counts(p, counts, sizeof(counts)));
	for (i = 0; i < p->ntargets && !err; i++)
		err = write_process(f, p, i, o);
	fputs("}\n", f);
	return err ? err : ferror(f) ? -EIO : 0;
}

const struct report_writer report_dot = {
	.name = "dot",
	.exts = { ".dot", ".gv" },
	.write = write_dot,
};
