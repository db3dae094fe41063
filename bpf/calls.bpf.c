// SPDX-License-Identifier: GPL-2.0-only
/*
 * USDT (issue 7): --calls. CPython's own probes (provider "python"), attached
 * per process by src/session/usdt.c with libbpf's USDT support: the kernel
 * raises each probe's semaphore while a link exists and lowers it when the
 * link's fd is closed, including when pybpfprof is killed, so the target
 * returns to full speed on its own.
 *
 * --calls: function__entry/return keep a shadow stack per thread and add each
 * finished call to its (caller, callee) edge and to the callee's latency
 * histogram, all in kernel maps read by userspace at the end. Functions are
 * keyed by code object (read from the thread's current frame, as the sampler
 * does), so they are named exactly like sampled frames. Matching is by
 * position: a return pops the top entry; a return on an empty stack belongs
 * to a call that began before the probes were attached and is not counted.
 */
#include "emit_stack.h"
#include <bpf/usdt.bpf.h>

struct call_frame {
	struct py_call_func fn;
	__u64 name; /* funcname argument at entry: checked at the return */
	__u64 start_ns;
	__u64 child_ns;	 /* time spent in callees that returned */
	__u32 recursive; /* the function was already active on this thread */
	__u32 pad;
};

struct call_stack {
	__u32 pid;
	__u32 depth; /* may exceed PYPROF_CALL_DEPTH: deeper frames are not kept */
	struct call_frame f[PYPROF_CALL_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024); /* threads traced at once: 6 MB */
	__type(key, __u32);	   /* tid */
	__type(value, struct call_stack);
} call_stacks SEC(".maps");

/* (tid, function) -> activations in progress, for counting recursion's time once. */
struct active_key {
	struct py_call_func fn;
	__u32 tid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct active_key);
	__type(value, __u32);
} call_active SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_call_edge_key);
	__type(value, struct py_call_stats);
} call_edges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_call_func);
	__type(value, struct py_call_hist);
} call_hist SEC(".maps");

/* Zeroed templates for new map entries (too big for the BPF stack). */
struct call_zero {
	struct call_stack stack;
	struct py_call_hist hist;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct call_zero);
} call_zero_map SEC(".maps");

/* PyCodeObject.co_flags on 3.11-3.15 (after the var-object header and three pointers). */
#define CODE_FLAGS_311 48
#define CO_GENERATOR_LIKE (0x20 | 0x80 | 0x200) /* generator, coroutine, async generator */

/*
 * What --calls needs of a code object, remembered per (process, address) so
 * a call costs one frame read, not three reads of the code object: its
 * fingerprint and flags, valid while the probe's funcname argument (a
 * pointer to the name's text, owned by the code object) stays the same.
 */
struct code_memo_key {
	__u64 code;
	__u32 pid;
	__u32 pad;
};

struct code_memo {
	__u64 name;
	__u32 fingerprint;
	__s32 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct code_memo_key);
	__type(value, struct code_memo);
} call_codes SEC(".maps");

/* The code object of frame f, with its remembered identity (see current_code). */
static __always_inline int code_of_frame(const struct py_offsets *off, struct scratch *s, __u64 f,
					 __u32 pid, __u64 name, struct py_call_func *fn,
					 bool *fresh_code)
{
	__u32 size = off->frame_read_size, fp2;
	bool module;
	struct code_memo_key mk = {};
	struct code_memo *m, fresh = {};
	__u8 owner = 0xff;
	__u64 code = 0;
	int i;

	if (size > PYPROF_FRAME_READ)
		size = PYPROF_FRAME_READ;
	/* skip at most a couple of C-stack shim frames (3.12+) */
	for (i = 0; i < 3 && f; i++) {
		if (bpf_probe_read_user(s->frame, size, (const void *)f))
			return -1;
		code = load_u64(s->frame, off->frame_code, PYPROF_FRAME_READ) &
		       ~(__u64)off->code_tag_mask;
		if (off->frame_owner == PYPROF_NO_OFFSET)
			break;
		owner = frame_u8(s->frame, off->frame_owner);
		if (owner < off->owner_skip_min)
			break;
		code = 0;
		f = load_u64(s->frame, off->frame_previous, PYPROF_FRAME_READ);
	}
	if (!code)
		return -1;
	mk.code = code;
	mk.pid = pid;
	m = bpf_map_lookup_elem(&call_codes, &mk);
	if (!m || m->name != name) {
		/*
		 * Twice, and only kept when both agree: a read of the target that
		 * fails once (a page briefly not present) would otherwise give this
		 * code object a fingerprint userspace can never match.
		 */
		if (code_fingerprint(off, s, code, &fresh.fingerprint, &module) ||
		    code_fingerprint(off, s, code, &fp2, &module) || fp2 != fresh.fingerprint)
			return -1;
		if (off->frame_owner != PYPROF_NO_OFFSET &&
		    bpf_probe_read_user(&fresh.flags, sizeof(fresh.flags),
					(const void *)(code + CODE_FLAGS_311)))
			return -1;
		fresh.name = name;
		bpf_map_update_elem(&call_codes, &mk, &fresh, BPF_ANY);
		m = &fresh;
		*fresh_code = true;
	}
	/* owner 0 is FRAME_OWNED_BY_THREAD: a generator's frame being created */
	if (owner == 0 && (m->flags & CO_GENERATOR_LIKE))
		return 1;
	fn->code = code;
	fn->fingerprint = m->fingerprint;
	fn->pid = pid;
	return 0;
}

/*
 * The code object of the thread's current frame: at function__entry that is
 * the frame just entered (the probe fires after the frame is made current).
 * *fresh_code is set when the code object was not remembered yet (only then
 * can it be a function seen for the first time).
 * Returns 1 for the entry that 3.11+ fires when a generator or coroutine is
 * created: its frame still belongs to the thread, not yet to the generator,
 * and it ends in RETURN_GENERATOR, which fires no return. cProfile does not
 * count that one either (it counts the first resume and every later one).
 */
static __always_inline int current_code(struct py_target *proc, __u32 pid, __u32 tid, __u64 name,
					struct py_call_func *fn, bool *fresh_code)
{
	const struct py_offsets *off = &proc->off;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase), tstate, f;
	__u32 *level;
	struct scratch *s;
	int ret;

	tstate = find_tstate(proc, pid, tid, fsbase);
	if (!tstate)
		return -1;
	f = current_frame(off, tstate);
	s = scratch_get(&level);
	if (!s)
		return -1;
	ret = code_of_frame(off, s, f, pid, name, fn, fresh_code);
	scratch_put(level);
	return ret;
}

static __always_inline void active_add(struct py_call_func *fn, __u32 tid, int delta, __u32 *before)
{
	struct active_key k = { .fn = *fn, .tid = tid };
	__u32 *n = bpf_map_lookup_elem(&call_active, &k), one = 1;

	*before = n ? *n : 0;
	if (delta > 0) {
		if (n)
			*n += 1;
		else
			bpf_map_update_elem(&call_active, &k, &one, BPF_ANY);
	} else if (n) {
		if (*n <= 1)
			bpf_map_delete_elem(&call_active, &k);
		else
			*n -= 1;
	}
}

SEC("usdt")
int BPF_USDT(on_func_entry, void *filename, void *funcname, int lineno)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, before, d;
	struct call_zero *z;
	struct call_stack *st;
	struct call_frame *cf;
	struct py_call_func fn = {};
	struct py_target *proc;
	bool fresh_code = false;
	int err;

	proc = bpf_map_lookup_elem(&targets, &pid);
	if (!proc)
		return 0;
	st = bpf_map_lookup_elem(&call_stacks, &tid);
	if (!st || st->pid != pid) {
		z = bpf_map_lookup_elem(&call_zero_map, &zero);
		if (!z)
			return 0;
		z->stack.pid = pid;
		z->stack.depth = 0;
		bpf_map_update_elem(&call_stacks, &tid, &z->stack, BPF_ANY);
		st = bpf_map_lookup_elem(&call_stacks, &tid);
		if (!st)
			return 0;
	}
	d = st->depth;
	if (d >= PYPROF_CALL_DEPTH) {
		st->depth = d + 1;
		count(PYPROF_CNT_CALLS_TOO_DEEP);
		return 0;
	}
	err = current_code(proc, pid, tid, (__u64)funcname, &fn, &fresh_code);
	if (err > 0)
		return 0; /* a generator being created: no return will follow */
	if (err) {
		/* still pushed, so its return pops the right entry; not counted */
		count(PYPROF_CNT_CALLS_NO_CODE);
		fn.code = 0;
	} else if (fresh_code && !bpf_map_lookup_elem(&call_hist, &fn)) {
		/* first call of this function: name it now, while the code object exists */
		z = bpf_map_lookup_elem(&call_zero_map, &zero);
		if (z && bpf_map_update_elem(&call_hist, &fn, &z->hist, BPF_NOEXIST) == 0)
			emit_stack(PY_KIND_CALL_NEW, 0);
	}
	before = 0;
	if (fn.code)
		active_add(&fn, tid, 1, &before);
	cf = &st->f[d & (PYPROF_CALL_DEPTH - 1)];
	cf->fn = fn;
	cf->name = (__u64)funcname;
	cf->child_ns = 0;
	cf->recursive = before > 0;
	/* the timestamp last, so the probe's own work above is not charged to the call */
	cf->start_ns = bpf_ktime_get_ns();
	(void)now;
	st->depth = d + 1;
	return 0;
}

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	// clang-format off
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	// clang-format on
	return r < PYPROF_HIST_BUCKETS ? r : PYPROF_HIST_BUCKETS - 1;
}

/* Entries searched below the top for a return that does not match it. */
#define MISMATCH_SEARCH 8

/*
 * A return whose funcname is not the entry on top (st->f[d]): a probe hit was
 * lost (the kernel skips a program while another runs on the CPU). Looks a
 * few entries down; if this function is there, the entries above it never
 * returned: they are dropped uncounted, and its distance below d is returned.
 * If not (0), its entry was the one lost: the caller leaves the stack alone
 * and does not count this return.
 */
static __always_inline __u32 call_resync(struct call_stack *st, __u32 d, __u64 name, __u32 tid)
{
	__u32 i, found = 0, before;

	count(PYPROF_CNT_CALLS_MISMATCH);
	for (i = 1; i <= MISMATCH_SEARCH && i <= d; i++) {
		if (st->f[(d - i) & (PYPROF_CALL_DEPTH - 1)].name == name) {
			found = i;
			break;
		}
	}
	if (!found)
		return 0;
	for (i = 0; i < MISMATCH_SEARCH && i < found; i++) {
		struct call_frame *gone = &st->f[(d - i) & (PYPROF_CALL_DEPTH - 1)];

		if (gone->fn.code)
			active_add(&gone->fn, tid, -1, &before);
	}
	return found;
}

/* Adds one finished call (cf, dur and excl ns) to its edge ek and to its latency histogram. */
static __always_inline void call_edge_add(struct py_call_edge_key *ek, struct call_frame *cf,
					  __u64 dur, __u64 excl)
{
	struct py_call_stats *cs, fresh = {};
	struct py_call_hist *h;

	cs = bpf_map_lookup_elem(&call_edges, ek);
	if (!cs) {
		if (bpf_map_update_elem(&call_edges, ek, &fresh, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&call_edges, ek)) {
			count(PYPROF_CNT_CALLS_MAP_FULL);
			return;
		}
		cs = bpf_map_lookup_elem(&call_edges, ek);
		if (!cs)
			return;
	}
	/* one thread owns a stack, but edges are shared between threads: atomics */
	__sync_fetch_and_add(&cs->calls, 1);
	if (!cf->recursive)
		__sync_fetch_and_add(&cs->inclusive_ns, dur);
	__sync_fetch_and_add(&cs->exclusive_ns, excl);
	if (dur > cs->max_ns)
		cs->max_ns = dur; /* a lost race only loses a tie-break between two maxima */
	h = bpf_map_lookup_elem(&call_hist, &cf->fn);
	if (h) {
		__u32 b = log2_bucket(dur);

		__sync_fetch_and_add(&h->buckets[b & 63], 1);
	}
}

SEC("usdt")
int BPF_USDT(on_func_return, void *filename, void *funcname, int lineno)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), dur, excl;
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid, d, before, found;
	struct py_call_edge_key ek = {};
	struct call_stack *st;
	struct call_frame *cf;

	st = bpf_map_lookup_elem(&call_stacks, &tid);
	if (!st || st->pid != pid || !st->depth) {
		if (bpf_map_lookup_elem(&targets, &pid))
			count(PYPROF_CNT_CALLS_UNMATCHED);
		return 0;
	}
	d = st->depth - 1;
	st->depth = d;
	if (d >= PYPROF_CALL_DEPTH)
		return 0; /* counted as too deep at its entry */
	cf = &st->f[d & (PYPROF_CALL_DEPTH - 1)];
	if (cf->name != (__u64)funcname) {
		found = call_resync(st, d, (__u64)funcname, tid);
		if (!found) {
			st->depth = d + 1;
			return 0;
		}
		d -= found;
		st->depth = d;
		cf = &st->f[d & (PYPROF_CALL_DEPTH - 1)];
	}
	dur = now - cf->start_ns;
	excl = dur > cf->child_ns ? dur - cf->child_ns : 0;
	if (d > 0) {
		struct call_frame *parent = &st->f[(d - 1) & (PYPROF_CALL_DEPTH - 1)];

		parent->child_ns += dur;
		ek.caller = parent->fn;
	}
	if (!cf->fn.code)
		return 0;
	active_add(&cf->fn, tid, -1, &before);
	ek.callee = cf->fn;
	call_edge_add(&ek, cf, dur, excl);
	return 0;
}

/*
 * Python 3.11 fires function__entry only on its tracing path, which the
 * `line` probe's semaphore turns on; attached only with --calls-py311-line,
 * this program does nothing itself: the raised semaphore is the point.
 */
SEC("usdt")
int on_line(struct pt_regs *ctx)
{
	return 0;
}
