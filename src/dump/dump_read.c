// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump: reading one process, from outside and without stopping
 * it: its threads' kernel state from /proc/PID/task, their Python stacks
 * from its memory (the BPF walk, cpython/py_threads.c), with --locals each
 * frame's variables (cpython/py_objects.c), with --async its asyncio tasks
 * (dump_async.c), and the frames' source lines with its rights.
 *
 * Within a budget: a hostile process can make all of that as long and as
 * large as it likes (256 threads of 128 frames of 64 locals, each value
 * costing up to 96 reads and 512 bytes: 179 s and 1 GB of text in the old
 * code). Every step checks the process's deadline and a stop signal, and
 * every text kept is charged to its byte budget, which is its output bound:
 * what is kept is never shorter than what it takes to show it. The first
 * bound reached stops the reading; what it left out is counted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "cpython/code_cache.h"
#include "proc/procfs.h"
#include "cpython/target.h"
#include "util/mono.h"

#define DUMP_CACHE_BYTES (64u << 20)
/* Bytes charged beside each text kept: what its line or its JSON object adds. */
#define COST_THREAD 400
/* a local's JSON object: its keys and literals ({"name": ..., "argument": null}) */
#define COST_LOCAL 96
#define COST_LOCK 128 /* and a lock's "lock" object */

/* "S", the wait channel and the system call of one task, from /proc. */
static void task_kernel_state(pid_t pid, struct dump_thread *th)
{
	char path[96], buf[512], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, th->tid);
	proc_read_small_file(path, buf, sizeof(buf), false);
	/* the state follows the last ')': comm may hold anything, parentheses too */
	p = strrchr(buf, ')');
	th->state = p && p[1] == ' ' && p[2] ? p[2] : '?';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, th->tid);
	proc_read_small_file(path, th->wchan, sizeof(th->wchan), false);
	if (!strcmp(th->wchan, "0"))
		th->wchan[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, th->tid);
	proc_read_small_file(path, buf, sizeof(buf), false);
	th->syscall = -3;
	if (!strncmp(buf, "running", 7)) {
		th->syscall = -2;
	} else if (buf[0]) {
		th->syscall = strtol(buf, &p, 10);
		if (p == buf)
			th->syscall = -3;
		for (i = 0; i < 6 && th->syscall >= 0; i++)
			th->args[i] = strtoul(p, &p, 16);
	}
	proc_thread_name(pid, th->tid, th->name, sizeof(th->name));
}

static int cmp_tid(const void *a, const void *b)
{
	return (int)((const struct dump_thread *)a)->tid -
	       (int)((const struct dump_thread *)b)->tid;
}

/* One more task entry, growing the array up to DUMP_MAX_TASKS; NULL when full. */
static struct dump_thread *task_slot(struct dump_process *dp)
{
	struct dump_thread *t;
	size_t cap = dp->cap ? dp->cap * 2 : 64;

	if (dp->nthreads == dp->cap) {
		if (cap > DUMP_MAX_TASKS + PY_DUMP_THREADS)
			cap = DUMP_MAX_TASKS + PY_DUMP_THREADS;
		if (cap <= dp->cap)
			return NULL;
		t = realloc(dp->threads, cap * sizeof(*t));
		if (!t)
			return NULL;
		dp->threads = t;
		dp->cap = cap;
	}
	t = &dp->threads[dp->nthreads++];
	memset(t, 0, sizeof(*t));
	t->gil = t->gc = -1;
	return t;
}

/*
 * Every task of pid, in tid order, with its kernel state, while the budget
 * lasts (the tasks past it are counted as threads not shown). -errno if
 * none is listed.
 */
static int list_tasks(pid_t pid, bool other_ns, struct dump_process *dp)
{
	struct dump_thread *t, *more;
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name), tgid;

		if (tid <= 0)
			continue;
		/* past the first DUMP_MAX_TASKS, or the budget: counted */
		dp->cut.threads_over += dp->nthreads >= DUMP_MAX_TASKS;
		if (dp->nthreads >= DUMP_MAX_TASKS || !dump_budget_take(dp, COST_THREAD) ||
		    !(t = task_slot(dp))) {
			dp->cut.threads++;
			continue;
		}
		t->tid = t->nstid = tid;
		/* the id the process knows it by: the last of its NSpid list */
		if (other_ns)
			proc_status_ids(tid, &tgid, &t->nstid);
		task_kernel_state(pid, t);
	}
	closedir(d);
	qsort(dp->threads, dp->nthreads, sizeof(*dp->threads), cmp_tid);
	/* room for the Python threads whose task is not listed: no move while they are added */
	more = realloc(dp->threads, (dp->nthreads + PY_DUMP_THREADS) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	dp->threads = more;
	dp->cap = dp->nthreads + PY_DUMP_THREADS;
	return 0;
}

static struct dump_thread *find_task(struct dump_process *dp, pid_t nstid)
{
	size_t i;

	for (i = 0; i < dp->nthreads; i++)
		if (dp->threads[i].nstid == nstid)
			return &dp->threads[i];
	return NULL;
}

/*
 * One local's text into dl, charged to the budget; false once it is spent.
 * *kept: whether it is kept (an unbound one is not, without --unbound).
 */
static bool one_local(struct py_reader *r, struct dump_process *dp, const struct py_local *loc,
		      struct dump_local *dl, bool unbound, bool *kept)
{
	char text[PY_RENDER_MAX];

	*kept = false;
	if (dump_budget_spent(dp))
		return false;
	memset(dl, 0, sizeof(*dl));
	memcpy(dl->name, loc->name, sizeof(dl->name));
	dl->param = loc->param;
	if (loc->tagged) {
		snprintf(text, sizeof(text), "%lld", (long long)loc->ival);
		snprintf(dl->type, sizeof(dl->type), "int");
	} else if (!loc->value) {
		dl->unbound = true;
		snprintf(text, sizeof(text), "<unbound>");
	} else {
		dl->unreadable = py_render_info(r, loc->value, text, sizeof(text), dl->type,
						&dl->info) < 0;
		/* a captured variable not assigned yet is as unbound as an empty slot */
		dl->unbound = dl->info.empty_cell;
	}
	if (dl->unbound && !unbound)
		return true;
	if (!dump_budget_take(dp, COST_LOCAL + (dl->info.lock ? COST_LOCK : 0) + strlen(dl->name) +
					  strlen(dl->type) + strlen(text)))
		return false;
	dl->value = strdup(text);
	*kept = true;
	return true;
}

/* Where a local goes: the arguments in their signature's order (*args before keyword-only ones), then the others. */
static int local_rank(const struct py_local *l)
{
	static const int rank[] = {
		[PY_PARAM_POSONLY] = 0, [PY_PARAM_POS] = 1,   [PY_PARAM_VARARGS] = 2,
		[PY_PARAM_KWONLY] = 3,	[PY_PARAM_VARKW] = 4, [PY_PARAM_NONE] = 5
	};

	return l->param < sizeof(rank) / sizeof(rank[0]) ? rank[l->param] : 5;
}

/* The n locals of loc in signature order, stably (at most PY_LOCALS_MAX: insertion). */
static void signature_order(struct py_local *loc, int n)
{
	struct py_local key;
	int i, j;

	for (i = 1; i < n; i++) {
		key = loc[i];
		for (j = i; j > 0 && local_rank(&loc[j - 1]) > local_rank(&key); j--)
			loc[j] = loc[j - 1];
		loc[j] = key;
	}
}

/* A frame's locals, rendered now (the snapshot is the moment they are read). */
static void frame_locals(struct py_reader *r, struct dump_process *dp,
			 const struct py_dump_frame *pf, struct dump_frame *df, bool unbound)
{
	struct py_local loc[PY_LOCALS_MAX];
	bool kept;
	int n, i;

	if (dump_budget_spent(dp)) {
		df->locals_cut = true;
		return;
	}
	n = py_frame_locals(r, pf->frame, pf->code, loc, PY_LOCALS_MAX, &df->total_locals);
	if (n < 0) {
		df->locals_err = n;
		return;
	}
	signature_order(loc, n);
	df->locals = calloc(n ? n : 1, sizeof(*df->locals));
	if (!df->locals) {
		df->locals_err = -ENOMEM;
		return;
	}
	for (i = 0; i < n; i++) {
		if (!one_local(r, dp, &loc[i], &df->locals[df->nlocals], unbound, &kept)) {
			/* a frame shows all its locals read, or is counted as cut */
			df->locals_cut = true;
			return;
		}
		df->nlocals += kept;
		df->unbound_hidden += !kept;
	}
}

/* The Python side of one thread: names and lines of its frames. */
static void python_frames(struct code_cache *cc, const struct target *t,
			  const struct py_dump_thread *pt, struct dump_process *dp,
			  struct dump_thread *th)
{
	size_t i;

	th->python = true;
	th->gil = pt->gil;
	th->gc = pt->gc;
	th->moving = pt->moving;
	th->truncated = pt->truncated;
	th->read_error = pt->read_error;
	th->frames = calloc(pt->nframes ? pt->nframes : 1, sizeof(*th->frames));
	for (i = 0; th->frames && i < pt->nframes; i++) {
		if (!dump_frame_resolve(dp, cc, t, &pt->frames[i], &th->frames[th->nframes]))
			break;
		th->nframes++;
	}
	th->frames_cut = pt->nframes - th->nframes;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

/*
 * The threading name of a thread started by threading.Thread: the _name of
 * the self of its outermost Thread._bootstrap frame.
 */
static void python_name(struct py_reader *r, const struct py_dump_thread *pt,
			struct dump_thread *th)
{
	struct py_local self;
	size_t i, total;

	for (i = th->nframes; i-- > 0;) {
		const struct dump_frame *df = &th->frames[i];

		if (!ends_with(df->file, "/threading.py") || !ends_with(df->func, "_bootstrap"))
			continue;
		if (py_frame_locals(r, pt->frames[i].frame, pt->frames[i].code, &self, 1, &total) ==
			    1 &&
		    strcmp(self.name, "self") == 0 && self.value &&
		    py_object_attr_str(r, self.value, "_name", th->pyname, sizeof(th->pyname)))
			th->pyname[0] = 0;
		return;
	}
}

/*
 * A Python thread whose task is not found (exited meanwhile) still shows,
 * with tid 0; so does a second thread state of one task.
 */
static struct dump_thread *extra_task(struct dump_process *dp)
{
	struct dump_thread *th;

	/* list_tasks left room for them all: the array does not move */
	if (dp->nthreads >= dp->cap)
		return NULL;
	th = task_slot(dp);
	th->state = '?';
	th->syscall = -3;
	return th;
}

/* The entry of the thread state pt: its task's, or one of its own. */
static struct dump_thread *python_entry(struct dump_process *dp, const struct py_dump_thread *pt)
{
	struct dump_thread *th = pt->tid ? find_task(dp, pt->tid) : NULL, *again;

	if (!th)
		return extra_task(dp);
	if (!th->python)
		return th;
	/* a second thread state on one task (subinterpreters): an entry of its own */
	again = extra_task(dp);
	if (again) {
		*again = *th;
		again->frames = NULL;
		again->nframes = again->frames_cut = 0;
		again->pyname[0] = 0;
	}
	return again;
}

/*
 * The Python threads of pts (n of them, read with state st) into dp's
 * entries (ths[i]: pts[i]'s, or NULL), and who each is (ids), for the
 * locks whose owner the locals name.
 */
static void python_threads_fill(struct py_reader *r, struct code_cache *cc, const struct target *t,
				struct py_dump_thread *pts, int n, const struct py_dump_state *st,
				struct dump_process *dp, struct dump_thread **ths,
				struct py_thread_id *ids)
{
	int i;

	for (i = 0; i < n; i++) {
		struct dump_thread *th = ths[i] = python_entry(dp, &pts[i]);

		if (!th) {
			dp->cut.threads++;
			dp->cut.frames += pts[i].nframes;
			continue;
		}
		python_frames(cc, t, &pts[i], dp, th);
		python_name(r, &pts[i], th);
		/* asleep on the futex of the GIL's condition or mutexes: waiting for it */
		if (th->gil == 0 && th->syscall == 202 && st->gil && th->args[0] >= st->gil + 32 &&
		    th->args[0] < st->gil + PY_GIL_SIZE)
			th->gil = 2;
		th->ident = pts[i].thread_id;
		ids[i] = (struct py_thread_id){ .ident = th->ident, .tid = th->tid };
		memcpy(ids[i].name, th->pyname, sizeof(ids[i].name));
	}
}

/* --locals, once every thread is known: each frame's variables, in thread order. */
static void python_locals(struct py_reader *r, struct py_dump_thread *pts, int n,
			  struct dump_process *dp, struct dump_thread **ths, bool unbound)
{
	size_t k;
	int i;

	for (i = 0; i < n; i++)
		for (k = 0; ths[i] && k < ths[i]->nframes; k++)
			frame_locals(r, dp, &pts[i].frames[k], &ths[i]->frames[k], unbound);
}

/* Reads the Python threads of t into dp (whose tasks are listed). 0 or -errno. */
static int python_threads(const struct target *t, struct dump_process *dp,
			  const struct dump_report *rep)
{
	struct cache_budget budget;
	struct code_cache *cc;
	struct py_dump_thread *pts;
	struct dump_thread **ths;
	struct py_thread_id *ids;
	struct py_dump_state st;
	struct py_reader r;
	int n;

	if (py_reader__init(&r, t->pid, &t->layout, t->version))
		return -ENOTSUP;
	r.deadline_ns = dp->budget.deadline;
	pts = malloc(PY_DUMP_THREADS * sizeof(*pts));
	ths = calloc(PY_DUMP_THREADS, sizeof(*ths));
	ids = calloc(PY_DUMP_THREADS, sizeof(*ids));
	cache_budget__init(&budget, DUMP_CACHE_BYTES);
	cc = code_cache__new(&budget);
	if (!pts || !ths || !ids || !cc) {
		free(pts);
		free(ths);
		free(ids);
		code_cache__free(cc);
		cache_budget__free(&budget);
		return -ENOMEM;
	}
	n = py_dump_threads(&r, t, pts, PY_DUMP_THREADS, &st);
	/* more Python threads than are read: said, not hidden */
	dp->threads_left_out = n == PY_DUMP_THREADS;
	dp->thread_list_loops = st.loops;
	if (st.out_of_time) {
		dump_budget_spent(dp);
		dp->cut.thread_list = true;
	}
	python_threads_fill(&r, cc, t, pts, n, &st, dp, ths, ids);
	if (rep->native)
		dump_read_native(t, pts, n, ths, dp);
	r.threads = ids;
	r.nthreads = n > 0 ? (size_t)n : 0;
	if (rep->locals)
		python_locals(&r, pts, n, dp, ths, rep->unbound);
	if (rep->async && n >= 0)
		dump_read_tasks(&r, cc, t, dp);
	free(pts);
	free(ths);
	free(ids);
	code_cache__free(cc);
	cache_budget__free(&budget);
	return n < 0 ? n : 0;
}

int dump_read_process(pid_t pid, struct dump_process *dp, const struct dump_report *rep, char *why,
		      size_t whylen)
{
	struct target *t = calloc(1, sizeof(*t));
	long long start = mono_ns();
	int err;

	if (!t)
		return -ENOMEM;
	err = target__open(pid, t, why, whylen);
	if (!err) {
		dp->pid = pid;
		snprintf(dp->version, sizeof(dp->version), "%s", t->version_str);
		memcpy(dp->exe, t->exe, sizeof(dp->exe));
		snprintf(dp->cmdline, sizeof(dp->cmdline), "%s", t->cmdline);
		err = list_tasks(pid, t->nspid != t->pid, dp);
		if (err)
			snprintf(why, whylen, "cannot list the threads of pid %d: %s", pid,
				 strerror(-err));
	}
	if (!err) {
		err = python_threads(t, dp, rep);
		if (err)
			snprintf(why, whylen, "cannot read the threads of pid %d: %s", pid,
				 strerror(-err));
	}
	if (!err)
		dump_read_sources(pid, dp);
	dp->read_ns = mono_ns() - start;
	free(t);
	return err;
}

void dump_process_free(struct dump_process *dp)
{
	size_t j, k;

	for (j = 0; j < dp->nthreads; j++) {
		for (k = 0; k < dp->threads[j].nframes; k++)
			dump_frame_free(&dp->threads[j].frames[k]);
		free(dp->threads[j].frames);
		dump_native_free(&dp->threads[j]);
	}
	free(dp->threads);
	dump_tasks_free(dp);
	dp->threads = NULL;
	dp->nthreads = 0;
}
