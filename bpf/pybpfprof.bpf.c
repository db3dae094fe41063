// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampler: a perf_event program on the cpu-clock software event, one event
 * per CPU. At each tick it keeps only threads of profiled processes (pid in
 * `targets`), finds the thread's PyThreadState, walks the Python frame chain and
 * streams (code object, bytecode offset) pairs to userspace through a ring
 * buffer. It reads target memory only, with bounded loops, and never writes it.
 *
 * Why stream instead of counting stacks in a kernel hash: a sample is at most
 * 32 + 16 * depth bytes, and even 999 Hz on every CPU is a few hundred KB/s,
 * which userspace folds as it arrives. Streaming also lets userspace resolve
 * code objects while the process is still alive (short-lived processes) and
 * keeps timestamps for timelines. The cost of the program itself is measured
 * in bench/overhead.sh (bpftool prog show run_time_ns / run_cnt).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "bpf_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; frozen afterwards, so the verifier sees constants. */
const volatile __u32 max_depth = PYPROF_DEFAULT_DEPTH;

/* Bytes of the sample ring buffer; the reader is woken early when an eighth is used. */
#define RINGBUF_SIZE (8 << 20)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct py_target);
} targets SEC(".maps");

/* tid -> PyThreadState address, checked again at every use (thread_id == fsbase). */
struct thread_entry {
	__u64 tstate;		/* 0: none found at checked_ns */
	__u64 checked_ns;
	__u32 pid;
	__u32 pad;
};

/*
 * How long "this thread has no PyThreadState" is believed before the lists
 * are walked again: threads that run only C code (a BLAS pool, a C library's
 * workers) would otherwise cost a walk of every Python thread at each tick.
 */
#define NO_TSTATE_RECHECK_NS 10000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct thread_entry);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_SIZE);
} samples SEC(".maps");

/* Innermost code objects already sent (address ^ fingerprint): see the wakeup rule. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u8);
} seen_code SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PYPROF_CNT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The sample being built and the objects being decoded: too big for the 512-byte stack. */
struct scratch {
	struct py_sample sample;
	__u8 frame[PYPROF_FRAME_READ];
	__u8 code[PY_CODE_ID_READ];
	__u8 str[PY_STR_READ];
};

/*
 * Two per CPU, taken in turn: the cpu-clock sampler can interrupt an event
 * program (a USDT probe, a tracepoint) on the same CPU while that program is
 * using its scratch; measured here, a shared one gave the interrupted
 * program the sampler's last frame. Interrupts nest strictly, so a per-CPU
 * level counter taken and given back around each use is enough.
 */
#define SCRATCH_LEVELS 2

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scratch_level SEC(".maps");

/* This activation's scratch, or NULL (nested too deep); give it back with scratch_put. */
static __always_inline struct scratch *scratch_get(__u32 **level)
{
	__u32 zero = 0, idx, *l = bpf_map_lookup_elem(&scratch_level, &zero);
	struct scratch *s;

	if (!l)
		return NULL;
	idx = *l;
	if (idx >= SCRATCH_LEVELS)
		return NULL;
	s = bpf_map_lookup_elem(&scratch_map, &idx);
	if (!s)
		return NULL;
	*l = idx + 1;
	*level = l;
	return s;
}

static __always_inline void scratch_put(__u32 *level)
{
	if (*level)
		*level -= 1;
}

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);

	if (v)
		*v += 1;
}

/* A stack counter, in the bank of the sample kind's family. */
static __always_inline void count_kind(__u8 kind, __u32 which)
{
	count(PYPROF_CNT_INDEX(kind, which));
}

/* Reads a pointer-sized word of the target; 0 on failure (never a valid object). */
static __always_inline __u64 read_word(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/*
 * Fields at offsets that come from a map: mask to the (power-of-two) buffer
 * size, then bounds-check, so the verifier can prove the access.
 */
static __always_inline __u64 load_u64(const __u8 *buf, __u32 off, __u32 size)
{
	off &= size - 1;
	if (off > size - sizeof(__u64))
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u8 frame_u8(const __u8 *buf, __u32 off)
{
	off &= PYPROF_FRAME_READ - 1;
	return buf[off];
}

/*
 * Fingerprint of the code object at code (see py_code_fingerprint): one read
 * for its pointers and first line, one for its qualname's text. Mirrors
 * code_identity() in src/code_cache.c. Returns -1 if the code object cannot be read.
 */
static __always_inline int code_fingerprint(const struct py_offsets *off, struct scratch *s,
					    __u64 code, __u32 *fp)
{
	__u64 ptrs[4], text[PY_NAME_TEXT / 8] = {}, len;
	__u32 size = off->code_id_size, start = off->code_id_start, text_len = 0, state;
	/* co_firstlineno is an int: the low half of the little-endian word there */
	__u32 firstline_at = off->code_firstlineno - start;

	if (size > PY_CODE_ID_READ)
		size = PY_CODE_ID_READ;
	if (bpf_probe_read_user(s->code, size, (const void *)(code + start)))
		return -1;
	ptrs[0] = load_u64(s->code, off->code_filename - start, PY_CODE_ID_READ);
	ptrs[1] = load_u64(s->code, off->code_name - start, PY_CODE_ID_READ);
	ptrs[2] = load_u64(s->code, off->code_qualname - start, PY_CODE_ID_READ);
	ptrs[3] = load_u64(s->code, off->code_linetable - start, PY_CODE_ID_READ);
	if (!bpf_probe_read_user(s->str, PY_STR_READ, (const void *)(ptrs[2] + off->str_length))) {
		len = load_u64(s->str, 0, PY_STR_READ);
		state = (__u32)load_u64(s->str, off->str_state - off->str_length, PY_STR_READ);
		/* only compact ASCII text sits at a fixed place (bits: ascii 6, compact 5) */
		if ((state & 0x60) == 0x60) {
			__u32 t = off->str_ascii_data - off->str_length;

			text[0] = load_u64(s->str, t, PY_STR_READ);
			text[1] = load_u64(s->str, t + 8, PY_STR_READ);
			text[2] = load_u64(s->str, t + 16, PY_STR_READ);
			text[3] = load_u64(s->str, t + 24, PY_STR_READ);
			text_len = len < PY_NAME_TEXT ? len : PY_NAME_TEXT;
		}
	}
	*fp = py_code_fingerprint(ptrs, (__s32)load_u64(s->code, firstline_at, PY_CODE_ID_READ),
				  text, text_len);
	return 0;
}

/* State of one thread-list scan, carried across bpf_loop iterations. */
struct scan_ctx {
	__u64 interp, t, fsbase, found;
	const struct py_offsets *off;
};

static long scan_step(__u32 i, void *data)
{
	struct scan_ctx *c = data;
	const struct py_offsets *off = c->off;

	if (!c->interp)
		return 1;
	if (!c->t) {
		/* end of this interpreter's threads: on to the next interpreter */
		c->interp = read_word(c->interp + off->interp_next);
		c->t = c->interp ? read_word(c->interp + off->interp_threads_head) : 0;
		return 0;
	}
	if (read_word(c->t + off->tstate_thread_id) == c->fsbase) {
		c->found = c->t;
		return 1;
	}
	c->t = read_word(c->t + off->tstate_next);
	return 0;
}

/*
 * Finds the PyThreadState whose thread_id equals this thread's fsbase
 * (pthread_self() on glibc and musl, x86_64), walking every interpreter's
 * thread list. Works the same on every CPython version and needs no libc
 * internals; the result is cached per tid and re-checked at each use.
 */
static __always_inline __u64 find_tstate(const struct py_target *proc, __u32 pid, __u32 tid,
					 __u64 fsbase)
{
	const struct py_offsets *off = &proc->off;
	struct thread_entry *cached, fresh = {};
	struct scan_ctx c = { .fsbase = fsbase, .off = off };
	__u64 now = bpf_ktime_get_ns();

	cached = bpf_map_lookup_elem(&threads, &tid);
	if (cached && cached->pid == pid) {
		if (cached->tstate && read_word(cached->tstate + off->tstate_thread_id) == fsbase)
			return cached->tstate;
		if (!cached->tstate && now - cached->checked_ns < NO_TSTATE_RECHECK_NS)
			return 0;
	}

	count(PYPROF_CNT_TSTATE_SCAN);
	c.interp = read_word(proc->runtime_addr + off->runtime_interp_head);
	c.t = c.interp ? read_word(c.interp + off->interp_threads_head) : 0;
	bpf_loop(PYPROF_MAX_THREADS + PYPROF_MAX_INTERPS, scan_step, &c, 0);
	fresh.tstate = c.found;
	fresh.checked_ns = now;
	fresh.pid = pid;
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	return c.found;
}

/* The innermost frame of a thread state, or 0 when no Python code is running. */
static __always_inline __u64 current_frame(const struct py_offsets *off, __u64 tstate)
{
	__u64 f = read_word(tstate + off->tstate_frame);

	if (f && off->cframe_current_frame != PYPROF_NO_OFFSET)
		f = read_word(f + off->cframe_current_frame);
	return f;
}

/* State of one frame walk, carried across bpf_loop iterations. */
struct walk_ctx {
	const struct py_offsets *off;
	struct scratch *s;
	__u64 f;		/* next frame to read */
	__u32 n;		/* frames recorded */
	__u32 read_size;
};

/*
 * One frame: record (code, position, fingerprint) and move to the caller.
 * bpf_loop verifies this body once, whatever the depth limit.
 */
static long walk_step(__u32 i, void *data)
{
	struct walk_ctx *w = data;
	const struct py_offsets *off = w->off;
	struct scratch *s = w->s;
	struct py_frame *out;
	__u32 size, fp;
	__u64 code;
	__s64 pos;

	if (!w->f)
		return 1;
	if (w->n >= max_depth || w->n >= PYPROF_MAX_DEPTH) {
		s->sample.flags |= PY_SAMPLE_TRUNCATED;
		return 1;
	}
	size = w->read_size;
	if (size > PYPROF_FRAME_READ)
		size = PYPROF_FRAME_READ;
	if (bpf_probe_read_user(s->frame, size, (const void *)w->f)) {
		s->sample.flags |= PY_SAMPLE_READ_ERROR;
		return 1;
	}
	code = load_u64(s->frame, off->frame_code, PYPROF_FRAME_READ) &
	       ~(__u64)off->code_tag_mask;
	w->f = load_u64(s->frame, off->frame_previous, PYPROF_FRAME_READ);
	/* C-stack entry frames (3.12+) carry no Python code of their own. */
	if (off->frame_owner != PYPROF_NO_OFFSET &&
	    frame_u8(s->frame, off->frame_owner) >= off->owner_skip_min)
		return 0;
	if (!code)
		return 0;
	if (off->instr_kind == PY_INSTR_PTR)
		pos = (__s64)(load_u64(s->frame, off->frame_instr, PYPROF_FRAME_READ) -
			      (code + off->code_adaptive));
	else
		pos = (__s32)load_u64(s->frame, off->frame_instr, PYPROF_FRAME_READ);
	if (code_fingerprint(off, s, code, &fp)) {
		s->sample.flags |= PY_SAMPLE_READ_ERROR;
		return 1;
	}
	out = &s->sample.frames[w->n & (PYPROF_MAX_DEPTH - 1)];
	out->code = code;
	out->instr = pos < -0x7fffffff ? -0x7fffffff : pos > 0x7fffffff ? 0x7fffffff : pos;
	out->fingerprint = fp;
	w->n++;
	return 0;
}

/*
 * Walks the current thread's Python stack and sends it as one record of the
 * given kind and value. Every program that wants a Python stack (the CPU
 * sampler, and any event program) calls this; threads of processes not in
 * `targets` cost one hash lookup. Returns 0 when a record was sent, 1 when the
 * thread of a profiled process had no Python stack, -1 otherwise.
 */
static __always_inline int emit_stack_in(struct scratch *s, __u8 kind, __u64 value, __u8 flags)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct walk_ctx w = {};
	struct task_struct *task;
	struct py_target *proc;
	__u64 tstate, fsbase, size, wake, seen_key;
	__u8 one = 1;

	proc = bpf_map_lookup_elem(&targets, &pid);
	if (!proc)
		return -1;
	count_kind(kind, PYPROF_CNT_EVENTS);

	task = (struct task_struct *)bpf_get_current_task();
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	tstate = find_tstate(proc, pid, tid, fsbase);
	if (!tstate) {
		count_kind(kind, PYPROF_CNT_NO_TSTATE);
		return 1;
	}
	w.f = current_frame(&proc->off, tstate);
	if (!w.f) {
		count_kind(kind, PYPROF_CNT_NO_FRAME);
		return 1;
	}
	s->sample.pid = pid;
	s->sample.tid = tid;
	s->sample.ktime_ns = bpf_ktime_get_ns();
	s->sample.cpu = bpf_get_smp_processor_id();
	s->sample.flags = flags;
	s->sample.kind = kind;
	s->sample.value = value;
	w.off = &proc->off;
	w.s = s;
	w.read_size = proc->off.frame_read_size;

	/* Room for shim frames on top of the depth limit; running out also means truncated. */
	bpf_loop(PYPROF_MAX_DEPTH + 64, walk_step, &w, 0);
	if (w.f && !(s->sample.flags & (PY_SAMPLE_TRUNCATED | PY_SAMPLE_READ_ERROR)))
		s->sample.flags |= PY_SAMPLE_TRUNCATED;
	if (s->sample.flags & PY_SAMPLE_TRUNCATED)
		count_kind(kind, PYPROF_CNT_TRUNCATED);
	if (s->sample.flags & PY_SAMPLE_READ_ERROR)
		count_kind(kind, PYPROF_CNT_READ_ERROR);
	if (!w.n) {
		/* A thread state with a frame pointer that could not be read is not frameless. */
		count_kind(kind, s->sample.flags & PY_SAMPLE_READ_ERROR ? PYPROF_CNT_UNREADABLE :
									  PYPROF_CNT_NO_FRAME);
		return 1;
	}
	s->sample.nframes = w.n;

	size = PY_SAMPLE_HEADER_SIZE + (__u64)w.n * sizeof(struct py_frame);
	if (size > sizeof(struct py_sample))
		size = sizeof(struct py_sample);
	/*
	 * A wakeup per sample cost the reader ~1% of a core at 999 Hz, so most
	 * samples wait for its 50 ms poll. But a code object seen for the first
	 * time may be freed soon (generated code, a process about to exit): wake
	 * the reader now so it reads the object while it still exists. New code
	 * shows up innermost first, so checking the innermost frame is enough.
	 */
	seen_key = s->sample.frames[0].code ^ ((__u64)s->sample.frames[0].fingerprint << 47);
	if (!bpf_map_lookup_elem(&seen_code, &seen_key)) {
		bpf_map_update_elem(&seen_code, &seen_key, &one, BPF_ANY);
		wake = BPF_RB_FORCE_WAKEUP;
	} else {
		wake = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > RINGBUF_SIZE / 8 ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	}
	if (bpf_ringbuf_output(&samples, &s->sample, size, wake)) {
		count_kind(kind, PYPROF_CNT_DROPPED);
		return -1;
	}
	count_kind(kind, PYPROF_CNT_SENT);
	return 0;
}

/* emit_stack with header flags set from the start (PY_SAMPLE_RSS_PEAK). */
static __always_inline int emit_stack_flags(__u8 kind, __u64 value, __u8 flags)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, *level;
	struct scratch *s;
	int ret;

	if (!bpf_map_lookup_elem(&targets, &pid))
		return -1;
	s = scratch_get(&level);
	if (!s) {
		count_kind(kind, PYPROF_CNT_DROPPED);
		return -1;
	}
	ret = emit_stack_in(s, kind, value, flags);
	scratch_put(level);
	return ret;
}

static __always_inline int emit_stack(__u8 kind, __u64 value)
{
	return emit_stack_flags(kind, value, 0);
}

/* CPU sampling: one cpu-clock perf event per CPU, a fixed period of 1e9/Hz ns. */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	emit_stack(PY_KIND_CPU, 0);
	return 0;
}

/*
 * Process tracking. Raw tracepoints, so nothing needs tracefs, and no
 * kprobes (absent on some kernels). All three keep the maps right in the
 * kernel first, then tell userspace, so no sample waits for userspace:
 *   fork: a child of a profiled process gets a copy of its parent's entry
 *         (same memory layout) and is sampled from its first tick;
 *   exec: the old image's entry goes at once (the layout is gone with it);
 *   exit: the entries go.
 */

/* Set by userspace after load (-a): every exec on the host is reported. */
__u32 track_all;

#define PROC_EVENTS_SIZE (256 << 10)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PROC_EVENTS_SIZE);
} proc_events SEC(".maps");

/* pid -> enum py_follow_flags: launched commands and --subprocesses. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

static __always_inline void proc_event(__u32 kind, __u32 pid, __u32 ppid, __u32 flags, __u64 wake)
{
	struct py_proc_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		count(PYPROF_CNT_PROC_EVENT_LOST);
		return;
	}
	e->kind = kind;
	e->pid = pid;
	e->ppid = ppid;
	e->flags = flags;
	e->ktime_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, wake);
}

SEC("raw_tp/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ppid = BPF_CORE_READ(parent, tgid), pid = BPF_CORE_READ(child, tgid);
	__u32 *follow, flags = 0;
	struct py_target *proc;
	bool children;

	/* A new thread shares its process's entry already. */
	if (pid == ppid || BPF_CORE_READ(child, pid) != pid)
		return 0;
	follow = bpf_map_lookup_elem(&followed, &ppid);
	children = follow && (*follow & PY_FOLLOW_CHILDREN);
	if (children)
		bpf_map_update_elem(&followed, &pid, follow, BPF_ANY);
	proc = bpf_map_lookup_elem(&targets, &ppid);
	if (proc && (track_all || children) && !bpf_map_update_elem(&targets, &pid, proc, BPF_ANY))
		flags |= PY_PROC_COPIED;
	if (flags || children)
		proc_event(PY_PROC_FORK, pid, ppid, flags, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* pid -> highest resident pages seen at a sampled fault: the peak marker
 * (--mem). Forgotten at exec: the new image starts its own peak. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u64);
} rss_peak SEC(".maps");

/* This CPU's page-fault count at its last sample (--mem): see on_page_fault. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} faults_at_sample SEC(".maps");

SEC("raw_tp/sched_process_exec")
int on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	bool was_profiled = !bpf_map_delete_elem(&targets, &pid);

	bpf_map_delete_elem(&rss_peak, &pid);
	/* A new image is worth a look in -a mode, or when this pid is followed. */
	if (was_profiled || track_all || bpf_map_lookup_elem(&followed, &pid))
		proc_event(PY_PROC_EXEC, pid, 0, 0, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	bool was_profiled, was_followed;

	/*
	 * Once per process: when its last thread goes. That is not always the
	 * main thread, which can pthread_exit() and leave the others running.
	 * do_exit() has already taken the exiting thread off signal->live.
	 */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	was_profiled = !bpf_map_delete_elem(&targets, &pid);
	was_followed = !bpf_map_delete_elem(&followed, &pid);
	if (was_profiled || was_followed)
		proc_event(PY_PROC_EXIT, pid, 0, 0, BPF_RB_NO_WAKEUP);
	return 0;
}

/* ==================================================================== USDT (issue 7)
 *
 * CPython's own probes (provider "python"), attached per process by src/usdt.c
 * with libbpf's USDT support: the kernel raises each probe's semaphore while
 * a link exists and lowers it when the link's fd is closed, including when
 * pybpfprof is killed, so the target returns to full speed on its own.
 *
 * --calls: function__entry/return keep a shadow stack per thread and add each
 * finished call to its (caller, callee) edge and to the callee's latency
 * histogram, all in kernel maps read by userspace at the end. Functions are
 * keyed by code object (read from the thread's current frame, as the sampler
 * does), so they are named exactly like sampled frames. Matching is by
 * position: a return pops the top entry; a return on an empty stack belongs
 * to a call that began before the probes were attached and is not counted.
 */

struct call_frame {
	struct py_call_func fn;
	__u64 name;		/* funcname argument at entry: checked at the return */
	__u64 start_ns;
	__u64 child_ns;		/* time spent in callees that returned */
	__u32 recursive;	/* the function was already active on this thread */
	__u32 pad;
};

struct call_stack {
	__u32 pid;
	__u32 depth;		/* may exceed PYPROF_CALL_DEPTH: deeper frames are not kept */
	struct call_frame f[PYPROF_CALL_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);	/* threads traced at once: 6 MB */
	__type(key, __u32);	/* tid */
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
#define CO_GENERATOR_LIKE (0x20 | 0x80 | 0x200)	/* generator, coroutine, async generator */

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
					 __u32 pid, __u64 name, struct py_call_func *fn, bool *fresh_code)
{
	__u32 size = off->frame_read_size, fp2;
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
		if (code_fingerprint(off, s, code, &fresh.fingerprint) ||
		    code_fingerprint(off, s, code, &fp2) || fp2 != fresh.fingerprint)
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

static __always_inline void active_add(struct py_call_func *fn, __u32 tid, int delta,
				       __u32 *before)
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
		return 0;	/* a generator being created: no return will follow */
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

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r < PYPROF_HIST_BUCKETS ? r : PYPROF_HIST_BUCKETS - 1;
}

/* Entries searched below the top for a return that does not match it. */
#define MISMATCH_SEARCH 8

SEC("usdt")
int BPF_USDT(on_func_return, void *filename, void *funcname, int lineno)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), dur, excl;
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid, d, before;
	struct py_call_edge_key ek = {};
	struct py_call_stats *cs, fresh = {};
	struct py_call_hist *h;
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
		return 0;	/* counted as too deep at its entry */
	cf = &st->f[d & (PYPROF_CALL_DEPTH - 1)];
	if (cf->name != (__u64)funcname) {
		/*
		 * Not the entry on top: a probe hit was lost (the kernel skips a
		 * program while another runs on the CPU). Look a few entries down;
		 * if this function is there, the entries above it never returned:
		 * drop them uncounted. If not, its entry was the one lost: leave
		 * the stack alone and do not count this return.
		 */
		__u32 i, found = 0;

		count(PYPROF_CNT_CALLS_MISMATCH);
		for (i = 1; i <= MISMATCH_SEARCH && i <= d; i++) {
			if (st->f[(d - i) & (PYPROF_CALL_DEPTH - 1)].name == (__u64)funcname) {
				found = i;
				break;
			}
		}
		if (!found) {
			st->depth = d + 1;
			return 0;
		}
		for (i = 0; i < MISMATCH_SEARCH && i < found; i++) {
			struct call_frame *gone = &st->f[(d - i) & (PYPROF_CALL_DEPTH - 1)];

			if (gone->fn.code)
				active_add(&gone->fn, tid, -1, &before);
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
	cs = bpf_map_lookup_elem(&call_edges, &ek);
	if (!cs) {
		if (bpf_map_update_elem(&call_edges, &ek, &fresh, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&call_edges, &ek)) {
			count(PYPROF_CNT_CALLS_MAP_FULL);
			return 0;
		}
		cs = bpf_map_lookup_elem(&call_edges, &ek);
		if (!cs)
			return 0;
	}
	/* one thread owns a stack, but edges are shared between threads: atomics */
	__sync_fetch_and_add(&cs->calls, 1);
	if (!cf->recursive)
		__sync_fetch_and_add(&cs->inclusive_ns, dur);
	__sync_fetch_and_add(&cs->exclusive_ns, excl);
	if (dur > cs->max_ns)
		cs->max_ns = dur;	/* a lost race only loses a tie-break between two maxima */
	h = bpf_map_lookup_elem(&call_hist, &cf->fn);
	if (h) {
		__u32 b = log2_bucket(dur);

		__sync_fetch_and_add(&h->buckets[b & 63], 1);
	}
	return 0;
}

/*
 * --gc: gc__start(generation) notes the start per thread; gc__done(collected)
 * sends the thread's Python stack (the code that triggered the collection,
 * still current while the collector runs) with the figures packed in value.
 */
struct gc_start {
	__u64 start_ns;
	__u32 gen;
	__u32 pid;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gc_start);
} gc_starts SEC(".maps");

SEC("usdt")
int BPF_USDT(on_gc_start, int generation)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct gc_start g = { .gen = generation, .pid = pid };

	if (!bpf_map_lookup_elem(&targets, &pid))
		return 0;
	g.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&gc_starts, &tid, &g, BPF_ANY);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_gc_done, long collected)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), value;
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	/* the header of struct py_sample, without its frames */
	struct {
		__u32 pid, tid;
		__u64 ktime_ns;
		__u16 nframes;
		__u8 flags, kind;
		__u32 cpu;
		__u64 value;
	} hdr = {};
	struct gc_start *g;

	g = bpf_map_lookup_elem(&gc_starts, &tid);
	if (!g || g->pid != pid) {
		if (bpf_map_lookup_elem(&targets, &pid))
			count(PYPROF_CNT_GC_UNMATCHED);
		return 0;
	}
	value = PY_GC_VALUE(now - g->start_ns, g->gen, collected < 0 ? 0 : (__u64)collected);
	bpf_map_delete_elem(&gc_starts, &tid);
	if (emit_stack(PY_KIND_GC, value) <= 0)
		return 0;
	/* no Python frame (interpreter start or end): the collection still counts */
	hdr.pid = pid;
	hdr.tid = tid;
	hdr.ktime_ns = now;
	hdr.kind = PY_KIND_GC;
	hdr.value = value;
	hdr.cpu = bpf_get_smp_processor_id();
	if (bpf_ringbuf_output(&samples, &hdr, sizeof(hdr), BPF_RB_FORCE_WAKEUP))
		count_kind(PY_KIND_GC, PYPROF_CNT_DROPPED);
	return 0;
}

/* --imports: start/done events with the module name; userspace nests them per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} events SEC(".maps");

static __always_inline void send_import(__u8 kind, const char *name, int found)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32;
	struct py_event *e;

	if (!bpf_map_lookup_elem(&targets, &pid))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PYPROF_CNT_EVENTS_DROPPED);
		return;
	}
	e->pid = pid;
	e->tid = (__u32)pid_tgid;
	e->ktime_ns = bpf_ktime_get_ns();
	e->kind = kind;
	e->found = found != 0;
	if (bpf_probe_read_user_str(e->name, sizeof(e->name), name) < 0)
		e->name[0] = '\0';
	bpf_ringbuf_submit(e, 0);
}

SEC("usdt")
int BPF_USDT(on_import_start, const char *name)
{
	send_import(PY_EVENT_IMPORT_START, name, 0);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_import_done, const char *name, int found)
{
	send_import(PY_EVENT_IMPORT_DONE, name, found);
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

/*
 * --mem: where memory grows. Two kinds of kernel events that every process
 * has, so nothing is injected into the target:
 *  - the page-faults software event, one sample per mem_period faults on each
 *    CPU on average (userspace redraws the period at random, see perf_sampler.h): a
 *    fault is the first touch of a page, so the faulting Python line is the
 *    one that made the memory resident; each sample stands for the pages
 *    faulted on its CPU since the CPU's last sample;
 *  - the mmap, munmap, mremap and brk system calls, with their sizes: where
 *    address space is taken and given back, exactly, however large.
 * Both run for every process on the machine; others cost one hash lookup
 * (page faults) or a compare of the syscall number (system calls).
 */
/* Set by userspace after load: a plain global, not rodata. */
__u64 page_bytes = 4096;

/*
 * Resident pages of the current process: file, anonymous and shmem counters.
 * The per-CPU counters are summed lazily by the kernel, so this lags the
 * exact value by at most a batch per CPU: fine for finding the peak.
 */
static __always_inline __u64 current_rss_pages(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__s64 file, anon, shmem;

	if (!mm)
		return 0;
	file = BPF_CORE_READ(mm, rss_stat[0].count);
	anon = BPF_CORE_READ(mm, rss_stat[1].count);
	shmem = BPF_CORE_READ(mm, rss_stat[3].count);
	file += anon + shmem;
	return file > 0 ? file : 0;
}

/*
 * The faults this sample stands for: those on this CPU since its last
 * sample, from the event's own counter. Not ctx->sample_period alone: when
 * userspace changes the period, the kernel restarts the count and samples
 * the very next fault, which stands for the faults made before the change,
 * not for a whole period (a redraw every 20 ms overstated the bytes by 1%).
 * Counted for every process's samples, as the counter is.
 */
static __always_inline __u64 faults_since_last_sample(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_value v;
	__u64 faults = ctx->sample_period, *last;
	__u32 zero = 0;

	last = bpf_map_lookup_elem(&faults_at_sample, &zero);
	if (!last || bpf_perf_prog_read_value(ctx, &v, sizeof(v)))
		return faults;
	/*
	 * More than a period when the kernel throttled samples: those faults
	 * were made all the same. The first sample on a CPU has no start.
	 */
	if (*last && v.counter > *last)
		faults = v.counter - *last;
	*last = v.counter;
	return faults;
}

SEC("perf_event")
int on_page_fault(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 rss, *peak, faults = faults_since_last_sample(ctx);
	__u8 flags = 0;

	if (!bpf_map_lookup_elem(&targets, &pid))
		return 0;
	rss = current_rss_pages();
	peak = bpf_map_lookup_elem(&rss_peak, &pid);
	if (!peak || rss > *peak)
		flags = PY_SAMPLE_RSS_PEAK;
	/* The peak moves only with a stack that reached userspace. */
	if (!emit_stack_flags(PY_KIND_PAGE_FAULT, faults * page_bytes, flags) && flags)
		bpf_map_update_elem(&rss_peak, &pid, &rss, BPF_ANY);
	return 0;
}

/* x86_64 system call numbers (the only architecture built for now). */
#define NR_MMAP 9
#define NR_MUNMAP 11
#define NR_BRK 12
#define NR_MREMAP 25
#define PAGE_ROUND(x) (((x) + 4095) & ~4095ULL)

/* A memory system call between its entry and its exit, per thread. */
struct mem_call {
	__u64 nr;
	__u64 arg0, arg1, arg2;
	__u64 brk_before;	/* brk: the break before the call */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct mem_call);
} mem_calls SEC(".maps");

/*
 * Raw tracepoints, not the classic syscalls:sys_enter_mmap ones: they need no
 * tracefs, and one program sees every system call (args[1] is its number).
 */
SEC("raw_tracepoint/sys_enter")
int on_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 nr = ctx->args[1], pid_tgid;
	struct pt_regs *regs;
	struct mem_call call = {};
	__u32 pid, tid;

	if (nr != NR_MMAP && nr != NR_MUNMAP && nr != NR_BRK && nr != NR_MREMAP)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	pid = pid_tgid >> 32;
	tid = (__u32)pid_tgid;
	if (!bpf_map_lookup_elem(&targets, &pid))
		return 0;
	regs = (struct pt_regs *)ctx->args[0];
	call.nr = nr;
	call.arg0 = BPF_CORE_READ(regs, di);
	call.arg1 = BPF_CORE_READ(regs, si);
	call.arg2 = BPF_CORE_READ(regs, dx);
	if (nr == NR_BRK) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		call.brk_before = BPF_CORE_READ(task, mm, brk);
	}
	bpf_map_update_elem(&mem_calls, &tid, &call, BPF_ANY);
	return 0;
}

SEC("raw_tracepoint/sys_exit")
int on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u32 tid;
	__s64 ret = ctx->args[1], delta = 0;
	struct mem_call *call;
	__u64 nr;

	/* This runs at the end of every system call on the machine: the number first. */
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr != NR_MMAP && nr != NR_MUNMAP && nr != NR_BRK && nr != NR_MREMAP)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	call = bpf_map_lookup_elem(&mem_calls, &tid);
	if (!call)
		return 0;
	/* -4095..-1 are errors; mmap and mremap return addresses, munmap 0. */
	if (ret < 0 && ret >= -4095) {
		bpf_map_delete_elem(&mem_calls, &tid);
		return 0;
	}
	switch (call->nr) {
	case NR_MMAP:
		delta = PAGE_ROUND(call->arg1);
		break;
	case NR_MUNMAP:
		delta = -(__s64)PAGE_ROUND(call->arg1);
		break;
	case NR_MREMAP:	/* (old_address, old_size, new_size) */
		delta = (__s64)PAGE_ROUND(call->arg2) - (__s64)PAGE_ROUND(call->arg1);
		break;
	case NR_BRK:	/* returns the new break; brk(0) and a refusal leave it as it was */
		delta = (__s64)PAGE_ROUND(ret) - (__s64)PAGE_ROUND(call->brk_before);
		break;
	}
	bpf_map_delete_elem(&mem_calls, &tid);
	if (delta > 0)
		emit_stack(PY_KIND_MAP, delta);
	else if (delta < 0)
		emit_stack(PY_KIND_UNMAP, -delta);
	return 0;
}

/*
 * --mem=alloc: uprobes on the C allocator of the target (its libc's malloc,
 * calloc, realloc, posix_memalign, aligned_alloc, memalign and free), attached
 * per target pid. Calls are sampled by bytes, per thread: a countdown of
 * alloc_period bytes, so one record stands for alloc_period bytes on average
 * and an allocation of at least alloc_period bytes is always recorded with
 * its own size. Sampled allocations are kept by address until freed; what is
 * left at the end is live (leak candidates). Every call costs a trap into the
 * kernel (two for allocations: entry and return), sampled or not: this mode
 * is opt-in, its cost measured in bench/mem.sh.
 */
__u64 alloc_period = 512 * 1024;
__u64 live_full;	/* sampled allocations the live map had no room for */

/* An allocator call between its entry and its return, per thread. */
struct alloc_call {
	__u64 weight;		/* 0: not sampled */
	__u64 memptr;		/* posix_memalign: where the address will be written */
	__u64 start_ns;		/* entry time: an entry this old lost its return (see below) */
	__u32 depth;		/* allocator entries nested inside this one (realloc -> malloc) */
	__u32 pad;
};

/*
 * A call whose return was never seen would make every later call of its
 * thread look nested, and unsampled, forever. The loader attaches each return
 * probe before its entry probe so this cannot come from attaching; a thread
 * that leaves malloc by longjmp or dies inside it could still do it, so an
 * entry older than this is taken as abandoned.
 */
#define ALLOC_CALL_STALE_NS 1000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct alloc_call);
} alloc_calls SEC(".maps");

/* tid -> bytes left before the next sample. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} alloc_left SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct py_live_key);
	__type(value, struct py_live_alloc);
} live_allocs SEC(".maps");

/* Forgets a sampled allocation of this process, if it was one. */
static __always_inline void live_forget(__u64 addr)
{
	struct py_live_key key = { .addr = addr, .pid = bpf_get_current_pid_tgid() >> 32 };

	bpf_map_delete_elem(&live_allocs, &key);
}

/* A distance to the next sampled byte: uniform in [period/2, 3 period/2), mean period. */
static __always_inline __u64 alloc_gap(__u64 period)
{
	return period / 2 + bpf_get_prandom_u32() % period;
}

/*
 * Weight of this allocation if it is sampled, else 0; moves the thread's
 * countdown. Sampled bytes are at random distances (alloc_gap): at a fixed
 * distance, a loop whose allocations add up to the period every round could
 * have the same call sampled every round and the others never (here the
 * interpreter's own calls in between broke such a rhythm, but nothing
 * guarantees they do).
 */
static __always_inline __u64 alloc_sample(__u32 tid, __u64 size)
{
	__u64 period = alloc_period, *left, fresh, over;

	if (!period)
		return 0;
	if (size >= period)
		return size;
	left = bpf_map_lookup_elem(&alloc_left, &tid);
	if (!left) {
		/* a random start, so threads and runs do not all sample the same calls */
		fresh = bpf_get_prandom_u32() % period + 1;
		bpf_map_update_elem(&alloc_left, &tid, &fresh, BPF_ANY);
		left = bpf_map_lookup_elem(&alloc_left, &tid);
		if (!left)
			return 0;
	}
	if (size < *left) {
		*left -= size;
		return 0;
	}
	/*
	 * This call holds the sampled byte and maybe the next one: the overshoot
	 * is below period (size is), two gaps are at least period.
	 */
	over = size - *left;
	fresh = alloc_gap(period);
	if (fresh > over) {
		*left = fresh - over;
		return period;
	}
	*left = fresh + alloc_gap(period) - over;
	return 2 * period;
}

static __always_inline int alloc_enter(__u64 size, __u64 memptr, __u64 freed)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct alloc_call *c, fresh = {};
	__u64 now = bpf_ktime_get_ns();

	c = bpf_map_lookup_elem(&alloc_calls, &tid);
	if (c && now - c->start_ns < ALLOC_CALL_STALE_NS) {
		c->depth++;
		return 0;
	}
	if (freed)
		live_forget(freed);
	fresh.weight = alloc_sample(tid, size);
	fresh.memptr = memptr;
	fresh.start_ns = now;
	bpf_map_update_elem(&alloc_calls, &tid, &fresh, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_malloc, __u64 size)
{
	return alloc_enter(size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_calloc, __u64 n, __u64 size)
{
	return alloc_enter(n * size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_realloc, __u64 ptr, __u64 size)
{
	return alloc_enter(size, 0, ptr);
}

/* aligned_alloc and memalign: (alignment, size) */
SEC("uprobe")
int BPF_KPROBE(on_memalign, __u64 align, __u64 size)
{
	return alloc_enter(size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_posix_memalign, __u64 memptr, __u64 align, __u64 size)
{
	return alloc_enter(size, memptr ? memptr : 1, 0);
}

SEC("uretprobe")
int BPF_KRETPROBE(on_alloc_return, __u64 ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), addr = ret;
	__u32 tid = (__u32)pid_tgid, *level;
	struct py_live_alloc live = {};
	struct py_live_key key = {};
	struct alloc_call *c, call;
	struct scratch *s;
	int sent;

	c = bpf_map_lookup_elem(&alloc_calls, &tid);
	if (!c)
		return 0;
	if (c->depth) {
		c->depth--;
		return 0;
	}
	call = *c;
	bpf_map_delete_elem(&alloc_calls, &tid);
	if (!call.weight)
		return 0;
	if (call.memptr) {	/* posix_memalign: 0 on success, the address stored at memptr */
		if ((int)ret || call.memptr == 1)	/* an int: the upper half of rax is undefined */
			return 0;
		addr = read_word(call.memptr);
	}
	if (!addr)
		return 0;
	s = scratch_get(&level);
	if (!s) {
		count_kind(PY_KIND_ALLOC, PYPROF_CNT_DROPPED);
		return 0;
	}
	sent = emit_stack_in(s, PY_KIND_ALLOC, call.weight, 0);
	/* The record just sent is still in this activation's scratch: its time names it. */
	live.ktime_ns = s->sample.ktime_ns;
	scratch_put(level);
	if (sent)
		return 0;
	live.pid = pid_tgid >> 32;
	live.tid = tid;
	live.bytes = call.weight;
	key.addr = addr;
	key.pid = live.pid;
	if (bpf_map_update_elem(&live_allocs, &key, &live, BPF_ANY))
		__sync_fetch_and_add(&live_full, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_free, __u64 ptr)
{
	if (ptr)
		live_forget(ptr);
	return 0;
}
