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
 * the same pid, tid and ktime_ns; --native then the user registers and
 * stack (struct py_ustack) of a tick in native code or the kernel, or of
 * one in the interpreter whose Python stack spans several calls of the eval
 * loop (native code may be between them: a C function calling back into
 * Python). A tick in the interpreter under one such call, the common case,
 * sends nothing more.
 */
#ifndef PYBPFPROF_BPF_NATIVE_H
#define PYBPFPROF_BPF_NATIVE_H

#include "emit_stack.h"

/* Set by the loader before load (--kernel, --native). */
const volatile bool native_kernel = false;
const volatile bool native_user = false;
/* Kernel and user stacks not sent: the ring buffer was full. Read by userspace. */
__u64 kstack_lost = 0;
__u64 ustack_lost = 0;

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
 * Bytes from sp up to the end of the stack's mapping or PY_USTACK_BYTES,
 * whichever is less. A read that crosses the end fails as a whole, and the
 * main thread's stack ends a few KiB above main's frame (its environment
 * strings): the pages after sp's are tried one byte each.
 */
static __always_inline __u64 ustack_len(__u64 sp)
{
	__u64 n = 4096 - (sp & 4095);
	char byte;
	int i;

	for (i = 0; i < PY_USTACK_BYTES / 4096; i++) {
		if (n >= PY_USTACK_BYTES || bpf_probe_read_user(&byte, 1, (void *)(sp + n)))
			break;
		n += 4096;
	}
	return n < PY_USTACK_BYTES ? n : PY_USTACK_BYTES;
}

/*
 * The user registers, the top of the user stack and which Python frames
 * began a call of the eval loop (s's walk). In kernel mode the registers
 * are the ones saved at the kernel's entry.
 */
static __always_inline void native_send_ustack(struct bpf_perf_event_data *ctx,
					       const struct scratch *s, bool user_mode)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), len;
	struct pt_regs *regs;
	struct py_ustack *u;

	u = bpf_ringbuf_reserve(&samples, sizeof(*u), 0);
	if (!u) {
		__sync_fetch_and_add(&ustack_lost, 1);
		return;
	}
	if (user_mode) {
		u->ip = ctx->regs.ip;
		u->sp = ctx->regs.sp;
		u->bp = ctx->regs.bp;
		u->bx = ctx->regs.bx;
		u->r12 = ctx->regs.r12;
		u->r13 = ctx->regs.r13;
		u->r14 = ctx->regs.r14;
		u->r15 = ctx->regs.r15;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		u->ip = BPF_CORE_READ(regs, ip);
		u->sp = BPF_CORE_READ(regs, sp);
		u->bp = BPF_CORE_READ(regs, bp);
		u->bx = BPF_CORE_READ(regs, bx);
		u->r12 = BPF_CORE_READ(regs, r12);
		u->r13 = BPF_CORE_READ(regs, r13);
		u->r14 = BPF_CORE_READ(regs, r14);
		u->r15 = BPF_CORE_READ(regs, r15);
	}
	__builtin_memcpy(u->entry_mask, s->entry_mask, sizeof(u->entry_mask));
	__builtin_memcpy(u->shim_addr, s->shim_addr, sizeof(u->shim_addr));
	u->nshims = s->nshims;
	u->pad = 0;
	len = ustack_len(u->sp);
	u->value = bpf_probe_read_user(u->stack, len, (void *)u->sp) ? 0 : len;
	u->pid = pid_tgid >> 32;
	u->tid = (__u32)pid_tgid;
	u->ktime_ns = s->sample.ktime_ns;
	u->nframes = 0;
	u->flags = 0;
	u->kind = PY_KIND_USTACK;
	u->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(u, BPF_RB_NO_WAKEUP);
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
	ret = emit_stack_in(s, PY_KIND_CPU, 0, where, native_user);
	if (!ret && native_kernel && where == PY_WHERE_SYSTEM)
		native_send_kstack(ctx, s->sample.ktime_ns);
	if (!ret && (s->sample.flags & PY_SAMPLE_USTACK))
		native_send_ustack(ctx, s, where != PY_WHERE_SYSTEM);
	scratch_put(level);
	return ret;
}

#endif /* PYBPFPROF_BPF_NATIVE_H */
