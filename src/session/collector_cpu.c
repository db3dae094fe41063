// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU samples in the collector: each one counted on its stack, its place
 * (Python / native / system) and its thread. With --kernel, a CPU sample taken in kernel mode waits for the
 * kernel stack that the same BPF run sends right after it (struct py_kstack,
 * same pid, tid and ktime_ns), and is counted with the kernel frames below
 * its Python frames; with --native, a sample flagged PY_SAMPLE_USTACK waits
 * for its user stack, whose native frames go below and between its Python
 * frames (session/native_merge.h). Records of other CPUs may come in
 * between, and the companion may come only with the next poll, so a few
 * samples wait at once; one whose companion was lost (ring buffer full) is
 * counted without it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/log.h"
#include "cpython/py_opcodes.h"
#include "util/mono.h"
#include "proc/procfs.h"
#include "session/collector.h"
#include "session/ksyms.h"
#include "session/native.h"
#include "session/native_merge.h"
#include "util/text.h"
#include "util/vec.h"
#include "pybpfprof.skel.h"
#include "collector_parts.h"

/*
 * A thread read as blocked when the run started but seen running since
 * (it woke between that read and the tracepoint's start): not blocked.
 */
static void offcpu_running(struct profile_target *pp, uint32_t tid)
{
	size_t i;

	for (i = 0; i < pp->npending; i++)
		if (pp->pending[i].tid == tid && pp->pending[i].primed)
			pp->pending[i].open = pp->pending[i].primed = false;
}

/* A CPU sample on the timeline, with where it ran and the GIL (0: unknown, not followed). */
static void timeline_cpu(struct profile *p, const struct profile_target *pp,
			 const struct py_sample *s, const uint32_t *frames, uint32_t n)
{
	uint8_t where = (s->flags & PY_SAMPLE_WHERE_MASK) == PY_WHERE_PYTHON ?
				1 + PROFILE_WHERE_PYTHON :
			(s->flags & PY_SAMPLE_WHERE_MASK) == PY_WHERE_NATIVE ?
				1 + PROFILE_WHERE_NATIVE :
			(s->flags & PY_SAMPLE_WHERE_MASK) == PY_WHERE_SYSTEM ?
				1 + PROFILE_WHERE_SYSTEM :
				0;
	uint8_t gil = (s->flags & PY_SAMPLE_GIL_UNKNOWN) == PY_SAMPLE_GIL_UNKNOWN ?
			      1 + PROFILE_GIL_UNKNOWN :
		      (s->flags & PY_SAMPLE_GIL_HELD)	  ? 1 + PROFILE_GIL_HELD :
		      (s->flags & PY_SAMPLE_GIL_RELEASED) ? 1 + PROFILE_GIL_RELEASED :
							    0;
	struct profile_tl_add a = { .kind = PROFILE_TL_CPU,
				    .arg = PROFILE_TL_CPU_ARG(where, gil),
				    .tid = s->tid,
				    .ktime_ns = s->ktime_ns,
				    .frames = frames,
				    .nframes = n };

	profile_target__tl_add(p, pp, &a);
}

/*
 * --opcodes: the profile's index of the name of opcode op of the process's
 * version (one the version does not have is named by its number, <N>), or
 * UINT32_MAX when out of memory.
 */
static uint32_t op_id(struct collector *c, const struct collector_target *ts, unsigned op)
{
	uint64_t key = ((ts->t.version >> 16) & 0xff) << 8 | op, *slot;
	const char *name, *base;
	char unnamed[8];
	uint32_t id;

	slot = hashmap__find(&c->op_ids, key);
	if (slot)
		return *slot;
	name = py_opcode_name(ts->t.version, op, &base);
	if (!name) {
		snprintf(unnamed, sizeof(unnamed), "<%u>", op);
		name = base = unnamed;
	}
	id = profile__opname(c->prof, name, base);
	if (id != UINT32_MAX && hashmap__set(&c->op_ids, key, id))
		return UINT32_MAX;
	return id;
}

/*
 * The opcode a CPU sample's innermost frame was running, or -1 when not
 * read. On 3.11 a frame whose pointer is on a CALL's last cache
 * unit (a call being set up or returning) ran that CALL: the unit read at
 * the pointer is cache data, whatever opcode its byte equals.
 */
static int tick_opcode(const struct collector_target *ts, uint64_t value)
{
	const char *base = NULL;

	if ((value & PY_CPU_HAS_PREV) &&
	    py_opcode_name(ts->t.version, PY_CPU_PREV_OPCODE(value), &base) && base &&
	    !strcmp(base, "CALL"))
		return (int)PY_CPU_PREV_OPCODE(value);
	return value & PY_CPU_HAS_OPCODE ? (int)PY_CPU_OPCODE(value) : -1;
}

/*
 * What the tick said beyond the stack, onto the stack just counted: the
 * exception state, and (--opcodes) the innermost frame's instruction when
 * that frame is a Python one (with --native or --kernel, machine code below
 * it was what ran).
 */
static void add_tick(struct collector *c, struct collector_target *ts, struct profile_target *pp,
		     uint64_t value, const uint32_t *frames, uint32_t n)
{
	const struct profile *p = c->prof;
	int code = tick_opcode(ts, value);
	uint32_t op;

	if (p->exc_known)
		profile_target__add_exc(pp, !(value & PY_CPU_EXC_KNOWN) ? PROFILE_EXC_UNKNOWN :
					    value & PY_CPU_EXC		? PROFILE_EXC_HANDLING :
									  PROFILE_EXC_NONE);
	/* the innermost Python frame's instruction: native frames under it are its calls */
	if (!p->opcodes || code < 0 || profile__innermost_line_of(p, frames, n) >= n)
		return;
	op = op_id(c, ts, (unsigned)code);
	if (op == UINT32_MAX || profile_target__add_op(pp, op, 1))
		c->malformed++;
}

/*
 * --mode exception: whether a sample is left out (its thread not handling
 * an exception, or not known to be), counted so in its section.
 */
static bool exc_left_out(const struct collector *c, struct profile_target *pp, uint64_t value)
{
	if (!c->prof->exc_only || (value & PY_CPU_EXC))
		return false;
	if (value & PY_CPU_EXC_KNOWN)
		pp->exc_left_out++;
	else
		pp->exc_unknown_left_out++;
	return true;
}

/* A cpu-clock sample: one more count of its stack, and of its thread. */
void collector__add_cpu(struct collector *c, struct collector_target *ts, const struct py_sample *s,
			const uint32_t *frames, uint32_t n, bool unresolved)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	uint64_t where[PROFILE_WHERE_N] = { 0 };
	struct profile_thread *th;

	if (c->on_cpu && !c->on_cpu(c->on_cpu_ctx, ts, s, frames, n))
		return;
	if (exc_left_out(c, pp, s->value))
		return;

	switch (s->flags & PY_SAMPLE_WHERE_MASK) {
	case PY_WHERE_PYTHON:
		where[PROFILE_WHERE_PYTHON] = 1;
		break;
	case PY_WHERE_NATIVE:
		where[PROFILE_WHERE_NATIVE] = 1;
		break;
	case PY_WHERE_SYSTEM:
		where[PROFILE_WHERE_SYSTEM] = 1;
		break;
	}
	if (profile_target__add_stack_where(pp, s->tid, frames, n, 1, where)) {
		c->malformed++;
		return;
	}
	add_tick(c, ts, pp, s->value, frames, n);
	if (c->prof->first_sample_ms < 0)
		c->prof->first_sample_ms = (mono_ns() - c->prof->start_ns) / 1e6;
	pp->samples++;
	pp->truncated += !!(s->flags & PY_SAMPLE_TRUNCATED);
	pp->partial += !!(s->flags & PY_SAMPLE_READ_ERROR);
	pp->unresolved += unresolved;
	th = profile_target__thread(pp, s->tid);
	if (th) {
		if (!th->samples && !th->name[0])
			collector__unnamed(c, ts, s->tid);
		th->samples++;
	}
	switch (s->flags & PY_SAMPLE_GIL_UNKNOWN) {
	case PY_SAMPLE_GIL_HELD:
		profile_target__add_gil(pp, s->tid, PROFILE_GIL_HELD);
		break;
	case PY_SAMPLE_GIL_RELEASED:
		profile_target__add_gil(pp, s->tid, PROFILE_GIL_RELEASED);
		break;
	case PY_SAMPLE_GIL_UNKNOWN:
		profile_target__add_gil(pp, s->tid, PROFILE_GIL_UNKNOWN);
		break;
	}
	if (c->prof->wall)
		offcpu_running(pp, s->tid);
	if (c->prof->timeline.on)
		timeline_cpu(c->prof, pp, s, frames, n);
}

/* A waiting sample older than this, by the clock of the records arriving, lost its stack. */
#define PENDING_MAX_AGE_NS 1000000000ULL

void native__prepare(struct session *s, unsigned native_modes)
{
	session__skel(s)->rodata->native_kernel = !!(native_modes & NATIVE_KERNEL);
	session__skel(s)->rodata->native_user = !!(native_modes & NATIVE_USER);
}

/* collector__find's lookup (collector.c uses this file, not the other way round). */
static struct collector_target *find_target(struct collector *c, int pid)
{
	size_t i;

	for (i = c->ntargets; i-- > 0;)
		if (c->targets[i].t.pid == pid)
			return &c->targets[i];
	return NULL;
}

/* pending[i]'s frames: kernel, then native and Python (innermost first). */
static uint32_t pending_frames(struct collector *c, const struct collector_pending *pe)
{
	uint32_t nk = pe->nkernel;

	/* the other frames keep their room in PYPROF_MAX_DEPTH (merged within it) */
	if (pe->nframes + nk > PYPROF_MAX_DEPTH)
		nk = PYPROF_MAX_DEPTH - pe->nframes;
	memcpy(c->scratch, pe->kernel, nk * sizeof(*c->scratch));
	memcpy(c->scratch + nk, pe->frames, pe->nframes * sizeof(*c->scratch));
	return nk + pe->nframes;
}

/* Counts pending[i] with what came of its companions, and drops it. */
static void pending_count(struct collector *c, size_t i)
{
	struct collector_pending *pe = &c->pending[i];
	struct collector_target *ts = find_target(c, pe->pid);
	struct py_sample h = { .pid = pe->pid,
			       .tid = pe->tid,
			       .ktime_ns = pe->ktime_ns,
			       .flags = pe->flags,
			       .kind = PY_KIND_CPU,
			       .value = pe->value };

	if (ts)
		collector__add_cpu(c, ts, &h, c->scratch, pending_frames(c, pe), pe->unresolved);
	c->kstack_missing += !!(pe->want & WANT_KSTACK);
	c->ustack_missing += !!(pe->want & WANT_USTACK);
	free(pe->frames);
	c->pending[i] = c->pending[--c->npending];
}

/* The companions sample s is to be followed by (enum collector_want). */
static uint8_t wanted(const struct collector *c, const struct py_sample *s)
{
	uint8_t where = s->flags & PY_SAMPLE_WHERE_MASK, want = 0;

	if ((c->native_modes & NATIVE_KERNEL) && where == PY_WHERE_SYSTEM)
		want |= WANT_KSTACK;
	if ((c->native_modes & NATIVE_USER) && (s->flags & PY_SAMPLE_USTACK))
		want |= WANT_USTACK;
	return want;
}

void collector__cpu_sample(struct collector *c, struct collector_target *ts, bool aligned,
			   const struct py_sample *s, uint32_t n, bool unresolved)
{
	uint8_t want = wanted(c, s);
	struct collector_pending *pe;
	size_t i;

	if (!want) {
		collector__add_cpu(c, ts, s, c->scratch, n, unresolved);
		return;
	}
	/* the thread's earlier sample, or a stale one, will not get its stacks now */
	for (i = c->npending; i-- > 0;)
		if (c->pending[i].tid == s->tid ||
		    s->ktime_ns > c->pending[i].ktime_ns + PENDING_MAX_AGE_NS)
			pending_count(c, i);
	if (c->npending == COLLECTOR_PENDING_MAX)
		pending_count(c, 0);
	if (vec_grow((void **)&c->pending, &c->cap_pending, c->npending + 1, sizeof(*c->pending)))
		goto now;
	pe = &c->pending[c->npending];
	pe->frames = malloc((n ? n : 1) * sizeof(*pe->frames));
	if (!pe->frames)
		goto now;
	memcpy(pe->frames, c->scratch, n * sizeof(*pe->frames));
	pe->pid = s->pid;
	pe->tid = s->tid;
	pe->ktime_ns = s->ktime_ns;
	pe->flags = s->flags;
	pe->value = s->value;
	pe->want = want;
	pe->unresolved = unresolved;
	pe->aligned = aligned;
	pe->nframes = n;
	pe->nkernel = 0;
	c->npending++;
	return;
now:
	c->kstack_missing += !!(want & WANT_KSTACK);
	c->ustack_missing += !!(want & WANT_USTACK);
	collector__add_cpu(c, ts, s, c->scratch, n, unresolved);
}

/* The waiting sample a companion record names, expecting it; or -1. */
static long pending_find(const struct collector *c, uint32_t pid, uint32_t tid, uint64_t ktime_ns,
			 uint8_t want)
{
	size_t i;

	for (i = 0; i < c->npending; i++)
		if (c->pending[i].tid == tid && c->pending[i].pid == (int)pid &&
		    c->pending[i].ktime_ns == ktime_ns && (c->pending[i].want & want))
			return (long)i;
	return -1;
}

/* A companion came: the sample is counted once it has all of them. */
static void pending_got(struct collector *c, size_t i, uint8_t want)
{
	c->pending[i].want &= ~want;
	if (!c->pending[i].want)
		pending_count(c, i);
}

/* The frame id of kernel address addr (a return address unless innermost). */
static uint32_t kernel_frame(struct collector *c, uint64_t addr, bool innermost)
{
	uint64_t *slot = hashmap__find(&c->kframes, addr ^ innermost);
	const char *name;
	char hex[24];
	uint32_t func, id;

	if (slot)
		return *slot;
	/* a return address is just past its call: the call is in the function before it */
	name = c->ksyms ? ksyms__find(c->ksyms, addr - !innermost) : NULL;
	if (!name) {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		name = hex;
	}
	func = profile__func_kind(c->prof, name, "[kernel]", 0, false, PROFILE_FUNC_KERNEL);
	if (func == UINT32_MAX)
		return UINT32_MAX;
	id = profile__frame(c->prof, func, -1);
	if (id != UINT32_MAX)
		hashmap__set(&c->kframes, addr ^ innermost, id);
	return id;
}

static void load_ksyms(struct collector *c)
{
	if (c->ksyms_tried)
		return;
	c->ksyms_tried = true;
	c->ksyms = calloc(1, sizeof(*c->ksyms));
	/* without it (or with addresses hidden) frames are named by address */
	if (c->ksyms && ksyms__load(c->ksyms))
		ksyms__free(c->ksyms);
}

void collector__kstack(struct collector *c, const void *data, size_t size)
{
	const struct py_kstack *k = data;
	struct collector_pending *pe;
	uint32_t i, id;
	long at;

	if (size < offsetof(struct py_kstack, addrs) || k->value > PY_KSTACK_MAX ||
	    size < offsetof(struct py_kstack, addrs) + k->value * sizeof(k->addrs[0])) {
		c->malformed++;
		return;
	}
	at = pending_find(c, k->pid, k->tid, k->ktime_ns, WANT_KSTACK);
	if (at < 0) {
		c->kstack_orphans++;
		return;
	}
	load_ksyms(c);
	pe = &c->pending[at];
	for (i = 0; i < k->value; i++) {
		id = kernel_frame(c, k->addrs[i], i == 0);
		if (id != UINT32_MAX)
			pe->kernel[pe->nkernel++] = id;
	}
	if (pe->nkernel)
		c->kstacks++;
	else
		c->kstack_missing++;
	pending_got(c, (size_t)at, WANT_KSTACK);
}

/*
 * The frame id of native pc in ts's process, and its enum native_pc_kind
 * (the interpreter's own code gets no frame). UINT32_MAX without memory.
 * Names are kept per pc until the process's files are reported again (a
 * library mapped or unmapped since); a pc in no file known is named by
 * address and looked up again next time, as its library may be reported by
 * then (launch mode, -a: libraries imported after the first unwind).
 */
static uint32_t native_frame(struct collector *c, struct collector_target *ts, uint64_t pc,
			     uint8_t *kind)
{
	unsigned long gen = native_unwinder__generation(ts->unwinder);
	uint64_t *slot;
	char name[256], file[PATH_MAX];
	uint32_t func, id = UINT32_MAX;
	int known;

	if (ts->native_generation != gen) {
		hashmap__free(&ts->native_frames);
		ts->native_generation = gen;
	}
	slot = hashmap__find(&ts->native_frames, pc);
	if (slot) {
		*kind = *slot >> 32;
		return (uint32_t)*slot;
	}
	known = native_unwinder__name(ts->unwinder, pc, name, sizeof(name), file, sizeof(file));
	*kind = NATIVE_PC_OTHER;
	if (native_unwinder__in_interp(ts->unwinder, pc))
		*kind = native_merge_is_eval(name) ? NATIVE_PC_EVAL : NATIVE_PC_INTERP;
	if (*kind == NATIVE_PC_OTHER) {
		func = profile__func_kind(c->prof, name, file, 0, false, PROFILE_FUNC_NATIVE);
		if (func == UINT32_MAX)
			return UINT32_MAX;
		id = profile__frame(c->prof, func, -1);
		if (id == UINT32_MAX)
			return UINT32_MAX;
	}
	if (known == 0)
		hashmap__set(&ts->native_frames, pc, id | (uint64_t)*kind << 32);
	return id;
}

/*
 * pe's frames become the merged stack of its Python frames and the native
 * frames of pcs[0..n) (stack pointers sps): counted as merged, partial or
 * unplaced.
 */
static enum native_merge_result merge_native(struct collector *c, struct collector_target *ts,
					     struct collector_pending *pe,
					     const struct py_ustack *u, const uint64_t *pcs,
					     const uint64_t *sps, int n)
{
	uint32_t ids[NATIVE_MAX_FRAMES_ALL], *out;
	uint8_t kinds[NATIVE_MAX_FRAMES_ALL];
	uint64_t entries[PY_ENTRY_WORDS], shims[PY_SHIM_MAX];
	struct native_merge_in in = {
		.native = ids,
		.kind = kinds,
		.py = pe->frames,
		.npy = pe->nframes,
		.entries = pe->aligned ? entries : NULL,
		.nentry_bits = PYPROF_MAX_DEPTH,
		.py_cut = pe->flags & (PY_SAMPLE_TRUNCATED | PY_SAMPLE_READ_ERROR),
	};
	enum native_merge_result res;
	uint32_t room;
	int i;

	memcpy(entries, u->entry_mask, sizeof(entries));
	memcpy(shims, u->shim_addr, sizeof(shims));
	for (i = 0; i < n; i++)
		ids[i] = native_frame(c, ts, pcs[i], &kinds[i]);
	if (u->nshims)
		native_merge_eval_by_shims(kinds, sps, (uint32_t)n, u->sp + u->value, shims,
					   u->nshims < PY_SHIM_MAX ? u->nshims : PY_SHIM_MAX);
	/* a pc that could not be named is left out, as before */
	for (i = 0; i < n; i++)
		if (ids[i] != UINT32_MAX || kinds[i] != NATIVE_PC_OTHER) {
			ids[in.nnative] = ids[i];
			kinds[in.nnative++] = kinds[i];
		}
	/* the merged stack holds at most every Python frame and every other native one */
	room = pe->nframes + in.nnative < PYPROF_MAX_DEPTH ? pe->nframes + in.nnative :
							     PYPROF_MAX_DEPTH;
	out = malloc((room ? room : 1) * sizeof(*out));
	if (!out) {
		c->ustack_missing++;
		return NATIVE_BELOW;
	}
	pe->nframes = native_merge(&in, out, room, &res);
	free(pe->frames);
	pe->frames = out;
	c->ustacks++;
	c->ustack_partial += res == NATIVE_PARTIAL;
	c->ustack_unplaced += res == NATIVE_UNPLACED;
	return res;
}

/*
 * Why a stack was cut, counted per process (for -v) when it matters: the
 * unwind refused by a bound, or stopped before the outermost Python frame.
 */
static void count_stop(struct collector *c, struct collector_target *ts, bool partial)
{
	uint64_t pc;
	enum native_stop why = native_unwinder__stop(ts->unwinder, &pc);
	bool refused = why == NATIVE_STOP_REFUSED || why == NATIVE_STOP_BUDGET ||
		       why == NATIVE_STOP_PROCESS;

	c->ustack_refused += refused;
	if (refused || partial) {
		ts->native_stops[why]++;
		ts->native_stop_pc[why] = pc;
	}
}

void collector__ustack(struct collector *c, const void *data, size_t size)
{
	const struct py_ustack *u = data;
	const struct native_regs regs = { u->ip,  u->sp,  u->bp,  u->bx,	  u->r12,
					  u->r13, u->r14, u->r15, NATIVE_REGS_ALL };
	struct collector_target *ts;
	uint64_t pcs[NATIVE_MAX_FRAMES_ALL], sps[NATIVE_MAX_FRAMES_ALL];
	uint64_t refused_before = c->ustack_refused;
	int n;
	long at;

	if (size < offsetof(struct py_ustack, stack) || u->value > PY_USTACK_BYTES ||
	    size < offsetof(struct py_ustack, stack) + u->value) {
		c->malformed++;
		return;
	}
	at = pending_find(c, u->pid, u->tid, u->ktime_ns, WANT_USTACK);
	ts = at < 0 ? NULL : find_target(c, u->pid);
	if (!ts) {
		c->ustack_orphans++;
		return;
	}
	if (!ts->unwinder)
		ts->unwinder = native_unwinder__new(ts->t.pid, ts->t.text_start, ts->t.text_end);
	n = ts->unwinder ? native_unwinder__unwind_all(ts->unwinder, u->tid, &regs, u->stack,
						       u->value, pcs, sps, NATIVE_MAX_FRAMES_ALL) :
			   0;
	if (n > 0)
		count_stop(c, ts,
			   merge_native(c, ts, &c->pending[at], u, pcs, sps, n) == NATIVE_PARTIAL);
	else if (ts->unwinder)
		count_stop(c, ts, false);
	if (n <= 0)
		c->ustack_missing += !ts->unwinder || c->ustack_refused == refused_before;
	pending_got(c, (size_t)at, WANT_USTACK);
}

void collector__flush_pending(struct collector *c)
{
	while (c->npending)
		pending_count(c, c->npending - 1);
	c->prof->kernel_mode = c->native_modes & NATIVE_KERNEL;
	c->prof->kstacks = c->kstacks;
	c->prof->kstack_missing = c->kstack_missing;
	c->prof->native_mode = c->native_modes & NATIVE_USER;
	c->prof->ustacks = c->ustacks;
	c->prof->ustack_partial = c->ustack_partial;
	c->prof->ustack_unplaced = c->ustack_unplaced;
	c->prof->ustack_missing = c->ustack_missing;
	c->prof->ustack_refused = c->ustack_refused;
}

/* The place of pc, cleaned for a log line: "name (file)". */
static void stop_place(struct collector_target *ts, uint64_t pc, char *out, size_t len)
{
	char name[256], file[PATH_MAX];

	native_unwinder__name(ts->unwinder, pc, name, sizeof(name), file, sizeof(file));
	snprintf(out, len, "%s (%s)", name, file);
	text_sanitize(out);
}

/* -v: why its stacks were cut short, so that a test failing on partial stacks says which it was. */
static void log_stops(struct collector_target *ts)
{
	static const char *const what[NATIVE_STOP_N] = {
		[NATIVE_STOP_END] = "at the end of the native stack",
		[NATIVE_STOP_COPY] = "at the end of the stack copy",
		[NATIVE_STOP_NO_CFI] = "at a pc without call frame information",
		[NATIVE_STOP_NO_FILE] = "at a pc in no mapped file",
		[NATIVE_STOP_REFUSED] = "in a file not given to libdw",
		[NATIVE_STOP_BUDGET] = "over the stack's unwind time",
		[NATIVE_STOP_PROCESS] = "over the process's unwind time (not unwound)",
	};
	char place[PATH_MAX + 300];
	int i;

	for (i = 0; i < NATIVE_STOP_N; i++) {
		if (!ts->native_stops[i])
			continue;
		stop_place(ts, ts->native_stop_pc[i], place, sizeof(place));
		log_msg(LOG_INFO, "pid %d: %llu native stacks cut %s (the last at %s)\n", ts->t.pid,
			(unsigned long long)ts->native_stops[i], what[i], place);
	}
}

void collector_target__free_native(struct collector_target *ts)
{
	unsigned long refused = ts->unwinder ? native_unwinder__refused(ts->unwinder) : 0;

	if (ts->unwinder)
		log_stops(ts);
	if (refused)
		log_msg(LOG_WARN,
			"pid %d: %lu of its executable files were not given to libdw (compressed sections expanding too far, unwind tables it would run unbounded, or too large to read whole): their frames are named library+0xoffset\n",
			ts->t.pid, refused);
	native_unwinder__free(ts->unwinder);
	ts->unwinder = NULL;
	hashmap__free(&ts->native_frames);
}

void collector__free_native(struct collector *c)
{
	size_t i;

	for (i = 0; i < c->ntargets; i++)
		collector_target__free_native(&c->targets[i]);
	while (c->npending)
		free(c->pending[--c->npending].frames);
	free(c->pending);
	hashmap__free(&c->kframes);
	if (c->ksyms)
		ksyms__free(c->ksyms);
	free(c->ksyms);
}
