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

int ld_wall_header(struct ld *l, json_t *m)
{
	json_t *w = json_object_get(m, "wall");
	struct profile *p = l->p;

	if (!w || json_is_null(w))
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
	return 0;
}

/*
 * [tid, [ns by class], held, released, unknown]: a thread the process lists
 * (unknown came later: older files have 4 entries).
 */
static int ld_wall_thread(struct ld *l, json_t *e, const char *w, struct profile_target *pp)
{
	struct profile_thread *th = NULL;
	uint64_t tid, held, released, unknown = 0;
	size_t len, i;

	if (ld_array(l, e, w, 0, 5, &len) || ld_u64(l, json_array_get(e, 0), w, UINT32_MAX, &tid))
		return -EINVAL;
	if (len < 4)
		return ld_fail(l, w, "%zu entries instead of 4 or 5", len);
	for (i = 0; i < pp->nthreads && !th; i++)
		if (pp->threads[i].tid == tid)
			th = &pp->threads[i];
	if (!th)
		return ld_fail(l, w, "thread %llu is not in the process's threads",
			       (unsigned long long)tid);
	if (ld_u64s(l, json_array_get(e, 1), w, th->offcpu_ns, PROFILE_OFFCPU_NCLASSES) ||
	    ld_u64(l, json_array_get(e, 2), w, UINT64_MAX, &held) ||
	    ld_u64(l, json_array_get(e, 3), w, UINT64_MAX, &released) ||
	    (len == 5 && ld_u64(l, json_array_get(e, 4), w, UINT64_MAX, &unknown)))
		return -EINVAL;
	th->gil_held = held;
	th->gil_released = released;
	th->gil_unknown = unknown;
	return 0;
}

int ld_wall(struct ld *l, json_t *jt, const char *where, struct profile_target *pp)
{
	json_t *v, *ths, *sg, *e;
	char w[LD_WHERE];
	size_t n, i;
	uint64_t x[4];

	ld_at(w, sizeof(w), "%s.wall", where);
	v = ld_get(l, jt, where, "wall");
	if (!v)
		return -EINVAL;
	ths = ld_get(l, v, w, "threads");
	if (ld_array(l, ths, w, 0, pp->nthreads, &n))
		return -EINVAL;
	json_array_foreach(ths, i, e)
	{
		ld_at(w, sizeof(w), "%s.wall.threads[%zu]", where, i);
		if (ld_wall_thread(l, e, w, pp))
			return -EINVAL;
	}
	ld_at(w, sizeof(w), "%s.wall", where);
	sg = ld_get(l, v, w, "stack_gil");
	if (ld_array(l, sg, w, 0, pp->nstacks, &n))
		return -EINVAL;
	json_array_foreach(sg, i, e)
	{
		ld_at(w, sizeof(w), "%s.wall.stack_gil[%zu]", where, i);
		/* [stack, held, released, unknown]; older files have no unknown */
		x[3] = 0;
		if (ld_u64s(l, e, w, x, json_array_size(e) == 3 ? 3 : 4))
			return -EINVAL;
		if (x[0] >= pp->nstacks)
			return ld_fail(l, w, "stack %llu: the process has %zu stacks",
				       (unsigned long long)x[0], pp->nstacks);
		pp->stacks[x[0]].gil_held = x[1];
		pp->stacks[x[0]].gil_released = x[2];
		pp->stacks[x[0]].gil_unknown = x[3];
	}
	return 0;
}
