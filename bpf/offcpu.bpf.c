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
 * and next in `targets`; none for an idle task, one for a switch between two
 * threads of a profiled process). Profiled threads pay the hash of where they
 * are at each block, and a stack walk when it changed.
 */
#include "emit_stack.h"
#include "offcpu_class.h"

/* --gil without --mode wall: only GIL waits are followed. Set by the loader. */
const volatile __u8 offcpu_gil_only = 0;

/*
 * offcpu_start (shared.h, defined in shared.bpf.c): tid -> its interval
 * (start_ns while off the CPU, 0 while on it), with where it blocked last
 * time and its thread state. An entry lives as long as its thread (deleted
 * at its last switch, TASK_DEAD, and at an exec), so a block writes it in
 * place: one lookup per block and per switch-in instead of a lookup in a
 * second map, an insert and a delete.
 */

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

/* Bytes read at once for the fields of a thread state or frame that lie that close. */
#define OFFCPU_HEAD 128

/* prev_state of a thread's last switch (the kernel's TASK_DEAD) */
#define OFFCPU_TASK_DEAD 0x80

/* The word at byte d of the buffer, masked where the verifier sees it. */
static __always_inline __u64 offcpu_slot(__u64 d)
{
	d >>= 3;
	/* keep the compiler from folding the mask into the callers' bounds checks */
	asm volatile("" : "+r"(d));
	return d & (OFFCPU_HEAD / 8 - 1);
}

/*
 * Three aligned words at base + a, b and c in one read of OFFCPU_HEAD bytes
 * (buf) when they lie that close; -1 when they do not or the read fails.
 */
static __always_inline int offcpu_read3(__u64 base, __u32 a, __u32 b, __u32 c, __u64 *buf,
					__u64 *va, __u64 *vb, __u64 *vc)
{
	__u32 lo = a < b ? a : b;

	lo = lo < c ? lo : c;
	if (((a | b | c) & 7) || a - lo >= OFFCPU_HEAD || b - lo >= OFFCPU_HEAD ||
	    c - lo >= OFFCPU_HEAD || stackwalk_read(buf, OFFCPU_HEAD, base + lo))
		return -1;
	*va = buf[offcpu_slot(a - lo)];
	*vb = buf[offcpu_slot(b - lo)];
	*vc = buf[offcpu_slot(c - lo)];
	return 0;
}

/*
 * The innermost frame of the thread whose state was *tstate at its last
 * block, if that state is still its own (its thread_id and frame pointer in
 * one read); else the thread state is found again (find_tstate).
 */
static __always_inline __u64 offcpu_frame(struct py_target *proc, __u32 pid, __u32 tid,
					  __u64 fsbase, __u64 *tstate, __u64 *buf)
{
	const struct py_offsets *off = &proc->off;
	__u64 id = 0, f = 0;

	if (!*tstate || offcpu_read3(*tstate, off->tstate_thread_id, off->tstate_frame,
				     off->tstate_frame, buf, &id, &f, &f)) {
		if (*tstate)
			id = read_word(*tstate + off->tstate_thread_id);
		if (!*tstate || id != fsbase)
			*tstate = find_tstate(proc, pid, tid, fsbase);
		return *tstate ? current_frame(off, *tstate) : 0;
	}
	if (id != fsbase) {
		*tstate = find_tstate(proc, pid, tid, fsbase);
		return *tstate ? current_frame(off, *tstate) : 0;
	}
	/* as current_frame: 3.11-3.12 keep it in the C frame the state points to */
	if (f && off->cframe_current_frame != PYPROF_NO_OFFSET)
		f = read_word(f + off->cframe_current_frame);
	return f;
}

/*
 * Where the thread is now: its innermost frame and its caller, their
 * addresses and bytecode positions, hashed; 0 when unknown. Two frames read
 * instead of the whole walk. The thread state kept in *tstate is checked
 * before the lists are walked. 3.11+: 4 reads of the target (its state, C
 * frame on 3.11-3.12, innermost frame, caller's position).
 */
static __always_inline __u64 offcpu_where(struct py_target *proc, __u32 pid, __u32 tid,
					  bool preempted, __u64 *tstate)
{
	const struct py_offsets *off = &proc->off;
	/* prev is current: a typed pointer, read by plain loads, not a helper call */
	__u64 f, back, code, instr, h, buf[OFFCPU_HEAD / 8],
		fsbase = bpf_get_current_task_btf()->thread.fsbase;

	f = offcpu_frame(proc, pid, tid, fsbase, tstate, buf);
	if (!f)
		return 0;
	if (offcpu_read3(f, off->frame_previous, off->frame_code, off->frame_instr, buf, &back,
			 &code, &instr)) {
		back = read_word(f + off->frame_previous);
		code = read_word(f + off->frame_code);
		instr = preempted ? 0 : read_word(f + off->frame_instr);
	}
	h = f * 0x9e3779b97f4a7c15ULL ^ code;
	/*
	 * Preempted, a thread is anywhere in its code: its position would make
	 * every such block a walk. The frame (and its caller's position) is
	 * kept, the line is that of its last record at this frame.
	 */
	if (!preempted)
		h = (h ^ instr) * 0xff51afd7ed558ccdULL;
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
				       __u64 now, struct py_offcpu_open *open, __u64 cpu_ns)
{
	bool preempted = PY_OFFCPU_CLASS(value) == PY_OFFCPU_RUNQUEUE;
	struct py_offcpu_open fresh = { .start_ns = now, .pid = pid, .cpu_ns = cpu_ns };

	if (!open) {
		/* the thread's first block: its entry first, closed by the next switch-in */
		fresh.where = offcpu_where(proc, pid, tid, preempted, &fresh.tstate);
		if (bpf_map_update_elem(&offcpu_start, &tid, &fresh, BPF_NOEXIST))
			return -1;
		if (emit_stack(PY_KIND_OFFCPU_BLOCK, value)) {
			bpf_map_delete_elem(&offcpu_start, &tid);
			return -1;
		}
		return 0;
	}
	fresh.where = offcpu_where(proc, pid, tid, preempted, &open->tstate);
	open->start_ns = now;
	open->cpu_ns = cpu_ns;
	open->pid = pid;
	if (fresh.where && open->where == fresh.where) {
		open->same = value | PY_OFFCPU_SAME;
		return 0;
	}
	open->same = 0;
	if (emit_stack(PY_KIND_OFFCPU_BLOCK, value)) {
		open->start_ns = 0;
		open->where = 0;
		return -1;
	}
	open->where = fresh.where;
	return 0;
}

/* An interval's END record, stamped at its end; value: its ns, or PY_OFFCPU_END_SAME. */
static __always_inline void offcpu_end_send(__u32 pid, __u32 tid, __u64 end_ns, __u64 value)
{
	struct offcpu_end end = {};

	end.pid = pid;
	end.tid = tid;
	end.ktime_ns = end_ns;
	end.kind = PY_KIND_OFFCPU_END;
	end.cpu = bpf_get_smp_processor_id();
	end.value = value;
	if (bpf_ringbuf_output(&samples, &end, sizeof(end), BPF_RB_NO_WAKEUP))
		count_kind(PY_KIND_OFFCPU_END, PYPROF_CNT_DROPPED);
	else
		count_kind(PY_KIND_OFFCPU_END, PYPROF_CNT_SENT);
}

/*
 * The thread leaves with its last interval still open: the kernel never
 * reported its return (PY_OFFCPU_INFERRED). It came back when it had as
 * much CPU time left to run as it ran since: the interval ends there.
 */
static __always_inline void offcpu_close_unseen(struct py_offcpu_open *open, __u32 tid, __u64 now,
						__u64 cpu_ns)
{
	__u64 start = open->start_ns, ran = cpu_ns > open->cpu_ns ? cpu_ns - open->cpu_ns : 0;
	__u64 end = now > start + ran ? now - ran : start, ns = end - start;

	offcpu_end_send(open->pid, tid, end,
			(open->same ? PY_OFFCPU_END_SAME(ns, PY_OFFCPU_CLASS(open->same)) : ns) |
				PY_OFFCPU_INFERRED);
	open->start_ns = 0;
}

/* prev leaves the CPU: a thread of a profiled process sends its stack. */
static __always_inline struct py_target *offcpu_leave(__u32 state, __u32 pid, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_offcpu_open *open;
	struct py_target *proc;
	struct pt_regs *regs;
	__u64 arg0, cpu_ns;
	__u32 cls;
	long nr;

	if (!tid)
		return NULL; /* an idle task */
	if (state & OFFCPU_TASK_DEAD) {
		/*
		 * Its last switch (any task: rare), and its entry goes. An
		 * interval still open came back unseen before the thread's exit:
		 * it is closed as any other, not lost with the entry.
		 */
		open = bpf_map_lookup_elem(&offcpu_start, &tid);
		if (open && open->start_ns)
			offcpu_close_unseen(open, tid, bpf_ktime_get_ns(),
					    task->se.sum_exec_runtime);
		bpf_map_delete_elem(&offcpu_start, &tid);
		return NULL;
	}
	proc = bpf_map_lookup_elem(&targets, &pid);
	if (!proc)
		return NULL;
	/* brought up to date by the scheduler before the tracepoint */
	cpu_ns = task->se.sum_exec_runtime;
	open = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (open) {
		if (open->start_ns)
			offcpu_close_unseen(open, tid, bpf_ktime_get_ns(), cpu_ns);
		if (!offcpu_gil_only)
			open->in_ns = 0;
	}
	if (!state) {
		cls = PY_OFFCPU_RUNQUEUE;
		nr = -1;
	} else {
		/* prev is current here; the helper wants the typed pointer only this gives */
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		/* a typed pointer too: plain loads (faults read as 0) */
		nr = (long)regs->orig_ax;
		arg0 = regs->di;
		/* the GIL's address matters to futex waits only */
		cls = py_offcpu_classify(nr, arg0, nr == PY_NR_futex ? gil_addr(proc, pid) : 0);
	}
	if (offcpu_gil_only && cls != PY_OFFCPU_GIL)
		return proc;
	offcpu_send(proc, pid, tid, PY_OFFCPU_VALUE(cls, nr), bpf_ktime_get_ns(), open, cpu_ns);
	return proc;
}

/*
 * next comes back to the CPU: the interval its stack record opened is closed.
 * prev_proc: prev's target, when prev was a thread of one, to skip the lookup
 * for a switch between two threads of the same process.
 */
static __always_inline void offcpu_enter(struct task_struct *next, __u32 prev_pid,
					 struct py_target *prev_proc)
{
	__u32 ids[2] = {}, pid, tid;
	struct py_offcpu_open *open;
	__u64 now, ns, cpu_ns, left;

	/* pid and tgid side by side (as on every kernel so far): one read, not two */
	if (bpf_core_field_offset(struct task_struct, tgid) ==
	    bpf_core_field_offset(struct task_struct, pid) + sizeof(__u32)) {
		bpf_probe_read_kernel(ids, sizeof(ids),
				      (void *)next +
					      bpf_core_field_offset(struct task_struct, pid));
		tid = ids[0];
		pid = ids[1];
	} else {
		pid = BPF_CORE_READ(next, tgid);
		tid = BPF_CORE_READ(next, pid);
	}
	if (!tid)
		return; /* an idle task */
	if (!(prev_proc && pid == prev_pid) && !bpf_map_lookup_elem(&targets, &pid))
		return;
	open = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!open) {
		/*
		 * Its first return seen: its entry starts here, so that a leave
		 * the kernel does not report before its first block seen is
		 * counted too (a new thread's first sleep).
		 */
		struct py_offcpu_open first = { .pid = pid };

		if (offcpu_gil_only)
			return;
		first.in_ns = bpf_ktime_get_ns();
		first.cpu_ns = BPF_CORE_READ(next, se.sum_exec_runtime);
		bpf_map_update_elem(&offcpu_start, &tid, &first, BPF_NOEXIST);
		return;
	}
	if (open->start_ns) {
		now = bpf_ktime_get_ns();
		ns = now > open->start_ns ? now - open->start_ns : 0;
		open->start_ns = 0;
		offcpu_end_send(pid, tid, now,
				open->same ? PY_OFFCPU_END_SAME(ns, PY_OFFCPU_CLASS(open->same)) :
					     ns);
		if (!offcpu_gil_only)
			open->in_ns = now;
		return;
	}
	/* --gil alone: most leaves open nothing, and unseen leaves are not looked for */
	if (offcpu_gil_only)
		return;
	now = bpf_ktime_get_ns();
	if (open->in_ns) {
		/*
		 * Back again with no leave seen since it was last back
		 * (PY_OFFCPU_UNSEEN_LEAVE): it left once it had run the CPU
		 * time it has now beyond what it had then (cpu_ns, from its
		 * last leave seen: a thread off the CPU runs none).
		 */
		cpu_ns = BPF_CORE_READ(next, se.sum_exec_runtime);
		if (cpu_ns >= open->cpu_ns) {
			left = open->in_ns + (cpu_ns - open->cpu_ns);
			if (now > left)
				offcpu_end_send(pid, tid, now,
						((now - left) & PY_OFFCPU_NS_MASK) |
							PY_OFFCPU_UNSEEN_LEAVE);
		}
		open->cpu_ns = cpu_ns;
	}
	open->in_ns = now;
}

/* TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state) */
SEC("raw_tracepoint/sched_switch")
int on_sched_switch(struct bpf_raw_tracepoint_args *ctx)
{
	/* prev is current (the switch comes after the tracepoint): its ids without a read */
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;

	offcpu_enter((struct task_struct *)ctx->args[2], pid,
		     offcpu_leave((__u32)ctx->args[3], pid, (__u32)id));
	return 0;
}
