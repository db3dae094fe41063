/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The contract between the BPF programs (bpf/) and the userspace loader (src/).
 * Every struct and enum that crosses the boundary lives here and nowhere else:
 * types only, fixed-width fields, explicit padding. Userspace asserts the sizes
 * (src/loader.c) so a layout drift is a build error.
 */
#ifndef PYBPFPROF_BPF_ABI_H
#define PYBPFPROF_BPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Frames one sample can carry. The runtime limit (--max-depth, default 127) is at most this. */
#define PYPROF_MAX_DEPTH 1024
#define PYPROF_DEFAULT_DEPTH 127
/* Profiled processes the kernel can know at once. */
#define PYPROF_MAX_TARGETS 8192
/*
 * Bounds on the interpreter and thread lists walked to find a thread's state.
 * The walk is a bpf_loop, so the bound costs no verifier budget, only time
 * on a list that long. CPython puts new threads at the head of the list and
 * the main thread last, so a bound below the thread count hides the main
 * thread first.
 */
#define PYPROF_MAX_INTERPS 8
#define PYPROF_MAX_THREADS 4096
/* Bytes read at once from a frame: enough for every field the walker needs on 3.8-3.15. */
#define PYPROF_FRAME_READ 128
/* Marks an absent optional offset. */
#define PYPROF_NO_OFFSET 0xffff

/* How a frame records its position in the bytecode. */
enum py_instr_kind {
	PY_INSTR_LASTI = 0, /* int f_lasti in the frame (3.8-3.10); sent as is */
	PY_INSTR_PTR = 1,   /* pointer into co_code_adaptive (3.11+); sent as a byte offset */
};

/*
 * Where things are in one CPython build. Filled by userspace from the
 * per-version tables or _Py_DebugOffsets (src/py_offsets.c); the BPF walker
 * knows nothing about versions beyond these numbers.
 */
struct py_offsets {
	__u16 runtime_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 interp_next;	   /* PyInterpreterState.next */
	__u16 interp_threads_head; /* PyInterpreterState.threads.head (tstate_head <= 3.10) */
	__u16 tstate_next;	   /* PyThreadState.next */
	__u16 tstate_thread_id;	   /* PyThreadState.thread_id (= pthread_self() = fsbase) */
	__u16 tstate_frame; /* .frame (<=3.10), .cframe (3.11-3.12), .current_frame (3.13+) */
	__u16 cframe_current_frame; /* _PyCFrame.current_frame, or PYPROF_NO_OFFSET */
	__u16 frame_code;	    /* f_code / f_executable */
	__u16 frame_previous;	    /* f_back / previous */
	__u16 frame_instr;	    /* f_lasti / prev_instr / instr_ptr */
	__u16 frame_owner;	    /* owner (3.11+), or PYPROF_NO_OFFSET */
	__u16 frame_read_size;	    /* bytes to read at a frame to cover the fields above */
	__u16 code_filename;	    /* PyCodeObject.co_filename */
	__u16 code_name;	    /* PyCodeObject.co_name */
	__u16 code_qualname;	    /* co_qualname (3.11+), else co_name */
	__u16 code_linetable;	    /* co_lnotab (3.8-3.9) / co_linetable (3.10+) */
	__u16 code_firstlineno;	    /* co_firstlineno (int) */
	__u16 code_id_start;	    /* the identity fields above lie in */
	__u16 code_id_size;	    /*   [code_id_start, code_id_start + code_id_size) */
	__u16 code_adaptive;	    /* offset of co_code_adaptive (3.11+), else 0 */
	__u16 str_length;	    /* PyASCIIObject.length */
	__u16 str_state;	    /* PyASCIIObject.state */
	__u16 str_ascii_data;	    /* sizeof(PyASCIIObject): data of a compact ASCII str */
	__u8 instr_kind;	    /* enum py_instr_kind */
	__u8 owner_skip_min;	    /* frames with owner >= this are C-stack shims */
	__u8 code_tag_mask;	    /* low bits to clear from f_executable (3.14+ stackrefs) */
	/*
	 * Right shift of PyASCIIObject.state before its kind (3 bits), compact
	 * and ascii bits: 0, or 8 in 3.14t, whose interned flag is a whole byte.
	 */
	__u8 str_state_shift;
	/*
	 * 3.14t thread-local bytecode: instr_ptr points into the copy
	 * co_tlbc->entries[tlbc_index] (_PyCodeArray: size, then pointers) when
	 * the index is not 0. PYPROF_NO_OFFSET in other builds.
	 */
	__u16 frame_tlbc_index; /* _PyInterpreterFrame.tlbc_index (int32) */
	__u16 code_tlbc;	/* PyCodeObject.co_tlbc */
	/*
	 * Which frames a C-level call of the eval loop started (--native places
	 * native frames between Python frames by them): 3.11's is_entry flag
	 * (bool); PYPROF_NO_OFFSET elsewhere, where 3.12+ mark them by the shim
	 * frame (owner >= owner_skip_min) just outside, and up to 3.10 every
	 * frame is its own call.
	 */
	__u16 frame_is_entry;
	/*
	 * Whether a CPU sample's thread is handling an exception (bpf/stackwalk.h
	 * stackwalk_exc): PyThreadState.exc_info, the top of its stack of
	 * _PyErr_StackItem, and in an item the word that says "handling"
	 * (exc_type up to 3.10, exc_value from 3.11) and previous_item.
	 * PYPROF_NO_OFFSET: not known for this build.
	 */
	__u16 tstate_exc_info;
	__u8 exc_item_value;
	__u8 exc_item_previous;
	/*
	 * --opcodes up to 3.10 (PY_INSTR_LASTI): the instruction is the byte at
	 * co_code's ob_sval + f_lasti x lasti_unit; co_code is a bytes object.
	 * code_code is PYPROF_NO_OFFSET from 3.11, whose instruction pointer
	 * points into the bytecode itself.
	 */
	__u16 code_code;  /* PyCodeObject.co_code */
	__u16 bytes_size; /* PyVarObject.ob_size of a bytes object */
	__u16 bytes_data; /* PyBytesObject.ob_sval */
	__u8 lasti_unit;  /* bytes per f_lasti unit: 1 (3.8, 3.9) or 2 (3.10) */
	/* the EXTENDED_ARG opcode: a prefix, stepped over to the instruction it extends */
	__u8 op_extended_arg;
	/*
	 * 3.11, 3.12: the inline cache units of CALL (opcode._inline_cache_entries:
	 * 4, 3), or 0. While a call is set up or returns, the caller is the
	 * innermost frame with its pointer on the call's last cache unit, which is
	 * data: the unit call_caches units before it is the CALL, sent beside.
	 * (3.13+ point at the CALL itself then.)
	 */
	__u8 call_caches;
	__u8 pad_tick[3];
};

/* Value of the per-process map, keyed by pid (kernel tgid). */
struct py_target {
	__u64 runtime_addr; /* address of _PyRuntime in the target */
	struct py_offsets off;
	/*
	 * Where the interpreter's own machine code is mapped (the executable's
	 * or libpython's executable mappings): a user-mode CPU sample there is
	 * "python", elsewhere "native" (the where flags). 0, 0: unknown.
	 */
	__u64 interp_text_start, interp_text_end;
	/*
	 * --mode wall, --gil: where the GIL (struct _gil_runtime_state) is, so
	 * that the sampler finds it by itself as soon as the interpreter has
	 * made it (a launched command's first bytecode comes before userspace
	 * could look): at runtime_addr + gil_off (3.8-3.11, _PyRuntime.ceval.gil),
	 * or, with gil_via_interp, at the pointer at the main interpreter +
	 * gil_off (3.12+, PyInterpreterState.ceval.gil). PYPROF_NO_OFFSET: no GIL
	 * known (a free-threaded build).
	 */
	__u16 gil_off;
	__u8 gil_via_interp;
	__u8 pad[5];
	/*
	 * &_Py_NoneStruct: an exception stack item holding None handles
	 * nothing. 0: not known, and neither is whether a thread handles an
	 * exception.
	 */
	__u64 none_addr;
};

/* One Python frame of a sample, innermost first. */
struct py_frame {
	__u64 code;	   /* code object address */
	__s32 instr;	   /* f_lasti as read (PY_INSTR_LASTI) or byte offset into the bytecode */
	__u32 fingerprint; /* hash of co_filename and co_name pointers: detects address reuse */
};

enum py_sample_flags {
	PY_SAMPLE_TRUNCATED = 1,  /* the stack was deeper than the depth limit */
	PY_SAMPLE_READ_ERROR = 2, /* a frame could not be read; the walk stopped there */
	PY_SAMPLE_RSS_PEAK = 4,	  /* PY_KIND_PAGE_FAULT: the process's resident memory was at
					 * its highest yet (see rss_peak in the BPF object) */
};

/*
 * What a stack record stands for. Every program that walks a Python stack
 * sends the same record; kind says which event caught it and what value means.
 */
enum py_sample_kind {
	PY_KIND_CPU = 0, /* a cpu-clock tick; value: PY_CPU_* (the opcode, the exception bit) */
	/* USDT (src/usdt.c): */
	PY_KIND_CALL_NEW = 16, /* first call of a function seen by --calls; value unused */
	PY_KIND_GC = 17,       /* a finished collection, at gc__done; value: PY_GC_VALUE() */
	/* --mem: numbered apart from other features' kinds so additions do not collide */
	PY_KIND_PAGE_FAULT = 32, /* one sampled page fault; value: bytes it stands for
					 * (period x page size) */
	PY_KIND_MAP = 33,	 /* mmap, brk or mremap grew the address space by value bytes */
	PY_KIND_UNMAP = 34,	 /* munmap, brk or mremap shrank it by value bytes */
	PY_KIND_ALLOC = 35,	 /* --mem=alloc: a sampled allocator call; value: bytes it stands
				 * for (the sampling period, or its size if larger) */
	PY_KIND_MEM_RANGE = 36,	 /* struct py_mem_range: a memory system call's addresses */
};

/*
 * --mem: the addresses of one successful mmap, munmap, mremap or brk of a
 * profiled process, sent for every such call (with a Python stack or not),
 * after the PY_KIND_MAP/UNMAP record of the same call if there was one:
 * userspace matches each release to the mapping it undoes. The header is
 * py_sample's with no frames; value is the ktime_ns of that stack record, 0
 * if none was sent.
 */
enum py_mem_op {
	PY_MEM_MMAP = 1,
	PY_MEM_MUNMAP = 2,
	PY_MEM_MREMAP = 3,
	PY_MEM_BRK = 4,
};

struct py_mem_range {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u16 nframes; /* 0 */
	__u8 flags;
	__u8 kind; /* PY_KIND_MEM_RANGE */
	__u32 op;  /* enum py_mem_op */
	__u64 value;
	__u64 addr, len;	 /* mmap, munmap: the range; mremap: the old one; brk: old break */
	__u64 new_addr, new_len; /* mremap: the new range; brk: new break */
	__u64 remap_flags;	 /* mremap's flags */
};

/*
 * --mem=alloc: a sampled allocation not freed yet. The live-allocation map is
 * keyed by process and address (processes forked from one parent allocate at
 * the same addresses); (tid, ktime_ns) name the PY_KIND_ALLOC record that
 * carried its stack.
 */
struct py_live_key {
	__u64 addr;
	__u32 pid;
	__u32 pad;
};

struct py_live_alloc {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u64 bytes; /* the record's value */
};

/*
 * A collection's figures packed into py_sample.value: duration in ns (40
 * bits, 18 minutes), generation (2 bits), objects collected (22 bits, saturated).
 */
#define PY_GC_VALUE(ns, gen, collected)                                                            \
	(((ns) & ((1ULL << 40) - 1)) | ((__u64)((gen)&3) << 40) |                                  \
	 ((__u64)((collected) > 0x3fffff ? 0x3fffff : (collected)) << 42))
#define PY_GC_NS(v) ((v) & ((1ULL << 40) - 1))
#define PY_GC_GEN(v) (((v) >> 40) & 3)
#define PY_GC_COLLECTED(v) ((v) >> 42)

/*
 * py_sample.value of a PY_KIND_CPU sample: what was true of the thread at
 * the tick (read by BPF then: userspace never reads a live frame later).
 * The innermost frame's instruction (--opcodes): its opcode as the
 * interpreter had it then, specialised forms included (3.11+), and whether
 * it was read; whether the thread was handling an exception (inside an
 * except block or a function called from one: sys.exc_info() not None),
 * and whether that could be read.
 */
#define PY_CPU_OPCODE(v) ((unsigned)((v)&0xff))
#define PY_CPU_HAS_OPCODE (1ULL << 8)
#define PY_CPU_EXC (1ULL << 9)
#define PY_CPU_EXC_KNOWN (1ULL << 10)
/*
 * 3.11 (py_offsets.call_caches): the opcode of the unit call_caches
 * units before the instruction pointer, and whether it was read; when it is
 * a CALL, the pointer was on that CALL's last cache unit and the CALL is
 * what ran (userspace decides: the tables of names are its own).
 */
#define PY_CPU_HAS_PREV (1ULL << 11)
#define PY_CPU_PREV_OPCODE(v) ((unsigned)(((v) >> 16) & 0xff))
/* Items of a thread's exception stack looked at, innermost first: one per running generator. */
#define PY_EXC_CHAIN_MAX 8
/* Code units looked at from the instruction pointer: EXTENDED_ARG prefixes, then the instruction. */
#define PY_OP_UNITS 4

/* Ring-buffer record: one Python stack of one thread. Only nframes frames are sent. */
struct py_sample {
	__u32 pid;	/* kernel tgid */
	__u32 tid;	/* kernel tid */
	__u64 ktime_ns; /* bpf_ktime_get_ns() */
	__u16 nframes;
	__u8 flags; /* enum py_sample_flags */
	__u8 kind;  /* enum py_sample_kind */
	__u32 cpu;
	__u64 value; /* meaning depends on kind (bytes, nanoseconds, ...) */
	struct py_frame frames[PYPROF_MAX_DEPTH];
};

#define PY_SAMPLE_HEADER_SIZE 32

/* Bytes of a code object read at once for its identity; bytes of its qualname read. */
#define PY_CODE_ID_READ 128
#define PY_STR_READ 64
#define PY_NAME_TEXT 32

/*
 * Identity of a code object, computed by BPF at sample time and by userspace
 * when it names the code object. Code objects are freed and their addresses
 * reused, and with them the addresses of their name strings (the allocator
 * hands back the same blocks), so pointers alone do not tell two code objects
 * apart: the first PY_NAME_TEXT bytes of the qualname's text go in too.
 * Shared here so both sides compute exactly the same value.
 *
 * ptrs: co_filename, co_name, co_qualname, co_linetable; text: the compact
 * ASCII qualname's first bytes (zero for other strings), text_len of them used.
 */
static inline __u32 py_code_fingerprint(const __u64 ptrs[4], __s32 firstlineno,
					const __u64 text[PY_NAME_TEXT / 8], __u32 text_len)
{
	__u64 h = 0x9e3779b97f4a7c15ULL ^ (__u32)firstlineno;
	int i;

	for (i = 0; i < 4; i++) {
		h = (h ^ ptrs[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	for (i = 0; i < PY_NAME_TEXT / 8; i++) {
		__u64 w = text[i];

		if (text_len < 8 * (__u32)i + 8)
			w = text_len <= 8 * (__u32)i ? 0 :
						       w & ((1ULL << 8 * (text_len - 8 * i)) - 1);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
		h ^= h >> 31;
	}
	return (__u32)(h ^ (h >> 32));
}

/*
 * Process tracking (sched_process_fork/exec/exit raw tracepoints). The kernel
 * side keeps `targets` right by itself (a forked child of a profiled process is
 * sampled from its first tick, an exec'd image is dropped at once) and tells
 * userspace through a small ring buffer of its own, apart from the samples.
 */
enum py_proc_event_kind {
	PY_PROC_FORK = 1, /* pid was forked from ppid */
	PY_PROC_EXEC = 2, /* pid replaced its image: inspect it */
	PY_PROC_EXIT = 3, /* pid exited (its whole thread group) */
};

enum py_proc_event_flags {
	PY_PROC_COPIED = 1, /* FORK: the parent's targets entry was copied to the child */
	PY_PROC_HELD = 2,   /* EXEC: the new image was sent SIGSTOP (PY_FOLLOW_HOLD) */
};

struct py_proc_event {
	__u32 kind;  /* enum py_proc_event_kind */
	__u32 pid;   /* kernel tgid */
	__u32 ppid;  /* FORK: the parent's tgid */
	__u32 flags; /* enum py_proc_event_flags */
	__u64 ktime_ns;
};

/* Values of the `followed` map: which pids' execs and children are watched. */
enum py_follow_flags {
	PY_FOLLOW_SELF = 1,	/* report this pid's execs */
	PY_FOLLOW_CHILDREN = 2, /* and pass the flags on to every child it forks */
	/*
	 * Stop this pid at each of its execs (SIGSTOP, before the new image's
	 * first instruction) until userspace has looked at the image and sent
	 * SIGCONT: a launched command's USDT probes are attached before its
	 * first Python call also when it is exec'd through chroot or env. Never
	 * passed on to children.
	 */
	PY_FOLLOW_HOLD = 4,
};

/*
 * Per-CPU counters, indexed by this enum; userspace sums them for the report.
 * The stack counters (EVENTS to UNREADABLE) are kept once per family of sample
 * kind, the kind's high nibble (CPU ticks, USDT records, memory records), at
 * index PYPROF_CNT_MAX * family + counter, so that the CPU report's "dropped"
 * counts CPU samples only. The other counters are in family 0.
 */
#define PY_KIND_FAMILY(kind) ((kind) >> 4)
#define PYPROF_CNT_FAMILIES 4
#define PYPROF_CNT_INDEX(kind, counter) (PYPROF_CNT_MAX * PY_KIND_FAMILY(kind) + (counter))

enum pyprof_counter {
	PYPROF_CNT_EVENTS,	    /* perf events that hit a profiled process */
	PYPROF_CNT_SENT,	    /* samples written to the ring buffer */
	PYPROF_CNT_NO_TSTATE,	    /* thread has no PyThreadState (not a Python thread yet) */
	PYPROF_CNT_NO_FRAME,	    /* thread state without Python frames (idle or in C only) */
	PYPROF_CNT_READ_ERROR,	    /* a read of target memory failed during the walk */
	PYPROF_CNT_TRUNCATED,	    /* stacks cut at the depth limit */
	PYPROF_CNT_DROPPED,	    /* ring buffer full: sample lost */
	PYPROF_CNT_UNREADABLE,	    /* not even the innermost frame could be read: nothing sent */
	PYPROF_CNT_TSTATE_SCAN,	    /* thread-list scans (cache misses) */
	PYPROF_CNT_PROC_EVENT_LOST, /* fork/exec/exit notices lost: event ring buffer full */
	/* USDT --calls: */
	PYPROF_CNT_CALLS_UNMATCHED, /* returns with no entry seen (attached mid-call) */
	PYPROF_CNT_CALLS_TOO_DEEP,  /* calls deeper than PYPROF_CALL_DEPTH: not timed */
	PYPROF_CNT_CALLS_NO_CODE,   /* entry whose code object could not be read: not counted */
	PYPROF_CNT_CALLS_MISMATCH,  /* a return not matching the top entry: stack repaired */
	PYPROF_CNT_CALLS_MAP_FULL,  /* edge or histogram map full: call not recorded */
	PYPROF_CNT_EVENTS_DROPPED,  /* import events lost (event ring buffer full) */
	PYPROF_CNT_GC_UNMATCHED,    /* gc__done with no gc__start seen */
	PYPROF_CNT_MAX,
};

/* Slots of the counters map: every family's bank. */
#define PYPROF_CNT_SLOTS (PYPROF_CNT_MAX * PYPROF_CNT_FAMILIES)

/* ------------------------------------------------------------- USDT (--calls, --imports) */

/* Per-thread shadow stack depth that is timed; deeper calls are counted as too deep. */
#define PYPROF_CALL_DEPTH 128
/* Buckets of the per-function log2 latency histogram: bucket i holds [2^i, 2^(i+1)) ns. */
#define PYPROF_HIST_BUCKETS 40

/* A function as --calls knows it: the code object, told apart from a reused address. */
struct py_call_func {
	__u64 code;
	__u32 fingerprint;
	__u32 pid;
};

/* Key of the per-edge statistics: callee and caller (caller.code 0: no Python caller seen). */
struct py_call_edge_key {
	struct py_call_func callee;
	struct py_call_func caller;
};

struct py_call_stats {
	__u64 calls;
	__u64 inclusive_ns; /* outermost activations of the callee only (recursion counted once) */
	__u64 exclusive_ns;
	__u64 max_ns;
};

struct py_call_hist {
	__u64 buckets[PYPROF_HIST_BUCKETS];
};

enum py_event_kind {
	PY_EVENT_IMPORT_START = 1,
	PY_EVENT_IMPORT_DONE = 2,
};

#define PY_EVENT_NAME 104

/* Record of the `events` ring buffer (imports): no stack, a name. */
struct py_event {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u8 kind;  /* enum py_event_kind */
	__u8 found; /* import__find__load__done: the module was found */
	__u8 pad[6];
	char name[PY_EVENT_NAME]; /* NUL-terminated, truncated */
};

/* ------------------------------------------------ --mode wall and --gil (off-CPU time) */

/*
 * Off-CPU intervals (bpf/offcpu.bpf.c). When a thread of a profiled process
 * leaves the CPU, its Python stack is sent as a PY_KIND_OFFCPU_BLOCK record
 * (value: PY_OFFCPU_VALUE(class, syscall)); when it is switched in again, a
 * frameless PY_KIND_OFFCPU_END record (value: the ns it was off the CPU, or
 * PY_OFFCPU_END_SAME below) closes the interval. Userspace charges the
 * interval to the stack.
 */
enum py_offcpu_kind {
	PY_KIND_OFFCPU_BLOCK = 48,
	PY_KIND_OFFCPU_END = 49,
};

/* Why a thread was off the CPU, from its state and the system call it blocked in. */
enum py_offcpu_class {
	PY_OFFCPU_SLEEP = 0,	/* nanosleep, clock_nanosleep, pause, select/poll on no fd */
	PY_OFFCPU_IO = 1,	/* read/write/poll/recv/send... on a file or socket */
	PY_OFFCPU_LOCK = 2,	/* futex (not the GIL's), flock */
	PY_OFFCPU_GIL = 3,	/* futex on the interpreter's GIL (struct _gil_runtime_state) */
	PY_OFFCPU_RUNQUEUE = 4, /* preempted while runnable: waiting for a CPU */
	PY_OFFCPU_OTHER = 5,	/* any other system call, or blocked outside one (page fault) */
	PY_OFFCPU_NCLASSES = 6,
};

#define PY_OFFCPU_VALUE(cls, nr) ((__u64)(cls) | ((__u64)(__u32)(nr) << 8))
#define PY_OFFCPU_CLASS(v) ((unsigned)((v)&0xff))
#define PY_OFFCPU_SYSCALL(v) ((__s32)((v) >> 8))
/* Set by userspace only, on the records it makes for threads blocked when the run starts. */
#define PY_OFFCPU_PRIMED (1ULL << 63)
/*
 * A block where the thread blocked last time (same innermost frame and
 * caller, same positions) sends no BLOCK record: its END record's value
 * says so, with the class, and userspace charges the stack of the thread's
 * last BLOCK record. Saves the walk and a record on a service that blocks in
 * the same place thousands of times a second. Intervals of 2^56 ns or more
 * (2.3 years) are cut.
 */
#define PY_OFFCPU_SAME (1ULL << 62)
#define PY_OFFCPU_NS_MASK ((1ULL << 56) - 1)
#define PY_OFFCPU_END_SAME(ns, cls)                                                                \
	(((ns)&PY_OFFCPU_NS_MASK) | ((__u64)((cls)&0xf) << 56) | PY_OFFCPU_SAME)
#define PY_OFFCPU_END_CLASS(v) ((unsigned)(((v) >> 56) & 0xf))
/*
 * On an END record: the kernel did not report the thread's return to the
 * CPU (this kernel lets a switch pass without its sched_switch tracepoint,
 * now and then, as its own trace events show too); the thread was seen
 * leaving again with an interval still open. The interval's end is then
 * its next leave less the CPU time it had run since it opened, exact to
 * the scheduler's accounting: the record is sent at that next leave.
 */
#define PY_OFFCPU_INFERRED (1ULL << 61)
/*
 * On an END record: the other way round, the kernel reported the thread's
 * return but not its leave before it. It left when it had run as much CPU
 * time as it ran since its last return was seen, and was off the CPU from
 * then to now (the record's ns), where and why unknown: counted, not
 * charged to any stack.
 */
#define PY_OFFCPU_UNSEEN_LEAVE (1ULL << 60)

/*
 * Value of the kernel's offcpu_start map: tid -> its interval, kept while the
 * thread lives (start_ns 0 while it runs) so that a block updates it in place.
 * At the run's end userspace reads the map: an interval still open there is
 * charged up to the end, a repeat block's (same) too, whose stack the kernel
 * never sent for it.
 */
struct py_offcpu_open {
	__u64 start_ns; /* bpf_ktime_get_ns() when it left the CPU; 0: not off it */
	__u64 same;	/* 0, or the class and system call | PY_OFFCPU_SAME */
	__u64 where;	/* where its last full BLOCK record was taken (offcpu_where) */
	__u64 tstate;	/* its PyThreadState then (checked again at each use) */
	__u64 cpu_ns;	/* its CPU time (se.sum_exec_runtime) at its last switch seen */
	__u64 in_ns;	/* when its last return was seen; 0 once it was seen leaving */
	__u32 pid;	/* its process, for the end of the run */
	__u32 pad;
};

/* Bytes from the GIL's address (struct _gil_runtime_state: cond and mutex inside). */
#define PY_GIL_STRUCT_SIZE 256

/* Value of the `gil_addrs` map, keyed by pid: where the process's GIL is. */
struct py_gil_info {
	__u64 gil; /* struct _gil_runtime_state; its first words: interval, last_holder, locked */
};

/*
 * --mode wall, --gil: py_sample.flags of a PY_KIND_CPU sample: the thread
 * holds the GIL (locked and last_holder is its thread state), or runs
 * without it, or both bits: its process's GIL is not known (not made yet,
 * or not found). Neither bit: the GIL is not followed (neither mode).
 */
enum py_gil_flags {
	PY_SAMPLE_GIL_HELD = 0x08,
	PY_SAMPLE_GIL_RELEASED = 0x10,
	PY_SAMPLE_GIL_UNKNOWN = 0x18,
};

/* --native: a struct py_ustack record follows this PY_KIND_CPU sample. */
#define PY_SAMPLE_USTACK 0x80

/* ------------------------------------------------------------- --signatures */

/*
 * --signatures: the arguments of the innermost PY_SIG_FRAMES Python frames of
 * a CPU sample, read by BPF at the tick (the frame is live then; userspace
 * reading it later could see another call's values). Sent as one record of
 * kind PY_KIND_SIGNATURE just BEFORE the PY_KIND_CPU record it belongs to
 * (same pid, tid, ktime_ns): userspace keeps it until that sample comes.
 * Per argument: the object's type pointer, and for what may be a numpy
 * array (nd in 1..PY_SIG_NDIM at its place) the words that say its shape
 * and dtype; BPF does not know which type is ndarray, userspace does.
 */
#define PY_KIND_SIGNATURE 80
#define PY_SIG_FRAMES 2
#define PY_SIG_ARGS 6
#define PY_SIG_NDIM 4
#define PY_SIG_HEAD 64 /* bytes of an argument object read: the numpy fields lie inside */

/* Where an argument's words are in one CPython build (GIL builds; by pid in a map). */
struct py_sig_offsets {
	__u16 frame_localsplus; /* f_localsplus (<=3.10) / _PyInterpreterFrame.localsplus */
	__u16 code_counts;	/* start of the PY_SIG_CODE_READ bytes read of a code object */
	__u8 argcount;		/* co_argcount (int) in them; co_kwonlyargcount 8 bytes after */
	__u8 flags;		/* co_flags (int) in them: CO_VARARGS 4, CO_VARKEYWORDS 8 */
	__u8 stackref;		/* locals are tagged _PyStackRef (3.14+): low two bits */
	__u8 pad;
};

/* Bytes of a code object that hold co_flags and the argument counts (3.8-3.15). */
#define PY_SIG_CODE_READ 24

enum py_sig_arg_flags {
	PY_SIG_UNBOUND = 1,    /* the slot was NULL */
	PY_SIG_TAGGED_INT = 2, /* a 3.14+ tagged int: no object */
	PY_SIG_UNREAD = 4,     /* the object could not be read */
	PY_SIG_DIMS = 8,       /* nd and dims were read (the object may be an ndarray) */
};

struct py_sig_arg {
	__u64 type;		 /* ob_type */
	__u64 descr;		 /* PyArrayObject.descr, if an ndarray */
	__u64 dims[PY_SIG_NDIM]; /* its shape, if PY_SIG_DIMS */
	__s32 nd;
	__u32 flags; /* enum py_sig_arg_flags */
};

struct py_sig_frame {
	__u64 code;	   /* as the sample's frame at the same index */
	__u32 fingerprint; /* idem */
	__u16 nargs;	   /* arguments the code declares (positional, keyword-only, *, **) */
	__u16 nread;	   /* of which read: at most PY_SIG_ARGS */
	struct py_sig_arg args[PY_SIG_ARGS];
};

/* Header as py_sample's (nframes 0, kind PY_KIND_SIGNATURE, value: frames used). */
struct py_sig_record {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u16 nframes;
	__u8 flags;
	__u8 kind;
	__u32 cpu;
	__u64 value;
	struct py_sig_frame frames[PY_SIG_FRAMES];
};

/* ------------------------------------------------------------- module bodies */

/*
 * A module body's file, read by BPF the first time a stack holds its frame
 * (per seen_code entry) and sent just before that stack: the body's code
 * object is freed as soon as its import ends, often before userspace has
 * read it, and its frames, the very ones that say which import makes a
 * process start slowly, would stay unresolved. The header is py_sample's
 * with no frames; value is the length of text (0: co_filename is not
 * compact ASCII text, and the frame stays unresolved if its object is gone).
 */
#define PY_KIND_MODULE 81
#define PY_MODULE_PATH 256

struct py_module_record {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u16 nframes; /* 0 */
	__u8 flags;
	__u8 kind; /* PY_KIND_MODULE */
	__u32 cpu;
	__u64 value;		   /* bytes of text, at most PY_MODULE_PATH - 1 */
	__u64 code;		   /* the module body's code object, as its frame's py_frame.code */
	__u32 fingerprint;	   /* and py_frame.fingerprint */
	__s32 firstlineno;	   /* co_firstlineno */
	char text[PY_MODULE_PATH]; /* co_filename's text, not NUL-terminated */
};

/* -------------------------------------------- --native, --kernel: where a CPU sample ran */

/*
 * py_sample.flags bits 0x20 and 0x40 of a PY_KIND_CPU sample: what the
 * thread was executing when the tick hit it. 0 means not known (an event
 * program's sample, or a process whose interpreter text was not found).
 */
#define PY_SAMPLE_WHERE_MASK 0x60
enum py_sample_where {
	PY_WHERE_PYTHON = 0x20, /* user mode, in the interpreter's own code */
	PY_WHERE_NATIVE = 0x40, /* user mode, in any other code (C extensions, libc, ...) */
	PY_WHERE_SYSTEM = 0x60, /* kernel mode (a system call, a page fault, ...) */
};

/* Kernel return addresses one PY_KIND_KSTACK record carries at most. */
#define PY_KSTACK_MAX 64

/*
 * --kernel: the kernel stack of a PY_KIND_CPU sample taken in kernel mode,
 * sent right after it (same pid, tid and ktime_ns). The header is
 * py_sample's with no frames; value is the number of addresses, innermost
 * first.
 */
enum py_native_kind {
	PY_KIND_KSTACK = 64,
	PY_KIND_USTACK = 65, /* struct py_ustack */
};

struct py_kstack {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u16 nframes; /* 0 */
	__u8 flags;
	__u8 kind; /* PY_KIND_KSTACK */
	__u32 cpu;
	__u64 value; /* addresses in addrs */
	__u64 addrs[PY_KSTACK_MAX];
};

/*
 * --native: the user registers and the top of the user stack of a
 * PY_KIND_CPU sample that may have native frames (flag PY_SAMPLE_USTACK):
 * its thread ran native code or the kernel, or its Python stack spans more
 * than one C-level call of the eval loop, so native code may sit between
 * its Python frames. Sent after the sample and after its kernel stack, if
 * any. Userspace unwinds the copy with the libraries' DWARF call frame
 * information and places the native frames by entry_mask: bit i set when
 * Python frame i (innermost first) is the first one such a call ran.
 * value: bytes of stack copied from sp (0: the stack could not be read).
 */
#define PY_USTACK_BYTES 16384
/* Words of a bit per Python frame: the frames that began a call of the eval loop. */
#define PY_ENTRY_WORDS (PYPROF_MAX_DEPTH / 64)
/* Addresses of 3.12+'s shim frames kept from a walk: the innermost ones. */
#define PY_SHIM_MAX 64

struct py_ustack {
	__u32 pid;
	__u32 tid;
	__u64 ktime_ns;
	__u16 nframes; /* 0 */
	__u8 flags;
	__u8 kind; /* PY_KIND_USTACK */
	__u32 cpu;
	__u64 value;
	/* the callee-saved registers the call frame information may need */
	__u64 ip, sp, bp, bx, r12, r13, r14, r15;
	__u64 entry_mask[PY_ENTRY_WORDS];
	/*
	 * 3.12+: where the shim frames are, innermost first. Each is a local
	 * of the eval call it marks, on the C stack: the native frame holding
	 * it is that call's, with or without a symbol (Debian's 3.14 and 3.15
	 * run the loop in a function .dynsym does not name).
	 */
	__u32 nshims; /* in shim_addr: the first PY_SHIM_MAX passed at most */
	__u32 pad;
	__u64 shim_addr[PY_SHIM_MAX];
	__u8 stack[PY_USTACK_BYTES];
};

#endif
