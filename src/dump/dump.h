/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pybpfprof dump: what a snapshot of a process holds (dump_read.c collects
 * it, dump_write.c and dump_async.c print it as text or JSON through the
 * bounded output of dump_out.c). Every string is the target's and is cleaned
 * (text) or escaped (JSON) on its way out. A dump is bounded per process and
 * as a whole, in bytes and in time; what a bound cuts is counted and said.
 */
#ifndef PYBPFPROF_CLI_DUMP_H
#define PYBPFPROF_CLI_DUMP_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "cpython/code_cache.h"
#include "cpython/py_async.h"
#include "cpython/py_objects.h"

/* The bounds' defaults (the options --max-mb and the like change them). */
#define DUMP_PROC_MB 16	     /* output per process */
#define DUMP_PROC_SECONDS 10 /* reading one process */
#define DUMP_TOTAL_MB 256    /* output of the whole dump */
#define DUMP_TOTAL_SECONDS 120
#define DUMP_MAX_TASKS 4096 /* threads of one process listed at most */

/* Why a process's dump (or the dump) stopped short; the first bound reached. */
enum dump_cut {
	DUMP_CUT_NONE,
	DUMP_CUT_BYTES,	     /* the process's output bound */
	DUMP_CUT_TIME,	     /* the process's time bound */
	DUMP_CUT_DUMP_BYTES, /* the whole dump's output bound */
	DUMP_CUT_DUMP_TIME,  /* the whole dump's time bound */
	DUMP_CUT_SIGNAL,     /* a stop signal (SIGINT, SIGTERM) */
};

struct dump_limits {
	uint64_t proc_bytes, dump_bytes;
	long long proc_ns, dump_ns;
};

/* What of one process was left out, by the bounds: counted, and said in the output. */
struct dump_cuts {
	enum dump_cut why;   /* the first bound that cut something, or NONE */
	size_t threads;	     /* threads not shown at all */
	size_t threads_over; /* of them, those past the first DUMP_MAX_TASKS listed */
	size_t frames;	     /* Python frames read but not shown */
	size_t locals;	     /* frames shown without their locals (--locals) */
	size_t tasks;	     /* asyncio tasks not shown */
	bool sources;	     /* source lines not read */
	bool thread_list;    /* the Python thread list was not read to its end */
	bool task_lists;     /* the asyncio task lists were not read to their end */
};

/*
 * Reading one process: until its deadline, and keeping at most bytes of
 * text (what it takes to show is never less than that); a stop signal ends
 * it too.
 */
struct dump_budget {
	long long deadline;		   /* CLOCK_MONOTONIC ns */
	enum dump_cut at_deadline;	   /* DUMP_CUT_TIME or DUMP_CUT_DUMP_TIME */
	uint64_t bytes;			   /* what may still be kept */
	enum dump_cut over_bytes;	   /* DUMP_CUT_BYTES or DUMP_CUT_DUMP_BYTES */
	const volatile sig_atomic_t *stop; /* set by a stop signal */
};

struct dump_local {
	char name[64];
	char type[48];
	char *value; /* the bounded text (py_render) */
	bool unbound, unreadable;
	uint8_t param;		   /* enum py_param: which argument it is, if one */
	struct py_value_info info; /* a lock's state and owner */
};

struct dump_frame {
	char *func, *file; /* NULL: the code object could not be read */
	int line;	   /* -1: unknown */
	char *source;	   /* the source line, stripped; NULL: not read */
	struct dump_local *locals;
	size_t nlocals, total_locals;
	size_t unbound_hidden; /* unbound locals read and not kept (without --unbound) */
	int locals_err;	       /* 0, or -errno: they could not be read */
	bool locals_cut;       /* a bound came before they were read */
};

/* One native frame of a thread (--native). */
struct dump_nframe {
	char *name, *file; /* the function (or library+0xoffset), its file ("" none) */
	uint64_t pc;
	uint32_t at; /* shown before the thread's Python frame at (innermost first) */
};

/* How a thread's native frames were read (--native). */
enum dump_native_status {
	DUMP_NATIVE_NONE,    /* not asked for */
	DUMP_NATIVE_PLACED,  /* among every Python frame */
	DUMP_NATIVE_PARTIAL, /* the unwind ended before the outermost Python frames */
	DUMP_NATIVE_BELOW,   /* the two stacks disagreed: below the innermost Python frame only */
	DUMP_NATIVE_WHOLE,   /* a thread without Python frames: its whole native stack */
	DUMP_NATIVE_RUNNING, /* on a CPU or runnable: its registers are not readable from outside */
	DUMP_NATIVE_UNREAD,  /* its stack pointer or stack could not be read */
	DUMP_NATIVE_MOVING,  /* it left its wait each time its stack was read */
	DUMP_NATIVE_CUT,     /* a bound of the dump came first */
};

struct dump_thread {
	pid_t tid;
	pid_t nstid;	 /* the same thread in the process's own pid namespace */
	char name[64];	 /* /proc/PID/task/TID/comm */
	char pyname[64]; /* threading.Thread's name; "" unknown */
	char state;	 /* /proc/PID/task/TID/stat: R, S, D, T, t, Z, ... */
	char wchan[64];	 /* the kernel function it waits in, "" if none */
	long syscall;	 /* its system call number; -1 none, -2 running, -3 unknown */
	unsigned long args[6];
	bool python;	/* it has a Python thread state */
	uint64_t ident; /* its thread state's thread_id: pthread_self(), threading.get_ident() */
	int gil;	/* 1 holds it, 2 waits for it, 0 neither, -1 unknown */
	int gc;		/* 1 in a collection, 0 not, -1 unknown */
	bool moving, truncated, read_error;
	struct dump_frame *frames;
	size_t nframes;
	size_t frames_cut;	    /* frames its stack walk read, left out by a bound */
	struct dump_nframe *native; /* --native: innermost first */
	size_t nnative;
	uint8_t native_status; /* enum dump_native_status */
	int native_err;	       /* DUMP_NATIVE_UNREAD: -errno */
};

/* One pending asyncio task (--async): its coroutine stack, outermost first. */
struct dump_task {
	uint64_t addr;
	char name[128];
	struct dump_frame *frames;
	size_t nframes;
	size_t frames_cut; /* coroutine frames read, left out by a bound */
	bool truncated, gather;
	uint32_t awaits[PY_ASYNC_AWAITS]; /* indices of the tasks it awaits */
	size_t nawaits;
};

struct dump_process {
	pid_t pid;
	char version[24];
	char exe[PATH_MAX], cmdline[256];
	struct dump_thread *threads;
	size_t nthreads, cap;
	bool threads_left_out;	 /* it had more Python threads than PY_DUMP_THREADS */
	bool thread_list_loops;	 /* its thread list came back to a thread already read */
	struct dump_task *tasks; /* --async */
	size_t ntasks;
	int tasks_err; /* 0, or -errno: the tasks could not be read */
	struct py_async_state tasks_state;
	struct dump_budget budget;
	struct dump_cuts cut;
	long long read_ns; /* how long reading it took */
};

/* What every process's dump shows, and its bounds. */
struct dump_report {
	bool locals;
	bool unbound; /* --unbound: locals not bound yet are shown too */
	bool native;  /* --native: each thread's native frames */
	bool async;   /* the asyncio tasks were read */
	bool json;
	struct dump_limits limits;
};

/*
 * The bounded output (dump_out.c). Elements are formatted in a stream of
 * their own (dump_out__begin) and written whole or not at all
 * (dump_out__end). Inside a process (dump_out__process) an item may take
 * what the process's bound leaves once DUMP_PROC_RESERVE is kept for its
 * closers; outside, what the dump's bound leaves once DUMP_OUT_RESERVE is
 * kept for the dump's own closers. A closer takes from the reserve.
 */
#define DUMP_OUT_RESERVE 4096
#define DUMP_PROC_RESERVE 2048
#define DUMP_PROC_MIN 4096 /* a process is begun only with this much room for items */

enum dump_el {
	DUMP_EL_ITEM,  /* content: not written once the output is full */
	DUMP_EL_CLOSE, /* a closer, from the reserve */
};

struct dump_out {
	FILE *f;
	uint64_t bound, written;	   /* the whole dump's bound, and what it wrote */
	uint64_t proc_bound, proc_written; /* the current process's */
	bool in_proc, proc_by_dump;	   /* the process's bound is what the dump's left */
	bool full;			   /* an item did not fit: no more are written */
	int err;			   /* the first error writing to f (-errno) */
	FILE *el;			   /* the element being formatted */
	char *buf;
	size_t len, cap, room;
	bool over, nomem;
};

int dump_out__init(struct dump_out *o, FILE *f, uint64_t bound);
void dump_out__free(struct dump_out *o);
/* Begins a process with at most bound bytes: false if the dump has no room left for one. */
bool dump_out__process(struct dump_out *o, uint64_t bound);
void dump_out__process_end(struct dump_out *o);
/* What an item may take now. */
uint64_t dump_out__room(const struct dump_out *o);
/* The stream of a new element, or NULL: an item once the output is full. */
FILE *dump_out__begin(struct dump_out *o, enum dump_el kind);
/* Writes the element if it fit; false (and the output is full) if not. */
bool dump_out__end(struct dump_out *o);

/* Reading a process (dump_read.c): 0, or -errno with the reason in why. */
int dump_read_process(pid_t pid, struct dump_process *dp, const struct dump_report *rep, char *why,
		      size_t whylen);
void dump_process_free(struct dump_process *dp);
/* Whether dp's reading must stop now (a bound, a signal): the reason is then in dp->cut.why. */
bool dump_budget_spent(struct dump_process *dp);
/* Takes n bytes of dp's budget; false (and the reason set) if they are not there. */
bool dump_budget_take(struct dump_process *dp, size_t n);
/*
 * The name, file and line of the frame pf into df, its text charged to dp's
 * budget; false (df untouched) once the budget is spent.
 */
bool dump_frame_resolve(struct dump_process *dp, struct code_cache *cc, const struct target *t,
			const struct py_dump_frame *pf, struct dump_frame *df);
void dump_frame_free(struct dump_frame *df);

/*
 * --native (dump_native.c): every thread's native frames, each thread
 * waiting in the kernel unwound from the stack pointer and instruction
 * pointer it entered with (/proc/PID/task/TID/syscall) over a copy of its
 * stack; pts[i] (n of them) is the Python thread ths[i] shows, if any.
 */
void dump_read_native(const struct target *t, const struct py_dump_thread *pts, int n,
		      struct dump_thread *const *ths, struct dump_process *dp);
void dump_native_free(struct dump_thread *th);
const char *dump_native_key(uint8_t status);

/*
 * Where each of n native frames (their enum native_pc_kind, innermost
 * first) goes among npy Python frames: at[i], the Python frame it is shown
 * before, or -1 (left out: an eval call, which stands for its Python
 * frames, or a frame outside the outermost Python frame). entries (nbits
 * bits): the Python frames each eval call began with; py_cut: the Python
 * stack was cut short. Returns PLACED, PARTIAL or BELOW (WHOLE, every frame
 * at 0, when there is no Python frame), and in *placed the
 * Python frames the eval calls account for (0 when the stacks disagree).
 */
enum dump_native_status dump_native_place(const uint8_t *kinds, uint32_t n, uint32_t npy,
					  const uint64_t *entries, uint32_t nbits, bool py_cut,
					  int32_t *at, uint32_t *placed);

/* Reads the source line of every frame of dp, with pid's rights, inside its root. */
void dump_read_sources(pid_t pid, struct dump_process *dp);

/*
 * Writes one process (dump_write.c); what did not fit is counted in dp->cut,
 * and said. false: not even its first lines fit (nothing was written).
 */
bool dump_write_process(struct dump_out *o, const struct dump_report *rep, struct dump_process *dp,
			bool first);
/* The words for a cut: "the process's output bound of 16 MiB (--max-mb)" and the like. */
void dump_cut_text(const struct dump_limits *l, enum dump_cut why, char *buf, size_t len);
/* Its key in JSON: "bytes", "time", "dump_bytes", "dump_time", "signal", or NULL. */
const char *dump_cut_key(enum dump_cut why);

/* --async (dump_async.c): reads dp's tasks; prints them as a tree, or as JSON; frees them. */
void dump_read_tasks(struct py_reader *r, struct code_cache *cc, const struct target *t,
		     struct dump_process *dp);
void dump_tasks_text(struct dump_out *o, struct dump_process *dp);
void dump_tasks_json(struct dump_out *o, struct dump_process *dp);
void dump_tasks_free(struct dump_process *dp);

/* A system call's name by number (x86_64), or NULL. */
const char *dump_syscall_name(long nr);
/* "held", "waiting", "not held", "unknown" */
const char *dump_gil_name(int gil);
/* The kernel state letter in words: "sleeping", "stopped", ... */
const char *dump_state_name(const struct dump_thread *t);

#endif
