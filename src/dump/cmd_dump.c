// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump: what every thread of a CPython process is doing now, read
 * from outside without stopping it (no ptrace, no signal): its kernel state
 * from /proc/PID/task, its Python stack from the target's memory (the BPF
 * walk, cpython/py_threads.c), its source lines with the target's rights and,
 * with --locals, each frame's variables (cpython/py_objects.c). A stopped or
 * traced process is read as it is and left so.
 *
 * The processes are read and written one at a time (dump_read.c, then
 * dump_write.c): memory holds one process, whatever -a finds. Each is
 * bounded in bytes and time, and so is the whole dump; a process the dump's
 * bounds or a stop signal leave unread is named in the output with why.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dump/cmd_dump.h"
#include "dump.h"
#include "cpython/target.h"
#include "proc/procfs.h"
#include "report/report_common.h"
#include "util/mono.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/text.h"

#define DUMP_MAX_PIDS 64
#define DUMP_SKIPS_LISTED 64 /* processes not dumped named in the output; more are counted */
#define DUMP_SKIP_WHY 200
#define DUMP_MAX_DESCENDANTS 4096 /* descendants of one -p process looked at (--subprocesses) */
#define OPT_ASYNC 0x100
#define OPT_MAX_MB 0x101
#define OPT_MAX_SECONDS 0x102
#define OPT_MAX_TOTAL_MB 0x103
#define OPT_MAX_TOTAL_SECONDS 0x104
#define OPT_UNBOUND 0x105
#define OPT_NATIVE 0x106
#define OPT_SUBPROCESSES 0x107
#define NS 1000000000LL

struct dump_opts {
	pid_t pids[DUMP_MAX_PIDS];
	int npids;
	bool all, locals, json, async, unbound, native, subprocesses;
	const char *output;
	struct dump_limits limits;
};

/* A process found but not dumped, and why. */
struct dump_skip {
	pid_t pid;
	char why[DUMP_SKIP_WHY];
};

/* One run: the output, and what was and was not dumped. */
struct dump_run {
	const struct dump_opts *o;
	struct dump_report rep;
	struct dump_out out;
	long long deadline; /* the whole dump's end */
	size_t found;	    /* processes asked for (-p) or CPython processes found (-a) */
	size_t dumped;
	size_t skipped; /* the first DUMP_SKIPS_LISTED of them in skips */
	struct dump_skip skips[DUMP_SKIPS_LISTED];
	bool failed;	     /* a process asked for could not be read, or a bound left one out */
	bool began;	     /* the output's opening is written: its end must be too */
	pid_t stopped_after; /* -a: the scan stopped here, on a stop signal (0: it did not) */
};

/* The first stop signal ends the dump with what it has; a second one, at once. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	static const char msg[] = "\npybpfprof: second stop signal: exiting at once, without "
				  "the rest of the dump\n";

	if (stop_signal) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(128 + sig);
		_exit(128 + sig);
	}
	stop_signal = sig;
}

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
	"  sudo pybpfprof dump -p 1234 --locals    # each frame's arguments, locals\n"
	"  sudo pybpfprof dump -p 1234 --native    # the C frames threads wait in\n"
	"  sudo pybpfprof dump -p 1234 --subprocesses   # and every CPython below it\n"
	"  sudo pybpfprof dump -a -f json -o now.json   # every CPython, as JSON\n"
	"  sudo pybpfprof dump -p 1234 --async     # with its asyncio task tree\n"
	"  sudo pybpfprof dump -p 1234 --locals --max-mb 64 --max-seconds 30\n"
	"                                          # a big process, in full\n"
	"\n"
	"Locals are shown bounded: None, bool, int (big ones abbreviated), float, str and bytes "
	"(first 80 characters, escaped), list, tuple, dict and set by length and first items, "
	"numpy arrays by dtype and shape, numpy scalars by value, locks with their state, "
	"anything else as <TypeName at 0x...>; the arguments apart, and the locals not bound "
	"yet counted (--unbound shows them). A running "
	"thread's stack is read until two reads agree (5 tries), else it is marked moving. "
	"--native unwinds the threads waiting in the kernel only: a running one is not stopped "
	"to be read. "
	"A task awaited by several tasks is drawn once, and named by its id (task #N) where "
	"it is reached again.\n"
	"\n"
	"Each process's output and reading time are bounded (--max-mb, --max-seconds), and so "
	"are the whole dump's (--max-total-mb, --max-total-seconds): what a bound leaves out "
	"is counted and said at the end of its process, and a process left unread is named "
	"with why. SIGINT or SIGTERM ends the dump with what it has read.";

static const struct argp_option dump_options[] = {
	{ "pid", 'p', "PID", 0, "Dump process PID (repeatable)", 0 },
	{ "all", 'a', NULL, 0, "Dump every CPython process of the machine", 0 },
	{ "locals", 'l', NULL, 0,
	  "Show each frame's local variables, its arguments apart (*args, **kwargs marked), a "
	  "lock with its state and an RLock's owner",
	  0 },
	{ "unbound", OPT_UNBOUND, NULL, 0,
	  "With --locals, also show the variables not bound yet (<unbound>); without it they are "
	  "only counted",
	  0 },
	{ "native", OPT_NATIVE, NULL, 0,
	  "Show each thread's native frames (C functions, libraries) among its Python frames: "
	  "a thread waiting in a system call is unwound from its stack pointer, a running one is "
	  "not (it is not stopped)",
	  0 },
	{ "subprocesses", OPT_SUBPROCESSES, NULL, 0,
	  "With -p, also dump every CPython descendant, through parents that are not Python (a "
	  "shell, unshare, a C server)",
	  0 },
	{ "async", OPT_ASYNC, NULL, 0,
	  "Show the asyncio tasks: each pending task's coroutine stack, as a tree of who awaits "
	  "whom (CPython 3.11+)",
	  0 },
	{ "format", 'f', "FORMAT", 0, "text (default) or json", 0 },
	{ "output", 'o', "FILE", 0, "Write to FILE (never through a link; -: stdout)", 0 },
	{ "max-mb", OPT_MAX_MB, "MIB", 0,
	  "Output of one process at most, 1 to 4096 MiB; the rest is counted, not shown "
	  "(default: 16)",
	  0 },
	{ "max-seconds", OPT_MAX_SECONDS, "S", 0,
	  "Time spent reading one process at most, 1 to 3600 (default: 10)", 0 },
	{ "max-total-mb", OPT_MAX_TOTAL_MB, "MIB", 0,
	  "Output of the whole dump at most, 1 to 65536 MiB (default: 256)", 0 },
	{ "max-total-seconds", OPT_MAX_TOTAL_SECONDS, "S", 0,
	  "Time of the whole dump at most, 1 to 86400 (default: 120)", 0 },
	{ 0 },
};

/* A number of option key within [min, max], or argp's error. */
static long bounded(struct argp_state *state, const char *name, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < min || v > max)
		argp_error(state, "%s %s: give a whole number from %ld to %ld", name, arg, min,
			   max);
	return v;
}

static error_t dump_parse_bound(int key, char *arg, struct argp_state *state)
{
	struct dump_opts *o = state->input;

	switch (key) {
	case OPT_MAX_MB:
		o->limits.proc_bytes = (uint64_t)bounded(state, "--max-mb", arg, 1, 4096) << 20;
		return 0;
	case OPT_MAX_SECONDS:
		o->limits.proc_ns = bounded(state, "--max-seconds", arg, 1, 3600) * NS;
		return 0;
	case OPT_MAX_TOTAL_MB:
		o->limits.dump_bytes = (uint64_t)bounded(state, "--max-total-mb", arg, 1, 65536)
				       << 20;
		return 0;
	case OPT_MAX_TOTAL_SECONDS:
		o->limits.dump_ns = bounded(state, "--max-total-seconds", arg, 1, 86400) * NS;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

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
	case OPT_UNBOUND:
		o->unbound = true;
		return 0;
	case OPT_NATIVE:
		o->native = true;
		return 0;
	case OPT_SUBPROCESSES:
		o->subprocesses = true;
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
		else if (o->subprocesses && o->all)
			argp_error(state,
				   "--subprocesses goes with -p; -a dumps every process already");
		else if (o->unbound && !o->locals)
			argp_error(state, "--unbound goes with --locals");
		return 0;
	default:
		return dump_parse_bound(key, arg, state);
	}
}

/* A process not dumped: counted, and named with why while there is room in the list. */
static void skip(struct dump_run *run, pid_t pid, const char *why)
{
	if (run->skipped < DUMP_SKIPS_LISTED) {
		run->skips[run->skipped].pid = pid;
		snprintf(run->skips[run->skipped].why, DUMP_SKIP_WHY, "%s", why);
	}
	run->skipped++;
}

/* Whether the dump as a whole must stop taking processes; if so, why (in why). */
static bool dump_over(struct dump_run *run, char *why, size_t whylen)
{
	enum dump_cut cut = stop_signal		       ? DUMP_CUT_SIGNAL :
			    mono_ns() >= run->deadline ? DUMP_CUT_DUMP_TIME :
							 DUMP_CUT_NONE;
	char text[160];

	if (!cut)
		return false;
	dump_cut_text(&run->o->limits, cut, text, sizeof(text));
	snprintf(why, whylen, "not read: %s came first", text);
	return true;
}

/* The process's budget: what is left of the dump's, within the process's own bounds. */
static void process_budget(const struct dump_run *run, struct dump_process *dp)
{
	long long end = mono_ns() + run->o->limits.proc_ns;

	dp->budget.deadline = end < run->deadline ? end : run->deadline;
	dp->budget.at_deadline = end < run->deadline ? DUMP_CUT_TIME : DUMP_CUT_DUMP_TIME;
	dp->budget.bytes = dump_out__room(&run->out);
	dp->budget.over_bytes = run->out.proc_by_dump ? DUMP_CUT_DUMP_BYTES : DUMP_CUT_BYTES;
	dp->budget.stop = &stop_signal;
}

/* The document's opening, once, before the first process written. */
static void begin_document(struct dump_run *run)
{
	FILE *f;

	if (run->began)
		return;
	run->began = true;
	if (!run->rep.json)
		return;
	f = dump_out__begin(&run->out, DUMP_EL_CLOSE);
	fputs("{\"processes\": [", f);
	dump_out__end(&run->out);
}

/* Reads and writes one process; asked: named with -p (a failure is said on stderr). */
static void dump_pid(struct dump_run *run, pid_t pid, bool asked)
{
	struct dump_process *dp;
	char why[256];

	why[0] = 0;
	if (dump_over(run, why, sizeof(why)) ||
	    !dump_out__process(&run->out, run->o->limits.proc_bytes)) {
		if (!why[0])
			snprintf(why, sizeof(why),
				 "not read: the dump's output bound of %" PRIu64
				 " MiB (--max-total-mb) came first",
				 run->o->limits.dump_bytes >> 20);
		skip(run, pid, why);
		run->failed = true;
		return;
	}
	dp = calloc(1, sizeof(*dp));
	if (dp)
		process_budget(run, dp);
	if (!dp || dump_read_process(pid, dp, &run->rep, why, sizeof(why))) {
		skip(run, pid, why[0] ? why : "cannot read it");
		/* -a meets processes that exit or are not CPython enough meanwhile: said, not failed */
		if (asked)
			pr_err("%s\n", why[0] ? why : "cannot read it");
		run->failed |= asked;
	} else {
		begin_document(run);
		if (dump_write_process(&run->out, &run->rep, dp, !run->dumped))
			run->dumped++;
		else
			skip(run, pid,
			     "not shown: the dump's output bound (--max-total-mb) came first");
	}
	dump_out__process_end(&run->out);
	if (dp)
		dump_process_free(dp);
	free(dp);
}

/* -a: every process whose executable is or loads CPython, but ourselves, one at a time. */
static int dump_all(struct dump_run *run)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || pid == getpid() || py_exe_kind(pid) <= 0)
			continue;
		if (stop_signal) {
			run->stopped_after = pid;
			break;
		}
		run->found++;
		dump_pid(run, pid, false);
	}
	closedir(d);
	return 0;
}

static void json_skips(struct dump_run *run)
{
	size_t i, n = run->skipped < DUMP_SKIPS_LISTED ? run->skipped : DUMP_SKIPS_LISTED;
	struct dump_out *o = &run->out;
	FILE *f = dump_out__begin(o, DUMP_EL_CLOSE);

	fputs("], \"skipped\": [", f);
	dump_out__end(o);
	for (i = 0; i < n; i++) {
		f = dump_out__begin(o, DUMP_EL_ITEM);
		if (!f)
			break;
		fprintf(f, "%s{\"pid\": %d, \"reason\": ", i ? ", " : "", (int)run->skips[i].pid);
		json_string(f, run->skips[i].why);
		fputc('}', f);
		if (!dump_out__end(o))
			break;
	}
	f = dump_out__begin(o, DUMP_EL_CLOSE);
	fprintf(f,
		"], \"skipped_total\": %zu, \"skipped_listed\": %zu, \"found\": %zu, "
		"\"dumped\": %zu, \"interrupted\": %s, \"limits\": {\"process_bytes\": %" PRIu64
		", \"process_seconds\": %lld, \"dump_bytes\": %" PRIu64
		", \"dump_seconds\": %lld}}\n",
		run->skipped, i, run->found, run->dumped, stop_signal ? "true" : "false",
		run->o->limits.proc_bytes, run->o->limits.proc_ns / NS, run->o->limits.dump_bytes,
		run->o->limits.dump_ns / NS);
	dump_out__end(o);
}

static void text_skips(struct dump_run *run)
{
	size_t i, n = run->skipped < DUMP_SKIPS_LISTED ? run->skipped : DUMP_SKIPS_LISTED;
	struct dump_out *o = &run->out;
	FILE *f;

	if (run->skipped) {
		f = dump_out__begin(o, DUMP_EL_CLOSE);
		fprintf(f, "\n%zu of %zu processes not dumped:\n", run->skipped, run->found);
		dump_out__end(o);
	}
	for (i = 0; i < n; i++) {
		f = dump_out__begin(o, DUMP_EL_ITEM);
		if (!f)
			break;
		fprintf(f, "  pid %d: ", (int)run->skips[i].pid);
		text_put_clean(f, run->skips[i].why);
		fputc('\n', f);
		if (!dump_out__end(o))
			break;
	}
	f = dump_out__begin(o, DUMP_EL_CLOSE);
	if (i < run->skipped)
		fprintf(f, "  ... %zu %snot listed (%s)\n", run->skipped - i, i ? "more " : "",
			o->full ? "no room left within --max-total-mb" : "only the first 64 are");
	if (run->stopped_after)
		fprintf(f,
			"(a stop signal ended the dump: the processes after pid %d were not "
			"looked at)\n",
			(int)run->stopped_after);
	dump_out__end(o);
}

/*
 * -p PID --subprocesses: PID if it is CPython (one that is not, a shell or a
 * server written in C, is only the way to its descendants), then each of its
 * descendants that is CPython, parents first.
 */
static void dump_tree(struct dump_run *run, pid_t root)
{
	pid_t *kids = malloc(DUMP_MAX_DESCENDANTS * sizeof(*kids));
	ssize_t n = kids ? proc_descendants(root, kids, DUMP_MAX_DESCENDANTS) : -ENOMEM;
	char why[DUMP_SKIP_WHY];
	ssize_t i;
	int kind = py_exe_kind(root);

	if (kind != PY_EXE_OTHER || n < 0) {
		run->found++;
		dump_pid(run, root, true);
	}
	for (i = 0; i < n && i < DUMP_MAX_DESCENDANTS; i++) {
		if (kids[i] == getpid() || py_exe_kind(kids[i]) <= 0)
			continue;
		run->found++;
		dump_pid(run, kids[i], false);
	}
	if (n > DUMP_MAX_DESCENDANTS) {
		snprintf(why, sizeof(why),
			 "its descendants past the first %d (of %zd or more) were not looked at",
			 DUMP_MAX_DESCENDANTS, n);
		skip(run, root, why);
		run->failed = true;
	}
	free(kids);
}

/* The dump: every process, one at a time, then what was not dumped. 0 or -errno. */
static int dump_fill(FILE *f, void *arg)
{
	struct dump_run *run = arg;
	int i, err = 0;

	if (dump_out__init(&run->out, f, run->o->limits.dump_bytes))
		return -ENOMEM;
	if (run->o->all && dump_all(run))
		pr_err("cannot list /proc\n");
	for (i = 0; !run->o->all && i < run->o->npids; i++) {
		if (run->o->subprocesses) {
			dump_tree(run, run->o->pids[i]);
			continue;
		}
		run->found++;
		dump_pid(run, run->o->pids[i], true);
	}
	if (run->began && run->rep.json)
		json_skips(run);
	else if (run->began)
		text_skips(run);
	err = run->out.err;
	dump_out__free(&run->out);
	/* nothing dumped: no output (a file is not created) */
	return err ? err : run->dumped ? 0 : -ENOENT;
}

/* What stderr says when nothing could be dumped under -a. */
static void say_none(const struct dump_run *run)
{
	size_t i, n = run->skipped < DUMP_SKIPS_LISTED ? run->skipped : DUMP_SKIPS_LISTED;

	if (!run->found) {
		fprintf(stderr, "pybpfprof: no CPython process found%s\n",
			run->o->subprocesses ? " among the processes given and their descendants" :
					       "");
		return;
	}
	fprintf(stderr, "pybpfprof: %zu CPython processes found, none could be dumped:\n",
		run->found);
	for (i = 0; i < n; i++) {
		fprintf(stderr, "  pid %d: ", (int)run->skips[i].pid);
		text_put_clean(stderr, run->skips[i].why);
		fputc('\n', stderr);
	}
}

static int dump_output(struct dump_run *run, const char *output)
{
	struct outfile of = { .dir_fd = -1, .tmp_fd = -1 };
	char why[256];
	int err;

	if (output && outfile__open(&of, output, why, sizeof(why))) {
		pr_err("%s: %s\n", output, why);
		return 1;
	}
	if (output)
		err = outfile__write(&of, dump_fill, run, why, sizeof(why));
	else if (!(err = dump_fill(stdout, run)) && fflush(stdout))
		err = -errno;
	if (err && err != -ENOENT)
		pr_err("cannot write %s: %s\n", output ? output : "the output",
		       output ? why : strerror(-err));
	if (output)
		outfile__close(&of);
	if (err == -ENOENT && (run->o->all || run->o->subprocesses))
		say_none(run);
	if (stop_signal)
		fprintf(stderr,
			"pybpfprof: dump ended by a stop signal: %zu processes dumped, "
			"%zu not\n",
			run->dumped, run->skipped);
	return err || run->failed || stop_signal ? 1 : 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { .limits = { .proc_bytes = (uint64_t)DUMP_PROC_MB << 20,
					   .dump_bytes = (uint64_t)DUMP_TOTAL_MB << 20,
					   .proc_ns = DUMP_PROC_SECONDS * NS,
					   .dump_ns = DUMP_TOTAL_SECONDS * NS } };
	const struct argp argp = { dump_options, dump_parse_opt, NULL, dump_doc, NULL, NULL, NULL };
	struct sigaction sa = { .sa_handler = on_signal };
	struct dump_run *run;
	int rc;

	static char name[] = "pybpfprof dump";

	argp_err_exit_status = 2;
	if (argc > 0)
		argv[0] = name; /* for argp's usage and error lines */
	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	run = calloc(1, sizeof(*run));
	if (!run)
		return 1;
	/* from here a stop signal ends the dump with what it has */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	run->o = &o;
	run->rep = (struct dump_report){ .locals = o.locals,
					 .unbound = o.unbound,
					 .native = o.native,
					 .async = o.async,
					 .json = o.json,
					 .limits = o.limits };
	run->deadline = mono_ns() + o.limits.dump_ns;
	rc = dump_output(run, o.output);
	free(run);
	return rc;
}
