// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mode wall and --gil: where the threads of profiled processes wait. The
 * sched_switch raw tracepoint fires for every task on the host, in the
 * context of the task leaving the CPU (prev is current), so a blocking
 * thread's Python stack can be walked right there. It is sent at once
 * (PY_KIND_OFFCPU_BLOCK) with the reason it blocked; when the thread is
 * switched in again, a frameless PY_KIND_OFFCPU_END record says how long it
 * was off the CPU. The blocked ns are exact: both ends are the scheduler's.
 * A thread that blocks where it blocked last time sends no stack: its
 * closing record says so, and its last stack is charged again.
 *
 * Cost for the rest of the host: two hash lookups per context switch (prev
 * and next in `targets`). Profiled threads also pay a stack walk per block.
 */
#include "emit_stack.h"
#include "offcpu_class.h"

/* --gil without --mode wall: only GIL waits are followed. Set by the loader. */
const volatile __u8 offcpu_gil_only = 0;

/*
 * tid -> the open interval: when it left the CPU, and for a block where it
 * blocked last time, the class its closing record carries. A plain hash:
 * an LRU map's update took several times longer on every block, and each
 * entry lives only until the thread's switch-in (or, at most, its death).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct py_offcpu_open);
} offcpu_start SEC(".maps");

/* tid -> where its last full BLOCK record was taken (offcpu_where) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_last SEC(".maps");

/* The header of struct py_sample alone: the closing record has no frames. */
struct offcpu_end {
	__u32 pid, tid;
	__u64 ktime_ns;
	__u16 nframes;
	__u8 flags, kind;
	__u32 cpu;
	__u64 value;
};
_Static_assert(sizeof(struct offcpu_end) == PY_SAMPLE_HEADER_SIZE, "py_sample's header");

/*
 * Where the thread is now: its innermost frame and its caller, their
 * addresses and bytecode positions, hashed; 0 when unknown. Two frames read
 * instead of the whole walk (2-3 reads per frame of the stack).
 */
static __always_inline __u64 offcpu_where(struct py_target *proc, __u32 pid, __u32 tid,
					  bool preempted)
{
	const struct py_offsets *off = &proc->off;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 tstate, f, back, h, fsbase = BPF_CORE_READ(task, thread.fsbase);

	tstate = find_tstate(proc, pid, tid, fsbase);
	f = tstate ? current_frame(off, tstate) : 0;
	if (!f)
		return 0;
	back = read_word(f + off->frame_previous);
	h = f * 0x9e3779b97f4a7c15ULL ^ read_word(f + off->frame_code);
	/*
	 * Preempted, a thread is anywhere in its code: its position would make
	 * every such block a walk. The frame (and its caller's position) is
	 * kept, the line is that of its last record at this frame.
	 */
	if (!preempted)
		h = (h ^ read_word(f + off->frame_instr)) * 0xff51afd7ed558ccdULL;
	h ^= back;
	if (back)
		h = (h ^ read_word(back + off->frame_instr)) * 0xc4ceb9fe1a85ec53ULL;
	return h | 1;
}

/*
 * The stack of a block, sent now; or, when the thread blocks where it did
 * last time, nothing now: its closing record says so (PY_OFFCPU_SAME) and
 * userspace reuses the last stack. Opens the interval in offcpu_start.
 */
static __always_inline int offcpu_send(struct py_target *proc, __u32 pid, __u32 tid, __u64 value,
				       __u64 now)
{
	__u64 where = offcpu_where(proc, pid, tid, PY_OFFCPU_CLASS(value) == PY_OFFCPU_RUNQUEUE),
	      *last;
	struct py_offcpu_open open = { .start_ns = now };

	last = bpf_map_lookup_elem(&offcpu_last, &tid);
	if (where && last && *last == where) {
		open.same = value | PY_OFFCPU_SAME;
		return bpf_map_update_elem(&offcpu_start, &tid, &open, BPF_ANY) ? -1 : 0;
	}
	/* the start first: a record sent is always closed by the next switch-in */
	if (bpf_map_update_elem(&offcpu_start, &tid, &open, BPF_ANY))
		return -1;
	if (emit_stack(PY_KIND_OFFCPU_BLOCK, value)) {
		bpf_map_delete_elem(&offcpu_start, &tid);
		bpf_map_delete_elem(&offcpu_last, &tid);
		return -1;
	}
	if (where)
		bpf_map_update_elem(&offcpu_last, &tid, &where, BPF_ANY);
	return 0;
}

/* prev leaves the CPU: a thread of a profiled process sends its stack. */
static __always_inline void offcpu_leave(struct task_struct *prev, __u32 state)
{
	__u32 pid = BPF_CORE_READ(prev, tgid), tid = BPF_CORE_READ(prev, pid), cls;
	struct py_target *proc = bpf_map_lookup_elem(&targets, &pid);
	struct py_gil_info *gi;
	struct pt_regs *regs;
	long nr;

	if (!proc)
		return;
	if (!state) {
		cls = PY_OFFCPU_RUNQUEUE;
		nr = -1;
	} else {
		gi = bpf_map_lookup_elem(&gil_addrs, &pid);
		/* prev is current here; the helper wants the typed pointer only this gives */
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		nr = (long)BPF_CORE_READ(regs, orig_ax);
		cls = py_offcpu_classify(nr, BPF_CORE_READ(regs, di), gi ? gi->gil : 0);
	}
	if (offcpu_gil_only && cls != PY_OFFCPU_GIL)
		return;
	offcpu_send(proc, pid, tid, PY_OFFCPU_VALUE(cls, nr), bpf_ktime_get_ns());
}

/* next comes back to the CPU: the interval its stack record opened is closed. */
static __always_inline void offcpu_enter(struct task_struct *next)
{
	__u32 pid = BPF_CORE_READ(next, tgid), tid = BPF_CORE_READ(next, pid);
	struct offcpu_end end = {};
	struct py_offcpu_open *open;
	__u64 now, ns;

	if (!bpf_map_lookup_elem(&targets, &pid))
		return;
	open = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!open)
		return;
	now = bpf_ktime_get_ns();
	ns = now > open->start_ns ? now - open->start_ns : 0;
	end.pid = pid;
	end.tid = tid;
	end.ktime_ns = now;
	end.kind = PY_KIND_OFFCPU_END;
	end.cpu = bpf_get_smp_processor_id();
	end.value = open->same ? PY_OFFCPU_END_SAME(ns, PY_OFFCPU_CLASS(open->same)) : ns;
	bpf_map_delete_elem(&offcpu_start, &tid);
	if (bpf_ringbuf_output(&samples, &end, sizeof(end), BPF_RB_NO_WAKEUP))
		count_kind(PY_KIND_OFFCPU_END, PYPROF_CNT_DROPPED);
	else
		count_kind(PY_KIND_OFFCPU_END, PYPROF_CNT_SENT);
}

/* TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state) */
SEC("raw_tracepoint/sched_switch")
int on_sched_switch(struct bpf_raw_tracepoint_args *ctx)
{
	offcpu_leave((struct task_struct *)ctx->args[1], (__u32)ctx->args[3]);
	offcpu_enter((struct task_struct *)ctx->args[2]);
	return 0;
}
