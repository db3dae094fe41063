// SPDX-License-Identifier: GPL-2.0-only
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
#include "emit_stack.h"

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

/* This CPU's page-fault count at its last sample: see faults_since_last_sample. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} faults_at_sample SEC(".maps");

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
	__u64 arg0, arg1, arg2, arg3;
	__u64 brk_before; /* brk: the break before the call */
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
	call.arg3 = BPF_CORE_READ(regs, r10); /* the fourth system call argument */
	if (nr == NR_BRK) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		call.brk_before = BPF_CORE_READ(task, mm, brk);
	}
	bpf_map_update_elem(&mem_calls, &tid, &call, BPF_ANY);
	return 0;
}

/* Range records that found the ring buffer full: their releases go unmatched. */
__u64 ranges_lost;

/* The stack record of a memory call; its ktime_ns if one was sent, else 0. */
static __always_inline __u64 emit_mem_stack(__u8 kind, __u64 bytes)
{
	struct scratch *s;
	__u32 *level;
	__u64 sent_ns = 0;

	s = scratch_get(&level);
	if (!s) {
		count_kind(kind, PYPROF_CNT_DROPPED);
		return 0;
	}
	if (!emit_stack_in(s, kind, bytes, 0, false))
		sent_ns = s->sample.ktime_ns;
	scratch_put(level);
	return sent_ns;
}

/*
 * The call's addresses (struct py_mem_range), after its stack record: every
 * call is sent, with a stack or not, or a release could not be matched.
 */
static __always_inline void emit_mem_range(const struct mem_call *call, __s64 ret, __u64 stack_ns)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct py_mem_range r = {};

	r.pid = pid_tgid >> 32;
	r.tid = (__u32)pid_tgid;
	r.ktime_ns = bpf_ktime_get_ns();
	r.kind = PY_KIND_MEM_RANGE;
	r.value = stack_ns;
	switch (call->nr) {
	case NR_MMAP:
		r.op = PY_MEM_MMAP;
		r.addr = ret;
		r.len = PAGE_ROUND(call->arg1);
		break;
	case NR_MUNMAP:
		r.op = PY_MEM_MUNMAP;
		r.addr = call->arg0;
		r.len = PAGE_ROUND(call->arg1);
		break;
	case NR_MREMAP:
		r.op = PY_MEM_MREMAP;
		r.addr = call->arg0;
		r.len = PAGE_ROUND(call->arg1);
		r.new_addr = ret;
		r.new_len = PAGE_ROUND(call->arg2);
		r.remap_flags = call->arg3;
		break;
	default:
		r.op = PY_MEM_BRK;
		r.addr = call->brk_before;
		r.new_addr = ret;
		break;
	}
	if (bpf_ringbuf_output(&samples, &r, sizeof(r), 0))
		__sync_fetch_and_add(&ranges_lost, 1);
}

SEC("raw_tracepoint/sys_exit")
int on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u32 tid;
	__s64 ret = ctx->args[1], delta = 0;
	struct mem_call *found, call;
	__u64 nr, stack_ns = 0;

	/* This runs at the end of every system call on the machine: the number first. */
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr != NR_MMAP && nr != NR_MUNMAP && nr != NR_BRK && nr != NR_MREMAP)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	found = bpf_map_lookup_elem(&mem_calls, &tid);
	if (!found)
		return 0;
	call = *found;
	bpf_map_delete_elem(&mem_calls, &tid);
	/* -4095..-1 are errors; mmap and mremap return addresses, munmap 0. */
	if (ret < 0 && ret >= -4095)
		return 0;
	switch (call.nr) {
	case NR_MMAP:
		delta = PAGE_ROUND(call.arg1);
		break;
	case NR_MUNMAP:
		delta = -(__s64)PAGE_ROUND(call.arg1);
		break;
	case NR_MREMAP: /* (old_address, old_size, new_size) */
		delta = (__s64)PAGE_ROUND(call.arg2) - (__s64)PAGE_ROUND(call.arg1);
		break;
	case NR_BRK: /* returns the new break; brk(0) and a refusal leave it as it was */
		delta = (__s64)PAGE_ROUND(ret) - (__s64)PAGE_ROUND(call.brk_before);
		if (!delta)
			return 0;
		break;
	}
	if (delta > 0)
		stack_ns = emit_mem_stack(PY_KIND_MAP, delta);
	else if (delta < 0)
		stack_ns = emit_mem_stack(PY_KIND_UNMAP, -delta);
	emit_mem_range(&call, ret, stack_ns);
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
__u64 live_full; /* sampled allocations the live map had no room for */

/* An allocator call between its entry and its return, per thread. */
struct alloc_call {
	__u64 weight;	/* 0: not sampled */
	__u64 memptr;	/* posix_memalign: where the address will be written */
	__u64 start_ns; /* entry time: an entry this old lost its return (see below) */
	__u32 depth;	/* allocator entries nested inside this one (realloc -> malloc) */
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
	if (call.memptr) { /* posix_memalign: 0 on success, the address stored at memptr */
		if ((int)ret || call.memptr == 1) /* an int: the upper half of rax is undefined */
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
	sent = emit_stack_in(s, PY_KIND_ALLOC, call.weight, 0, false);
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
