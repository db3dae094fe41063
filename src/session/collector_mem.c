// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mem in the collector: a memory record (bytes touched, mapped, unmapped
 * or allocated, on its stack) counted in the process's memory profile, and
 * a memory call's address range matched to the stack record sent just
 * before it, so that every release is charged to the stack that mapped it.
 */
#include "session/collector.h"
#include "collector_parts.h"

_Static_assert((int)PY_MEM_MMAP == (int)PROFILE_MEM_OP_MMAP &&
		       (int)PY_MEM_MUNMAP == (int)PROFILE_MEM_OP_MUNMAP &&
		       (int)PY_MEM_MREMAP == (int)PROFILE_MEM_OP_MREMAP &&
		       (int)PY_MEM_BRK == (int)PROFILE_MEM_OP_BRK,
	       "py_mem_op and profile_mem_op differ");

/* A --mem record: bytes of one kind on its stack, and a point in time for the timeline. */
void collector__mem_sample(struct collector *c, struct collector_target *ts,
			   const struct py_sample *s, enum profile_mem_kind kind, bool unresolved)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	double t_s = ((long long)s->ktime_ns - c->prof->start_ns) / 1e9;

	long stack = profile_target__add_mem(pp, kind, c->scratch, s->nframes, s->value, t_s,
					     s->flags & PY_SAMPLE_RSS_PEAK);

	if (stack < 0) {
		c->malformed++;
		return;
	}
	/* An allocation may still be live at the end: remember which stack its record named. */
	if (kind == PROFILE_MEM_ALLOCATED &&
	    hashmap__set(&c->alloc_records, collector__alloc_key(s->pid, s->tid, s->ktime_ns),
			 stack))
		c->malformed++;
	if (kind == PROFILE_MEM_MAPPED || kind == PROFILE_MEM_UNMAPPED) {
		unsigned at = ts->mem_recent_next++ % 16;

		ts->mem_recent[at].tid = s->tid;
		ts->mem_recent[at].ktime_ns = s->ktime_ns;
		ts->mem_recent[at].stack = stack;
	}
	pp->mem.truncated += !!(s->flags & PY_SAMPLE_TRUNCATED);
	pp->mem.partial += !!(s->flags & PY_SAMPLE_READ_ERROR);
	pp->mem.unresolved += unresolved;
}

/*
 * A memory call's addresses: matched to the ranges the process mapped, the
 * mapping owned by the stack record sent just before it for the same call.
 */
void collector__mem_range(struct collector *c, struct collector_target *ts, const void *data,
			  size_t size)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	const struct py_mem_range *r = data;
	struct profile_mem_call call = {
		.addr = r->addr,
		.len = r->len,
		.new_addr = r->new_addr,
		.new_len = r->new_len,
		.keep_old = r->remap_flags & 4, /* MREMAP_DONTUNMAP */
		.t_ns = r->ktime_ns,
	};
	uint32_t owner = MEM_RANGE_NO_STACK;
	size_t i;

	if (size < sizeof(*r) || r->op < PY_MEM_MMAP || r->op > PY_MEM_BRK) {
		c->malformed++;
		return;
	}
	call.op = r->op; /* the same numbering */
	for (i = 0; r->value && i < 16; i++)
		if (ts->mem_recent[i].tid == r->tid && ts->mem_recent[i].ktime_ns == r->value) {
			owner = ts->mem_recent[i].stack;
			break;
		}
	/* a stack record sent but never seen here: dropped, or too many threads in between */
	if (r->value && owner == MEM_RANGE_NO_STACK)
		pp->mem.ranges_unmatched++;
	profile_target__mem_call(pp, &call, owner);
}
