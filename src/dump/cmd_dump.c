// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump: what every thread of a CPython process is doing now, read
 * from outside without stopping it (no ptrace, no signal): its kernel state
 * from /proc/PID/task, its Python stack from the target's memory (the BPF
 * walk, cpython/py_threads.c), its source lines with the target's rights and,
 * with --locals, each frame's variables (cpython/py_objects.c). A stopped or
 * traced process is read as it is and left so.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dump/cmd_dump.h"
#include "dump.h"
#include "cpython/code_cache.h"
#include "proc/procfs.h"
#include "proc/source.h"
#include "cpython/target.h"
#include "util/log.h"
#include "util/outfile.h"

#define DUMP_MAX_PIDS 64
#define DUMP_MAX_TASKS 4096 /* tasks of one process listed at most */
#define DUMP_CACHE_BYTES (64u << 20)
#define DUMP_SOURCE_MS 2000
#define OPT_ASYNC 0x100

struct dump_opts {
	pid_t pids[DUMP_MAX_PIDS];
	int npids;
	bool all, locals, json, async;
	const char *output;
};

static const char dump_doc[] =
	"pybpfprof: what every thread of a running CPython process is doing now: its "
	"kernel state (running, runnable, sleeping in which system call, which futex, the wait "
	"channel), whether it holds the GIL or waits for it, whether it collects garbage, "
	"and its Python stack "
	"innermost first with file:line, function and source line. The process is read from "
	"outside and never stopped; a stopped or traced one is left as it is."
	"\v"
	"Examples:\n"
	"  sudo pybpfprof dump -p 1234             # every thread of pid 1234\n"
	"  sudo pybpfprof dump -p 1234 --locals    # with each frame's local variables\n"
	"  sudo pybpfprof dump -a -f json -o now.json   # every CPython, as JSON\n"
	"  sudo pybpfprof dump -p 1234 --async     # with its asyncio task tree\n"
	"\n"
	"Locals are shown bounded: None, bool, int (big ones abbreviated), float, str and bytes "
	"(first 80 characters, escaped), list, tuple, dict and set by length and first items, "
	"numpy arrays by dtype and shape, anything else as <TypeName at 0x...>. A running "
	"thread's stack is read until two reads agree (5 tries), else it is marked moving.";

static const struct argp_option dump_options[] = {
	{ "pid", 'p', "PID", 0, "Dump process PID (repeatable)", 0 },
	{ "all", 'a', NULL, 0, "Dump every CPython process of the machine", 0 },
	{ "locals", 'l', NULL, 0, "Show each frame's local variables", 0 },
	{ "async", OPT_ASYNC, NULL, 0,
	  "Show the asyncio tasks: each pending task's coroutine stack, as a tree of who awaits "
	  "whom (CPython 3.11+)",
	  0 },
	{ "format", 'f', "FORMAT", 0, "text (default) or json", 0 },
	{ "output", 'o', "FILE", 0, "Write to FILE (never through a link; -: stdout)", 0 },
	{ 0 },
};

static error_t dump_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct dump_opts *o = state->input;
	char *end;
	long v;

	switch (key) {
	case 'p':
		v = strtol(arg, &end, 10);
		if (*end || end == arg || v <= 0 || v > 0x3fffffff)
			argp_error(state, "-p %s: not a process id; give a positive number", arg);
		else if (o->npids >= DUMP_MAX_PIDS)
			argp_error(state, "at most %d -p options; use -a for more", DUMP_MAX_PIDS);
		else
			o->pids[o->npids++] = (pid_t)v;
		return 0;
	case 'a':
		o->all = true;
		return 0;
	case 'l':
		o->locals = true;
		return 0;
	case OPT_ASYNC:
		o->async = true;
		return 0;
	case 'f':
		if (strcmp(arg, "text") && strcmp(arg, "json"))
			argp_error(state, "-f %s: unknown format; use text or json", arg);
		o->json = !strcmp(arg, "json");
		return 0;
	case 'o':
		o->output = strcmp(arg, "-") ? arg : NULL; /* -o -: standard output */
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'; name processes with -p PID", arg);
		return 0;
	case ARGP_KEY_END:
		if (!o->npids && !o->all)
			argp_error(state, "no process given; use -p PID or -a");
		else if (o->npids && o->all)
			argp_error(state, "-a and -p exclude each other; give one of them");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

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

/* Every task of pid, in tid order, with its kernel state. -errno if none is listed. */
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
	while ((de = readdir(d)) && dp->nthreads < DUMP_MAX_TASKS) {
		pid_t tid = (pid_t)atoi(de->d_name), tgid;

		if (tid <= 0 || !(t = task_slot(dp)))
			continue;
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

/* A frame's locals, rendered now (the snapshot is the moment they are read). */
static void frame_locals(struct py_reader *r, const struct py_dump_frame *pf, struct dump_frame *df)
{
	struct py_local loc[PY_LOCALS_MAX];
	char text[PY_RENDER_MAX];
	int n, i;

	n = py_frame_locals(r, pf->frame, pf->code, loc, PY_LOCALS_MAX, &df->total_locals);
	if (n < 0) {
		df->locals_err = n;
		return;
	}
	df->locals = calloc(n ? n : 1, sizeof(*df->locals));
	if (!df->locals) {
		df->locals_err = -ENOMEM;
		return;
	}
	for (i = 0; i < n; i++) {
		struct dump_local *dl = &df->locals[df->nlocals++];

		memcpy(dl->name, loc[i].name, sizeof(dl->name));
		if (loc[i].tagged) {
			snprintf(text, sizeof(text), "%lld", (long long)loc[i].ival);
			snprintf(dl->type, sizeof(dl->type), "int");
		} else if (!loc[i].value) {
			dl->unbound = true;
			snprintf(text, sizeof(text), "<unbound>");
		} else {
			dl->unreadable = py_render(r, loc[i].value, text, sizeof(text), dl->type) <
					 0;
		}
		dl->value = strdup(text);
	}
}

/* The Python side of one thread: names, lines and (with --locals) variables of its frames. */
static void python_frames(struct py_reader *r, struct code_cache *cc, const struct target *t,
			  const struct py_dump_thread *pt, struct dump_thread *th, bool locals)
{
	size_t i;

	th->python = true;
	th->gil = pt->gil;
	th->gc = pt->gc;
	th->moving = pt->moving;
	th->truncated = pt->truncated;
	th->read_error = pt->read_error;
	th->frames = calloc(pt->nframes ? pt->nframes : 1, sizeof(*th->frames));
	if (!th->frames)
		return;
	for (i = 0; i < pt->nframes; i++) {
		const struct py_dump_frame *pf = &pt->frames[i];
		const struct code_info *ci = code_cache__get(cc, t, pf->code, pf->fingerprint);
		struct dump_frame *df = &th->frames[th->nframes++];

		df->line = -1;
		if (ci) {
			df->func = strdup(ci->qualname);
			df->file = strdup(ci->filename);
			df->line = code_info__line(ci, &t->layout, pf->instr);
		}
		if (locals)
			frame_locals(r, pf, df);
	}
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

/* Reads the Python threads of t into dp (whose tasks are listed). 0 or -errno. */
static int python_threads(const struct target *t, struct dump_process *dp, bool locals, bool async)
{
	struct cache_budget budget;
	struct code_cache *cc;
	struct py_dump_thread *pts;
	struct py_dump_state st;
	struct py_reader r;
	int n, i;

	if (py_reader__init(&r, t->pid, &t->layout, t->version))
		return -ENOTSUP;
	pts = malloc(PY_DUMP_THREADS * sizeof(*pts));
	cache_budget__init(&budget, DUMP_CACHE_BYTES);
	cc = code_cache__new(&budget);
	if (!pts || !cc) {
		free(pts);
		code_cache__free(cc);
		cache_budget__free(&budget);
		return -ENOMEM;
	}
	n = py_dump_threads(&r, t, pts, PY_DUMP_THREADS, &st);
	/* more Python threads than are read: said, not hidden */
	dp->threads_left_out = n == PY_DUMP_THREADS;
	for (i = 0; i < n; i++) {
		struct dump_thread *th = pts[i].tid ? find_task(dp, pts[i].tid) : NULL;

		if (!th) {
			th = extra_task(dp);
		} else if (th->python) {
			/* a second thread state on one task (subinterpreters): an entry of its own */
			struct dump_thread *again = extra_task(dp);

			if (again) {
				*again = *th;
				again->frames = NULL;
				again->nframes = 0;
				again->pyname[0] = 0;
			}
			th = again;
		}
		if (!th)
			continue;
		python_frames(&r, cc, t, &pts[i], th, locals);
		python_name(&r, &pts[i], th);
		/* asleep on the futex of the GIL's condition or mutexes: waiting for it */
		if (th->gil == 0 && th->syscall == 202 && st.gil && th->args[0] >= st.gil + 32 &&
		    th->args[0] < st.gil + PY_GIL_SIZE)
			th->gil = 2;
	}
	if (async && n >= 0)
		dump_read_tasks(&r, cc, t, dp);
	free(pts);
	code_cache__free(cc);
	cache_budget__free(&budget);
	return n < 0 ? n : 0;
}

/* One process: 0, or -errno with the reason in why. */
static int dump_one(pid_t pid, struct dump_process *dp, const struct dump_opts *o, char *why,
		    size_t whylen)
{
	struct target *t = calloc(1, sizeof(*t));
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
		err = python_threads(t, dp, o->locals, o->async);
		if (err)
			snprintf(why, whylen, "cannot read the threads of pid %d: %s", pid,
				 strerror(-err));
	}
	if (!err)
		dump_read_sources(pid, dp);
	free(t);
	return err;
}

/* Every process whose executable is or loads CPython, but ourselves. */
static int all_pids(struct dump_opts *o)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d)) && o->npids < DUMP_MAX_PIDS) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid > 0 && pid != getpid() && py_exe_kind(pid) > 0)
			o->pids[o->npids++] = pid;
	}
	closedir(d);
	return 0;
}

/* Collects every process asked for; 1 if any could not be read (said on stderr). */
static int dump_collect(struct dump_opts *o, struct dump_report *rep)
{
	char why[256];
	int i, failed = 0;

	rep->procs = calloc(o->npids ? o->npids : 1, sizeof(*rep->procs));
	if (!rep->procs)
		return 1;
	for (i = 0; i < o->npids; i++) {
		struct dump_process *dp = &rep->procs[rep->nprocs];

		why[0] = 0;
		if (!dump_one(o->pids[i], dp, o, why, sizeof(why))) {
			rep->nprocs++;
			continue;
		}
		free(dp->threads);
		dump_tasks_free(dp);
		memset(dp, 0, sizeof(*dp));
		/* -a meets processes that are not CPython or exit meanwhile: skipped */
		if (!o->all) {
			pr_err("%s\n", why[0] ? why : "cannot read it");
			failed = 1;
		}
	}
	return failed;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { 0 };
	struct dump_report rep = { 0 };
	const struct argp argp = { dump_options, dump_parse_opt, NULL, dump_doc, NULL, NULL, NULL };
	struct outfile of = { .dir_fd = -1, .tmp_fd = -1 };
	char why[256];
	int failed, err = 0;

	static char name[] = "pybpfprof dump";

	argp_err_exit_status = 2;
	if (argc > 0)
		argv[0] = name; /* for argp's usage and error lines */
	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	if (o.output && outfile__open(&of, o.output, why, sizeof(why))) {
		pr_err("%s: %s\n", o.output, why);
		return 1;
	}
	if (o.all && all_pids(&o))
		pr_err("cannot list /proc\n");
	rep.locals = o.locals;
	rep.async = o.async;
	failed = dump_collect(&o, &rep);
	if (o.output && rep.nprocs)
		err = outfile__write(&of, o.json ? dump_write_json : dump_write_text, &rep, why,
				     sizeof(why));
	else if (rep.nprocs)
		err = (o.json ? dump_write_json : dump_write_text)(stdout, &rep) || fflush(stdout);
	if (err)
		pr_err("cannot write %s: %s\n", o.output ? o.output : "the output",
		       o.output ? why : strerror(errno));
	if (o.output)
		outfile__close(&of);
	if (!rep.nprocs && o.all)
		pr_err("no CPython process found\n");
	dump_report_free(&rep);
	return err || failed || !rep.nprocs ? 1 : 0;
}
