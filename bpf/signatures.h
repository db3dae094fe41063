/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --signatures: the argument types of a CPU sample's innermost frames, read
 * at the tick while the frames are live, sent as one struct py_sig_record
 * just before the sample itself (bpf_abi.h). Every read may fail and every
 * loop is bounded (PY_SIG_FRAMES x PY_SIG_ARGS); nothing is dereferenced
 * beyond an argument's first PY_SIG_HEAD bytes and, for what may be a numpy
 * array, its PY_SIG_NDIM dimensions. Userspace names the types.
 */
#ifndef PYBPFPROF_BPF_SIGNATURES_H
#define PYBPFPROF_BPF_SIGNATURES_H

#include "shared.h"

/*
 * Set by userspace after load (--signatures: session__signatures); 0: the
 * feature costs one load and branch per sample.
 */
extern volatile __u32 signatures_on;
/*
 * Records lost (ring buffer full) and sent, and the time spent building
 * them (bench/signatures.py reads it: the feature's own cost per sample).
 */
extern __u64 sig_dropped, sig_sent, sig_ns;

/* pid -> where its frames keep their arguments (GIL builds only). */
struct sig_offsets_def {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct py_sig_offsets);
};

/*
 * The record being built, one per CPU: only the cpu-clock program sends
 * one, and it does not interrupt itself.
 */
struct sig_scratch_def {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_sig_record);
};

extern struct sig_offsets_def sig_offsets SEC(".maps");
extern struct sig_scratch_def sig_scratch SEC(".maps");

#define CO_VARARGS 4
#define CO_VARKEYWORDS 8

/* One argument: its type, and if it may be an ndarray the words of its shape and dtype. */
static __always_inline void sig_arg(const struct py_sig_offsets *so, __u64 v, struct py_sig_arg *a)
{
	__u64 head[PY_SIG_HEAD / 8];
	__u32 nd;

	if (so->stackref) {
		if ((v & 3) == 3) {
			a->flags = PY_SIG_TAGGED_INT;
			return;
		}
		v &= ~(__u64)3;
	}
	if (!v) {
		a->flags = PY_SIG_UNBOUND;
		return;
	}
	if (bpf_probe_read_user(head, sizeof(head), (const void *)v)) {
		/* a small object at the end of a mapping: its header alone */
		if (bpf_probe_read_user(head, 16, (const void *)v))
			a->flags = PY_SIG_UNREAD;
		else
			a->type = head[1];
		return;
	}
	/* PyObject.ob_type; PyArrayObject_fields: nd at 24, dimensions at 32, descr at 56 */
	a->type = head[1];
	a->nd = (__s32)head[3];
	a->descr = head[7];
	nd = (__u32)a->nd;
	if (nd < 1 || nd > PY_SIG_NDIM)
		return;
	/*
	 * numpy allocates an array's strides right after its dimensions: a
	 * cheap test that spares other objects (an int's digits where nd would
	 * be) a read at a pointer they do not have.
	 */
	if (head[5] != head[4] + 8 * (__u64)nd)
		return;
	nd = ((nd - 1) & (PY_SIG_NDIM - 1)) + 1;
	if (!bpf_probe_read_user(a->dims, nd * 8, (const void *)head[4]))
		a->flags = PY_SIG_DIMS;
}

/* One frame's arguments being read: a bpf_loop's context (verified once, not per argument). */
struct sig_ctx {
	const struct py_sig_offsets *so;
	struct py_sig_frame *out;
	__u64 slots[PY_SIG_ARGS];
	__u32 n;
};

STACKWALK_CALLBACK sig_arg_step(__u32 j, void *data)
{
	struct sig_ctx *c = data;
	__u64 k = j;

	/* one register for the check and the index, so the verifier sees the bound */
	barrier_var(k);
	if (k >= PY_SIG_ARGS || k >= c->n)
		return 1;
	sig_arg(c->so, c->slots[k], &c->out->args[k]);
	return 0;
}

/* The arguments of the frame at frame running code (the sample's frame f). */
static __always_inline void sig_frame(const struct py_sig_offsets *so, __u64 frame,
				      const struct py_frame *f, struct py_sig_frame *out)
{
	struct sig_ctx c = { .so = so, .out = out };
	__u8 code[PY_SIG_CODE_READ];
	__s32 counts[3], flags;
	__u32 n;

	out->code = f->code;
	out->fingerprint = f->fingerprint;
	/* co_flags and co_argcount, co_posonlyargcount, co_kwonlyargcount: one read */
	if (bpf_probe_read_user(code, sizeof(code), (const void *)(f->code + so->code_counts)))
		return;
	if (so->argcount > PY_SIG_CODE_READ - 12 || so->flags > PY_SIG_CODE_READ - 4)
		return;
	__builtin_memcpy(counts, code + (so->argcount & 15), sizeof(counts));
	__builtin_memcpy(&flags, code + (so->flags & 31), sizeof(flags));
	if (counts[0] < 0 || counts[0] > 255 || counts[2] < 0 || counts[2] > 255)
		return;
	n = counts[0] + counts[2] + !!(flags & CO_VARARGS) + !!(flags & CO_VARKEYWORDS);
	out->nargs = n;
	if (n > PY_SIG_ARGS)
		n = PY_SIG_ARGS;
	if (!n || bpf_probe_read_user(c.slots, sizeof(c.slots),
				      (const void *)(frame + so->frame_localsplus)))
		return;
	out->nread = n;
	c.n = n;
	bpf_loop(PY_SIG_ARGS, sig_arg_step, &c, 0);
}

/*
 * Sends the signature record of the sample in s (w: its walk) before the
 * sample itself, so that userspace has it when the sample comes.
 */
static __always_inline void emit_signatures(const struct walk_ctx *w, const struct scratch *s)
{
	const struct py_sample *smp = &s->sample;
	const struct py_sig_offsets *so;
	struct py_sig_record *r;
	__u32 pid = smp->pid, zero = 0;
	__u64 t0;

	if (!signatures_on)
		return;
	t0 = bpf_ktime_get_ns();
	so = bpf_map_lookup_elem(&sig_offsets, &pid);
	r = bpf_map_lookup_elem(&sig_scratch, &zero);
	if (!so || !r)
		return;
	__builtin_memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->tid = smp->tid;
	r->ktime_ns = smp->ktime_ns;
	r->kind = PY_KIND_SIGNATURE;
	r->cpu = smp->cpu;
	r->value = w->n < PY_SIG_FRAMES ? w->n : PY_SIG_FRAMES;
	if (w->n > 0)
		sig_frame(so, s->frame_addr[0], &smp->frames[0], &r->frames[0]);
	if (w->n > 1)
		sig_frame(so, s->frame_addr[1], &smp->frames[1], &r->frames[1]);
	if (bpf_ringbuf_output(&samples, r, sizeof(*r), BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&sig_dropped, 1);
	else
		__sync_fetch_and_add(&sig_sent, 1);
	__sync_fetch_and_add(&sig_ns, bpf_ktime_get_ns() - t0);
}

#endif /* PYBPFPROF_BPF_SIGNATURES_H */
