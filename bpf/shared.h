/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every BPF file of pybpfprof starts with: the kernel's types, libbpf's
 * helpers, the ABI shared with userspace, the stack walk's types; the maps
 * that several features share, and the small helpers every feature uses
 * (counters, the per-CPU scratch).
 *
 * A shared map is defined once, in shared.bpf.c, and declared extern here
 * for the other files; the static linker (bpftool gen object) resolves the
 * declarations to the definition. libbpf's linker wants an extern map to
 * match its definition exactly (type, key, value, max_entries, flags), so
 * both are written with the one named struct below.
 */
#ifndef PYBPFPROF_BPF_SHARED_H
#define PYBPFPROF_BPF_SHARED_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bpf_abi.h"
#include "stackwalk.h"

/* Bytes of the sample ring buffer; the reader is woken early when an eighth is used. */
#define RINGBUF_SIZE (8 << 20)

/* tid -> PyThreadState address, checked again at every use (thread_id == fsbase). */
struct thread_entry {
	__u64 tstate; /* 0: none found at checked_ns */
	__u64 checked_ns;
	__u32 pid;
	__u32 pad;
};

/*
 * Scratch (struct scratch, stackwalk.h): two per CPU, taken in turn. The
 * cpu-clock sampler can interrupt an event program (a USDT probe, a
 * tracepoint) on the same CPU while that program is using its scratch;
 * measured here, a shared one gave the interrupted program the sampler's last
 * frame. Interrupts nest strictly, so a per-CPU level counter taken and given
 * back around each use is enough.
 */
#define SCRATCH_LEVELS 2

/* Profiled processes: pid -> where their interpreter is and how to read it. */
struct targets_def {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct py_target);
};

/*
 * The thread-state cache (emit_stack.h): how long "this thread has no
 * PyThreadState" is believed is NO_TSTATE_RECHECK_NS there.
 */
struct threads_def {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct thread_entry);
};

/* Stack records of every kind (struct py_sample), and --gc's frameless ones. */
struct samples_def {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_SIZE);
};

/* Innermost code objects already sent (address ^ fingerprint): see the wakeup rule. */
struct seen_code_def {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u8);
};

struct counters_def {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PYPROF_CNT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
};

/* The sample being built and the objects being decoded, SCRATCH_LEVELS per CPU. */
struct scratch_map_def {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct scratch);
};

struct scratch_level_def {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};

/*
 * pid -> highest resident pages seen at a sampled fault: the peak marker
 * (--mem, memory.bpf.c). Forgotten at exec (process.bpf.c): the new image
 * starts its own peak.
 */
struct rss_peak_def {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u64);
};

/*
 * --mode wall, --gil: tid -> its off-CPU interval (offcpu.bpf.c), which an
 * exec (process.bpf.c) resets. A plain hash: an LRU map could evict an open
 * interval, and each entry's lifetime is bounded by its thread's.
 */
struct offcpu_start_def {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct py_offcpu_open);
};

/* --mode wall, --gil: pid -> the process's GIL (userspace fills it where it knows it). */
struct gil_addrs_def {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PYPROF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct py_gil_info);
};

extern struct targets_def targets SEC(".maps");
extern struct threads_def threads SEC(".maps");
extern struct samples_def samples SEC(".maps");
extern struct seen_code_def seen_code SEC(".maps");
extern struct counters_def counters SEC(".maps");
extern struct scratch_map_def scratch_map SEC(".maps");
extern struct scratch_level_def scratch_level SEC(".maps");
extern struct rss_peak_def rss_peak SEC(".maps");
extern struct gil_addrs_def gil_addrs SEC(".maps");
extern struct offcpu_start_def offcpu_start SEC(".maps");

static __always_inline int stackwalk_module_sent(__u64 key)
{
	return bpf_map_lookup_elem(&seen_code, &key) != NULL;
}

/* This activation's scratch, or NULL (nested too deep); give it back with scratch_put. */
static __always_inline struct scratch *scratch_get(__u32 **level)
{
	__u32 zero = 0, idx, *l = bpf_map_lookup_elem(&scratch_level, &zero);
	struct scratch *s;

	if (!l)
		return NULL;
	idx = *l;
	if (idx >= SCRATCH_LEVELS)
		return NULL;
	s = bpf_map_lookup_elem(&scratch_map, &idx);
	if (!s)
		return NULL;
	*l = idx + 1;
	*level = l;
	return s;
}

static __always_inline void scratch_put(__u32 *level)
{
	if (*level)
		*level -= 1;
}

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);

	if (v)
		*v += 1;
}

/* A stack counter, in the bank of the sample kind's family. */
static __always_inline void count_kind(__u8 kind, __u32 which)
{
	count(PYPROF_CNT_INDEX(kind, which));
}

#endif /* PYBPFPROF_BPF_SHARED_H */
