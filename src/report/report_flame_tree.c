// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flame graphs' call tree (report_flame_tree.h), walked without being built:
 * with the paths sorted, a node's subtree is a run of consecutive paths
 * sharing its prefix, so walking them once, closing and opening nodes where
 * a path leaves the previous one, visits every node with memory for one path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include "report/report_flame_tree.h"

/* One stack of one process; the tree's paths are these, root first. */
struct entry {
	uint32_t proc, stack;
};

struct paths {
	const struct profile *p;
	bool by_proc;	     /* several processes: each path starts at its process */
	const uint32_t *rep; /* each frame's stand-in (lines merged), or NULL */
};

static uint32_t path_len(const struct paths *ps, const struct entry *e)
{
	return ps->p->targets[e->proc].stacks[e->stack].nframes + ps->by_proc;
}

/* Label of step k of e's path: a frame id, or nframes + process index. */
static uint32_t path_at(const struct paths *ps, const struct entry *e, uint32_t k)
{
	const struct profile_stack *s = &ps->p->targets[e->proc].stacks[e->stack];

	if (ps->by_proc && !k)
		return ps->p->nframes + e->proc;
	k -= ps->by_proc;
	return ps->rep ? ps->rep[s->frames[s->nframes - 1 - k]] : s->frames[s->nframes - 1 - k];
}

static int cmp_paths(const void *a, const void *b, void *ctx)
{
	const struct entry *x = a, *y = b;
	const struct paths *ps = ctx;
	uint32_t nx = path_len(ps, x), ny = path_len(ps, y), k;

	for (k = 0; k < nx && k < ny; k++) {
		uint32_t lx = path_at(ps, x, k), ly = path_at(ps, y, k);

		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return nx < ny ? -1 : nx > ny;
}

/* The non-empty stacks of every process, sorted by path; NULL without memory. */
static struct entry *sorted_entries(const struct paths *ps, size_t *n, uint32_t *maxlen)
{
	const struct profile *p = ps->p;
	struct entry *es;
	size_t ne = 0, i, j;

	for (i = 0; i < p->ntargets; i++)
		ne += p->targets[i].nstacks;
	es = calloc(ne + 1, sizeof(*es));
	if (!es)
		return NULL;
	*maxlen = 1;
	for (i = 0, ne = 0; i < p->ntargets; i++)
		for (j = 0; j < p->targets[i].nstacks; j++)
			if (p->targets[i].stacks[j].nframes) {
				uint32_t len;

				es[ne++] = (struct entry){ .proc = i, .stack = j };
				len = path_len(ps, &es[ne - 1]);
				*maxlen = len > *maxlen ? len : *maxlen;
			}
	qsort_r(es, ne, sizeof(*es), cmp_paths, (void *)ps);
	*n = ne;
	return es;
}

int report_flame_tree_walk(const struct profile *p, const struct report_flame_tree_ops *ops,
			   void *ctx, uint64_t *total)
{
	return report_flame_tree_walk_rep(p, NULL, ops, ctx, total);
}

int report_flame_tree_walk_rep(const struct profile *p, const uint32_t *rep,
			       const struct report_flame_tree_ops *ops, void *ctx, uint64_t *total)
{
	struct paths ps = { .p = p, .by_proc = p->ntargets > 1, .rep = rep };
	uint64_t *val = NULL, *start = NULL, sum = 0;
	uint32_t *open = NULL, depth = 0, maxlen, k;
	bool *first = NULL;
	struct entry *es;
	size_t ne, i;
	int err = -ENOMEM;

	es = sorted_entries(&ps, &ne, &maxlen);
	if (!es)
		return -ENOMEM;
	open = calloc(maxlen, sizeof(*open));
	val = calloc(maxlen, sizeof(*val));
	start = calloc(maxlen, sizeof(*start));
	first = calloc(maxlen + 1, sizeof(*first));
	if (!open || !val || !start || !first)
		goto out;
	first[0] = true;
	for (i = 0; i < ne; i++) {
		const struct entry *e = &es[i];
		uint64_t count = p->targets[e->proc].stacks[e->stack].count;
		uint32_t len = path_len(&ps, e), common = 0;

		while (common < depth && common < len && open[common] == path_at(&ps, e, common))
			common++;
		for (; depth > common; depth--)
			ops->close(ctx, depth - 1, open[depth - 1], start[depth - 1],
				   val[depth - 1]);
		for (k = depth; k < len; k++) {
			open[k] = path_at(&ps, e, k);
			val[k] = 0;
			start[k] = sum;
			ops->open(ctx, k, open[k], first[k]);
			first[k] = false;
			first[k + 1] = true;
		}
		depth = len;
		for (k = 0; k < len; k++)
			val[k] += count;
		sum += count;
	}
	for (; depth > 0; depth--)
		ops->close(ctx, depth - 1, open[depth - 1], start[depth - 1], val[depth - 1]);
	*total = sum;
	err = 0;
out:
	free(es);
	free(open);
	free(val);
	free(start);
	free(first);
	return err;
}
