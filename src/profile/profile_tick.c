// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a CPU sample's tick says beyond its stack, kept on the stack it was
 * counted on: whether its thread was handling an exception, and (--opcodes)
 * the instruction its innermost frame was running. Kept per stack, not per
 * line, so that whatever moves stacks (a merge, a saved profile read back)
 * moves them too; the per-line and per-function figures are summed here for
 * the writers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "util/vec.h"

void profile_target__add_exc(struct profile_target *pp, enum profile_exc state)
{
	struct profile_stack *s;

	if (pp->last_stack >= pp->nstacks)
		return;
	s = &pp->stacks[pp->last_stack];
	if (state == PROFILE_EXC_HANDLING)
		s->exc++;
	else if (state == PROFILE_EXC_UNKNOWN)
		s->exc_unknown++;
}

/* An interned name: its index, or UINT32_MAX (out of memory); base is its own index if none. */
static uint32_t opname_intern(struct profile *p, const char *name, uint32_t base)
{
	uint64_t h = hash_bytes(name, strlen(name), 0x6f70);
	uint64_t *slot;
	char *copy;

	for (;;) {
		slot = hashmap__find(&p->opname_index, h);
		if (!slot)
			break;
		if (!strcmp(p->opnames[*slot].name, name))
			return *slot;
		h++;
	}
	if (vec_grow((void **)&p->opnames, &p->cap_opnames, p->nopnames + 1, sizeof(*p->opnames)))
		return UINT32_MAX;
	copy = strdup(name);
	if (!copy || hashmap__set(&p->opname_index, h, p->nopnames)) {
		free(copy);
		return UINT32_MAX;
	}
	p->opnames[p->nopnames].name = copy;
	p->opnames[p->nopnames].base = base == UINT32_MAX ? p->nopnames : base;
	return p->nopnames++;
}

uint32_t profile__opname(struct profile *p, const char *name, const char *base)
{
	uint32_t b = UINT32_MAX;

	if (base && strcmp(base, name)) {
		b = opname_intern(p, base, UINT32_MAX);
		if (b == UINT32_MAX)
			return UINT32_MAX;
	}
	return opname_intern(p, name, b);
}

int profile_stack__add_op(struct profile_stack *s, uint32_t op, uint64_t n)
{
	size_t i;

	for (i = 0; i < s->nops; i++)
		if (s->ops[i].op == op) {
			s->ops[i].samples += n;
			return 0;
		}
	if (vec_grow((void **)&s->ops, &s->cap_ops, s->nops + 1, sizeof(*s->ops)))
		return -ENOMEM;
	s->ops[s->nops].op = op;
	s->ops[s->nops++].samples = n;
	return 0;
}

int profile_target__add_op(struct profile_target *pp, uint32_t op, uint64_t n)
{
	if (pp->last_stack >= pp->nstacks)
		return -EINVAL;
	return profile_stack__add_op(&pp->stacks[pp->last_stack], op, n);
}

static int cmp_op_stat(const void *a, const void *b, void *arg)
{
	const struct op_stat *x = a, *y = b;
	const struct profile *p = arg;

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(p->opnames[x->op].name, p->opnames[y->op].name);
}

int profile_target__op_stats(const struct profile *p, const struct profile_target *pp,
			     struct op_stat **out, size_t *n)
{
	struct op_stat *st = NULL;
	struct hashmap index;
	size_t i, j, cap = 0, k = 0;
	uint64_t *slot;

	*out = NULL;
	*n = 0;
	hashmap__init(&index);
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		/* the line whose own samples these are (native frames under it are its calls) */
		uint32_t at = s->nops ? profile__innermost_line(p, s) : s->nframes;

		for (j = 0; j < s->nops && at < s->nframes; j++) {
			uint64_t key = (uint64_t)s->frames[at] << 32 | s->ops[j].op;

			slot = hashmap__find(&index, key);
			if (slot) {
				st[*slot].samples += s->ops[j].samples;
				continue;
			}
			if (vec_grow((void **)&st, &cap, k + 1, sizeof(*st)) ||
			    hashmap__set(&index, key, k)) {
				free(st);
				hashmap__free(&index);
				return -ENOMEM;
			}
			st[k++] = (struct op_stat){ s->frames[at], s->ops[j].op,
						    s->ops[j].samples };
		}
	}
	hashmap__free(&index);
	if (k)
		qsort_r(st, k, sizeof(*st), cmp_op_stat, (void *)p);
	*out = st;
	*n = k;
	return 0;
}

int profile_target__exc_stats(const struct profile *p, const struct profile_target *pp,
			      struct exc_stat **by_func, uint64_t *exc, uint64_t *exc_unknown)
{
	struct exc_stat *fs = NULL;
	size_t *last = NULL, i, j;
	uint64_t sum = 0, unknown = 0;

	if (by_func) {
		fs = calloc(p->nfuncs + 1, sizeof(*fs));
		last = calloc(p->nfuncs + 1, sizeof(*last));
		if (!fs || !last) {
			free(fs);
			free(last);
			return -ENOMEM;
		}
	}
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		sum += s->exc;
		unknown += s->exc_unknown;
		if (!fs || !s->exc || !s->nframes)
			continue;
		fs[p->frames[s->frames[0]].func].self += s->exc;
		for (j = 0; j < s->nframes; j++) {
			uint32_t f = p->frames[s->frames[j]].func;

			if (last[f] != i + 1) { /* recursion: once per stack */
				last[f] = i + 1;
				fs[f].total += s->exc;
			}
		}
	}
	free(last);
	if (by_func)
		*by_func = fs;
	if (exc)
		*exc = sum;
	if (exc_unknown)
		*exc_unknown = unknown;
	return 0;
}
