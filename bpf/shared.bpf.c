// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the features' files share, defined once: the license, the settings
 * the loader writes before load, and the maps that more than one feature
 * uses. The other files declare these maps extern (shared.h); the static
 * linker (bpftool gen object) resolves them to the definitions here, so the
 * linked object and its skeleton hold each map once, under its own name.
 *
 * The BPF side, one file per feature, linked into one object and one
 * skeleton (pybpfprof.skel.h):
 *   shared.bpf.c     this file; shared.h declares what it defines
 *   stackwalk.h      the Python stack walk (also host C, for the unit tests)
 *   emit_stack.h     a thread's stack sent as one ring-buffer record
 *   cpu.bpf.c        CPU sampling
 *   process.bpf.c    process tracking: fork, exec, exit
 *   calls.bpf.c      --calls: USDT function entry/return, call statistics
 *   gc_imports.bpf.c --gc and --imports (USDT)
 *   memory.bpf.c     --mem: page faults, mmap/brk, allocator uprobes
 *   offcpu.bpf.c     --mode wall, --gil: off-CPU intervals (sched_switch)
 *   signatures.h     --signatures: argument types of the sampled frames
 */
#include "shared.h"
#include "signatures.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before load; frozen afterwards, so the verifier sees constants. */
const volatile __u32 max_depth = PYPROF_DEFAULT_DEPTH;
/* --mode wall, --gil: CPU samples carry their thread's GIL state (emit_stack.h). */
const volatile __u8 gil_follow = 0;
/* --opcodes: CPU samples carry their innermost frame's instruction (emit_stack.h). */
const volatile __u8 opcodes_on = 0;
/* --exceptions, --mode exception: CPU samples say if their thread handles one (emit_stack.h). */
const volatile __u8 exc_on = 0;
__u64 tick_exc_ns = 0, tick_exc_reads = 0, tick_op_ns = 0, tick_op_reads = 0;

/* The maps of shared.h, defined (their comments are there). */
struct targets_def targets SEC(".maps");
struct threads_def threads SEC(".maps");
struct samples_def samples SEC(".maps");
struct seen_code_def seen_code SEC(".maps");
struct counters_def counters SEC(".maps");
struct scratch_map_def scratch_map SEC(".maps");
struct scratch_level_def scratch_level SEC(".maps");
struct rss_peak_def rss_peak SEC(".maps");
struct gil_addrs_def gil_addrs SEC(".maps");
struct offcpu_start_def offcpu_start SEC(".maps");

/* --signatures (signatures.h): here, as every file's CPU stack walk uses them. */
volatile __u32 signatures_on = 0;
__u64 sig_dropped = 0, sig_sent = 0, sig_ns = 0;
struct sig_offsets_def sig_offsets SEC(".maps");
struct sig_scratch_def sig_scratch SEC(".maps");
