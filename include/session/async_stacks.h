/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sampling --async: a sample taken inside an asyncio task is charged to the
 * chain of tasks that await it, as CPython 3.15's sampler does with
 * --async-aware. Done in userspace after the sample, from the task graph
 * (every task's coroutine and fut_waiter, cpython/py_async.c) read at most
 * every ASYNC_GRAPH_MS per process: the sample's task is the one whose
 * coroutine is the outermost coroutine frame of the sample. Only when
 * several tasks run that coroutine is the thread's running task read (a
 * word of the thread state, or a small dict), after the sample: a guess,
 * counted.
 */
#ifndef PYBPFPROF_ASYNC_STACKS_H
#define PYBPFPROF_ASYNC_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf_abi.h"
#include "cpython/target.h"

#define ASYNC_GRAPH_MS 200 /* the task graph is read again after this long */
/*
 * What one read of a process's task graph may take of pybpfprof's CPU (5000
 * tasks 31 coroutines deep took 2-3.5 s to read whole; CPU time, so that a
 * loaded machine does not cut reads it would finish), and how far apart
 * reads are at least, in multiples of the last one's CPU time: a process's
 * graph reads then take at most a tenth of the time, and never hold the
 * run's end.
 */
#define ASYNC_READ_NS 20000000LL
#define ASYNC_READ_SPACING 10
#define ASYNC_CHAIN 64 /* awaiting tasks followed per sample, at most */

struct async_stacks;

/* One entry of a rewritten stack: a Python frame, or (task != NULL) a task. */
struct async_entry {
	struct py_frame frame;
	const char *task; /* the task's name; valid until the next call */
};

/* What --async did, per process. */
struct async_counts {
	uint64_t in_task;     /* samples charged to a task chain */
	uint64_t not_in_task; /* samples on a thread running no task, or not found in it */
	uint64_t guessed;     /* of in_task: its coroutine ran in several tasks; the one
			       * running when the sample was read was taken */
	uint64_t graph_reads; /* task graphs read */
	uint64_t graph_cut;   /* of which cut at ASYNC_READ_NS (their other tasks unread) */
};

/* For the target t; NULL when its version has no task layout. */
struct async_stacks *async_stacks__new(const struct target *t);
void async_stacks__free(struct async_stacks *a);
const struct async_counts *async_stacks__counts(const struct async_stacks *a);

/*
 * The sample's frames (innermost first) cut at the running task's
 * coroutine, then that task, then each task awaiting it with its own
 * coroutine stack (innermost first), up to the outermost task: into out (at
 * most max entries). Returns the number of entries, or 0 when the sample is
 * to stay as it is (no task runs on tid, or its coroutine is not in the
 * sample). t is the target a was made for (the caller's copy may move);
 * tid is the host's.
 */
size_t async_stacks__chain(struct async_stacks *a, const struct target *t, pid_t tid,
			   const struct py_frame *frames, uint32_t n, struct async_entry *out,
			   size_t max);

#endif
