// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mode wall and --gil attachment. The tracepoint sees a thread's wait only
 * from its next block on; a thread already blocked when the run starts
 * (a worker parked on a queue, a server in accept()) is read from outside
 * instead: its stack (the dump's walk, pybpfprof dump), its system call
 * (/proc/PID/task/TID/syscall, classified with the BPF side's table), and
 * the run's start as the interval's start, given to the kernel's map so that
 * its switch-in closes the interval like any other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "session/wall.h"
#include "proc/procfs.h"
#include "cpython/py_objects.h"
#include "util/log.h"
#include "util/mono.h"
#include "../../bpf/offcpu_class.h"
#include "pybpfprof.skel.h"

void wall__prepare(struct session *s, enum wall_mode mode)
{
	struct pybpfprof_bpf *skel = session__skel(s);

	bpf_program__set_autoload(skel->progs.on_sched_switch, mode != WALL_OFF);
	skel->rodata->offcpu_gil_only = mode == WALL_GIL_ONLY;
	skel->rodata->gil_follow = mode != WALL_OFF;
}

/* The task's state letter and, when blocked in a system call, its number and first argument. */
static bool task_blocked(int pid, int tid, long *nr, uint64_t *arg0)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool blocked = false;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		blocked = p[2] == 'S' || p[2] == 'D';
	fclose(f);
	*nr = -1;
	*arg0 = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return blocked;
	/* "NR ARG0 ..." in a system call, "-1 SP PC" blocked outside one, "running" */
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%ld %" SCNx64, nr, arg0) < 1)
		*nr = -1;
	fclose(f);
	return blocked;
}

/*
 * The thread's CPU time in ns (the scheduler's sum_exec_runtime, as the
 * kernel side reads it at a switch), or 0 when it cannot be read.
 */
static uint64_t task_cpu_ns(int pid, int tid)
{
	char path[64], buf[96];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/*
 * One blocked thread's interval opened from the run's start, as a BLOCK
 * record would. tid: its task as the host numbers it (the kernel's key).
 */
static void prime_thread(struct session *s, struct collector *c, struct collector_target *ts,
			 const struct py_dump_thread *th, pid_t tid, uint64_t gil, uint64_t now)
{
	int map = bpf_map__fd(session__skel(s)->maps.offcpu_start);
	size_t size = PY_SAMPLE_HEADER_SIZE + th->nframes * sizeof(struct py_frame);
	struct py_sample *rec;
	uint64_t arg0;
	size_t i;
	long nr;

	if (tid <= 0 || !task_blocked(ts->t.pid, tid, &nr, &arg0) || !th->nframes)
		return;
	struct py_offcpu_open open = { .start_ns = now,
				       .pid = ts->t.pid,
				       .cpu_ns = task_cpu_ns(ts->t.pid, tid) };
	uint32_t key = (uint32_t)tid;

	/* seen by the tracepoint already: switched in since, its blocks are its own */
	if (bpf_map_update_elem(map, &key, &open, BPF_NOEXIST))
		return;
	rec = calloc(1, size);
	if (!rec)
		return;
	rec->pid = ts->t.pid;
	rec->tid = tid;
	rec->ktime_ns = now;
	rec->kind = PY_KIND_OFFCPU_BLOCK;
	rec->nframes = th->nframes;
	rec->value = PY_OFFCPU_VALUE(py_offcpu_classify(nr, arg0, gil), nr) | PY_OFFCPU_PRIMED;
	for (i = 0; i < th->nframes; i++)
		rec->frames[i] = (struct py_frame){ .code = th->frames[i].code,
						    .instr = th->frames[i].instr,
						    .fingerprint = th->frames[i].fingerprint };
	collector__sample(c, rec, size);
	free(rec);
}

/*
 * A section's key in gil_pids: its pid and place, so that a new image of the
 * same pid (exec: a section of its own) is looked at again. A section that
 * moves (collector__compact) is looked at once more, which is harmless.
 */
/* gil_pids' value for a section whose GIL is in the kernel's map; else the tries so far */
#define GIL_FOUND UINT64_MAX

static uint64_t gil_key(const struct collector *c, const struct collector_target *ts)
{
	return (uint64_t)ts->t.pid | (uint64_t)(ts - c->targets) << 32;
}

/* Tasks kept for a process in its own pid namespace, to find a thread's host id. */
#define WALL_NS_TASKS 4096

/*
 * The host's id of the thread a process in its own pid namespace calls
 * nstid, from the table of its tasks; 0 when none has it (it exited).
 */
static pid_t host_tid(const struct proc_nstid *ids, size_t n, pid_t nstid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i].nstid == nstid)
			return ids[i].tid;
	return 0;
}

/* Opens the intervals of the target's threads that are blocked now (n of them read in pts). */
static void prime_target(struct session *s, struct collector *c, struct collector_target *ts,
			 const struct py_dump_thread *pts, int n, uint64_t gil, uint64_t now)
{
	bool other_ns = ts->t.nspid != ts->t.pid;
	struct proc_nstid *ids = NULL;
	size_t nids = 0;
	int i;

	/* tids as the process numbers them are the host's only in the host's pid namespace */
	if (other_ns) {
		ids = malloc(WALL_NS_TASKS * sizeof(*ids));
		nids = ids ? proc_task_nsids(ts->t.pid, ids, WALL_NS_TASKS) : 0;
	}
	for (i = 0; i < n; i++)
		prime_thread(s, c, ts, &pts[i],
			     other_ns ? host_tid(ids, nids, pts[i].tid) : pts[i].tid, gil, now);
	free(ids);
}

/* The target's GIL into gil_addrs; with prime, its blocked threads' intervals opened. */
static void add_target(struct wall *w, struct session *s, struct collector *c,
		       struct collector_target *ts, bool prime)
{
	struct py_dump_thread *pts = NULL;
	struct py_dump_state st = { 0 };
	struct py_reader r;
	uint32_t pid = ts->t.pid;
	uint64_t now = mono_ns();
	int n;

	if (ts->t.layout.free_threaded ||
	    py_reader__init(&r, ts->t.pid, &ts->t.layout, ts->t.version)) {
		w->gil_unknown++;
		return;
	}
	pts = malloc(PY_DUMP_THREADS * sizeof(*pts));
	n = pts ? py_dump_threads(&r, &ts->t, pts, PY_DUMP_THREADS, &st) : -ENOMEM;
	if (st.gil) {
		struct py_gil_info gi = { .gil = st.gil };

		if (!bpf_map_update_elem(bpf_map__fd(session__skel(s)->maps.gil_addrs), &pid, &gi,
					 BPF_ANY))
			hashmap__set(&w->gil_pids, gil_key(c, ts), GIL_FOUND);
		w->gil_known++;
	} else {
		w->gil_unknown++;
	}
	if (prime)
		prime_target(s, c, ts, pts, n, st.gil, now);
	free(pts);
}

int wall__attach(struct wall *w, struct session *s, struct collector *c, enum wall_mode mode,
		 char *why, size_t whylen)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	size_t i;
	int err;

	w->mode = mode;
	hashmap__init(&w->gil_pids);
	w->last_tick_ns = mono_ns();
	if (mode == WALL_OFF)
		return 0;
	/* attached first: a thread that blocks while the others are read is the tracepoint's */
	w->link = bpf_program__attach(skel->progs.on_sched_switch);
	if (!w->link) {
		err = -errno;
		snprintf(why, whylen, "cannot attach to the sched_switch tracepoint: %s",
			 strerror(-err));
		return err;
	}
	for (i = 0; i < c->ntargets; i++)
		add_target(w, s, c, &c->targets[i], mode == WALL_ON);
	pr_info("wall: GIL found in %zu processes, not in %zu\n", w->gil_known, w->gil_unknown);
	return 0;
}

/* How often targets without a known GIL are read again, and how many times. */
#define WALL_TICK_NS 250000000LL
#define GIL_TRIES 8

void wall__tick(struct wall *w, struct session *s, struct collector *c, long long now)
{
	size_t i;

	if (w->mode == WALL_OFF || now - w->last_tick_ns < WALL_TICK_NS)
		return;
	w->last_tick_ns = now;
	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];

		uint64_t *tries = hashmap__find(&w->gil_pids, gil_key(c, ts));

		if (ts->exited || ts->t.layout.free_threaded || (tries && *tries >= GIL_TRIES))
			continue;
		/* a GIL not there yet (an interpreter starting) is looked for a few times */
		hashmap__set(&w->gil_pids, gil_key(c, ts), tries ? *tries + 1 : 1);
		add_target(w, s, c, ts, false);
	}
}

/*
 * An interval the kernel holds open at the end whose thread has run since
 * it opened came back unseen (PY_OFFCPU_INFERRED): it is closed where the
 * thread's CPU time since says it came back, if that is before the end.
 */
static void close_unseen_at_end(struct collector *c, struct profile_target *pp, uint32_t tid,
				const struct py_offcpu_open *open, uint64_t end_ns)
{
	uint64_t cpu_ns = open->cpu_ns ? task_cpu_ns((int)open->pid, (int)tid) : 0;
	uint64_t now = (uint64_t)mono_ns(), back;

	if (cpu_ns <= open->cpu_ns || now < cpu_ns - open->cpu_ns)
		return;
	/* as if it ran without a break up to now: it never left again, or that was seen */
	back = now - (cpu_ns - open->cpu_ns);
	if (back >= end_ns)
		return;
	if (back < open->start_ns)
		back = open->start_ns;
	if (!profile_target__offcpu_end(c->prof, pp, tid, back - open->start_ns, back))
		c->prof->offcpu_inferred++;
}

/*
 * The intervals the kernel still holds open, each opened again in the
 * profile: a repeat block sent no stack (its thread's last one is charged),
 * and only the kernel knows it is open. 0, or -errno when the map could not
 * be read through.
 */
static int reopen_kernel_intervals(struct session *s, struct collector *c, uint64_t end_ns)
{
	int map = bpf_map__fd(session__skel(s)->maps.offcpu_start);
	uint32_t key, next, n, max = bpf_map__max_entries(session__skel(s)->maps.offcpu_start);
	struct py_offcpu_open open;
	struct collector_target *ts;
	void *prev = NULL;
	int err;

	/* bounded: a key deleted under the walk restarts it, at most max times over */
	for (n = 0; n < 2 * max; n++, prev = &key) {
		err = bpf_map_get_next_key(map, prev, &next);
		if (err)
			return err == -ENOENT ? 0 : err;
		key = next;
		if (bpf_map_lookup_elem(map, &key, &open) || !open.start_ns)
			continue;
		ts = collector__find(c, (int)open.pid);
		if (!ts || profile_target__offcpu_open_at_end(&c->prof->targets[ts->target_index],
							      key, PY_OFFCPU_CLASS(open.same),
							      open.start_ns, open.same != 0))
			c->prof->offcpu_unmatched++;
		else
			close_unseen_at_end(c, &c->prof->targets[ts->target_index], key, &open,
					    end_ns);
	}
	return -E2BIG;
}

void wall__finish(struct wall *w, struct session *s, struct collector *c)
{
	uint64_t end_ns = (uint64_t)(w->end_ns ? w->end_ns : mono_ns());
	int err;

	if (w->mode == WALL_OFF)
		return;
	/*
	 * The tracepoint is detached and the ring buffer drained: the map holds
	 * exactly the intervals open at the end. An interval this side thinks
	 * open but the kernel closed lost its closing record (counted as
	 * dropped): it is not charged up to the end.
	 */
	profile__offcpu_close_all(c->prof);
	err = reopen_kernel_intervals(s, c, end_ns);
	if (err)
		pr_warn("cannot read the open off-CPU intervals: %s; those of repeat blocks are "
			"not charged\n",
			strerror(-err));
	profile__offcpu_flush(c->prof, end_ns);
}

/* The run's end for the intervals still open: when the tracepoint stopped. */
void wall__detach(struct wall *w)
{
	if (w->link && !w->end_ns)
		w->end_ns = mono_ns();
	bpf_link__destroy(w->link);
	w->link = NULL;
	hashmap__free(&w->gil_pids);
}
