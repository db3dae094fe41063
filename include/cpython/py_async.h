/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * asyncio's tasks in a live target, read from outside (pybpfprof dump
 * --async): every pending C task (_asyncio.Task and its subclasses) with its
 * name, its coroutine stack and the tasks it awaits. Tasks are found in
 * asyncio.tasks' task sets (3.11-3.13) or in the thread states' task lists
 * (3.14+); a task awaits the task its fut_waiter is, or each child of the
 * gather() future its fut_waiter is. Everything read is the target's, so
 * hostile: every list, set and chain is bounded, and a task or coroutine
 * that does not read as one is left out (and counted).
 */
#ifndef PYBPFPROF_PY_ASYNC_H
#define PYBPFPROF_PY_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cpython/py_objects.h"

#define PY_ASYNC_TASKS 4096  /* tasks read per process */
#define PY_ASYNC_DEPTH 32    /* coroutine frames read per task */
#define PY_ASYNC_AWAITS 64   /* tasks one task awaits, kept */
#define PY_ASYNC_CHAIN 65536 /* links of one task list followed, at most */

struct py_async_task {
	uint64_t addr;
	char name[128];
	int state; /* 0 pending (only pending tasks are listed) */
	bool frames_truncated;
	bool gather; /* it awaits a gather() of the tasks in awaits */
	size_t nframes;
	struct py_dump_frame frames[PY_ASYNC_DEPTH]; /* outermost coroutine first */
	size_t nawaits;
	uint32_t awaits[PY_ASYNC_AWAITS]; /* indices of the tasks it awaits */
};

struct py_async_state {
	size_t finished;   /* done or cancelled tasks still referenced: not listed */
	size_t skipped;	   /* objects in the task sets that are not C tasks (pure-Python ones) */
	size_t unreadable; /* tasks whose fields could not be read */
	bool left_out;	   /* more tasks than PY_ASYNC_TASKS */
	bool cut;	   /* the read's time ran out: the tasks not read by then are left out */
	bool no_asyncio;   /* asyncio.tasks is not imported (3.11-3.13) */
	bool out_of_time;  /* the reader's deadline came before the task lists' end */
};

/*
 * The pending tasks of t's main interpreter into out (max of them), in the
 * order found, until r's deadline (st->out_of_time then). Returns their number, or -ENOTSUP (a version or build with
 * no task layout), or -errno when the task lists cannot be read.
 */
int py_async_tasks(struct py_reader *r, const struct target *t, struct py_async_task *out,
		   size_t max, struct py_async_state *st);

/*
 * The same, read until this thread's CPU time (thread_cpu_ns()) reaches
 * until_ns (0: no end): a task graph of thousands of deep coroutines takes
 * seconds to read, and sampling must go on meanwhile. Past it, st->cut is
 * set and what was read so far is returned.
 */
int py_async_tasks_until(struct py_reader *r, const struct target *t, struct py_async_task *out,
			 size_t max, struct py_async_state *st, long long until_ns);

/*
 * Every thread state of the main interpreter with its thread's id (its
 * native_thread_id, in the process's pid namespace), at most max. Returns
 * their number, or -errno.
 */
int py_async_thread_states(struct py_reader *r, const struct target *t, pid_t *tids,
			   uint64_t *tstates, size_t max);

/*
 * The task running now on the thread whose thread state is tstate: 3.14+
 * keep it in the thread state; 3.11-3.13 in asyncio.tasks._current_tasks,
 * keyed by event loop: the thread state's running loop's (3.13), or the
 * only entry (3.11-3.12: with loops in several threads, none is chosen).
 * *current_tasks caches that dict's address (0 at first). 0 with *task (0:
 * none runs), or -errno.
 */
int py_async_running_task(struct py_reader *r, const struct target *t, uint64_t tstate,
			  uint64_t *current_tasks, uint64_t *task);

/*
 * Pure, for the fuzz target: the slot of a suspended coroutine frame's
 * stack that holds what it awaits, from the frame's stack field as read
 * (stacktop, or stackpointer), the frame's address, the number of its
 * locals and the layout. 0 when the field says no such slot.
 */
uint64_t py_async_await_slot(const struct py_async_layout *A, uint16_t localsplus, uint64_t frame,
			     uint64_t stack_field, uint64_t nlocalsplus);

#endif
