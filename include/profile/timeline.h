/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The timeline: beside the aggregated stacks, every event of the run in
 * time, per process and thread (CPU samples with their stack, off-CPU
 * intervals with their reason, GC pauses, imports, process starts, forks,
 * execs and exits), for the writers that draw a run over time (Perfetto,
 * Chrome's trace JSON). The aggregated writers ignore it.
 *
 * Events are kept in the order they were counted (an interval when it
 * ended), at most cap of them; each one beyond is dropped and counted by
 * kind, and so is one whose stack finds no room in the stack table (at
 * most PROFILE_TL_MAX_FRAMES frame ids in all). Times are ns since the
 * run's start (struct profile.start_ns), converted once from the kernel's
 * monotonic clock as each event is added. Processes are the timeline's own
 * (one per process, however many images it exec'd), so that --merge and a
 * saved profile keep them apart.
 */
#ifndef PYBPFPROF_PROFILE_TIMELINE_H
#define PYBPFPROF_PROFILE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/hashmap.h"

/* Events a run keeps by default (--timeline-events), and at most. */
#define PROFILE_TL_DEFAULT_CAP 1000000
#define PROFILE_TL_MAX_CAP 50000000
/* Frame ids the stack table holds at most (4 bytes each). */
#define PROFILE_TL_MAX_FRAMES (16u << 20)
/* An event's ref when it has no stack. */
#define PROFILE_TL_NO_STACK UINT32_MAX

enum profile_tl_kind {
	PROFILE_TL_CPU,	   /* a CPU sample; ref: its stack; arg: PROFILE_TL_CPU_ARG() */
	PROFILE_TL_OFFCPU, /* off the CPU for dur_ns; ref: the stack it left with; arg: class */
	PROFILE_TL_GC,	   /* a collection of dur_ns; ref: the stack that triggered it (or
			    * none); arg: generation; value: objects collected */
	PROFILE_TL_IMPORT, /* an import of dur_ns; ref: the module's name (a string id); arg:
			    * PROFILE_TL_IMPORT_* bits */
	PROFILE_TL_START,  /* the process is first on the timeline; arg: enum profile_tl_start;
			    * value: the parent's pid (forked) */
	PROFILE_TL_FORK,   /* it forked; value: the child's pid */
	PROFILE_TL_EXEC,   /* it replaced its image */
	PROFILE_TL_EXIT,   /* it exited */
	PROFILE_TL_NKINDS,
};

/*
 * A CPU sample's arg: where it ran (0 unknown, else enum profile_where + 1)
 * and, with --gil, the GIL (0 not followed, else enum profile_gil + 1).
 */
#define PROFILE_TL_CPU_ARG(where1, gil1) ((uint8_t)((where1) | (gil1) << 2))
#define PROFILE_TL_CPU_WHERE(arg) ((arg)&3)
#define PROFILE_TL_CPU_GIL(arg) (((arg) >> 2) & 3)

enum {
	PROFILE_TL_IMPORT_FOUND = 1, /* the module was found */
	PROFILE_TL_IMPORT_OPEN = 2,  /* not done when the run ended: dur_ns runs to the end */
};

/* How a process came onto the timeline (a START event's arg). */
enum profile_tl_start {
	PROFILE_TL_FOUND,  /* running when it was first seen: at the run's start, or by a scan */
	PROFILE_TL_FORKED, /* forked from a process on the timeline */
	PROFILE_TL_EXECED, /* a new image, profiled from its exec */
	PROFILE_TL_NSTARTS,
};

struct profile_tl_event {
	int64_t t_ns;	 /* since the run's start, never below 0 */
	uint64_t dur_ns; /* intervals: OFFCPU, GC, IMPORT */
	uint32_t proc;	 /* index in procs */
	uint32_t tid;	 /* process events: the pid */
	uint32_t ref;	 /* a stack id (PROFILE_TL_NO_STACK: none), or a string id */
	uint32_t value;
	uint8_t kind; /* enum profile_tl_kind */
	uint8_t arg;
};

struct profile_tl_proc {
	int pid;
	char *name;    /* its latest image's comm; see profile__tl_proc_name */
	char *cmdline; /* idem */
	bool ended;    /* its exit was seen: a later process with its pid is another one */
};

struct profile_timeline {
	bool on;
	uint64_t cap;		/* events kept at most */
	uint64_t start_mono_ns; /* the run's start on CLOCK_MONOTONIC (profile.start_ns) */
	struct profile_tl_event *events;
	size_t n, cap_events;
	uint64_t dropped[PROFILE_TL_NKINDS]; /* beyond the cap, or no room for the stack */
	/* interned stacks: frame ids innermost first, each stack at [off, off + n) */
	uint32_t *frames;
	size_t nframes, cap_frames;
	struct profile_tl_stack {
		uint32_t off, n;
	} * stacks;
	size_t nstacks, cap_stacks;
	struct hashmap stack_index; /* hash of frames -> stack id */
	char **strings;		    /* module names */
	size_t nstrings, cap_strings;
	struct hashmap string_index;
	struct profile_tl_proc *procs;
	size_t nprocs, cap_procs;
	struct hashmap running; /* pid -> 1 + index of its process still running */
};

struct profile;
struct profile_target;

/*
 * Keeps a timeline of at most cap events (0: PROFILE_TL_DEFAULT_CAP, at
 * most PROFILE_TL_MAX_CAP), its times counted from p->start_ns.
 */
void profile__timeline_on(struct profile *p, uint64_t cap);
void profile_timeline__free(struct profile_timeline *t);

/* ktime_ns (CLOCK_MONOTONIC, as the kernel stamps records) as the timeline's time. */
int64_t profile__tl_time(const struct profile *p, uint64_t ktime_ns);

/*
 * The process pid on the timeline, named (again) by its image's name and
 * command line; a process not running on it yet is added with a START
 * event at ktime_ns (how, and the parent's pid). Returns 1 + its index, or
 * 0 (the timeline is off, or out of memory).
 */
uint32_t profile__tl_proc(struct profile *p, int pid, const char *name, const char *cmdline,
			  enum profile_tl_start how, int parent, uint64_t ktime_ns);
/*
 * A FORK (value: the child's pid), EXEC or EXIT of pid at ktime_ns, if pid
 * is running on the timeline; after EXIT, it is not.
 */
void profile__tl_proc_event(struct profile *p, int pid, enum profile_tl_kind kind, uint32_t value,
			    uint64_t ktime_ns);

/* One event of a thread of a section (pp->tl_proc), as the collector counts it. */
struct profile_tl_add {
	uint8_t kind, arg;
	uint32_t tid;
	uint64_t ktime_ns; /* its start */
	uint64_t dur_ns;
	const uint32_t *frames; /* innermost first; NULL: no stack */
	uint32_t nframes;
	uint32_t value;
	const char *name; /* IMPORT: the module */
};
void profile_target__tl_add(struct profile *p, const struct profile_target *pp,
			    const struct profile_tl_add *a);
/* At the run's end (ktime_ns): the imports still open, up to it. */
void profile__tl_finish(struct profile *p, uint64_t end_ktime_ns);

/*
 * Loading a saved timeline: a stack of n frame ids (innermost first) and a
 * string, interned; an event appended as it is. Each returns its id, or
 * UINT32_MAX (out of memory, or no room); tl_append 0 or -ENOMEM.
 */
uint32_t profile_timeline__stack(struct profile_timeline *t, const uint32_t *frames, uint32_t n);
uint32_t profile_timeline__string(struct profile_timeline *t, const char *s);
int profile_timeline__append(struct profile_timeline *t, const struct profile_tl_event *e);
/* A process as a saved profile lists it. 0 or -ENOMEM. */
int profile_timeline__add_proc(struct profile_timeline *t, int pid, const char *name,
			       const char *cmdline, bool ended);

/* Events kept, and dropped in all. */
uint64_t profile_timeline__dropped(const struct profile_timeline *t);

/*
 * The events' indices ordered by process, thread, time, then as counted:
 * each thread's stream in time. NULL when out of memory (or none).
 */
uint32_t *profile_timeline__order(const struct profile_timeline *t);

/*
 * The names a timeline shows, into buf, raw (each writer escapes them): a
 * process's as the process table names it, by the role of its newest
 * section (its latest image: "app.py", "spawn worker of 1234"; its comm
 * without a section, or in a --merge profile); a thread's as the reports
 * name it in the sections of its process (its Python name, its comm
 * beside it when that is its own; the comm alone without one; "" if
 * unknown).
 */
const char *profile__tl_proc_name(const struct profile *p, const struct profile_tl_proc *pr,
				  char *buf, size_t len);
#define PROFILE_TL_THREAD_NAME (PROFILE_PYNAME + 16 + 16)
const char *profile__tl_thread_name(const struct profile *p, const struct profile_tl_proc *pr,
				    uint32_t tid, char *buf, size_t len);

#endif
