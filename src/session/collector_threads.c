// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads' names, off the samples' path: a thread first seen by a record is
 * only noted (collector__unnamed); after each poll of the ring buffers, and
 * at the end, collector__name_threads reads each noted thread's comm from
 * /proc while it still runs. A thread gone by then keeps no name (shown "?").
 * At the end collector__rename_threads reads them all again: a thread that
 * names itself as it starts (threading's workers with prctl or comm) may
 * have been sampled before.
 * Its Python (threading) name is read from its process's memory in the same
 * place: one bounded read of all the process's threads (py_thread_names) at
 * most every COLLECTOR_PYNAMES_GAP_NS, and once more at the end
 * (collector__rename_threads) for the threads renamed meanwhile. A thread
 * still without a name, or with CPython's default one ("Thread-3 (run)"),
 * may name itself later (a server's handler does as it starts) and may be
 * gone by the end: its process is read again after 1 s, 2 s, 4 s ... 64 s.
 */
#include <stdlib.h>
#include <string.h>
#include "session/collector.h"
#include "cpython/py_objects.h"
#include "proc/procfs.h"
#include "util/mono.h"
#include "util/vec.h"
#include "collector_parts.h"

void collector__unnamed(struct collector *c, struct collector_target *ts, uint32_t tid)
{
	size_t i, section = ts->target_index;

	ts->pynames_due = true;
	ts->pynames_wait_ns = COLLECTOR_PYNAMES_OPEN_NS;
	/* a thread's few first records come together: it is often the last one noted */
	for (i = c->nunnamed; i-- > 0 && i + 8 >= c->nunnamed;)
		if (c->unnamed[i].tid == tid && c->unnamed[i].section == section)
			return;
	if (c->nunnamed >= COLLECTOR_UNNAMED_MAX ||
	    vec_grow((void **)&c->unnamed, &c->cap_unnamed, c->nunnamed + 1, sizeof(*c->unnamed))) {
		c->unnamed_overflow = true;
		return;
	}
	c->unnamed[c->nunnamed++] = (struct collector_unnamed){ section, tid };
}

/* Names thread tid of section i from /proc, if it has no name yet. */
static void name_thread(struct collector *c, size_t i, uint32_t tid)
{
	struct profile_target *pp = &c->prof->targets[i];
	struct profile_thread *th = profile_target__thread(pp, tid);

	if (th && !th->name[0])
		proc_thread_name(pp->pid, tid, th->name, sizeof(th->name));
}

/*
 * The tid thread th of ts has in ts's pid namespace (py_thread_names's): the
 * same, or its NSpid's last (one read of /proc); 0: not ts's.
 */
static pid_t ns_tid(const struct collector_target *ts, const struct profile_thread *th)
{
	pid_t tgid = 0, nstid = 0;

	if (ts->t.nspid == ts->t.pid)
		return (pid_t)th->tid;
	proc_status_ids((pid_t)th->tid, &tgid, &nstid);
	return tgid == ts->t.pid ? nstid : 0;
}

/* Into th, the name of its entry of ids (n of them), if it has one. */
static void set_pyname(struct profile_thread *th, pid_t tid, const struct py_thread_id *ids, int n)
{
	int i;

	for (i = 0; tid > 0 && i < n; i++)
		if (ids[i].tid == tid && ids[i].name[0]) {
			memcpy(th->pyname, ids[i].name, sizeof(th->pyname));
			return;
		}
}

/*
 * Whether name is no name yet or one threading gave by default
 * (threading._newname's "Thread-N", since 3.10 "Thread-N (target)";
 * "Dummy-N" for a thread it did not start): one the thread may still change.
 */
static bool provisional_name(const char *name)
{
	const char *p;

	if (!name[0])
		return true;
	if (!strncmp(name, "Thread-", 7))
		p = name + 7;
	else if (!strncmp(name, "Dummy-", 6))
		p = name + 6;
	else
		return false;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return !*p || !strncmp(p, " (", 2);
}

/*
 * One read of ts's Python thread names into its section's threads (all:
 * renamed too), cut short after deadline_ns (then ts->pynames_due).
 */
static void python_names(struct collector *c, struct collector_target *ts, bool all,
			 long long deadline_ns)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	struct py_thread_id *ids;
	struct py_reader r;
	size_t k, reads = 0;
	long long start, end;
	int n;

	ts->pynames_due = ts->pynames_open = false;
	if (ts->exited || !ts->codes ||
	    py_reader__init(&r, ts->t.pid, &ts->t.layout, ts->t.version))
		return;
	ids = calloc(PY_DUMP_THREADS, sizeof(*ids));
	if (!ids)
		return;
	start = mono_ns();
	r.deadline_ns = start + deadline_ns;
	n = py_thread_names(&r, &ts->t, ts->codes, ids, PY_DUMP_THREADS, &ts->threading_globals);
	/* in another pid namespace, each thread costs a read of /proc: as many as ids hold */
	for (k = 0; n > 0 && k < pp->nthreads && reads < PY_DUMP_THREADS; k++) {
		struct profile_thread *th = &pp->threads[k];

		if (!all && !provisional_name(th->pyname))
			continue;
		reads += ts->t.nspid != ts->t.pid;
		set_pyname(th, ns_tid(ts, th), ids, n);
	}
	free(ids);
	ts->pynames_open = false;
	for (k = 0; k < pp->nthreads && !ts->pynames_open; k++)
		ts->pynames_open = provisional_name(pp->threads[k].pyname);
	/* cut short by its deadline: the threads not reached get the next read */
	end = mono_ns();
	ts->pynames_due = end >= r.deadline_ns;
	/* a read that ran past its deadline (a slow machine) waits ten times as long */
	ts->pynames_next_ns = end + (10 * (end - start) > COLLECTOR_PYNAMES_GAP_NS ?
					     10 * (end - start) :
					     COLLECTOR_PYNAMES_GAP_NS);
}

void collector__name_threads(struct collector *c)
{
	long long now = mono_ns();
	size_t i, k;

	for (i = 0; i < c->nunnamed; i++)
		if (c->unnamed[i].section < c->prof->ntargets)
			name_thread(c, c->unnamed[i].section, c->unnamed[i].tid);
	c->nunnamed = 0;
	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];

		if (ts->pynames_due && now >= ts->pynames_next_ns) {
			python_names(c, ts, false, COLLECTOR_PYNAMES_NS);
		} else if (ts->pynames_open && now >= ts->pynames_next_ns + ts->pynames_wait_ns) {
			python_names(c, ts, false, COLLECTOR_PYNAMES_NS);
			ts->pynames_wait_ns = ts->pynames_wait_ns * 2 <
							      COLLECTOR_PYNAMES_OPEN_MAX_NS ?
						      ts->pynames_wait_ns * 2 :
						      COLLECTOR_PYNAMES_OPEN_MAX_NS;
		}
	}
	if (!c->unnamed_overflow)
		return;
	c->unnamed_overflow = false;
	for (i = 0; i < c->prof->ntargets; i++)
		for (k = 0; k < c->prof->targets[i].nthreads; k++)
			name_thread(c, i, c->prof->targets[i].threads[k].tid);
}

void collector__rename_threads(struct collector *c)
{
	char name[sizeof(((struct profile_thread *)0)->name)];
	long long retry_until;
	size_t i, k;

	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];
		struct profile_target *pp = &c->prof->targets[ts->target_index];

		/*
		 * a process gone is left as it is: its pid may be another's now
		 * (and without a pidfd that cannot be told)
		 */
		if (ts->exited || ts->pidfd < 0 || proc_pidfd_exited(ts->pidfd))
			continue;
		for (k = 0; k < pp->nthreads; k++) {
			name[0] = '\0';
			proc_thread_name(pp->pid, (pid_t)pp->threads[k].tid, name, sizeof(name));
			if (name[0])
				memcpy(pp->threads[k].name, name, sizeof(name));
		}
	}
	for (i = 0; i < c->ntargets; i++)
		python_names(c, &c->targets[i], true, COLLECTOR_PYNAMES_END_NS);
	/*
	 * A read cut short reached the newest threads only (the thread states
	 * are listed newest first): on a slow machine the oldest would keep no
	 * name. Once more with eight times as long, within one budget for all.
	 */
	retry_until = mono_ns() + COLLECTOR_PYNAMES_RETRY_NS;
	for (i = 0; i < c->ntargets && mono_ns() < retry_until; i++)
		if (c->targets[i].pynames_due)
			python_names(c, &c->targets[i], true, 8 * COLLECTOR_PYNAMES_END_NS);
}
