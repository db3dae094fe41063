/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The in-memory profile: interned functions and frames, and per process the
 * distinct stacks (per thread) with their sample counts. Everything a report
 * writer needs, and nothing BPF- or CPython-specific: writers read only this.
 */
#ifndef PYBPFPROF_PROFILE_H
#define PYBPFPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile/mem_ranges.h"
#include "profile/timeline.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* What a function is: Python code, or (--native, --kernel) machine code. */
enum profile_func_kind {
	PROFILE_FUNC_PYTHON = 0,
	PROFILE_FUNC_NATIVE = 1, /* qualname: symbol or library+0xoffset; file: the library */
	PROFILE_FUNC_KERNEL = 2, /* qualname: kallsyms symbol or 0xaddress; file: "[kernel]" */
};

struct profile_func {
	char *qualname;
	char *file; /* as the process sees it */
	int firstline;
	bool unresolved; /* stands for code objects that could not be read */
	uint8_t kind;	 /* enum profile_func_kind */
};

struct profile_frame {
	uint32_t func;
	int line; /* -1: unknown */
};

/*
 * Where a CPU sample's thread was running (the Python / native / system
 * split): in the interpreter's own code, in other native code, or in the
 * kernel.
 */
enum profile_where {
	PROFILE_WHERE_PYTHON,
	PROFILE_WHERE_NATIVE,
	PROFILE_WHERE_SYSTEM,
	PROFILE_WHERE_N,
};

/*
 * --opcodes: the samples of one instruction at a stack's innermost frame, by
 * its name's index in the profile's opnames.
 */
struct profile_op_count {
	uint32_t op;
	uint64_t samples;
};

struct profile_stack {
	uint32_t tid;
	uint32_t nframes;
	uint32_t *frames; /* frame ids, innermost first */
	uint64_t count;
	/*
	 * --gil: of count, CPU samples taken holding the GIL, running without
	 * it, and whose process's GIL was not known yet (or not found)
	 */
	uint64_t gil_held, gil_released, gil_unknown;
	uint64_t where[PROFILE_WHERE_N]; /* of count, samples known to run there */
	/*
	 * Of count, CPU samples whose thread was handling an exception (in an
	 * except block, or in code called from one), and those whose thread's
	 * exception state could not be read (profile.exc_known)
	 */
	uint64_t exc, exc_unknown;
	/*
	 * --opcodes: of count, the samples whose innermost frame (a Python one)
	 * was running each instruction; those whose instruction could not be
	 * read are in none
	 */
	struct profile_op_count *ops;
	size_t nops, cap_ops;
};

/* --opcodes: an instruction's name, and the one it specialises (its own index if none). */
struct profile_opname {
	char *name;
	uint32_t base;
};

/*
 * --mode wall: why a thread was off the CPU (the same numbering as enum
 * py_offcpu_class of the BPF ABI). An off-CPU interval is a stack whose
 * innermost frame is the pseudo-function "<off-CPU: CLASS>" of file
 * PROFILE_OFFCPU_FILE, its count the interval's length in samples (ns x Hz).
 */
enum profile_offcpu_class {
	PROFILE_OFFCPU_SLEEP,
	PROFILE_OFFCPU_IO,
	PROFILE_OFFCPU_LOCK,
	PROFILE_OFFCPU_GIL,
	PROFILE_OFFCPU_RUNQUEUE,
	PROFILE_OFFCPU_OTHER,
	PROFILE_OFFCPU_NCLASSES,
};
#define PROFILE_OFFCPU_FILE "<off-CPU>"

/* Bytes of a thread's Python (threading) name kept, with its NUL. */
#define PROFILE_PYNAME 64

struct profile_thread {
	uint32_t tid;
	char name[16];		     /* its comm, from /proc ("" not known) */
	char pyname[PROFILE_PYNAME]; /* its threading name, from its memory ("" not known) */
	uint64_t samples;	     /* its stacks' counts: --mode wall's off-CPU samples too */
	uint64_t offcpu_ns[PROFILE_OFFCPU_NCLASSES];  /* --mode wall: exact, by class */
	uint64_t gil_held, gil_released, gil_unknown; /* --gil: CPU samples */
};

/* --mode wall: a thread off the CPU now, with the stack it left with. */
struct profile_offcpu_pending {
	uint32_t tid;
	uint32_t cls;
	uint64_t start_ns; /* kernel monotonic */
	uint32_t nframes;
	uint32_t *frames;
	bool primed;	 /* blocked when the run started (read from outside) */
	uint64_t rem_ns; /* sub-sample remainder carried to the next interval */
	bool open;
};

/*
 * Exact call statistics from USDT function probes (--calls), per caller ->
 * callee edge, so pstats can carry callers with exact counts. A function's
 * own totals are the sums over its edges (inclusive time counted once per
 * outermost activation by whoever fills these in).
 */
struct profile_call_edge {
	uint32_t func;	 /* callee */
	uint32_t caller; /* UINT32_MAX: no Python caller seen (root, or attached mid-call) */
	uint64_t calls;
	uint64_t inclusive_ns;
	uint64_t exclusive_ns;
	uint64_t max_ns; /* longest single call */
};

/*
 * Memory (--mem): byte-weighted stacks, apart from the CPU stacks so neither
 * view distorts the other. Each stack (frames only, threads merged) carries
 * bytes per kind of event.
 */
enum profile_mem_kind {
	PROFILE_MEM_TOUCHED,   /* new pages first touched: sampled faults x period x page size */
	PROFILE_MEM_MAPPED,    /* mmap, brk and mremap growth: exact */
	PROFILE_MEM_UNMAPPED,  /* munmap, brk and mremap shrinking: exact */
	PROFILE_MEM_ALLOCATED, /* --mem=alloc: allocator calls sampled by bytes */
	PROFILE_MEM_LIVE,      /* --mem=alloc: of which not freed at the end */
	PROFILE_MEM_RELEASED,  /* of the ranges this stack mapped, unmapped during the run: exact */
	PROFILE_MEM_RETAINED,  /* of them, still mapped at the end or at the process's exit */
	/*
	 * Of the retained, mapped less than MEM_RANGE_RECENT_NS (1 s) before the
	 * end: in flight (a temporary built when the run ended), not held. Kept
	 * apart in saved profiles (their stacks carry the kinds before it).
	 */
	PROFILE_MEM_RETAINED_RECENT,
	PROFILE_MEM_NKINDS,
};
/* The kinds a saved profile's memory stacks list, in order (RETAINED_RECENT apart). */
#define PROFILE_MEM_SAVED_KINDS PROFILE_MEM_RETAINED_RECENT

struct profile_mem_stack {
	uint32_t nframes;
	uint32_t *frames; /* frame ids, innermost first */
	uint64_t bytes[PROFILE_MEM_NKINDS];
	uint64_t samples[PROFILE_MEM_NKINDS]; /* records that added to bytes */
};

/* One event in time, for the timeline's labels: which line did what when. */
struct profile_mem_event {
	double t_s;	/* since pybpfprof's start */
	uint32_t frame; /* innermost frame */
	uint32_t kind;	/* enum profile_mem_kind */
	uint64_t bytes;
};

/* Resident memory of the process at one moment (from /proc/PID/statm). */
struct profile_rss_point {
	double t_s;
	uint64_t rss; /* bytes */
};

#define PROFILE_MEM_MAX_EVENTS (1u << 20)

struct profile_mem {
	struct profile_mem_stack *stacks;
	size_t nstacks, cap_stacks;
	struct hashmap stack_index;		 /* frames hash -> index */
	uint64_t truncated, partial, unresolved; /* records cut or not fully named */
	uint32_t peak_stack;	       /* 1 + index of the stack of the last fault sampled at a
					 * new resident-size high; 0: none */
	uint64_t peak_rss;	       /* bytes: highest resident size seen (faults or statm) */
	double peak_t_s;	       /* when the peak stack was seen */
	struct profile_rss_point *rss; /* the timeline */
	size_t nrss, cap_rss;
	struct profile_mem_event *events; /* up to PROFILE_MEM_MAX_EVENTS */
	size_t nevents, cap_events;
	uint64_t events_dropped; /* beyond the cap: not on the timeline, still in stacks */
	uint64_t live_lost;	 /* live bytes whose allocation record never arrived */
	/* Released and retained (mem_ranges.h): which mapping each release undoes. */
	struct mem_ranges ranges;
	uint64_t released_unknown;  /* released ranges mapped before the run (or untracked) */
	uint64_t released_no_stack; /* released ranges mapped with no Python stack */
	uint64_t retained_no_stack; /* and of those, still mapped at the end */
	uint64_t retained_recent_no_stack; /* of which mapped in the last second */
	uint64_t ranges_unmatched;	   /* range records whose stack record never came */
	uint64_t retained_at_ns; /* when retained was measured (kernel monotonic); 0: unknown */
	uint64_t last_call_ns;	 /* the latest memory call seen (an exited process's end) */
};

/* Log2 latency histogram of one function's calls: bucket i counts [2^i, 2^(i+1)) ns. */
#define PROFILE_HIST_BUCKETS 40
struct profile_call_hist {
	uint32_t func;
	uint64_t buckets[PROFILE_HIST_BUCKETS];
};

/* Per-function sums over its call edges (--calls). */
struct profile_call_total {
	uint64_t calls, inclusive_ns, exclusive_ns, max_ns;
};

/* --gc: collections by generation, and the Python stacks that triggered them. */
#define PROFILE_GC_GENS 4
struct profile_gc_stat {
	uint64_t collections, total_ns, max_ns, collected;
};

struct profile_gc_stack {
	uint32_t nframes;
	uint32_t *frames; /* frame ids, innermost first; none: no Python frame */
	struct profile_gc_stat stat;
};

struct profile_gc {
	struct profile_gc_stat all, gen[PROFILE_GC_GENS];
	struct profile_gc_stack *stacks;
	size_t nstacks, cap_stacks;
};

/* --imports: one import__find__load start/done pair; nested ones point to their parent. */
struct profile_import {
	char *module;
	uint32_t tid;
	int32_t parent;	   /* index in imports, or -1 */
	uint64_t start_ns; /* kernel monotonic time */
	uint64_t ns;	   /* duration, when done */
	bool found, done;
};

/* How the USDT modes traced a process (profile_target.usdt_trace). */
enum profile_usdt_trace {
	PROFILE_USDT_FROM_START, /* every call of its Python code could be counted */
	PROFILE_USDT_LATE,	 /* it ran before its probes counted: calls before are missing */
	PROFILE_USDT_NOT_TRACED, /* no usable probes: sampled only */
};

/* How a process's section came to be (the tracker's facts, not the process's claims). */
enum profile_origin {
	PROFILE_FOUND,	  /* running when the run started or when found (-p, -a) */
	PROFILE_LAUNCHED, /* the command pybpfprof ran (-- COMMAND) */
	PROFILE_FORKED,	  /* a fork of a profiled process (ppid) */
	PROFILE_EXECED,	  /* a new image of a process seen exec (its own pid, or a child's) */
	PROFILE_ORIGIN_N
};

struct profile_target {
	int pid;
	int nspid; /* pid inside the process's own pid namespace */
	int ppid;  /* its parent when its section opened; 0 not known */
	enum profile_origin origin;
	int root_fd;		      /* O_PATH fd of its root directory (source files), or -1 */
	struct proc_sources *sources; /* whose rights its source files are read with (source.h) */
	char *exe, *cmdline, *comm, *python;
	double start_time; /* its start, seconds since the epoch (sources edited since?); 0: unknown */
	bool exited;
	uint64_t samples; /* samples with a Python stack */
	/*
	 * --mode exception: CPU samples with a Python stack left out, their
	 * thread not handling an exception, or its state not known (not in samples)
	 */
	uint64_t exc_left_out, exc_unknown_left_out;
	uint64_t truncated;  /* of which cut at the depth limit */
	uint64_t partial;    /* of which cut by an unreadable frame */
	uint64_t unresolved; /* of which had a frame that could not be named */
	struct profile_thread *threads;
	size_t nthreads, cap_threads;
	struct profile_stack *stacks;
	size_t nstacks, cap_stacks;
	struct hashmap stack_index;	 /* stack hash -> index + 1 */
	struct profile_call_edge *calls; /* --calls only; empty otherwise */
	size_t ncalls, cap_calls;
	struct profile_mem mem;		 /* --mem only; empty otherwise */
	struct profile_call_hist *hists; /* --calls only */
	size_t nhists, cap_hists;
	struct profile_gc gc;		/* --gc only */
	struct profile_import *imports; /* --imports only, in start order */
	size_t nimports, cap_imports;
	enum profile_usdt_trace usdt_trace; /* --calls, --gc, --imports */
	char *usdt_note;		    /* why late or not traced, one sentence; or NULL */
	/* --mode wall: each thread's open interval (or its last one's remainder) */
	struct profile_offcpu_pending *pending;
	size_t npending, cap_pending;
	size_t last_stack; /* index of the stack profile_target__add_stack added to */
	uint32_t tl_proc;  /* 1 + its process's index on the timeline; 0: none */
};

struct profile_counts {
	uint64_t events;      /* timer ticks that hit a profiled process */
	uint64_t dropped;     /* lost: kernel ring buffer full, or unknown process */
	uint64_t no_python;   /* ticks on a thread with no Python frame (C code, startup) */
	uint64_t unreadable;  /* ticks whose innermost frame could not be read: not sent */
	uint64_t read_errors; /* stacks with a failed read: partial ones and unreadable ones */
	uint64_t truncated;
	/*
	 * Of dropped, by cause: the kernel's ring buffer was full, the process
	 * was not (or no longer) known, the record was malformed, or it came too
	 * late to be named before the run's end. All 0 with dropped > 0: a saved
	 * profile written before they were kept.
	 */
	uint64_t dropped_ring, dropped_unknown, dropped_malformed, dropped_late;
};

/* The code-object cache (--max-cache-mb) and what staying within it cost. */
struct profile_cache_counts {
	uint64_t budget_bytes;
	uint64_t peak_bytes;
	uint64_t reads;	  /* code objects read from targets */
	uint64_t evicted; /* code objects dropped (least recently used) to stay within budget */
	uint64_t refused; /* line tables not kept (too large): their functions have no lines */
};

/* What the USDT modes could not record, summed over processes (see enum pyprof_counter). */
struct profile_usdt_counts {
	uint64_t calls_unmatched, calls_too_deep, calls_no_code, calls_mismatch, calls_map_full;
	uint64_t calls_unresolved; /* call edges whose callee was gone before it was named */
	uint64_t gc_unmatched, imports_unmatched, events_dropped;
	uint64_t records_dropped; /* GC and call records lost: sample ring buffer full */
	uint64_t probe_misses;	  /* probe hits the kernel did not run our program for */
	uint64_t procs_late;	  /* processes that ran before their probes counted */
	uint64_t procs_untraced;  /* processes without usable probes (sampled only) */
};

struct profile {
	struct profile_func *funcs;
	size_t nfuncs, cap_funcs;
	struct hashmap func_index;
	struct profile_frame *frames;
	size_t nframes, cap_frames;
	struct hashmap frame_index;
	struct profile_target *targets;
	size_t ntargets, cap_targets;
	const char *mode; /* "cpu" */
	unsigned frequency_hz;
	double duration_s;
	double first_sample_ms;	 /* from pybpfprof's start to the first sample received; -1: none */
	long long start_ns;	 /* CLOCK_MONOTONIC at pybpfprof's start */
	long long end_ns;	 /* CLOCK_MONOTONIC at the end of sampling; 0: not ended */
	long long start_unix_ns; /* the same moment on CLOCK_REALTIME; 0: unknown */
	struct profile_counts counts;	  /* CPU samples */
	struct profile_counts mem_counts; /* memory records (--mem) */
	/* --mem */
	bool mem;	       /* memory events were collected */
	bool mem_ages;	       /* retained memory is split by age (RETAINED_RECENT known) */
	bool mem_alloc;	       /* of which allocator calls (--mem=alloc) */
	uint64_t alloc_period; /* bytes per allocator sample */
	unsigned mem_period;   /* page faults per fault sample */
	unsigned page_size;
	uint64_t mem_ranges_lost; /* memory calls' address records lost (ring buffer full) */
	bool calls_mode, gc_mode, imports_mode; /* --calls, --gc, --imports */
	struct profile_usdt_counts usdt;
	struct profile_cache_counts cache;
	/* --mode wall, --gil */
	bool wall; /* off-CPU intervals of every kind were charged */
	bool gil;  /* --gil: CPU samples carry the GIL state; GIL waits are charged */
	bool idle; /* --idle: threads blocked the whole run are shown */
	uint64_t offcpu_unmatched;   /* interval ends whose start record was lost: not charged */
	uint64_t offcpu_idle_hidden; /* threads blocked the whole run, left out (no --idle) */
	uint64_t offcpu_dropped;     /* off-CPU records lost: kernel ring buffer full */
	uint64_t offcpu_inferred;    /* intervals whose end the kernel did not report (inferred) */
	uint64_t offcpu_no_python;   /* blocks of threads with no Python frame then: not charged */
	uint64_t offcpu_unseen;	     /* intervals whose start the kernel did not report */
	uint64_t offcpu_unseen_ns;   /* and their ns: counted, not charged */
	uint64_t
		offcpu_unreadable; /* blocks whose innermost frame could not be read: not charged */
	/*
	 * --signatures: the innermost PY_SIG_FRAMES frames of a CPU sample are
	 * named "qualname(arg: type, ...)" by the arguments they had then.
	 */
	bool signatures;
	uint64_t sig_samples; /* CPU samples that came with their arguments */
	uint64_t sig_missing; /* without (the record lost, or its sample) */
	uint64_t sig_capped;  /* frames left plain: a process had too many signatures */
	/* --kernel: samples taken in the kernel joined to their kernel stack, and not (lost) */
	bool kernel_mode;
	uint64_t kstacks, kstack_missing;
	/*
	 * --native: samples whose user stack was unwound (of which: stopped
	 * before the outermost Python frame; native and Python stacks at odds,
	 * native frames placed below the innermost only), and those without one
	 */
	bool native_mode;
	uint64_t ustacks, ustack_partial, ustack_unplaced, ustack_missing, ustack_refused;
	/* --merge: the processes summed into the one section (whose pid is 0), in order */
	int *merged_pids;
	size_t nmerged;
	/*
	 * --pid, --match, --thread (profile__select): the options that cut the
	 * profile, as given ("--match 'w' --thread 'x'"; NULL: nothing was cut),
	 * and what they left out.
	 */
	char *selection; /* at most PROFILE_SELECTION_MAX bytes */
	uint64_t sel_procs_out, sel_threads_out, sel_samples_out;
	/* --thread cut a kept process: its truncated, partial, unresolved stay whole */
	bool sel_threads_cut;
	/* --timeline, or a timeline output: every event in time (profile/timeline.h) */
	struct profile_timeline timeline;
	/*
	 * Each CPU sample's exception state was read at its tick (stack.exc,
	 * exc_unknown hold it); --mode exception: only the samples of threads
	 * handling one were kept (the others counted per process as left out).
	 */
	bool exc_known;
	bool exc_only;
	/* --opcodes: stacks carry their innermost frame's instructions, by these names */
	bool opcodes;
	struct profile_opname *opnames;
	size_t nopnames, cap_opnames;
	struct hashmap opname_index;
};

void profile__init(struct profile *p, const char *mode, unsigned frequency_hz);
void profile__free(struct profile *p);

/* Interned ids; UINT32_MAX on allocation failure. */
uint32_t profile__func(struct profile *p, const char *qualname, const char *file, int firstline,
		       bool unresolved);
/* A function of a kind (native and kernel functions are told apart from Python ones). */
uint32_t profile__func_kind(struct profile *p, const char *qualname, const char *file,
			    int firstline, bool unresolved, enum profile_func_kind kind);
uint32_t profile__frame(struct profile *p, uint32_t func, int line);
/* The id of frame (func, line) if it exists, else UINT32_MAX. */
uint32_t profile__frame_find(const struct profile *p, uint32_t func, int line);

/*
 * Room for nfuncs functions and nframes frames in all, taken at once (a
 * saved profile's counts): no growth's slack. 0 or -ENOMEM.
 */
int profile__reserve(struct profile *p, size_t nfuncs, size_t nframes);
/* The same for a process's threads and stacks. 0 or -ENOMEM. */
int profile_target__reserve(struct profile_target *pp, size_t nthreads, size_t nstacks);
/* Adds a process section (strings are copied). NULL on allocation failure. */
struct profile_target *profile__add_target(struct profile *p, int pid, const char *exe,
					   const char *cmdline, const char *comm,
					   const char *python);
/* Frees one process section's contents (profile__free does it for all). */
void profile_target__free(struct profile_target *pp);
/* How the USDT modes traced pp, with the sentence saying why (NULL: none). 0 or -ENOMEM. */
int profile_target__usdt_trace(struct profile_target *pp, enum profile_usdt_trace how,
			       const char *note);
/*
 * --merge: replaces every process section by one holding all their stacks
 * and threads (pid 0, the pids listed in its command line and in
 * merged_pids; its Python and executable those of every process, once
 * each). 0 or -ENOMEM.
 */
int profile__merge(struct profile *p);
/* Sets merged_pids to the n pids (a saved profile read back). 0 or -ENOMEM. */
int profile__set_merged(struct profile *p, const int *pids, size_t n);
struct profile_target *profile__find_target(struct profile *p, int pid);

/*
 * What to look at (profile_select.c): the processes of these pids (none:
 * any), whose command line matches match, and of them the threads one of
 * whose names matches thread (POSIX extended regular expressions, searched
 * anywhere; NULL: any).
 */
struct profile_select {
	const int *pids;
	size_t npids;
	const char *match;
	const char *thread;
};
/* The longest pattern taken, and the longest p->selection kept (earlier ones cut). */
#define PROFILE_PATTERN_MAX 1024
#define PROFILE_SELECTION_MAX 4096
/* A thread's names, as many as the model has of it (its comm now; empty ones left out). */
#define PROFILE_THREAD_NAMES 2
size_t profile_thread__names(const struct profile_thread *th,
			     const char *names[PROFILE_THREAD_NAMES]);
/*
 * Cuts p to what sel selects before any writer sees it: the processes left
 * out are freed, and with a thread pattern each kept process keeps only the
 * stacks and threads of the matching threads (a process with none is left
 * out); p->selection and the sel_ counts say what was cut. A merged profile
 * has no processes to select from (--pid, --match), and one with memory,
 * --calls, --gc or --imports figures does not keep them by thread
 * (--thread): both -EINVAL. 0, -EINVAL with one sentence in why (p
 * unchanged), or -ENOMEM.
 */
int profile__select(struct profile *p, const struct profile_select *sel, char *why, size_t len);
/* sel's patterns checked (their length, compiled): 0, or -EINVAL with one sentence in why. */
int profile_select__check(const struct profile_select *sel, char *why, size_t len);
struct profile_thread *profile_target__thread(struct profile_target *pp, uint32_t tid);
/*
 * A thread the caller knows pp does not have yet, added without looking for
 * it (a saved profile's million threads are not a million searches).
 */
struct profile_thread *profile_target__new_thread(struct profile_target *pp, uint32_t tid);
/* The key of an origin in JSON ("found", "launched", "forked", "execed"). */
const char *profile_origin_name(enum profile_origin o);
/* The origin of a key, or -1. */
int profile_origin_of(const char *name);
/*
 * A process's role, from its command line and how it came, into buf (at most
 * PROFILE_ROLE bytes with its NUL): "spawn worker of 1234", "forkserver of
 * 1234", "fork of 1234", "exec of 1234", "-m package.module", "-c print(1)",
 * "app.py". The command line is the target's: only shown, cut, never believed.
 */
#define PROFILE_ROLE 48
const char *profile_target__role(const struct profile_target *pp, char *buf, size_t len);

/*
 * What a thread is called in every output: its Python name, else its comm,
 * else "?". A target's string: each output cleans or escapes it.
 */
const char *profile_thread__label(const struct profile_thread *th);

/* Adds count samples of one stack (frames innermost first). 0 or -ENOMEM. */
int profile_target__add_stack(struct profile_target *pp, uint32_t tid, const uint32_t *frames,
			      uint32_t n, uint64_t count);
/* The same, with where (NULL: not known) added to the stack's split. 0 or -ENOMEM. */
int profile_target__add_stack_where(struct profile_target *pp, uint32_t tid, const uint32_t *frames,
				    uint32_t n, uint64_t count,
				    const uint64_t where[PROFILE_WHERE_N]);

/*
 * Adds bytes of one memory kind to a stack; t_s places it on the timeline,
 * is_peak marks it as the stack at the highest resident size so far. Returns
 * the stack's index in pp->mem.stacks, or -errno.
 */
int profile_target__add_mem(struct profile_target *pp, enum profile_mem_kind kind,
			    const uint32_t *frames, uint32_t n, uint64_t bytes, double t_s,
			    bool is_peak);
void profile_mem__free(struct profile_mem *m);

/* One memory system call of a process, with its addresses (page-rounded lengths). */
enum profile_mem_op {
	PROFILE_MEM_OP_MMAP = 1,
	PROFILE_MEM_OP_MUNMAP,
	PROFILE_MEM_OP_MREMAP, /* addr, len: old range; new_addr, new_len: new one */
	PROFILE_MEM_OP_BRK,    /* addr: the break before; new_addr: after */
};
struct profile_mem_call {
	enum profile_mem_op op;
	uint64_t addr, len, new_addr, new_len;
	bool keep_old; /* mremap with MREMAP_DONTUNMAP: the old range stays mapped */
	uint64_t t_ns; /* when (kernel monotonic; calls come in time order) */
};
/*
 * Matches a memory system call to the ranges the process mapped: what it
 * releases is charged to the stacks that mapped it (PROFILE_MEM_RELEASED),
 * what it maps is owner's (a stack index, or MEM_RANGE_NO_STACK).
 */
void profile_target__mem_call(struct profile_target *pp, const struct profile_mem_call *c,
			      uint32_t owner);
/*
 * At the end (or the process's exit): what is still mapped is retained by
 * its owner, and of it what was mapped less than MEM_RANGE_RECENT_NS before
 * end_ns (kernel monotonic) is RETAINED_RECENT too.
 */
void profile_target__mem_retain(struct profile_target *pp, uint64_t end_ns);
/*
 * The agent's --mem: moves the figures of the interval that ends now out of
 * pp into out (zeroed first; the stacks with any bytes, frames copied), with
 * RETAINED the bytes each stack's ranges hold now (now_ns, kernel
 * monotonic), mapped in this interval or before it, and RETAINED_RECENT those
 * mapped in the last second (never drained: mem_retain is not called). pp keeps its range
 * table and, of its stacks, only those a range owns or pinned names (indices
 * a record still to come may refer to), counters zeroed; the ranges' owners
 * and pinned are renumbered, so weeks of new stacks leave nothing behind.
 * The timeline and events are let go. 0, or -ENOMEM with pp unchanged.
 */
int profile_target__mem_cut(struct profile_target *pp, struct profile_mem *out, long *pinned,
			    size_t npinned, uint64_t now_ns);
/*
 * --merge: adds from's memory stacks to into's; the peak is the highest of
 * the processes' (their timelines are not merged). 0 or -ENOMEM.
 */
int profile_target__merge_mem(struct profile_target *into, const struct profile_target *from);
/* Appends a resident-size point to the timeline. 0 or -ENOMEM. */
int profile_target__add_rss(struct profile_target *pp, double t_s, uint64_t rss);
/* --gc: one collection triggered at this stack (n may be 0). 0 or -ENOMEM. */
int profile_target__add_gc(struct profile_target *pp, const uint32_t *frames, uint32_t n,
			   unsigned gen, uint64_t ns, uint64_t collected);
/* --calls: adds to the (func, caller) edge. 0 or -ENOMEM. */
int profile_target__add_call(struct profile_target *pp, uint32_t func, uint32_t caller,
			     const struct profile_call_edge *add);
/* --calls: adds buckets to func's histogram. 0 or -ENOMEM. */
int profile_target__add_hist(struct profile_target *pp, uint32_t func,
			     const uint64_t buckets[PROFILE_HIST_BUCKETS]);
/* --imports: opens an import on tid, nested in the innermost open one. 0 or -ENOMEM. */
int profile_target__import_start(struct profile_target *pp, uint32_t tid, const char *module,
				 uint64_t ktime_ns);
/*
 * Closes tid's innermost open import: its index in pp->imports, or -ENOENT
 * when none is open (it began before attach).
 */
int profile_target__import_done(struct profile_target *pp, uint32_t tid, bool found,
				uint64_t ktime_ns);

/* --mode wall (profile_offcpu.c): a thread left the CPU at start_ns with this stack. */
int profile_target__offcpu_block(struct profile_target *pp, uint32_t tid, const uint32_t *frames,
				 uint32_t n, unsigned cls, uint64_t start_ns, bool primed);
/*
 * It left the CPU again with the stack of its last interval (the kernel saw
 * it block in the same place). -ENOENT when that stack is not known here.
 */
int profile_target__offcpu_again(struct profile_target *pp, uint32_t tid, unsigned cls,
				 uint64_t start_ns);
/*
 * It came back at end_ns after ns off the CPU (the kernel's exact figures):
 * its open interval is charged to its stack, and starts at end_ns - ns (its
 * block record is stamped after the stack walk that followed the switch;
 * end_ns 0: unknown, that stamp is kept). -ENOENT when none was open (its
 * block record was lost).
 */
int profile_target__offcpu_end(struct profile *p, struct profile_target *pp, uint32_t tid,
			       uint64_t ns, uint64_t end_ns);
/*
 * At the run's end, the kernel's view first: every interval closed here,
 * then each one the kernel still holds open (wall.c reads its map) opened
 * again from its start. same: the kernel sent no stack for that interval
 * (a repeat block), so the thread's last stack is charged. -ENOENT when the
 * stack of that interval is not known here (its record was lost).
 */
void profile__offcpu_close_all(struct profile *p);
int profile_target__offcpu_open_at_end(struct profile_target *pp, uint32_t tid, unsigned cls,
				       uint64_t start_ns, bool same);
/* At the run's end: every interval still open charged up to end_ns. */
void profile__offcpu_flush(struct profile *p, uint64_t end_ns);
/* The class of a stack (its innermost frame's pseudo-function), or -1: an on-CPU stack. */
int profile__offcpu_class(const struct profile *p, const struct profile_stack *s);
/* "sleep", "I/O", ...: the name of a class. */
const char *profile_offcpu_class_name(unsigned cls);
/* The samples equivalent to ns at the profile's frequency, with *rem_ns carried over. */
uint64_t profile_ns_to_samples(unsigned hz, uint64_t ns, uint64_t *rem_ns);
/* --gil: what a CPU sample says of its thread and the GIL. */
enum profile_gil {
	PROFILE_GIL_HELD,
	PROFILE_GIL_RELEASED,
	PROFILE_GIL_UNKNOWN, /* its process's GIL was not known (not made yet, or not found) */
};
/* --gil: adds one CPU sample's GIL state to the stack last added and its thread. */
void profile_target__add_gil(struct profile_target *pp, uint32_t tid, enum profile_gil state);

/*
 * Facts of a CPU sample's tick (profile_tick.c): the exception state and the
 * innermost frame's instruction.
 */
enum profile_exc {
	PROFILE_EXC_NONE,     /* not handling an exception */
	PROFILE_EXC_HANDLING, /* in an except block, or in code called from one */
	PROFILE_EXC_UNKNOWN,  /* its exception state could not be read */
};
/* Adds one CPU sample's exception state to the stack last added. */
void profile_target__add_exc(struct profile_target *pp, enum profile_exc state);
/*
 * The index of an instruction name, interned with the name of the one it
 * specialises (base: the same name, or NULL, when none); UINT32_MAX when
 * out of memory.
 */
uint32_t profile__opname(struct profile *p, const char *name, const char *base);
/* Adds n samples of instruction op to the stack last added. 0 or -ENOMEM. */
int profile_target__add_op(struct profile_target *pp, uint32_t op, uint64_t n);
/* The same to stack s (a saved profile read back, a merge). 0 or -ENOMEM. */
int profile_stack__add_op(struct profile_stack *s, uint32_t op, uint64_t n);
/* Frees a stack's instruction counts (its frames are the caller's). */
void profile_stack__free_ops(struct profile_stack *s);

/* --opcodes: one instruction's samples at one line (frame), over a process's stacks. */
struct op_stat {
	uint32_t frame;
	uint32_t op;
	uint64_t samples;
};
/*
 * Per (frame, instruction), summed over pp's stacks: sorted by frame id,
 * then by samples (most first), then by name; *n of them (0 and NULL
 * without --opcodes). What the text's and JSON's per-line split, pstats
 * and the source heatmap show. 0 or -ENOMEM.
 */
int profile_target__op_stats(const struct profile *p, const struct profile_target *pp,
			     struct op_stat **out, size_t *n);
/*
 * Exception handling per function (p->nfuncs entries, calloc'ed; may be
 * NULL): of the stacks' exc samples, those where it was the innermost frame
 * (self) and anywhere (total, once per stack); and pp's exc and exc_unknown
 * summed (either may be NULL). 0 or -ENOMEM.
 */
struct exc_stat {
	uint64_t self, total;
};
int profile_target__exc_stats(const struct profile *p, const struct profile_target *pp,
			      struct exc_stat **by_func, uint64_t *exc, uint64_t *exc_unknown);

/* Summaries used by the writers. */
/*
 * --calls: per-function sums over edges, indexed by function id (p->nfuncs
 * entries, calloc'ed). Inclusive time sums the edges, each of which counts
 * only outermost activations, so recursion is counted once.
 */
int profile_target__call_totals(const struct profile *p, const struct profile_target *pp,
				struct profile_call_total **out);
struct func_stat {
	uint32_t func;
	uint64_t self, total;
};
struct line_stat {
	uint32_t frame;
	uint64_t self;
	uint64_t total; /* the samples with this line anywhere in their stack, once each */
};

/* Per-function self/total (total counts a function once per sample), sorted by self, then total. */
int profile_target__func_stats(const struct profile *p, const struct profile_target *pp,
			       struct func_stat **out, size_t *n);
/*
 * Index in s->frames of its innermost Python line, or s->nframes: the frame
 * that a line's own samples go to. The machine code under it (--native,
 * --kernel) is what it called, the off-CPU pseudo-function (--mode wall)
 * why it waited.
 */
uint32_t profile__innermost_line(const struct profile *p, const struct profile_stack *s);
/* The same of n frames, innermost first (a memory stack's, a GC's). */
uint32_t profile__innermost_line_of(const struct profile *p, const uint32_t *frames, uint32_t n);
/*
 * Per-(function, line) self samples (profile__innermost_line) and total, of
 * the lines with self samples, sorted by self, descending.
 */
int profile_target__line_stats(const struct profile *p, const struct profile_target *pp,
			       struct line_stat **out, size_t *n);

/* Memory summaries: bytes per kind, by function (self/total) and by line (self). */
struct mem_func_stat {
	uint32_t func;
	uint64_t self[PROFILE_MEM_NKINDS], total[PROFILE_MEM_NKINDS];
};
struct mem_line_stat {
	uint32_t frame;
	uint64_t self[PROFILE_MEM_NKINDS];
};
/* Growth order: touched bytes, then mapped, then allocated, then net; descending. */
int profile_target__mem_func_stats(const struct profile *p, const struct profile_target *pp,
				   struct mem_func_stat **out, size_t *n);
int profile_target__mem_line_stats(const struct profile *p, const struct profile_target *pp,
				   struct mem_line_stat **out, size_t *n);
/* Sums over every stack of pp, per kind. */
void profile_target__mem_totals(const struct profile_target *pp, uint64_t out[PROFILE_MEM_NKINDS]);

/*
 * The Python / native / system split (profile_where.c), of the samples
 * whose where is known, charged to the innermost Python frame: per function
 * id and per frame id (p->nfuncs and p->nframes entries, calloc'ed; either
 * pointer may be NULL), and summed over pp in total (may be NULL). Returns
 * 0 (and *by_func = *by_frame = NULL when no sample of pp has a known
 * where), or -ENOMEM.
 */
typedef uint64_t profile_where_split[PROFILE_WHERE_N];
int profile_target__where_stats(const struct profile *p, const struct profile_target *pp,
				profile_where_split **by_func, profile_where_split **by_frame,
				profile_where_split total);

#endif
