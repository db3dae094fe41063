/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A thread's Python stack, sent to userspace as one ring-buffer record
 * (struct py_sample): the stack walk of stackwalk.h, with the thread-state
 * cache and the reader's wakeup rule around it.
 *
 * Why stream instead of counting stacks in a kernel hash: a sample is at most
 * 32 + 16 * depth bytes, and even 999 Hz on every CPU is a few hundred KB/s,
 * which userspace folds as it arrives. Streaming also lets userspace resolve
 * code objects while the process is still alive (short-lived processes) and
 * keeps timestamps for timelines. The cost of the program itself is measured
 * in bench/overhead.sh (bpftool prog show run_time_ns / run_cnt).
 */
#ifndef PYBPFPROF_BPF_EMIT_STACK_H
#define PYBPFPROF_BPF_EMIT_STACK_H

#include "shared.h"
#include "signatures.h"

/*
 * How long "this thread has no PyThreadState" is believed before the lists
 * are walked again: threads that run only C code (a BLAS pool, a C library's
 * workers) would otherwise cost a walk of every Python thread at each tick.
 */
#define NO_TSTATE_RECHECK_NS 10000000ULL

/*
 * Except in a thread's first second: a new Python thread runs (a sample, a
 * wait for a CPU) before it writes its id into its thread state, and a "none"
 * believed then would lose its first 10 ms, a first sleep with them.
 */
#define NO_TSTATE_YOUNG_NS 1000000000ULL

/* When the current thread started: CLOCK_MONOTONIC, as bpf_ktime_get_ns(). */
static __always_inline __u64 current_start_ns(void)
{
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), start_time);
}

/*
 * The thread's PyThreadState (stackwalk_find_tstate), cached per tid and
 * re-checked at each use.
 */
static __always_inline __u64 find_tstate(const struct py_target *proc, __u32 pid, __u32 tid,
					 __u64 fsbase)
{
	const struct py_offsets *off = &proc->off;
	struct thread_entry *cached, fresh = {};
	__u64 now = bpf_ktime_get_ns();

	cached = bpf_map_lookup_elem(&threads, &tid);
	if (cached && cached->pid == pid) {
		if (cached->tstate && read_word(cached->tstate + off->tstate_thread_id) == fsbase)
			return cached->tstate;
		__u64 start = current_start_ns();

		/* checked before this thread started: another thread's, whose tid it reuses */
		if (!cached->tstate && now - cached->checked_ns < NO_TSTATE_RECHECK_NS &&
		    cached->checked_ns >= start && cached->checked_ns - start >= NO_TSTATE_YOUNG_NS)
			return 0;
	}

	count(PYPROF_CNT_TSTATE_SCAN);
	fresh.tstate = stackwalk_find_tstate(proc, fsbase);
	fresh.checked_ns = now;
	fresh.pid = pid;
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	return fresh.tstate;
}

extern const volatile __u8 gil_follow;
extern const volatile __u8 opcodes_on;
extern const volatile __u8 exc_on;
/*
 * --opcodes: the time the reads of a CPU sample's tick facts took inside
 * this program (bpf_ktime_get_ns around them), and how many: the exception
 * state's and the instruction's. For bench/opcodes.py, which reads them from
 * the program's .bss: the program's whole run time moves with the load.
 */
extern __u64 tick_exc_ns, tick_exc_reads, tick_op_ns, tick_op_reads;

/* A GIL's head: interval (us, 1..1000 s), last_holder, locked (0 or 1). */
static __always_inline bool gil_plausible(const __u64 *head)
{
	return head[0] >= 1 && head[0] <= 1000000000 && (__u32)head[2] <= 1;
}

/*
 * The process's GIL (struct _gil_runtime_state), 0 while unknown: from
 * gil_addrs (userspace puts it there when it reads the process), else found
 * from the place its target entry names once it holds what a GIL holds (the
 * interpreter made it), and kept in gil_addrs for the samples and blocks
 * after. struct _gil_runtime_state starts with interval, last_holder,
 * locked on every GIL build 3.8-3.15.
 */
static __always_inline __u64 gil_addr(const struct py_target *proc, __u32 pid)
{
	struct py_gil_info *gi = bpf_map_lookup_elem(&gil_addrs, &pid), fresh = {};
	__u64 gil, interp, head[3];

	if (gi && gi->gil)
		return gi->gil;
	if (proc->gil_off == PYPROF_NO_OFFSET)
		return 0;
	gil = proc->runtime_addr + proc->gil_off;
	if (proc->gil_via_interp) {
		interp = read_word(proc->runtime_addr + proc->off.runtime_interp_head);
		gil = interp ? read_word(interp + proc->gil_off) : 0;
	}
	if (!gil || stackwalk_read(head, sizeof(head), gil) || !gil_plausible(head))
		return 0;
	fresh.gil = gil;
	bpf_map_update_elem(&gil_addrs, &pid, &fresh, BPF_ANY);
	return gil;
}

/*
 * --mode wall, --gil: whether the thread holds the GIL (locked, and
 * last_holder is its thread state) or runs without it; unknown (both bits)
 * where the process's GIL is not known; 0 when neither mode is on.
 */
static __always_inline __u8 gil_state(const struct py_target *proc, __u32 pid, __u64 tstate)
{
	__u64 gil, head[3];

	if (!gil_follow)
		return 0;
	gil = gil_addr(proc, pid);
	if (!gil || stackwalk_read(head, sizeof(head), gil))
		return PY_SAMPLE_GIL_UNKNOWN;
	return (__u32)head[2] && head[1] == tstate ? PY_SAMPLE_GIL_HELD : PY_SAMPLE_GIL_RELEASED;
}

/*
 * A CPU sample's value before the walk: whether its thread handles an
 * exception (stackwalk_exc), timed for the benchmark when --opcodes is on.
 */
static __always_inline __u64 cpu_exc(struct scratch *s, const struct py_target *proc, __u64 tstate)
{
	__u64 t0, v;

	if (!opcodes_on)
		return stackwalk_exc(&proc->off, s, tstate, proc->none_addr);
	t0 = bpf_ktime_get_ns();
	v = stackwalk_exc(&proc->off, s, tstate, proc->none_addr);
	__sync_fetch_and_add(&tick_exc_ns, bpf_ktime_get_ns() - t0);
	__sync_fetch_and_add(&tick_exc_reads, 1);
	return v;
}

/*
 * Sends the record naming module body m (struct py_module_record) ahead of
 * the stack that holds it: its file's text when co_filename is compact ASCII
 * (a path almost always is), else none. A record the ring cannot take is not
 * counted: the stack follows, and the frame is named only if userspace reads
 * the code object in time.
 */
static __always_inline void send_module(struct scratch *s, const struct py_offsets *off,
					const struct stackwalk_module *m)
{
	struct py_module_record *r = &s->module_rec;
	__u64 len = 0, state;

	r->pid = s->sample.pid;
	r->tid = s->sample.tid;
	r->ktime_ns = s->sample.ktime_ns;
	r->nframes = 0;
	r->flags = 0;
	r->kind = PY_KIND_MODULE;
	r->cpu = s->sample.cpu;
	r->code = m->code;
	r->fingerprint = m->fp;
	r->firstlineno = m->first;
	if (m->file && !stackwalk_read(s->str, PY_STR_READ, m->file + off->str_length)) {
		len = load_u64(s->str, 0, PY_STR_READ);
		state = (__u32)load_u64(s->str, off->str_state - off->str_length, PY_STR_READ);
		state >>= off->str_state_shift & 31;
		if ((state & 0x60) != 0x60) /* compact ASCII only: its text at a fixed place */
			len = 0;
	}
	if (len > PY_MODULE_PATH - 1)
		len = PY_MODULE_PATH - 1;
	len &= PY_MODULE_PATH - 1;
	if (len && stackwalk_read(r->text, len, m->file + off->str_ascii_data))
		len = 0;
	r->value = len;
	bpf_ringbuf_output(&samples, r, sizeof(*r), 0);
}

/*
 * Sends s->sample (nframes frames) to the ring buffer. A wakeup per sample
 * cost the reader ~1% of a core at 999 Hz, so most samples wait for its
 * 50 ms poll. But a code object seen for the first time may be freed soon
 * (generated code, a process about to exit): wake the reader now so it reads
 * the object while it still exists. New code shows up innermost first, so
 * checking the innermost frame is enough.
 */
static __always_inline int send_sample(struct scratch *s, const struct py_offsets *off, __u8 kind,
				       __u32 nframes)
{
	__u64 size, wake = BPF_RB_NO_WAKEUP, seen_key;
	const struct stackwalk_module *m;
	__u8 one = 1;
	__u32 i;

	size = PY_SAMPLE_HEADER_SIZE + (__u64)nframes * sizeof(struct py_frame);
	if (size > sizeof(struct py_sample))
		size = sizeof(struct py_sample);
	/* modules being imported: a body's code object dies with its import */
	for (i = 0; i < STACKWALK_MODULES && i < s->nmodules; i++) {
		m = &s->modules[i & (STACKWALK_MODULES - 1)];
		if (!bpf_map_lookup_elem(&seen_code, &m->key)) {
			bpf_map_update_elem(&seen_code, &m->key, &one, BPF_ANY);
			send_module(s, off, m);
			wake = BPF_RB_FORCE_WAKEUP;
		}
	}
	seen_key = s->sample.frames[0].code ^ ((__u64)s->sample.frames[0].fingerprint << 47);
	if (!bpf_map_lookup_elem(&seen_code, &seen_key)) {
		bpf_map_update_elem(&seen_code, &seen_key, &one, BPF_ANY);
		wake = BPF_RB_FORCE_WAKEUP;
	} else if (wake != BPF_RB_FORCE_WAKEUP) {
		wake = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > RINGBUF_SIZE / 8 ?
			       BPF_RB_FORCE_WAKEUP :
			       BPF_RB_NO_WAKEUP;
	}
	if (bpf_ringbuf_output(&samples, &s->sample, size, wake)) {
		count_kind(kind, PYPROF_CNT_DROPPED);
		return -1;
	}
	count_kind(kind, PYPROF_CNT_SENT);
	return 0;
}

/*
 * Walks the current thread's Python stack and sends it as one record of the
 * given kind and value. Every program that wants a Python stack (the CPU
 * sampler, and any event program) calls this; threads of processes not in
 * `targets` cost one hash lookup. Returns 0 when a record was sent, 1 when the
 * thread of a profiled process had no Python stack, -1 otherwise. native
 * (--native's CPU samples) flags a sample that may have native frames for a
 * user stack to follow it (PY_SAMPLE_USTACK).
 */
static __always_inline int emit_stack_in(struct scratch *s, __u8 kind, __u64 value, __u8 flags,
					 bool native)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct walk_ctx w = {};
	struct task_struct *task;
	struct py_target *proc;
	__u64 tstate, fsbase;

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
	if (kind == PY_KIND_CPU) {
		flags |= gil_state(proc, pid, tstate);
		/* about 0.2 us a sample, a tenth of a plain one (BENCHMARKS.md): read only when asked for */
		if (exc_on)
			value = cpu_exc(s, proc, tstate);
		w.opcodes = opcodes_on;
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

	stackwalk_frames(&w);
	if (w.opcodes) {
		__sync_fetch_and_add(&tick_op_ns, w.op_ns);
		__sync_fetch_and_add(&tick_op_reads, 1);
	}
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
	/* in the interpreter's code with one eval call on the stack: no native frame anywhere */
	if (native && ((flags & PY_SAMPLE_WHERE_MASK) != PY_WHERE_PYTHON || s->nentries > 1))
		s->sample.flags |= PY_SAMPLE_USTACK;
	if (kind == PY_KIND_CPU)
		emit_signatures(&w, s);
	return send_sample(s, &proc->off, kind, w.n);
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
	ret = emit_stack_in(s, kind, value, flags, false);
	scratch_put(level);
	return ret;
}

static __always_inline int emit_stack(__u8 kind, __u64 value)
{
	return emit_stack_flags(kind, value, 0);
}

#endif /* PYBPFPROF_BPF_EMIT_STACK_H */
