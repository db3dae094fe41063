// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resolution: a record's raw frames (code object address, fingerprint,
 * bytecode position) to the profile's interned frame ids. In order, each
 * frame is looked up in the target's memo (raw frame -> id, a shortcut kept
 * within a quarter of the cache budget); on a miss, its code object in the
 * target's code cache (read from the process once, with its line table),
 * else in its parent's (a forked child's code from before the fork), else
 * by the name BPF sent for a module body whose object is gone; then the
 * function and frame are interned in the profile. What cannot be named is
 * "[unresolved]", and the sample says so. Nothing here counts samples: the
 * collector does, with the ids this leaves in c->scratch.
 */
#include <errno.h>
#include "session/collector.h"
#include "util/deadline.h"
#include "proc/procfs.h"
#include "collector_parts.h"

/*
 * Remembers raw frame key -> frame id. The memos of all targets may take a
 * quarter of the budget: one that would grow beyond is emptied first (it is
 * only a shortcut past the code cache), and its bytes count in the budget.
 */
static void memo_set(struct collector *c, struct collector_target *ts, uint64_t key, uint32_t id)
{
	struct cache_budget *b = &c->budget;
	struct hashmap *m = &ts->raw_frames;
	size_t before = hashmap__bytes(m);

	if ((m->len + 1) * 2 > m->cap && b->memo_bytes + before > b->limit / 4 && m->len) {
		hashmap__free(m);
		b->memo_bytes -= before;
		cache_budget__charge(b, -(long long)before);
		b->memo_resets++;
		before = 0;
	}
	if (hashmap__set(m, key, id))
		return;
	b->memo_bytes += hashmap__bytes(m) - before;
	cache_budget__charge(b, (long long)(hashmap__bytes(m) - before));
}

/*
 * The code object of rf in ts's process, or NULL. One read just now from a
 * pid whose process has exited is dropped: the memory may have been another
 * process's, given the pid since.
 */
static const struct code_info *target_code(struct collector_target *ts, const struct py_frame *rf)
{
	uint64_t reads = ts->codes->reads;
	const struct code_info *ci = code_cache__get(ts->codes, &ts->t, rf->code, rf->fingerprint);

	if (ci && ts->codes->reads != reads && ts->pidfd >= 0 && proc_pidfd_exited(ts->pidfd))
		return NULL;
	return ci;
}

/*
 * A frame whose code object could not be read: a module body that BPF named
 * at its first sample (its import over, its object freed) is "<module>" in
 * its file, with no line (its line table went with it); else unresolved.
 */
static uint32_t module_frame_id(struct collector *c, struct collector_target *ts,
				const struct py_frame *rf, bool *unresolved)
{
	const struct module_name *mn = module_names__find(&ts->modules, rf->code, rf->fingerprint);
	uint32_t func;

	if (!mn && ts->forked_from)
		mn = module_names__find(&c->targets[ts->forked_from - 1].modules, rf->code,
					rf->fingerprint);
	if (mn) {
		func = profile__func(c->prof, "<module>", mn->file, mn->firstlineno, false);
		return func == UINT32_MAX ? UINT32_MAX : profile__frame(c->prof, func, -1);
	}
	*unresolved = true;
	func = profile__func(c->prof, "[unresolved]", "", 0, true);
	return func == UINT32_MAX ? UINT32_MAX : profile__frame(c->prof, func, -1);
}

/* BPF's name of a module body (struct py_module_record) of ts, kept for its frames. */
void resolve__module(struct collector *c, struct collector_target *ts, const void *data,
		     size_t size)
{
	size_t before = module_names__bytes(&ts->modules);

	if (module_names__add(&ts->modules, data, size) == -EINVAL)
		c->malformed++;
	cache_budget__charge(&c->budget,
			     (long long)module_names__bytes(&ts->modules) - (long long)before);
}

/* Profile frame id for one raw frame; *unresolved set when it could not be named. */
uint32_t resolve__frame(struct collector *c, struct collector_target *ts, const struct py_frame *rf,
			bool *unresolved)
{
	uint64_t key = hash_u64(rf->code ^
				hash_u64(((uint64_t)rf->fingerprint << 32) | (uint32_t)rf->instr));
	const struct code_info *ci;
	uint64_t *slot = hashmap__find(&ts->raw_frames, key);
	uint32_t func, id;

	if (slot)
		return *slot;
	ci = target_code(ts, rf);
	/* the same object in the parent: the fingerprint says whether it still is */
	if (!ci && ts->forked_from)
		ci = target_code(&c->targets[ts->forked_from - 1], rf);
	if (!ci)
		return module_frame_id(c, ts, rf, unresolved);
	func = profile__func(c->prof, ci->qualname, ci->filename, ci->firstlineno, false);
	if (func == UINT32_MAX)
		return UINT32_MAX;
	id = profile__frame(c->prof, func, code_info__line(ci, &ts->t.layout, rf->instr));
	if (id != UINT32_MAX)
		memo_set(c, ts, key, id);
	return id;
}

/*
 * Names every frame of s into c->scratch (frame ids). Returns -ENOMEM when
 * the sample cannot be kept, -ETIME when the run ended too long ago to go on
 * (each new code object can cost a read and a line table's decoding, and a
 * sample holds up to PYPROF_MAX_DEPTH of them); *unresolved is set when a
 * frame could not be named.
 */
int resolve__stack(struct collector *c, struct collector_target *ts, const struct py_sample *s,
		   bool *unresolved)
{
	uint32_t i;

	for (i = 0; i < s->nframes; i++) {
		if (deadline__past(DEADLINE_DRAIN_NS))
			return -ETIME;
		c->scratch[i] = resolve__frame(c, ts, &s->frames[i], unresolved);
		if (c->scratch[i] == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}
