/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a CPU sample ran (--native, --kernel and the Python / native /
 * system split), for the cpu-clock program of cpu.bpf.c only.
 *
 * The split costs one register test per tick, and for a tick in user mode
 * one lookup of the process's interpreter text range: classifying here
 * keeps the sample record as it is (two flag bits) instead of sending the
 * instruction pointer to userspace and reading /proc/PID/maps there.
 *
 * --kernel sends the kernel stack of a tick taken in kernel mode as a
 * companion record (struct py_kstack) right after the Python stack, with
 * the same pid, tid and ktime_ns.
 */
#ifndef PYBPFPROF_BPF_NATIVE_H
#define PYBPFPROF_BPF_NATIVE_H

#include "emit_stack.h"

/* Set by the loader before load (--kernel). */
const volatile bool native_kernel = false;
/* Kernel stacks not sent: the ring buffer was full. Read by userspace. */
__u64 kstack_lost = 0;

/* The enum py_sample_where flags of a tick with these registers. */
static __always_inline __u8 native_where(const struct bpf_perf_event_data *ctx,
					 const struct py_target *proc)
{
	__u64 ip = ctx->regs.ip;

	/* the privilege level of the interrupted code, 0 for the kernel (csx: the context is read by whole words) */
	if (!(ctx->regs.csx & 3))
		return PY_WHERE_SYSTEM;
	if (!proc->interp_text_end)
		return 0;
	if (ip >= proc->interp_text_start && ip < proc->interp_text_end)
		return PY_WHERE_PYTHON;
	return PY_WHERE_NATIVE;
}

/* The kernel stack of this tick, after the sample that was sent at ktime_ns. */
static __always_inline void native_send_kstack(struct bpf_perf_event_data *ctx, __u64 ktime_ns)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct py_kstack *k;
	long n;

	k = bpf_ringbuf_reserve(&samples, sizeof(*k), 0);
	if (!k) {
		__sync_fetch_and_add(&kstack_lost, 1);
		return;
	}
	n = bpf_get_stack(ctx, k->addrs, sizeof(k->addrs), 0);
	k->pid = pid_tgid >> 32;
	k->tid = (__u32)pid_tgid;
	k->ktime_ns = ktime_ns;
	k->nframes = 0;
	k->flags = 0;
	k->kind = PY_KIND_KSTACK;
	k->cpu = bpf_get_smp_processor_id();
	k->value = n > 0 ? (__u64)n / 8 : 0;
	bpf_ringbuf_submit(k, BPF_RB_NO_WAKEUP);
}

/*
 * emit_stack_flags for the CPU sampler, followed by the companion records
 * the options ask for. The scratch is held until they are sent: they name
 * the sample by its ktime_ns.
 */
static __always_inline int native_emit_cpu(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, *level;
	const struct py_target *proc;
	struct scratch *s;
	__u8 where;
	int ret;

	proc = bpf_map_lookup_elem(&targets, &pid);
	if (!proc)
		return -1;
	where = native_where(ctx, proc);
	s = scratch_get(&level);
	if (!s) {
		count_kind(PY_KIND_CPU, PYPROF_CNT_DROPPED);
		return -1;
	}
	ret = emit_stack_in(s, PY_KIND_CPU, 0, where);
	if (!ret && native_kernel && where == PY_WHERE_SYSTEM)
		native_send_kstack(ctx, s->sample.ktime_ns);
	scratch_put(level);
	return ret;
}

#endif /* PYBPFPROF_BPF_NATIVE_H */
