// SPDX-License-Identifier: GPL-2.0-only
/*
 * A saved profile's facts of the ticks read back (report_json_model.c writes
 * them): each CPU stack's samples handling an exception and those whose
 * state was not known, the samples --mode exception left out, and the
 * --opcodes instruction names and counts per stack. Files written before
 * they existed have none: their profile says nothing of exceptions or
 * instructions, rather than zero of them.
 */
#include <errno.h>
#include <string.h>
#include "report_load.h"

/* Longest instruction name taken (CPython's longest is 40 bytes). */
#define LD_OPNAME_MAX 64

/*
 * An instruction name as the run writes it: letters, digits and '_', or
 * "<N>" for a number the version has no name for. Nothing else, so that a
 * forged name cannot carry anything to a terminal or a report.
 */
static bool opname_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n > LD_OPNAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '<' || s[i] == '>'))
			return false;
	return true;
}

/* "opnames": [[name, base]...]: each name once, each base one of them. */
static int ld_opnames(struct ld *l, const struct jval *v)
{
	struct profile *p = l->p;
	size_t i, n = 0, k;
	uint64_t base;
	uint32_t id;
	const char *name;
	char w[LD_WHERE];

	if (ld_array(l, v, "model.opnames", 0, 1u << 16, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(v, i);

		ld_at(w, sizeof(w), "model.opnames[%zu]", i);
		if (ld_array(l, e, w, 2, 2, &k) ||
		    ld_str(l, jv_at(e, 0), w, LD_OPNAME_MAX, &name) ||
		    ld_u64(l, jv_at(e, 1), w, n - 1, &base))
			return -EINVAL;
		if (!opname_ok(name))
			return ld_fail(l, w, "\"%.64s\" is no instruction name", name);
		/* interned as they come, so the file's indices are the profile's */
		id = profile__opname(p, name, NULL);
		if (id == UINT32_MAX)
			return -ENOMEM;
		if (id != i)
			return ld_fail(l, w, "\"%s\" is listed twice", name);
		p->opnames[i].base = (uint32_t)base;
	}
	return 0;
}

int ld_tick_header(struct ld *l, const struct jval *m)
{
	const struct jval *e = jv_get(m, "exceptions"), *ops = jv_get(m, "opnames");

	if (e && !jv_is_null(e)) {
		l->p->exc_known = true;
		if (ld_bool(l, ld_get(l, e, "model.exceptions", "only"), "model.exceptions.only",
			    &l->p->exc_only))
			return -EINVAL;
	}
	if (!ops || jv_is_null(ops))
		return 0;
	l->p->opcodes = true;
	return ld_opnames(l, ops);
}

/* [stack, handling, unknown]: at most the stack's samples, each stack once. */
static int ld_exc_stack(struct ld *l, const struct jval *e, const char *w,
			struct profile_target *pp)
{
	struct profile_stack *s;
	uint64_t x[3];

	if (ld_u64s(l, e, w, x, 3))
		return -EINVAL;
	if (x[0] >= pp->nstacks)
		return ld_fail(l, w, "stack %llu does not exist (%zu stacks)",
			       (unsigned long long)x[0], pp->nstacks);
	s = &pp->stacks[x[0]];
	if (s->exc || s->exc_unknown)
		return ld_fail(l, w, "stack %llu is listed twice", (unsigned long long)x[0]);
	if (x[1] > s->count || x[2] > s->count - x[1])
		return ld_fail(l, w, "%llu and %llu samples exceed the stack's %llu",
			       (unsigned long long)x[1], (unsigned long long)x[2],
			       (unsigned long long)s->count);
	s->exc = x[1];
	s->exc_unknown = x[2];
	return 0;
}

/* "exceptions": {"left_out": N, "unknown_left_out": N, "stacks": [...]}. */
static int ld_exc(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp)
{
	const struct jval *v = ld_get(l, jt, where, "exceptions"), *st;
	char w[LD_WHERE];
	size_t i, n = 0;

	ld_at(w, sizeof(w), "%s.exceptions", where);
	if (!v || ld_u64(l, ld_get(l, v, w, "left_out"), w, UINT64_MAX, &pp->exc_left_out) ||
	    ld_u64(l, ld_get(l, v, w, "unknown_left_out"), w, UINT64_MAX,
		   &pp->exc_unknown_left_out))
		return -EINVAL;
	st = ld_get(l, v, w, "stacks");
	ld_at(w, sizeof(w), "%s.exceptions.stacks", where);
	if (ld_array(l, st, w, 0, pp->nstacks, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ld_at(w, sizeof(w), "%s.exceptions.stacks[%zu]", where, i);
		if (ld_exc_stack(l, jv_at(st, i), w, pp))
			return -EINVAL;
	}
	return 0;
}

/* [stack, name, samples]: a known name, each pair once, at most the stack's samples in all. */
static int ld_op(struct ld *l, const struct jval *e, const char *w, struct profile_target *pp)
{
	struct profile_stack *s;
	uint64_t x[3], sum = 0;
	size_t i;

	if (ld_u64s(l, e, w, x, 3))
		return -EINVAL;
	if (x[0] >= pp->nstacks)
		return ld_fail(l, w, "stack %llu does not exist (%zu stacks)",
			       (unsigned long long)x[0], pp->nstacks);
	if (x[1] >= l->p->nopnames)
		return ld_fail(l, w, "instruction %llu does not exist (%zu names)",
			       (unsigned long long)x[1], l->p->nopnames);
	s = &pp->stacks[x[0]];
	for (i = 0; i < s->nops; i++) {
		if (s->ops[i].op == x[1])
			return ld_fail(l, w, "instruction %llu of stack %llu is listed twice",
				       (unsigned long long)x[1], (unsigned long long)x[0]);
		sum += s->ops[i].samples;
	}
	if (x[2] > s->count - sum)
		return ld_fail(l, w, "the stack's instructions exceed its %llu samples",
			       (unsigned long long)s->count);
	return profile_stack__add_op(s, (uint32_t)x[1], x[2]);
}

int ld_tick(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp)
{
	const struct jval *ops;
	char w[LD_WHERE];
	size_t i, n = 0;
	int err;

	if (l->p->exc_known && ld_exc(l, jt, where, pp))
		return -EINVAL;
	if (!l->p->opcodes)
		return 0;
	ld_at(w, sizeof(w), "%s.ops", where);
	ops = ld_get(l, jt, where, "ops");
	/* each entry adds at least one sample to a stack: no more than the samples */
	if (ld_array(l, ops, w, 0, 1u << 26, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ld_at(w, sizeof(w), "%s.ops[%zu]", where, i);
		err = ld_op(l, jv_at(ops, i), w, pp);
		if (err)
			return err;
	}
	return 0;
}
