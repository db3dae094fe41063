/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Turns raw samples from the ring buffer into profile stacks: looks up the
 * target, names each frame through its code cache, and counts what could not
 * be named. Runs as samples arrive, so code objects are read while the
 * process is still alive.
 */
#ifndef PYBPFPROF_COLLECTOR_H
#define PYBPFPROF_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include "bpf_abi.h"
#include "session/async_stacks.h"
#include "session/module_names.h"
#include "cpython/code_cache.h"
#include "profile/profile.h"
#include "proc/native_unwind.h"
#include "cpython/target.h"
#include "cpython/py_signature.h"

struct collector_target {
	struct target t;
	size_t target_index; /* into profile.targets */
	struct code_cache *codes;
	struct hashmap raw_frames; /* hash(code, fingerprint, instr) -> frame id; in the budget */
	int pidfd;		   /* the process, for liveness; -ESRCH: gone, -ENOSYS: none */
	bool exited;
	/*
	 * A forked child: 1 + its parent's index in targets, else 0. Its code
	 * objects from before the fork are the parent's, at the same addresses:
	 * read there when the child has exited too soon to be read itself.
	 */
	size_t forked_from;
	/* CLOCK_MONOTONIC when the tracker registered its image (0: not the tracker) */
	long long registered_ns;
	/*
	 * --mem: the last stack records of memory calls, which the call's range
	 * record (struct py_mem_range) names by thread and time; a ring, as
	 * other threads' records may come in between.
	 */
	struct {
		uint32_t tid;
		uint64_t ktime_ns;
		long stack;
	} mem_recent[16];
	unsigned mem_recent_next;
	struct async_stacks *async; /* --async, made at its first sample */
	bool async_tried;
	/* --signatures: reads type names; signature key -> func id of "name(sig)" */
	struct py_reader *sig_reader;
	struct hashmap sig_funcs;
	/* --native (collector_cpu.c): its unwinder, made at its first user stack */
	struct native_unwinder *unwinder;
	struct hashmap native_frames;	 /* pc -> frame id | enum native_pc_kind << 32 */
	unsigned long native_generation; /* the unwinder's, when native_frames was filled */
	/* its stacks the unwind left partial or refused, by enum native_stop, and the last pc */
	uint64_t native_stops[NATIVE_STOP_N];
	uint64_t native_stop_pc[NATIVE_STOP_N];
	/* module bodies' files as BPF read them: names a body whose object is gone */
	struct module_names modules;
	/* a thread of it was first seen: its Python names are read after the poll */
	bool pynames_due;
	long long pynames_next_ns; /* CLOCK_MONOTONIC before which they are not read again */
	/*
	 * a thread of it has no Python name yet, or CPython's default one: read
	 * again after pynames_wait_ns, which doubles each time (reset by a new
	 * thread), as a thread may name itself after its first sample
	 */
	bool pynames_open;
	long long pynames_wait_ns;
	uint64_t threading_globals; /* threading's globals as last found (py_thread_names) */
};

/* Signature records waiting for their sample: more than CPUs' records in flight at once. */
#define COLLECTOR_SIG_PENDING 16

struct collector {
	struct profile *prof;
	struct collector_target *targets;
	size_t ntargets, cap_targets;
	uint64_t unknown_pid;	      /* samples of a pid we do not know: counted as dropped */
	uint64_t malformed;	      /* records shorter than they claim: dropped */
	uint64_t late;		      /* records still unconverted when the run ended: dropped */
	struct cache_budget budget;   /* what every target's code cache and memo may hold */
	uint64_t alive_checks;	      /* calls of collector__check_alive */
	uint32_t *scratch;	      /* frame ids of the sample being converted */
	struct hashmap alloc_records; /* --mem=alloc: collector__alloc_key -> memory stack index */
	/* asked for a pid with no section before it counts as unknown (forked children) */
	struct collector_target *(*on_unknown)(void *ctx, int pid);
	void *on_unknown_ctx;
	/*
	 * With on_unknown: samples of a pid not known yet, kept until the
	 * fork notice that names it (the notices come on another ring, read
	 * after the samples) or until collector__expire_parked forgets them.
	 * They count in unknown_pid until claimed. Bounded by COLLECTOR_PARK_MAX.
	 */
	struct collector_parked *parked;
	size_t nparked, cap_parked;
	uint32_t park_gen;
	bool replaying; /* a replayed sample is not parked again */
	/* --async: CPU samples inside a task are charged to the tasks awaiting it */
	bool async;
	struct async_entry *async_out;
	uint32_t *async_ids;
	struct async_counts async_counts; /* of every target, the gone ones too */
	/*
	 * --signatures: the last signature records (struct py_sig_record),
	 * each waiting for the CPU sample sent right after it on its CPU
	 * (others' records may come in between); a ring.
	 */
	bool signatures;
	struct py_sig_record sig_pending[COLLECTOR_SIG_PENDING];
	unsigned sig_next;
	/* --opcodes: (minor version << 8 | opcode) -> the profile's index of its name */
	struct hashmap op_ids;
	/*
	 * --kernel (collector_cpu.c): CPU samples in kernel mode wait here
	 * for their kernel stack, the record sent right after them; each is
	 * counted once it has it, or without it when another sample of its
	 * thread, a second's worth of other records, or the run's end comes first.
	 */
	unsigned native_modes; /* enum native_mode (session/native.h) */
	struct collector_pending *pending;
	size_t npending, cap_pending;
	struct ksyms *ksyms; /* loaded with the first kernel stack */
	bool ksyms_tried;
	struct hashmap kframes;	 /* kernel address -> frame id */
	uint64_t kstacks;	 /* kernel stacks joined to their sample */
	uint64_t kstack_missing; /* kernel-mode samples counted without theirs */
	uint64_t kstack_orphans; /* kernel stacks whose sample was not waiting */
	uint64_t ustacks;	 /* --native: user stacks unwound and joined */
	uint64_t ustack_partial; /* of which the unwind stopped before the outermost Python frame */
	uint64_t ustack_unplaced; /* of which the native and Python stacks disagreed */
	uint64_t ustack_refused;  /* samples whose unwind a bound cut or refused */
	uint64_t ustack_missing;  /* samples flagged for a user stack counted without */
	uint64_t ustack_orphans;  /* user stacks whose sample was not waiting */
	/*
	 * Threads seen with no name yet (section index, tid): named by
	 * collector__name_threads after each poll, never in the middle of a
	 * sample; beyond COLLECTOR_UNNAMED_MAX, a scan of every section's
	 * threads does it (unnamed_overflow).
	 */
	struct collector_unnamed {
		size_t section;
		uint32_t tid;
	} * unnamed;
	size_t nunnamed, cap_unnamed;
	bool unnamed_overflow;
	/*
	 * The agent's flight recorder (--recorder): each CPU sample, its
	 * frames resolved, before it is counted; false: the profile does not
	 * count it (it samples at a lower rate than the recorder).
	 */
	bool (*on_cpu)(void *ctx, const struct collector_target *ts, const struct py_sample *s,
		       const uint32_t *frames, uint32_t n);
	void *on_cpu_ctx;
};

/* Threads waiting for their name at once, at most. */
#define COLLECTOR_UNNAMED_MAX 4096
/*
 * Python thread names: one read of a process's threads (py_thread_names)
 * takes at most COLLECTOR_PYNAMES_NS, and comes at most every
 * COLLECTOR_PYNAMES_GAP_NS, or ten times as long as the last one took: a
 * process that starts threads all the time costs at most a tenth of a core.
 * A read its deadline cut is done again after the gap. The last read, at the end, has COLLECTOR_PYNAMES_END_NS.
 */
#define COLLECTOR_PYNAMES_NS 10000000LL
#define COLLECTOR_PYNAMES_GAP_NS 100000000LL
#define COLLECTOR_PYNAMES_END_NS 50000000LL
/* and all the second reads at the end of those cut short, together (collector__rename_threads) */
#define COLLECTOR_PYNAMES_RETRY_NS 2000000000LL
/* A process with threads not named yet is read again after 1 s, 2 s, ... at most 64 s. */
#define COLLECTOR_PYNAMES_OPEN_NS 1000000000LL
#define COLLECTOR_PYNAMES_OPEN_MAX_NS 64000000000LL

/* Companions a waiting sample still expects. */
enum collector_want {
	WANT_KSTACK = 1, /* --kernel: struct py_kstack */
	WANT_USTACK = 2, /* --native: struct py_ustack */
};

struct collector_pending {
	int pid;
	uint32_t tid;
	uint64_t ktime_ns;
	uint8_t flags;
	uint64_t value; /* the sample's PY_CPU_* facts of its tick */
	uint8_t want;	/* enum collector_want */
	bool unresolved;
	bool aligned; /* frames are the walk's one for one (--async did not rewrite them) */
	uint32_t nframes, nkernel;
	uint32_t *frames; /* the Python stack's frame ids, innermost first; with --native, merged */
	uint32_t kernel[PY_KSTACK_MAX]; /* frame ids of its kernel stack */
};

/* Samples waiting for a kernel stack at most; the oldest is counted without it. */
#define COLLECTOR_PENDING_MAX 4096

/* Samples parked at once, at most (each up to a full stack: at most 16 MB in all). */
#define COLLECTOR_PARK_MAX 1024

struct collector_parked {
	int pid;
	uint32_t gen;
	size_t size;
	void *data;
};

/* Names one allocation record: its process, thread and kernel time. */
static inline uint64_t collector__alloc_key(uint32_t pid, uint32_t tid, uint64_t ktime_ns)
{
	return hash_u64(ktime_ns ^ hash_u64(((uint64_t)pid << 32) | tid));
}

/* budget_bytes: --max-cache-mb, for every target's code objects together. */
int collector__init(struct collector *c, struct profile *prof, size_t budget_bytes);
void collector__free(struct collector *c);

/* Takes ownership of a copy of *t and opens its profile section. 0 or -ENOMEM. */
int collector__add_target(struct collector *c, const struct target *t);
/*
 * The same for a process that began as how says at ktime_ns (its exec, for
 * an image profiled from its exec; 0: now), as the timeline shows it.
 */
int collector__add_target_since(struct collector *c, const struct target *t,
				enum profile_tl_start how, uint64_t ktime_ns);
struct collector_target *collector__find(struct collector *c, int pid);

/*
 * Handles one ring-buffer record of size bytes. Never fails: bad records are
 * counted, and so are records that come when the run is over (deadline.h).
 */
void collector__sample(struct collector *c, const void *data, size_t size);

/*
 * Counts a CPU sample s of ts with these frames (innermost first): its
 * stack, its place (Python / native / system), its thread.
 */
void collector__add_cpu(struct collector *c, struct collector_target *ts, const struct py_sample *s,
			const uint32_t *frames, uint32_t n, bool unresolved);
/*
 * A CPU sample (its n frames in c->scratch, aligned when they are the walk's
 * one for one): counted now, or held for its kernel and user stacks.
 */
void collector__cpu_sample(struct collector *c, struct collector_target *ts, bool aligned,
			   const struct py_sample *s, uint32_t n, bool unresolved);
/* A PY_KIND_KSTACK record: joined to its waiting sample, which is then counted. */
void collector__kstack(struct collector *c, const void *data, size_t size);
/* Counts every sample still waiting (at the end of the run). */
void collector__flush_pending(struct collector *c);
/* A PY_KIND_USTACK record: unwound and joined to its waiting sample. */
void collector__ustack(struct collector *c, const void *data, size_t size);
/* Frees what --kernel and --native kept (collector__free calls it). */
void collector__free_native(struct collector *c);
/* Frees a target's unwinder (collector__release calls it). */
void collector_target__free_native(struct collector_target *ts);

/* pid is known now: its parked samples are counted in its section. */
void collector__replay(struct collector *c, int pid);

/* Once per poll round: forgets samples parked two rounds ago (their pid never showed up). */
void collector__expire_parked(struct collector *c);

/* Whether the section's process has exited (by its pidfd). */
bool collector_target__gone(const struct collector_target *ts);

/*
 * An exited target no one reports on any more (the agent, once its last
 * interval is out): its code objects, frame memo, root directory and status
 * file are let go; its section stays, empty, and a late sample of it finds
 * nothing to name (unresolved). Nothing for a live target.
 */
void collector__release(struct collector *c, size_t i);

/*
 * Forgets the targets drop[] names (released ones: see collector__release)
 * and their profile sections, so that a long run over many short processes
 * keeps no record of the gone ones. map[i] is target i's new index, pmap[j]
 * section j's (SIZE_MAX: forgotten); the caller remaps what else holds
 * indices (tracker__remap). A kept child forked from a forgotten parent no
 * longer falls back on its code objects. Returns how many were forgotten.
 */
size_t collector__compact(struct collector *c, const bool *drop, size_t *map, size_t *pmap);

/*
 * Names the threads first seen since the last call, from /proc (their comm),
 * while they still run: after each poll of the ring buffers, and at the end;
 * and their Python names, from the processes' memory, bounded by
 * COLLECTOR_PYNAMES_NS and COLLECTOR_PYNAMES_GAP_NS.
 */
void collector__name_threads(struct collector *c);
/*
 * At the end of a run: every thread of a process still running named again
 * (its comm and its Python name), so that a thread renamed after it was
 * first seen has the name it ends with.
 */
void collector__rename_threads(struct collector *c);

/* Marks targets that are gone as exited; returns how many are still alive. */
size_t collector__check_alive(struct collector *c);

#endif
