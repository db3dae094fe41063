// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mode wall and --gil: where the threads of profiled processes wait. The
 * sched_switch raw tracepoint fires for every task on the host, in the
 * context of the task leaving the CPU (prev is current), so a blocking
 * thread's Python stack can be walked right there. It is sent at once
 * (PY_KIND_OFFCPU_BLOCK) with the reason it blocked; when the thread is
 * switched in again, a frameless PY_KIND_OFFCPU_END record says how long it
 * was off the CPU. The blocked ns are exact: both ends are the scheduler's.
 *
 * Cost for the rest of the host: two hash lookups per context switch (prev
 * and next in `targets`). Profiled threads also pay a stack walk per block.
 */
#include "emit_stack.h"
#include "offcpu_class.h"

/* --gil without --mode wall: only GIL waits are followed. Set by the loader. */
const volatile __u8 offcpu_gil_only = 0;

/* tid -> when it left the CPU, for the blocks whose stack record was sent (or primed). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
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
static __always_inline __u64 offcpu_where(struct py_target *proc, __u32 pid, __u32 tid)
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
	h = (h ^ read_word(f + off->frame_instr)) * 0xff51afd7ed558ccdULL;
	h ^= back;
	if (back)
		h = (h ^ read_word(back + off->frame_instr)) * 0xc4ceb9fe1a85ec53ULL;
	return h | 1;
}

/* A frameless BLOCK record: the stack of the thread's last one. */
static __always_inline int send_same(__u32 pid, __u32 tid, __u64 value)
{
	struct offcpu_end rec = {
		.pid = pid,
		.tid = tid,
		.ktime_ns = bpf_ktime_get_ns(),
		.kind = PY_KIND_OFFCPU_BLOCK,
		.cpu = bpf_get_smp_processor_id(),
		.value = value | PY_OFFCPU_SAME,
	};

	if (bpf_ringbuf_output(&samples, &rec, sizeof(rec), BPF_RB_NO_WAKEUP)) {
		count_kind(PY_KIND_OFFCPU_BLOCK, PYPROF_CNT_DROPPED);
		return -1;
	}
	count_kind(PY_KIND_OFFCPU_BLOCK, PYPROF_CNT_SENT);
	return 0;
}

/* The stack record of a block: frameless when the thread blocks where it did last time. */
static __always_inline int offcpu_send(struct py_target *proc, __u32 pid, __u32 tid, __u64 value)
{
	__u64 where = offcpu_where(proc, pid, tid), *last;

	last = bpf_map_lookup_elem(&offcpu_last, &tid);
	if (where && last && *last == where)
		return send_same(pid, tid, value);
	if (emit_stack(PY_KIND_OFFCPU_BLOCK, value)) {
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
	__u64 now;
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
	now = bpf_ktime_get_ns();
	/* the start first: a record sent is always closed by the next switch-in */
	if (bpf_map_update_elem(&offcpu_start, &tid, &now, BPF_ANY))
		return;
	if (offcpu_send(proc, pid, tid, PY_OFFCPU_VALUE(cls, nr)))
		bpf_map_delete_elem(&offcpu_start, &tid);
}

/* next comes back to the CPU: the interval its stack record opened is closed. */
static __always_inline void offcpu_enter(struct task_struct *next)
{
	__u32 pid = BPF_CORE_READ(next, tgid), tid = BPF_CORE_READ(next, pid);
	struct offcpu_end end = {};
	__u64 *start, now;

	if (!bpf_map_lookup_elem(&targets, &pid))
		return;
	start = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!start)
		return;
	now = bpf_ktime_get_ns();
	end.pid = pid;
	end.tid = tid;
	end.ktime_ns = now;
	end.kind = PY_KIND_OFFCPU_END;
	end.cpu = bpf_get_smp_processor_id();
	end.value = now > *start ? now - *start : 0;
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
