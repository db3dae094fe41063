// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sampling --async: rewrites a sample taken inside an asyncio task into the
 * chain of tasks awaiting it. The task graph (cpython/py_async.c) is read
 * again at most every ASYNC_GRAPH_MS, or when the running task is not in
 * it (at most every ASYNC_GRAPH_RETRY_MS): a task that runs has no
 * fut_waiter of its own, and those awaiting it stay suspended while it
 * runs, so a graph a little old still says who awaits it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "session/async_stacks.h"
#include "proc/procfs.h"
#include "cpython/py_async.h"
#include "util/deadline.h"
#include "util/mono.h"

#define ASYNC_GRAPH_RETRY_MS 20
#define ASYNC_THREADS 256 /* threads whose thread state is remembered */
#define ASYNC_NS_MEMO 64

struct async_stacks {
	const struct target *t;
	struct py_reader r;
	struct py_async_task *tasks;
	int32_t *awaiter; /* per task, the first task awaiting it, or -1 */
	size_t ntasks;
	long long graph_ns;
	long long next_ns;	     /* no read before this (ASYNC_READ_SPACING) */
	uint64_t current_tasks;	     /* asyncio.tasks._current_tasks (3.11-3.13), once found */
	pid_t nstids[ASYNC_THREADS]; /* each thread state's thread, in the process's namespace */
	uint64_t tstates[ASYNC_THREADS];
	size_t nthreads;
	pid_t ns_memo[ASYNC_NS_MEMO][2]; /* host tid -> its id in the process's namespace */
	unsigned ns_next;
	struct async_counts counts;
};

struct async_stacks *async_stacks__new(const struct target *t)
{
	struct async_stacks *a = calloc(1, sizeof(*a));
	struct py_async_layout A;

	if (!a || t->layout.free_threaded || py_layout__async(t->version, &A) ||
	    py_reader__init(&a->r, t->pid, &t->layout, t->version)) {
		free(a);
		return NULL;
	}
	a->tasks = malloc(PY_ASYNC_TASKS * sizeof(*a->tasks));
	a->awaiter = malloc(PY_ASYNC_TASKS * sizeof(*a->awaiter));
	if (!a->tasks || !a->awaiter) {
		free(a->tasks);
		free(a->awaiter);
		free(a);
		return NULL;
	}
	a->t = t;
	return a;
}

void async_stacks__free(struct async_stacks *a)
{
	if (!a)
		return;
	free(a->tasks);
	free(a->awaiter);
	free(a);
}

const struct async_counts *async_stacks__counts(const struct async_stacks *a)
{
	return &a->counts;
}

/*
 * The task graph and the threads' states, read again: within ASYNC_READ_NS,
 * not sooner than ASYNC_READ_SPACING times the last read's time after it,
 * and not once the run is over (the drain keeps the graph it has). Whether
 * it was read.
 */
static bool reread(struct async_stacks *a, long long now)
{
	struct py_async_state st;
	long long cpu = thread_cpu_ns();
	size_t i, k;
	int n;

	if (now < a->next_ns || deadline__yield() || deadline__past(0))
		return false;
	a->graph_ns = now;
	a->counts.graph_reads++;
	n = py_async_tasks_until(&a->r, a->t, a->tasks, PY_ASYNC_TASKS, &st, cpu + ASYNC_READ_NS);
	a->counts.graph_cut += st.cut;
	a->ntasks = n > 0 ? (size_t)n : 0;
	/* who awaits each task, once per graph rather than per sample */
	for (i = 0; i < a->ntasks; i++)
		a->awaiter[i] = -1;
	for (i = a->ntasks; i-- > 0;)
		for (k = a->tasks[i].nawaits; k-- > 0;)
			a->awaiter[a->tasks[i].awaits[k]] = (int32_t)i;
	n = py_async_thread_states(&a->r, a->t, a->nstids, a->tstates, ASYNC_THREADS);
	a->nthreads = n > 0 ? (size_t)n : 0;
	a->next_ns = now + ASYNC_READ_SPACING * (thread_cpu_ns() - cpu);
	return true;
}

/* The thread state of the host's thread tid (in the process's pid namespace: its own id). */
static uint64_t tstate_of(struct async_stacks *a, pid_t tid)
{
	pid_t tgid, nstid = tid;
	size_t i;

	if (a->t->nspid != a->t->pid) {
		for (i = 0; i < ASYNC_NS_MEMO && a->ns_memo[i][0] != tid; i++)
			;
		if (i == ASYNC_NS_MEMO) {
			proc_status_ids(tid, &tgid, &nstid);
			i = a->ns_next++ % ASYNC_NS_MEMO;
			a->ns_memo[i][0] = tid;
			a->ns_memo[i][1] = nstid;
		}
		nstid = a->ns_memo[i][1];
	}
	for (i = 0; i < a->nthreads; i++)
		if (a->nstids[i] == nstid)
			return a->tstates[i];
	return 0;
}

/*
 * The sample's task and the frame where its coroutine is (*cut), or -1: the
 * outermost frame of the sample that is some task's coroutine (its code),
 * and the task running that code; when several tasks run it, the one the
 * thread runs now (read after the sample: counted as a guess), else none.
 */
static long sample_task(struct async_stacks *a, pid_t tid, const struct py_frame *frames,
			uint32_t n, uint32_t *cut)
{
	uint64_t running = 0;
	long found = -1;
	size_t i, hits = 0;
	uint32_t k;

	for (k = n; k-- > 0 && !hits;)
		for (i = 0; i < a->ntasks; i++)
			if (a->tasks[i].nframes && a->tasks[i].frames[0].code == frames[k].code) {
				*cut = k;
				found = (long)i;
				hits++;
			}
	if (hits <= 1)
		return found;
	if (py_async_running_task(&a->r, a->t, tstate_of(a, tid), &a->current_tasks, &running))
		running = 0;
	for (i = 0; running && i < a->ntasks; i++)
		if (a->tasks[i].addr == running &&
		    a->tasks[i].frames[0].code == frames[*cut].code) {
			a->counts.guessed++;
			return (long)i;
		}
	return -1;
}

/* Appends task i's coroutine frames, innermost first, and the task. */
static size_t put_task(const struct py_async_task *task, struct async_entry *out, size_t n,
		       size_t max, bool frames)
{
	size_t k;

	for (k = task->nframes; frames && k-- > 0 && n < max;)
		out[n++] = (struct async_entry){
			.frame = { .code = task->frames[k].code,
				   .instr = task->frames[k].instr,
				   .fingerprint = task->frames[k].fingerprint },
		};
	if (n < max)
		out[n++] = (struct async_entry){ .task = task->name };
	return n;
}

size_t async_stacks__chain(struct async_stacks *a, const struct target *t, pid_t tid,
			   const struct py_frame *frames, uint32_t n, struct async_entry *out,
			   size_t max)
{
	long long now = mono_ns();
	size_t m = 0, steps;
	uint32_t k, cut = n;
	long i, j;

	a->t = t;
	a->r.L = &t->layout;
	if (!a->graph_ns || now - a->graph_ns > ASYNC_GRAPH_MS * 1000000LL)
		reread(a, now);
	i = sample_task(a, tid, frames, n, &cut);
	/* a task newer than the graph: read again, not too often */
	if (i < 0 && now - a->graph_ns > ASYNC_GRAPH_RETRY_MS * 1000000LL && reread(a, now))
		i = sample_task(a, tid, frames, n, &cut);
	if (i < 0) {
		a->counts.not_in_task++;
		return 0;
	}
	a->counts.in_task++;
	for (k = 0; k <= cut && m < max; k++)
		out[m++] = (struct async_entry){ .frame = frames[k] };
	m = put_task(&a->tasks[i], out, m, max, false);
	/* each awaiting task, bounded: a cycle of awaits ends at ASYNC_CHAIN */
	for (steps = 0, j = a->awaiter[i]; j >= 0 && steps < ASYNC_CHAIN && m < max;
	     steps++, j = a->awaiter[j])
		m = put_task(&a->tasks[j], out, m, max, true);
	return m;
}
