// SPDX-License-Identifier: GPL-2.0-only
/*
 * A saved profile's --mode wall and --gil figures read back: the flags in
 * the model's header, each thread's exact off-CPU ns and GIL samples, and the
 * GIL samples of the stacks (report_json_model.c writes them). The off-CPU
 * stacks themselves are ordinary stacks.
 */
#include <errno.h>
#include <string.h>
#include "report_load.h"

/* A count of model.wall that older profiles lack: left as it is when absent. */
static int ld_wall_opt(struct ld *l, const struct jval *w, const char *key, const char *where,
		       uint64_t *out)
{
	const struct jval *v = jv_get(w, key);

	return v ? ld_u64(l, v, where, UINT64_MAX, out) : 0;
}

int ld_wall_header(struct ld *l, const struct jval *m)
{
	const struct jval *w = jv_get(m, "wall");
	struct profile *p = l->p;

	if (!w || jv_is_null(w))
		return 0;
	if (ld_bool(l, ld_get(l, w, "model.wall", "wall"), "model.wall.wall", &p->wall) ||
	    ld_bool(l, ld_get(l, w, "model.wall", "gil"), "model.wall.gil", &p->gil) ||
	    ld_bool(l, ld_get(l, w, "model.wall", "idle"), "model.wall.idle", &p->idle) ||
	    ld_u64(l, ld_get(l, w, "model.wall", "unmatched"), "model.wall.unmatched", UINT64_MAX,
		   &p->offcpu_unmatched) ||
	    ld_u64(l, ld_get(l, w, "model.wall", "idle_hidden"), "model.wall.idle_hidden",
		   UINT64_MAX, &p->offcpu_idle_hidden) ||
	    ld_u64(l, ld_get(l, w, "model.wall", "dropped"), "model.wall.dropped", UINT64_MAX,
		   &p->offcpu_dropped))
		return -EINVAL;
	/* newer than the others: a profile saved before them has none */
	if (ld_wall_opt(l, w, "inferred", "model.wall.inferred", &p->offcpu_inferred) ||
	    ld_wall_opt(l, w, "no_python", "model.wall.no_python", &p->offcpu_no_python) ||
	    ld_wall_opt(l, w, "unreadable", "model.wall.unreadable", &p->offcpu_unreadable) ||
	    ld_wall_opt(l, w, "unseen", "model.wall.unseen", &p->offcpu_unseen) ||
	    ld_wall_opt(l, w, "unseen_ns", "model.wall.unseen_ns", &p->offcpu_unseen_ns))
		return -EINVAL;
	return 0;
}

/* [tid, [ns by class], held, released]: a thread the process lists (tids: tid -> 1 + index). */
static int ld_wall_thread(struct ld *l, const struct jval *e, const char *w,
			  struct profile_target *pp, const struct hashmap *tids)
{
	struct profile_thread *th;
	uint64_t tid, held, released, *slot;
	size_t len;

	if (ld_array(l, e, w, 4, 4, &len) || ld_u64(l, jv_at(e, 0), w, UINT32_MAX, &tid))
		return -EINVAL;
	slot = hashmap__find(tids, tid);
	if (!slot)
		return ld_fail(l, w, "thread %llu is not in the process's threads",
			       (unsigned long long)tid);
	th = &pp->threads[*slot - 1];
	if (ld_u64s(l, jv_at(e, 1), w, th->offcpu_ns, PROFILE_OFFCPU_NCLASSES) ||
	    ld_u64(l, jv_at(e, 2), w, UINT64_MAX, &held) ||
	    ld_u64(l, jv_at(e, 3), w, UINT64_MAX, &released))
		return -EINVAL;
	th->gil_held = held;
	th->gil_released = released;
	return 0;
}

/*
 * "gil_unknown": {"threads": [[tid, n]...], "stacks": [[stack, n]...]}: the
 * samples whose GIL was not known, apart so that older readers skip them
 * (files written before it have none).
 */
static int ld_gil_unknown(struct ld *l, const struct jval *v, const char *where,
			  struct profile_target *pp, const struct hashmap *tids)
{
	const struct jval *u = jv_get(v, "gil_unknown"), *ths, *sts, *e;
	char w[LD_WHERE];
	uint64_t x[2];
	uint64_t *slot;
	size_t nt, ns, i;

	if (!u)
		return 0;
	ld_at(w, sizeof(w), "%s.wall.gil_unknown", where);
	ths = ld_get(l, u, w, "threads");
	sts = ld_get(l, u, w, "stacks");
	if (ld_array(l, ths, w, 0, pp->nthreads, &nt) || ld_array(l, sts, w, 0, pp->nstacks, &ns))
		return -EINVAL;
	for (i = 0; i < nt; i++) {
		e = jv_at(ths, i);
		ld_at(w, sizeof(w), "%s.wall.gil_unknown.threads[%zu]", where, i);
		if (ld_u64s(l, e, w, x, 2))
			return -EINVAL;
		slot = hashmap__find(tids, x[0]);
		if (!slot)
			return ld_fail(l, w, "thread %llu is not in the process's threads",
				       (unsigned long long)x[0]);
		pp->threads[*slot - 1].gil_unknown = x[1];
	}
	for (i = 0; i < ns; i++) {
		e = jv_at(sts, i);
		ld_at(w, sizeof(w), "%s.wall.gil_unknown.stacks[%zu]", where, i);
		if (ld_u64s(l, e, w, x, 2))
			return -EINVAL;
		if (x[0] >= pp->nstacks)
			return ld_fail(l, w, "stack %llu: the process has %zu stacks",
				       (unsigned long long)x[0], pp->nstacks);
		pp->stacks[x[0]].gil_unknown = x[1];
	}
	return 0;
}

int ld_wall(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp,
	    const struct hashmap *tids)
{
	const struct jval *v, *ths, *sg, *e;
	char w[LD_WHERE];
	size_t n, i;
	uint64_t x[3];

	ld_at(w, sizeof(w), "%s.wall", where);
	v = ld_get(l, jt, where, "wall");
	if (!v)
		return -EINVAL;
	ths = ld_get(l, v, w, "threads");
	if (ld_array(l, ths, w, 0, pp->nthreads, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		e = jv_at(ths, i);
		ld_at(w, sizeof(w), "%s.wall.threads[%zu]", where, i);
		if (ld_wall_thread(l, e, w, pp, tids))
			return -EINVAL;
	}
	ld_at(w, sizeof(w), "%s.wall", where);
	sg = ld_get(l, v, w, "stack_gil");
	if (ld_array(l, sg, w, 0, pp->nstacks, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		e = jv_at(sg, i);
		ld_at(w, sizeof(w), "%s.wall.stack_gil[%zu]", where, i);
		if (ld_u64s(l, e, w, x, 3))
			return -EINVAL;
		if (x[0] >= pp->nstacks)
			return ld_fail(l, w, "stack %llu: the process has %zu stacks",
				       (unsigned long long)x[0], pp->nstacks);
		pp->stacks[x[0]].gil_held = x[1];
		pp->stacks[x[0]].gil_released = x[2];
	}
	return ld_gil_unknown(l, v, where, pp, tids);
}
