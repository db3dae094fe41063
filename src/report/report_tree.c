// SPDX-License-Identifier: GPL-2.0-only
/*
 * The call tree of each process as text, like pyinstrument's console view:
 * from each root function, the functions it called, siblings by total share,
 * each line "total% self%  qualname  file:line" (shares of the process's
 * samples; the line is the function's first). Nodes are functions, not
 * lines, as in pyinstrument; recursion nests. Callees under --prune's share are
 * collapsed into one line per caller; a chain of library functions (stdlib,
 * site-packages) shows only the one user code called, with its hidden
 * callees' self time and their files named on its line, and the user code
 * they called back below it. Colours (ANSI) only when o->color: report.c sets
 * it for a terminal. So that colours survive, the text is not sanitized as a
 * whole (plain_text): every target string is sanitized here on its way out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report_procs.h"
#include "util/hashmap.h"
#include "util/text.h"
#include "util/vec.h"

#define NONE UINT32_MAX
#define MAX_INDENT 4096 /* bytes of tree glyphs; deeper lines are indented no further */

/* One node of the call tree: a function reached through one path. */
struct tnode {
	uint32_t func; /* NONE: the process's root */
	uint32_t parent, first_child, next_sibling;
	uint64_t total, self;
};

struct tree {
	const struct profile *p;
	const struct report_opts *o;
	struct tnode *n;
	size_t len, cap;
	struct hashmap index; /* parent << 32 | func -> node */
	uint64_t whole;	      /* the process's samples: what shares are of */
	char indent[MAX_INDENT];
};

static uint32_t tree__child(struct tree *t, uint32_t parent, uint32_t func)
{
	uint64_t key = hash_u64((uint64_t)parent << 32 | func), *slot;
	struct tnode *c;

	for (;; key++) {
		slot = hashmap__find(&t->index, key);
		if (!slot)
			break;
		c = &t->n[*slot];
		if (c->parent == parent && c->func == func)
			return *slot;
	}
	if (vec_grow((void **)&t->n, &t->cap, t->len + 1, sizeof(*t->n)))
		return NONE;
	if (hashmap__set(&t->index, key, t->len))
		return NONE;
	t->n[t->len] = (struct tnode){ .func = func,
				       .parent = parent,
				       .first_child = NONE,
				       .next_sibling = t->n[parent].first_child };
	t->n[parent].first_child = t->len;
	return t->len++;
}

/* The tree of pp's stacks, threads merged. 0 or -ENOMEM. */
static int tree__build(struct tree *t, const struct profile_target *pp)
{
	size_t i, k;

	if (vec_grow((void **)&t->n, &t->cap, 1, sizeof(*t->n)))
		return -ENOMEM;
	t->len = 1;
	t->n[0] = (struct tnode){ .func = NONE,
				  .parent = NONE,
				  .first_child = NONE,
				  .next_sibling = NONE };
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		uint32_t cur = 0;

		t->n[0].total += s->count;
		for (k = s->nframes; k-- > 0;) {
			cur = tree__child(t, cur, t->p->frames[s->frames[k]].func);
			if (cur == NONE)
				return -ENOMEM;
			t->n[cur].total += s->count;
		}
		t->n[cur].self += s->count;
	}
	t->whole = pp->samples > t->n[0].total ? pp->samples : t->n[0].total;
	return 0;
}

static bool tree__library(const struct tree *t, uint32_t node)
{
	const struct profile_func *fn = &t->p->funcs[t->n[node].func];

	return t->n[node].func != NONE && !fn->unresolved && report_is_library(fn->file);
}

/*
 * What one line of the tree stands for: a function, and when it is the entry
 * into library code, the library functions below it that are hidden.
 */
struct group {
	uint32_t *members; /* nodes, the shown one first */
	size_t n, cap;
	uint64_t self;
};

static int group__add(struct group *g, uint32_t node)
{
	if (vec_grow((void **)&g->members, &g->cap, g->n + 1, sizeof(*g->members)))
		return -ENOMEM;
	g->members[g->n++] = node;
	return 0;
}

/* node, and if it enters library code, every library node reached through library nodes. */
static int group__fill(struct group *g, const struct tree *t, uint32_t node)
{
	size_t i;
	uint32_t c;

	g->n = 0;
	g->self = 0;
	if (group__add(g, node))
		return -ENOMEM;
	for (i = 0; i < g->n; i++) {
		g->self += t->n[g->members[i]].self;
		if (!tree__library(t, node))
			continue;
		for (c = t->n[g->members[i]].first_child; c != NONE; c = t->n[c].next_sibling)
			if (tree__library(t, c) && group__add(g, c))
				return -ENOMEM;
	}
	return 0;
}

/* The callees shown under a group: its members' children outside it, by total share. */
static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	const struct tnode *x = &t->n[*(const uint32_t *)a], *y = &t->n[*(const uint32_t *)b];
	int c;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	c = strcmp(t->p->funcs[x->func].qualname, t->p->funcs[y->func].qualname);
	return c ? c : x->func < y->func ? -1 : x->func > y->func;
}

static uint32_t *group__children(const struct group *g, const struct tree *t, size_t *n)
{
	bool lib = g->n > 1 || tree__library(t, g->members[0]);
	uint32_t *out = NULL, c;
	size_t i, len = 0, cap = 0;

	for (i = 0; i < g->n; i++)
		for (c = t->n[g->members[i]].first_child; c != NONE; c = t->n[c].next_sibling) {
			if (lib && tree__library(t, c))
				continue; /* a member itself */
			if (vec_grow((void **)&out, &cap, len + 1, sizeof(*out))) {
				free(out);
				return NULL;
			}
			out[len++] = c;
		}
	if (!out)
		out = malloc(sizeof(*out)); /* none: still not NULL */
	if (out)
		qsort_r(out, len, sizeof(*out), cmp_nodes, (void *)t);
	*n = len;
	return out;
}

static void color(FILE *f, const struct tree *t, const char *sgr)
{
	if (t->o->color)
		fprintf(f, "\033[%sm", sgr);
}

/* Red from half the samples, yellow from a fifth, green from 5 %, dim below. */
static const char *heat(double pct)
{
	return pct >= 50 ? "31" : pct >= 20 ? "33" : pct >= 5 ? "32" : "2";
}

/* "[N library frames hidden: a.py, b.py]": the hidden members' distinct files. */
static void print_hidden_libs(FILE *f, const struct tree *t, const struct group *g)
{
	const char *names[3];
	size_t i, j, n = 0;
	bool more = false;

	for (i = 1; i < g->n; i++) {
		const char *file = t->p->funcs[t->n[g->members[i]].func].file;
		const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

		for (j = 0; j < n && strcmp(names[j], base); j++)
			;
		if (j < n)
			continue;
		if (n == 3)
			more = true;
		else
			names[n++] = base;
	}
	color(f, t, "2");
	fprintf(f, "  [%zu library frame%s hidden: ", g->n - 1, g->n == 2 ? "" : "s");
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		text_put_clean(f, names[i]);
	}
	fputs(more ? ", ...]" : "]", f);
	color(f, t, "0");
}

/* One line: glyphs, total and self shares, then what it stands for. */
static void print_shares(FILE *f, const struct tree *t, const char *glyph, uint64_t total,
			 uint64_t self)
{
	double pt = report_pct(total, t->whole), ps = report_pct(self, t->whole);

	fputs(t->indent, f);
	fputs(glyph, f);
	color(f, t, heat(pt));
	fprintf(f, "%5.1f%%", pt);
	color(f, t, "0");
	fputc(' ', f);
	color(f, t, heat(ps));
	fprintf(f, "%6.1f%%", ps);
	color(f, t, "0");
	fputs("  ", f);
}

static void print_func(FILE *f, const struct tree *t, const struct group *g)
{
	const struct profile_func *fn = &t->p->funcs[t->n[g->members[0]].func];

	text_put_clean(f, fn->qualname);
	if (fn->file[0]) {
		color(f, t, "2");
		fputs("  ", f);
		text_put_clean(f, fn->file);
		if (fn->firstline > 0)
			fprintf(f, ":%d", fn->firstline);
		color(f, t, "0");
	}
	if (g->n > 1)
		print_hidden_libs(f, t, g);
	fputc('\n', f);
}

static bool tree__shown(const struct tree *t, uint32_t node)
{
	return report_pct(t->n[node].total, t->whole) >= t->o->prune_pct;
}

static int print_node(FILE *f, struct tree *t, uint32_t node, bool top, bool last);

/*
 * The callees of a line, indented under it: those at or above --prune's
 * share, then one line for the others; top: the roots, with no glyphs.
 */
static int print_children(FILE *f, struct tree *t, const uint32_t *kids, size_t n, bool top)
{
	size_t i, shown = 0, hidden = 0;
	uint64_t hidden_total = 0;
	int err = 0;

	for (i = 0; i < n; i++)
		if (tree__shown(t, kids[i]))
			shown++;
	hidden = n - shown;
	for (i = 0; i < n && !err; i++) {
		if (!tree__shown(t, kids[i])) {
			hidden_total += t->n[kids[i]].total;
			continue;
		}
		err = print_node(f, t, kids[i], top, !--shown && !hidden);
	}
	if (!err && hidden) {
		fputs(t->indent, f);
		fputs(top ? "" : "└─ ", f);
		color(f, t, "2");
		fprintf(f, "%5.1f%%  [%zu frame%s hidden, each under %.1f%%]",
			report_pct(hidden_total, t->whole), hidden, hidden == 1 ? "" : "s",
			t->o->prune_pct);
		color(f, t, "0");
		fputc('\n', f);
	}
	return err;
}

static int print_node(FILE *f, struct tree *t, uint32_t node, bool top, bool last)
{
	size_t len = strlen(t->indent), n;
	struct group g = { 0 };
	uint32_t *kids;
	int err;

	err = group__fill(&g, t, node);
	kids = err ? NULL : group__children(&g, t, &n);
	if (!kids) {
		free(g.members);
		return -ENOMEM;
	}
	print_shares(f, t, top ? "" : last ? "└─ " : "├─ ", t->n[node].total, g.self);
	print_func(f, t, &g);
	if (!top && len + 8 < MAX_INDENT)
		strcpy(t->indent + len, last ? "   " : "│  ");
	err = print_children(f, t, kids, n, false);
	t->indent[len] = '\0';
	free(kids);
	free(g.members);
	return err;
}

static int print_tree(FILE *f, struct tree *t)
{
	struct group root = { 0 };
	uint32_t *kids;
	size_t n;
	int err;

	if (group__add(&root, 0))
		return -ENOMEM;
	kids = group__children(&root, t, &n);
	free(root.members);
	if (!kids)
		return -ENOMEM;
	err = print_children(f, t, kids, n, true);
	free(kids);
	return err;
}

static int print_process(FILE *f, const struct profile *p, const struct profile_target *pp,
			 const struct report_opts *o)
{
	struct tree t = { .p = p, .o = o };
	char time[128];
	int err;

	fputc('\n', f);
	if (!report_is_merged(p, pp))
		fprintf(f, "pid %d  ", pp->pid);
	text_put_clean(f, pp->cmdline[0] ? pp->cmdline : pp->comm);
	fputs("\n  Python ", f);
	text_put_clean(f, pp->python);
	fputs(", ", f);
	text_put_clean(f, pp->exe);
	fprintf(f, "%s\n", pp->exited ? " (exited during the run)" : "");
	fprintf(f, "  %llu samples (%s)", (unsigned long long)pp->samples,
		report_samples_time(p, pp, time, sizeof(time)));
	if (!pp->nstacks) {
		fputs("; no samples with Python code\n", f);
		return 0;
	}
	fprintf(f, "; shares of them, functions under %.1f%% hidden\n\n", o->prune_pct);
	color(f, &t, "1");
	fputs("total%   self%  function  file:line\n", f);
	color(f, &t, "0");
	hashmap__init(&t.index);
	err = tree__build(&t, pp);
	if (!err)
		err = print_tree(f, &t);
	hashmap__free(&t.index);
	free(t.n);
	return err;
}

static int write_tree(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char counts[200], procs[64], busiest[REPORT_BUSIEST_LEN];
	size_t i, *order;
	int err = 0;

	fprintf(f, "pybpfprof %s: %s profile, call tree, %s, %.2f s at %u Hz\n", o->tool_version,
		p->mode, report_nprocs(p, procs, sizeof(procs)), p->duration_s, p->frequency_hz);
	fprintf(f, "%s\n", report_counts(p, counts, sizeof(counts)));
	/* the first screen names the busiest process and thread, and its tree comes first */
	if (report_busiest(p, busiest, sizeof(busiest))[0])
		fprintf(f, "%s\n", busiest);
	order = report_procs_order(p);
	if (!order)
		return -ENOMEM;
	for (i = 0; i < p->ntargets && !err; i++)
		err = print_process(f, p, &p->targets[order[i]], o);
	free(order);
	return err ? err : ferror(f) ? -EIO : 0;
}

const struct report_writer report_tree = {
	.name = "tree",
	.exts = { ".tree" },
	.write = write_tree,
};
