// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process tracking. Raw tracepoints, so nothing needs tracefs, and no
 * kprobes (absent on some kernels). All three keep the maps right in the
 * kernel first, then tell userspace, so no sample waits for userspace:
 *   fork: a child of a profiled process gets a copy of its parent's entry
 *         (same memory layout) and is sampled from its first tick;
 *   exec: the old image's entry goes at once (the layout is gone with it);
 *   exit: the entries go.
 */
#include "shared.h"

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
	if (children) {
		__u32 inherited = *follow & ~PY_FOLLOW_HOLD;

		bpf_map_update_elem(&followed, &pid, &inherited, BPF_ANY);
	}
	proc = bpf_map_lookup_elem(&targets, &ppid);
	if (proc && (track_all || children) && !bpf_map_update_elem(&targets, &pid, proc, BPF_ANY))
		flags |= PY_PROC_COPIED;
	if (flags || children)
		proc_event(PY_PROC_FORK, pid, ppid, flags, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, tid;
	bool was_profiled = !bpf_map_delete_elem(&targets, &pid);
	__u32 *follow = bpf_map_lookup_elem(&followed, &pid), flags = 0;

	/* --mem's peak marker (memory.bpf.c): the new image starts its own peak. */
	bpf_map_delete_elem(&rss_peak, &pid);
	/* --mode wall, --gil (offcpu.bpf.c): the old image's GIL is gone with it. */
	bpf_map_delete_elem(&gil_addrs, &pid);
	/*
	 * And its thread starts afresh: until userspace profiles the new image
	 * its switches are not followed, and an interval or return kept from
	 * the old one would be taken for a switch the kernel did not report.
	 */
	tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_delete_elem(&offcpu_start, &tid);
	/* its thread state too: a "none" believed for the old image is no answer for the new */
	bpf_map_delete_elem(&threads, &tid);
	/*
	 * Held only when the notice that makes userspace send SIGCONT has room
	 * in the ring (proc_event counts a notice it cannot send): a stop that
	 * nobody would end is never sent. SIGSTOP is delivered on the way back
	 * to user space: not one instruction of the new image runs before it.
	 */
	if (follow && (*follow & PY_FOLLOW_HOLD) &&
	    bpf_ringbuf_query(&proc_events, BPF_RB_AVAIL_DATA) + 4096 < PROC_EVENTS_SIZE &&
	    !bpf_send_signal(19 /* SIGSTOP */))
		flags |= PY_PROC_HELD;
	/* A new image is worth a look in -a mode, or when this pid is followed. */
	if (was_profiled || track_all || follow)
		proc_event(PY_PROC_EXEC, pid, 0, flags, BPF_RB_FORCE_WAKEUP);
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
