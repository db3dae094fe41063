// SPDX-License-Identifier: GPL-2.0-only
/*
 * New processes, from the kernel's notices (see tracker.h). Everything here
 * runs between two polls of the ring buffers, so every step is cheap or
 * bounded: a fork copies the parent's target, an exec costs a stat of the
 * executable unless it is CPython, and an interpreter that is still starting
 * is retried after 1, 2, 4 ... 32 ms, for at most TRACKER_GIVE_UP_NS.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/deadline.h"
#include "util/log.h"
#include "util/mono.h"
#include "proc/procfs.h"
#include "session/tracker.h"

#define RETRY_FIRST_NS 1000000LL
#define RETRY_MAX_NS 32000000LL

void tracker__init(struct tracker *tr, struct collector *c, struct session *s, bool all)
{
	memset(tr, 0, sizeof(*tr));
	tr->c = c;
	tr->s = s;
	tr->all = all;
	tr->self = getpid();
	c->on_unknown = tracker__forked_section;
	c->on_unknown_ctx = tr;
}

void tracker__free(struct tracker *tr)
{
	if (tr->c)
		tr->c->on_unknown = NULL;
	free(tr->pending);
	free(tr->forked);
	memset(tr, 0, sizeof(*tr));
}

/* The live section of pid, if any (an exec'd or exited one is not live). */
static struct collector_target *live_target(struct tracker *tr, pid_t pid)
{
	struct collector_target *ts = collector__find(tr->c, pid);

	return ts && !ts->exited ? ts : NULL;
}

static void mark_exited(struct tracker *tr, pid_t pid)
{
	struct collector_target *ts = live_target(tr, pid);

	if (!ts)
		return;
	ts->exited = true;
	tr->c->prof->targets[ts->target_index].exited = true;
}

static void unpend(struct tracker *tr, size_t i)
{
	tr->pending[i] = tr->pending[--tr->npending];
}

static ssize_t find_pending(const struct tracker *tr, pid_t pid)
{
	size_t i;

	for (i = 0; i < tr->npending; i++)
		if (tr->pending[i].pid == pid)
			return i;
	return -1;
}

void tracker__watch(struct tracker *tr, pid_t pid, long long exec_ns)
{
	long long now = mono_ns();
	ssize_t i = find_pending(tr, pid);

	if (pid == tr->self)
		return;
	if (i < 0) {
		if (vec_grow((void **)&tr->pending, &tr->cap_pending, tr->npending + 1,
			     sizeof(*tr->pending))) {
			pr_warn("out of memory: pid %d is not profiled\n", pid);
			return;
		}
		i = tr->npending++;
	}
	/* the first try is due at once: a Python that is already running registers now */
	tr->pending[i] = (struct tracker_pending){ .pid = pid,
						   .since_ns = now,
						   .next_ns = now,
						   .delay_ns = RETRY_FIRST_NS,
						   .exec_ns = exec_ns };
}

/* A new section; exec_ns: the exec its image was profiled from (0: found running). */
static int add_target(struct tracker *tr, const struct target *t, long long exec_ns)
{
	int err = collector__add_target_since(tr->c, t,
					      exec_ns ? PROFILE_TL_EXECED : PROFILE_TL_FOUND,
					      (uint64_t)exec_ns);

	if (!err)
		err = session__add_target(tr->s, t);
	if (err)
		pr_warn("cannot profile pid %d: %s\n", t->pid, strerror(-err));
	return err;
}

bool tracker__mismatch_settled(struct tracker_pending *p, long long now_ns)
{
	if (!p->mismatches++)
		p->mismatch_ns = now_ns;
	return (p->mismatches >= TRACKER_MISMATCH_CHECKS &&
		now_ns - p->mismatch_ns >= TRACKER_MISMATCH_NS) ||
	       now_ns - p->since_ns >= TRACKER_GIVE_UP_NS;
}

/*
 * The layout check of a target registered before its interpreter existed:
 * 0 when it passed, -EAGAIN while there is still no interpreter (or a
 * mismatch is not settled yet), another -errno when the target was dropped
 * (gone, or a layout that does not match).
 */
static int validate(struct tracker *tr, struct tracker_pending *p)
{
	struct collector_target *ts = &tr->c->targets[p->target];
	int err;

	if (ts->exited || ts->t.pid != p->pid)
		return -ESRCH;
	err = target__check(&ts->t);
	if (!err || err == -EAGAIN) {
		p->mismatches = 0;
		return err;
	}
	if (collector_target__gone(ts))
		return -ESRCH;
	if (err == -EPROTO && !tracker__mismatch_settled(p, mono_ns()))
		return -EAGAIN;
	/* never guess: a layout that does not match gives garbage, so stop sampling */
	session__remove_target(tr->s, p->pid);
	mark_exited(tr, p->pid);
	pr_warn("pid %d (Python %s): its interpreter state does not match the expected layout "
		"(%s); no longer profiled\n",
		p->pid, ts->t.version_str, strerror(-err));
	return err;
}

/* How section i of the collector came (ppid: its parent, if known better than /proc's). */
static void section_origin(struct tracker *tr, size_t i, enum profile_origin origin, pid_t ppid)
{
	struct profile_target *pp = &tr->c->prof->targets[tr->c->targets[i].target_index];

	/* an image exec'd by a child of ours: the command we launched */
	pp->origin = origin == PROFILE_EXECED && pp->ppid == tr->self ? PROFILE_LAUNCHED : origin;
	if (ppid)
		pp->ppid = ppid;
}

/*
 * One registration attempt: 0 when registered, -EAGAIN to try again later,
 * another -errno when this image will never be profiled. With p (a process
 * that has just exec'd), a CPython whose interpreter does not exist yet is
 * registered at once, so its first bytecode is sampled, and checked later.
 */
static int try_register(struct tracker *tr, pid_t pid, struct tracker_pending *p)
{
	bool unchecked = false;
	struct target t;
	char why[512];
	int kind, err;

	if (p && p->validating)
		return validate(tr, p);
	kind = py_exe_kind(pid);
	if (kind < 0)
		return kind == -EACCES || kind == -EPERM ? kind : -ESRCH;
	if (kind == PY_EXE_OTHER)
		return -ENOEXEC;
	if (p)
		err = target__open_early(pid, &t, &unchecked, why, sizeof(why));
	else
		err = target__open(pid, &t, why, sizeof(why));
	switch (err) {
	case 0:
		break;
	case -ESRCH:
	case -ENOTSUP:
	case -EINVAL:
	case -EACCES:
	case -EPERM:
		/* gone, a thread, or a Python this build cannot profile: no use retrying */
		pr_info("not profiled: %s\n", why);
		return err;
	default:
		/* libpython not mapped yet, or the interpreter is still being built */
		return -EAGAIN;
	}
	if (add_target(tr, &t, p ? p->exec_ns : 0))
		return -ENOMEM;
	tr->c->targets[tr->c->ntargets - 1].registered_ns = mono_ns();
	tr->registered++;
	if (p && p->exec_ns)
		section_origin(tr, tr->c->ntargets - 1, p->held ? PROFILE_LAUNCHED : PROFILE_EXECED,
			       0);
	if (tr->on_section)
		tr->on_section(tr->on_section_ctx, &tr->c->targets[tr->c->ntargets - 1], NULL,
			       !p || !p->exec_ns ? TRACKER_RUNNING :
			       p->held		 ? TRACKER_HELD :
			       unchecked	 ? TRACKER_BEFORE_INIT :
						   TRACKER_EXEC_RUNNING);
	if (p && p->exec_ns)
		pr_info("pid %d: Python %s, profiled %.1f ms after its exec%s\n", pid,
			t.version_str, (mono_ns() - p->exec_ns) / 1e6,
			unchecked ? ", before its interpreter exists" : "");
	else
		pr_info("pid %d: Python %s, profiled\n", pid, t.version_str);
	if (!unchecked)
		return 0;
	p->validating = true;
	p->target = tr->c->ntargets - 1;
	p->delay_ns = RETRY_FIRST_NS;
	return -EAGAIN;
}

/* Retries the pending registrations that are due. */
static void retry_due(struct tracker *tr, long long now)
{
	size_t i = 0;

	while (i < tr->npending) {
		struct tracker_pending *p = &tr->pending[i];
		int err;

		if (p->next_ns > now) {
			i++;
			continue;
		}
		err = try_register(tr, p->pid, p);
		if (err == -EAGAIN && now - p->since_ns < TRACKER_GIVE_UP_NS) {
			p->next_ns = now + p->delay_ns;
			if (p->delay_ns < RETRY_MAX_NS)
				p->delay_ns *= 2;
			i++;
			continue;
		}
		if (err == -EAGAIN && !p->validating) {
			tr->gave_up++;
			pr_info("pid %d: no initialised interpreter after %.1f s, not profiled\n",
				p->pid, TRACKER_GIVE_UP_NS / 1e9);
		}
		unpend(tr, i);
	}
}

int tracker__timeout_ms(const struct tracker *tr, int idle_ms, long long now)
{
	long long soonest = -1;
	size_t i;

	for (i = 0; i < tr->npending; i++)
		if (soonest < 0 || tr->pending[i].next_ns < soonest)
			soonest = tr->pending[i].next_ns;
	return soonest < 0 ? idle_ms : mono_ms_until(soonest, now, idle_ms);
}

static ssize_t find_forked(const struct tracker *tr, pid_t pid)
{
	size_t i;

	for (i = 0; i < tr->nforked; i++)
		if (tr->forked[i].pid == pid)
			return i;
	return -1;
}

static void drop_forked(struct tracker *tr, pid_t pid)
{
	ssize_t i = find_forked(tr, pid);

	if (i >= 0)
		tr->forked[i] = tr->forked[--tr->nforked];
}

/*
 * A child's exit or exec: its entry stays for two more poll rounds, so that
 * the samples it took before, still in the sample ring, open its section.
 */
static void forked_gone(struct tracker *tr, pid_t pid)
{
	ssize_t i = find_forked(tr, pid);

	if (i >= 0 && tr->forked[i].gone_round < 0)
		tr->forked[i].gone_round = tr->round;
}

static void forget_gone(struct tracker *tr)
{
	size_t i = 0;

	while (i < tr->nforked) {
		struct tracker_forked *f = &tr->forked[i];

		if (f->gone_round >= 0 && tr->round - f->gone_round >= 2)
			*f = tr->forked[--tr->nforked];
		else
			i++;
	}
}

void tracker__tick(struct tracker *tr, long long now)
{
	tr->round++;
	forget_gone(tr);
	collector__expire_parked(tr->c);
	retry_due(tr, now);
}

/* The fork on the timeline: on the parent's track, and the child's first event. */
static void timeline_fork(struct profile *p, const struct profile_target *parent,
			  const struct py_proc_event *e)
{
	profile__tl_proc_event(p, (int)e->ppid, PROFILE_TL_FORK, e->pid, e->ktime_ns);
	profile__tl_proc(p, (int)e->pid, parent->comm, parent->cmdline, PROFILE_TL_FORKED,
			 (int)e->ppid, e->ktime_ns);
}

/*
 * A fork: the kernel already samples the child when it copied the entry.
 * Its section opens with its first sample, so a child that only execs
 * (spawn, subprocess) leaves no empty section behind.
 */
static void on_fork(struct tracker *tr, const struct py_proc_event *e)
{
	struct collector_target *parent = live_target(tr, e->ppid);

	tr->forks++;
	if (live_target(tr, e->pid))
		return;
	if (!(e->flags & PY_PROC_COPIED)) {
		/*
		 * A followed child the kernel could not sample at once: its
		 * parent was not registered yet at the fork (registered since,
		 * or still pending). The child has the parent's image: it is
		 * looked at as a new process would be, or it would never be.
		 */
		if (find_pending(tr, e->ppid) >= 0 ||
		    (parent && parent->registered_ns > (long long)e->ktime_ns))
			tracker__watch(tr, e->pid, 0);
		return;
	}
	if (!parent) {
		/* a parent we do not (or no longer) profile: the child is not ours either */
		session__remove_target(tr->s, e->pid);
		return;
	}
	timeline_fork(tr->c->prof, &tr->c->prof->targets[parent->target_index], e);
	drop_forked(tr, e->pid);
	if (vec_grow((void **)&tr->forked, &tr->cap_forked, tr->nforked + 1, sizeof(*tr->forked))) {
		session__remove_target(tr->s, e->pid);
		return;
	}
	tr->forked[tr->nforked++] = (struct tracker_forked){ e->pid, parent - tr->c->targets, -1 };
	/* samples read before this notice (they come on the other ring) */
	collector__replay(tr->c, e->pid);
}

struct collector_target *tracker__forked_section(void *ctx, int pid)
{
	struct tracker *tr = ctx;
	ssize_t i = find_forked(tr, pid);
	struct target t;
	size_t parent;

	if (i < 0)
		return NULL;
	parent = tr->forked[i].parent;
	tr->forked[i] = tr->forked[--tr->nforked];
	target__fork(&tr->c->targets[parent].t, pid, &t);
	if (collector__add_target(tr->c, &t))
		return NULL;
	tr->c->targets[tr->c->ntargets - 1].forked_from = parent + 1;
	section_origin(tr, tr->c->ntargets - 1, PROFILE_FORKED, tr->c->targets[parent].t.pid);
	pr_info("pid %d: forked from %d, profiled\n", pid, tr->c->targets[parent].t.pid);
	if (tr->on_section)
		tr->on_section(tr->on_section_ctx, &tr->c->targets[tr->c->ntargets - 1],
			       &tr->c->targets[parent], TRACKER_FORKED);
	return &tr->c->targets[tr->c->ntargets - 1];
}

int tracker__on_event(void *ctx, void *data, size_t size)
{
	const struct py_proc_event *e = data;
	struct collector_target *ts;
	struct tracker *tr = ctx;
	ssize_t i;

	if (size < sizeof(*e))
		return 0;
	switch (e->kind) {
	case PY_PROC_FORK:
		on_fork(tr, e);
		break;
	case PY_PROC_EXEC:
		tr->execs++;
		ts = live_target(tr, e->pid);
		if (ts && ts->registered_ns > (long long)e->ktime_ns) {
			/*
			 * Registered after this exec, while handling an earlier
			 * notice late (chroot's exec, seen once it had exec'd
			 * python): the section is this image's already.
			 */
			if (e->flags & PY_PROC_HELD)
				kill(e->pid, SIGCONT);
			break;
		}
		/* the old image's section keeps its samples; a new one may follow */
		profile__tl_proc_event(tr->c->prof, (int)e->pid, PROFILE_TL_EXEC, 0, e->ktime_ns);
		mark_exited(tr, e->pid);
		forked_gone(tr, e->pid);
		tracker__watch(tr, e->pid, e->ktime_ns);
		i = find_pending(tr, e->pid);
		if (i >= 0)
			tr->pending[i].held = e->flags & PY_PROC_HELD;
		/* try at once: most execs are not Python and end here */
		retry_due(tr, mono_ns());
		/*
		 * A held image goes on now, registered or not: one that is not
		 * ready yet (libpython unmapped) cannot get ready while stopped.
		 * Only a launched command is held: our unreaped child, so its
		 * pid is still its own.
		 */
		if (e->flags & PY_PROC_HELD) {
			i = find_pending(tr, e->pid);
			if (i >= 0)
				tr->pending[i].held = false;
			kill(e->pid, SIGCONT);
		}
		break;
	case PY_PROC_EXIT:
		tr->exits++;
		profile__tl_proc_event(tr->c->prof, (int)e->pid, PROFILE_TL_EXIT, 0, e->ktime_ns);
		mark_exited(tr, e->pid);
		/* a child never sampled: forgotten soon (bounded memory under -a) */
		forked_gone(tr, e->pid);
		i = find_pending(tr, e->pid);
		if (i >= 0)
			unpend(tr, i);
		break;
	}
	/* a storm of execs must not hold the run past its end */
	return deadline__yield() ? -EINTR : 0;
}

size_t tracker__starting(struct tracker *tr)
{
	size_t i = 0, n = tr->npending;

	/* live forked children not sampled yet; the gone ones are forgotten by tracker__tick */
	for (i = 0; i < tr->nforked; i++) {
		if (tr->forked[i].gone_round < 0 && proc_alive(tr->forked[i].pid))
			n++;
		else
			forked_gone(tr, tr->forked[i].pid);
	}
	return n;
}

/* Lists /proc for a scan; NULL, with a warning, if it cannot. */
static DIR *proc_list(void)
{
	DIR *dir = opendir("/proc");

	if (!dir)
		pr_warn("cannot list /proc: %s\n", strerror(errno));
	return dir;
}

/* The next process of a /proc listing, or 0 at its end. */
static pid_t next_pid(DIR *dir)
{
	struct dirent *d;

	while ((d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (isdigit((unsigned char)d->d_name[0]) && !*end && pid > 0)
			return pid;
	}
	return 0;
}

size_t tracker__scan(struct tracker *tr)
{
	size_t before = tr->registered;
	DIR *dir = proc_list();
	pid_t pid;

	if (!dir)
		return 0;
	while ((pid = next_pid(dir))) {
		if (pid == tr->self || live_target(tr, pid))
			continue;
		/* a process that is still starting is retried like a new one */
		if (try_register(tr, pid, NULL) == -EAGAIN)
			tracker__watch(tr, pid, 0);
	}
	closedir(dir);
	return tr->registered - before;
}

/* The parent pid of pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	struct proc_stat st;
	char buf[512];

	proc_stat_read(pid, buf, sizeof(buf));
	return proc_stat_parse(buf, &st) ? -1 : st.ppid;
}

/* Whether pid descends from one of roots: parents followed up to a bounded depth. */
static bool descends(pid_t pid, const pid_t *roots, size_t nroots)
{
	int depth;
	size_t i;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		pid = parent_of(pid);
		for (i = 0; i < nroots; i++)
			if (pid == roots[i])
				return true;
	}
	return false;
}

size_t tracker__adopt(struct tracker *tr, const pid_t *roots, size_t nroots, unsigned flags)
{
	size_t before = tr->registered, found = 0;
	DIR *dir = proc_list();
	pid_t pid;

	if (!dir)
		return 0;
	while ((pid = next_pid(dir))) {
		if (pid == 1 || pid == tr->self || !descends(pid, roots, nroots))
			continue;
		found++;
		/* its own children from now on, and its image now */
		session__follow(tr->s, pid, flags);
		if (!live_target(tr, pid) && try_register(tr, pid, NULL) == -EAGAIN)
			tracker__watch(tr, pid, 0);
	}
	closedir(dir);
	pr_info("%zu descendants of the targets found, %zu of them CPython\n", found,
		tr->registered - before);
	return tr->registered - before;
}

void tracker__remap(struct tracker *tr, const size_t *map)
{
	size_t i, k;

	for (i = k = 0; i < tr->npending; i++) {
		struct tracker_pending *p = &tr->pending[i];

		if (p->validating && map[p->target] == SIZE_MAX)
			continue;
		if (p->validating)
			p->target = map[p->target];
		tr->pending[k++] = *p;
	}
	tr->npending = k;
	for (i = k = 0; i < tr->nforked; i++) {
		struct tracker_forked *f = &tr->forked[i];

		if (map[f->parent] == SIZE_MAX)
			continue;
		f->parent = map[f->parent];
		tr->forked[k++] = *f;
	}
	tr->nforked = k;
}
