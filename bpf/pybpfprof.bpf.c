// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampler: a perf_event program on the cpu-clock software event, one event
 * per CPU. At each tick it keeps only threads of profiled processes (pid in
 * `procs`), finds the thread's PyThreadState, walks the Python frame chain and
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
#include "bpf_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; frozen afterwards, so the verifier sees constants. */
const volatile __u32 max_depth = PYPROF_DEFAULT_DEPTH;

/* Bytes of the sample ring buffer; the reader is woken early when an eighth is used. */
#define RINGBUF_SIZE (8 << 20)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct py_proc);
} procs SEC(".maps");

/* tid -> PyThreadState address, checked again at every use (thread_id == fsbase). */
struct thread_entry {
	__u64 tstate;
	__u32 pid;
	__u32 pad;
};

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
	__uint(max_entries, PYPROF_CNT_MAX);
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
 * One scratch per CPU and per context: the cpu-clock sampler runs from the
 * timer interrupt and can interrupt a program running in process context
 * (a raw tracepoint at a system call's exit, say) in the middle of its walk;
 * sharing one buffer would corrupt that program's record. Process-context
 * programs do not nest in each other (page faults cannot happen inside BPF,
 * uprobes fire in user mode).
 */
#define SCRATCH_IRQ 0		/* PY_KIND_CPU: the timer-interrupt sampler */
#define SCRATCH_TASK 1		/* every other kind: programs in process context */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);

	if (v)
		*v += 1;
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
static __always_inline __u64 find_tstate(const struct py_proc *proc, __u32 pid, __u32 tid,
					 __u64 fsbase)
{
	const struct py_offsets *off = &proc->off;
	struct thread_entry *cached, fresh = {};
	struct scan_ctx c = { .fsbase = fsbase, .off = off };

	cached = bpf_map_lookup_elem(&threads, &tid);
	if (cached && cached->pid == pid &&
	    read_word(cached->tstate + off->tstate_thread_id) == fsbase)
		return cached->tstate;

	count(PYPROF_CNT_TSTATE_SCAN);
	c.interp = read_word(proc->runtime_addr + off->runtime_interp_head);
	c.t = c.interp ? read_word(c.interp + off->interp_threads_head) : 0;
	bpf_loop(PYPROF_MAX_THREADS + PYPROF_MAX_INTERPS, scan_step, &c, 0);
	if (c.found) {
		fresh.tstate = c.found;
		fresh.pid = pid;
		bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	}
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
 * `procs` cost one hash lookup. Returns 0 when a record was sent.
 */
static __always_inline int emit_stack_flags(__u8 kind, __u64 value, __u8 flags)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 slot = kind == PY_KIND_CPU ? SCRATCH_IRQ : SCRATCH_TASK;
	struct walk_ctx w = {};
	struct task_struct *task;
	struct py_proc *proc;
	struct scratch *s;
	__u64 tstate, fsbase, size, wake, seen_key;
	__u8 one = 1;

	proc = bpf_map_lookup_elem(&procs, &pid);
	if (!proc)
		return -1;
	count(PYPROF_CNT_EVENTS);

	task = (struct task_struct *)bpf_get_current_task();
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	tstate = find_tstate(proc, pid, tid, fsbase);
	if (!tstate) {
		count(PYPROF_CNT_NO_TSTATE);
		return -1;
	}
	w.f = current_frame(&proc->off, tstate);
	if (!w.f) {
		count(PYPROF_CNT_NO_FRAME);
		return -1;
	}
	s = bpf_map_lookup_elem(&scratch_map, &slot);
	if (!s)
		return -1;
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
		count(PYPROF_CNT_TRUNCATED);
	if (s->sample.flags & PY_SAMPLE_READ_ERROR)
		count(PYPROF_CNT_READ_ERROR);
	if (!w.n) {
		count(PYPROF_CNT_NO_FRAME);
		return -1;
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
		count(PYPROF_CNT_DROPPED);
		return -1;
	}
	count(PYPROF_CNT_SENT);
	return 0;
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
 * --mem: where memory grows. Two kinds of kernel events that every process
 * has, so nothing is injected into the target:
 *  - the page-faults software event, one sample per mem_period faults on each
 *    CPU: a fault is the first touch of a page, so the faulting Python line is
 *    the one that made the memory resident; each sample stands for
 *    mem_period pages (fault_bytes);
 *  - the mmap, munmap, mremap and brk system calls, with their sizes: where
 *    address space is taken and given back, exactly, however large.
 * Both run for every process on the machine; others cost one hash lookup
 * (page faults) or a compare of the syscall number (system calls).
 */
/* Set by userspace after load (--mem-period x page size): a plain global, not rodata. */
__u64 fault_bytes = 64 * 4096;

/* pid -> highest resident pages seen at a sampled fault: the peak marker. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u64);
} rss_peak SEC(".maps");

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

SEC("perf_event")
int on_page_fault(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 rss, *peak;
	__u8 flags = 0;

	if (!bpf_map_lookup_elem(&procs, &pid))
		return 0;
	rss = current_rss_pages();
	peak = bpf_map_lookup_elem(&rss_peak, &pid);
	if (!peak || rss > *peak)
		flags = PY_SAMPLE_RSS_PEAK;
	/* The peak moves only with a stack that reached userspace. */
	if (!emit_stack_flags(PY_KIND_PAGE_FAULT, fault_bytes, flags) && flags)
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
	if (!bpf_map_lookup_elem(&procs, &pid))
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
	__type(key, __u64);
	__type(value, struct py_live_alloc);
} live_allocs SEC(".maps");

/* Weight of this allocation if it is sampled, else 0; moves the thread's countdown. */
static __always_inline __u64 alloc_sample(__u32 tid, __u64 size)
{
	__u64 period = alloc_period, *left, fresh;

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
	*left += period - size;
	return period;
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
		bpf_map_delete_elem(&live_allocs, &freed);
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
	__u32 tid = (__u32)pid_tgid, slot = SCRATCH_TASK;
	struct py_live_alloc live = {};
	struct alloc_call *c, call;
	struct scratch *s;

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
		if (ret || call.memptr == 1)
			return 0;
		addr = read_word(call.memptr);
	}
	if (!addr || emit_stack(PY_KIND_ALLOC, call.weight))
		return 0;
	/* The record just sent is still in this CPU's scratch: its time names it. */
	s = bpf_map_lookup_elem(&scratch_map, &slot);
	if (!s)
		return 0;
	live.pid = pid_tgid >> 32;
	live.tid = tid;
	live.ktime_ns = s->sample.ktime_ns;
	live.bytes = call.weight;
	if (bpf_map_update_elem(&live_allocs, &addr, &live, BPF_ANY))
		__sync_fetch_and_add(&live_full, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_free, __u64 ptr)
{
	if (ptr)
		bpf_map_delete_elem(&live_allocs, &ptr);
	return 0;
}
