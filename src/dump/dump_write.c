// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump's output of one process, as text or JSON, through the
 * bounded output (dump_out.c): each thread's header and each frame with its
 * locals is one element, written whole or not at all; what does not fit is
 * counted, and the process ends with what was left out and why. Text goes
 * through text_sanitize (the target's names, paths, source and values may
 * hold anything); JSON escapes them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dump.h"
#include "report/report_common.h"
#include "util/text.h"

/* x86_64 system calls a thread is usually found waiting in. */
static const struct {
	long nr;
	const char *name;
} syscalls[] = {
	{ 0, "read" },
	{ 1, "write" },
	{ 7, "poll" },
	{ 17, "pread64" },
	{ 18, "pwrite64" },
	{ 19, "readv" },
	{ 20, "writev" },
	{ 23, "select" },
	{ 24, "sched_yield" },
	{ 34, "pause" },
	{ 35, "nanosleep" },
	{ 42, "connect" },
	{ 43, "accept" },
	{ 44, "sendto" },
	{ 45, "recvfrom" },
	{ 46, "sendmsg" },
	{ 47, "recvmsg" },
	{ 61, "wait4" },
	{ 72, "fcntl" },
	{ 74, "fsync" },
	{ 128, "rt_sigtimedwait" },
	{ 130, "rt_sigsuspend" },
	{ 202, "futex" },
	{ 230, "clock_nanosleep" },
	{ 232, "epoll_wait" },
	{ 247, "waitid" },
	{ 270, "pselect6" },
	{ 271, "ppoll" },
	{ 281, "epoll_pwait" },
	{ 288, "accept4" },
	{ 299, "recvmmsg" },
	{ 307, "sendmmsg" },
	{ 441, "epoll_pwait2" },
	{ 449, "futex_waitv" },
};

const char *dump_syscall_name(long nr)
{
	size_t i;

	for (i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}

const char *dump_gil_name(int gil)
{
	return gil < 0 ? "unknown" : gil == 1 ? "held" : gil == 2 ? "waiting" : "not held";
}

const char *dump_state_name(const struct dump_thread *t)
{
	if (t->syscall == -2)
		return "running";
	switch (t->state) {
	case 'R':
		return "runnable";
	case 'S':
		return "sleeping";
	case 'D':
		return "disk-sleep";
	case 'T':
		return "stopped";
	case 't':
		return "traced";
	case 'Z':
		return "zombie";
	case 'I':
		return "idle";
	default:
		return "unknown";
	}
}

/* FUTEX_WAIT_BITSET_PRIVATE and the like, from futex(2)'s op argument. */
static void futex_op(unsigned long op, char *buf, size_t len)
{
	static const char *const ops[] = { "WAIT",	     "WAKE",	    "FD",
					   "REQUEUE",	     "CMP_REQUEUE", "WAKE_OP",
					   "LOCK_PI",	     "UNLOCK_PI",   "TRYLOCK_PI",
					   "WAIT_BITSET",    "WAKE_BITSET", "WAIT_REQUEUE_PI",
					   "CMP_REQUEUE_PI", "LOCK_PI2" };
	unsigned cmd = op & 127;

	if (cmd < sizeof(ops) / sizeof(ops[0]))
		snprintf(buf, len, "FUTEX_%s%s", ops[cmd], (op & 128) ? "_PRIVATE" : "");
	else
		snprintf(buf, len, "%#lx", op);
}

/* "futex(0x7f.., FUTEX_WAIT_BITSET_PRIVATE)", "read(3)", "syscall 999"; "" if none. */
static void syscall_text(const struct dump_thread *t, char *buf, size_t len)
{
	const char *name = dump_syscall_name(t->syscall);
	char op[48];

	buf[0] = 0;
	if (t->syscall < 0)
		return;
	if (t->syscall == 202) {
		futex_op(t->args[1], op, sizeof(op));
		snprintf(buf, len, "futex(%#lx, %s)", t->args[0], op);
	} else if (name && t->syscall <= 72) {
		snprintf(buf, len, "%s(%lu, ...)", name, t->args[0]);
	} else if (name) {
		snprintf(buf, len, "%s()", name);
	} else {
		snprintf(buf, len, "syscall %ld", t->syscall);
	}
}

const char *dump_cut_key(enum dump_cut why)
{
	static const char *const keys[] = { NULL,	  "bytes",     "time",
					    "dump_bytes", "dump_time", "signal" };

	return why < sizeof(keys) / sizeof(keys[0]) ? keys[why] : NULL;
}

void dump_cut_text(const struct dump_limits *l, enum dump_cut why, char *buf, size_t len)
{
	switch (why) {
	case DUMP_CUT_BYTES:
		snprintf(buf, len, "the process's output bound of %" PRIu64 " MiB (--max-mb)",
			 l->proc_bytes >> 20);
		break;
	case DUMP_CUT_TIME:
		snprintf(buf, len, "the process's time bound of %lld s (--max-seconds)",
			 l->proc_ns / 1000000000LL);
		break;
	case DUMP_CUT_DUMP_BYTES:
		snprintf(buf, len, "the dump's output bound of %" PRIu64 " MiB (--max-total-mb)",
			 l->dump_bytes >> 20);
		break;
	case DUMP_CUT_DUMP_TIME:
		snprintf(buf, len, "the dump's time bound of %lld s (--max-total-seconds)",
			 l->dump_ns / 1000000000LL);
		break;
	case DUMP_CUT_SIGNAL:
		snprintf(buf, len, "a stop signal");
		break;
	default:
		snprintf(buf, len, "the limits above");
	}
}

/* Whether the element begun as f was written (f NULL: the output was full already). */
static bool written(struct dump_out *o, FILE *f)
{
	return f && dump_out__end(o);
}

/* An argument's name as its function's signature writes it: *args, **kwargs. */
static void text_param_name(FILE *f, const struct dump_local *l)
{
	if (l->param == PY_PARAM_VARARGS)
		fputc('*', f);
	else if (l->param == PY_PARAM_VARKW)
		fputs("**", f);
	text_put_clean(f, l->name);
}

/* The arguments (args) or the other locals, under their heading. */
static void text_local_group(FILE *f, const struct dump_frame *df, bool args)
{
	bool head = false;
	size_t i;

	for (i = 0; i < df->nlocals; i++) {
		const struct dump_local *l = &df->locals[i];

		if ((l->param != PY_PARAM_NONE) != args)
			continue;
		if (!head)
			fputs(args ? "        arguments:\n" : "        locals:\n", f);
		head = true;
		fputs("          ", f);
		text_param_name(f, l);
		fputs(" = ", f);
		text_put_clean(f, l->value);
		fputc('\n', f);
	}
}

static void text_locals(FILE *f, const struct dump_frame *df)
{
	size_t more = df->total_locals - df->nlocals - df->unbound_hidden;

	if (df->locals_err) {
		fprintf(f, "        locals: unreadable (%s)\n", strerror(-df->locals_err));
		return;
	}
	text_local_group(f, df, true);
	text_local_group(f, df, false);
	if (df->unbound_hidden)
		fprintf(f, "        (%zu not bound yet, not shown: --unbound shows them)\n",
			df->unbound_hidden);
	if (df->locals_cut && !df->nlocals && !df->unbound_hidden)
		fputs("        locals: not read (cut short: see the end of the process)\n", f);
	else if (df->locals_cut)
		fprintf(f, "        ... %zu more locals not read (cut short)\n", more);
	else if (more)
		fprintf(f, "        ... %zu more locals\n", more);
}

static void text_thread(FILE *f, const struct dump_thread *t)
{
	char sc[160];

	syscall_text(t, sc, sizeof(sc));
	fprintf(f, "\nThread %d \"", (int)t->tid);
	text_put_clean(f, t->name);
	fputc('"', f);
	if (t->pyname[0]) {
		fputs(" (", f);
		text_put_clean(f, t->pyname);
		fputc(')', f);
	}
	fprintf(f, ": %s", dump_state_name(t));
	if (sc[0])
		fprintf(f, " in %s", sc);
	if (t->wchan[0]) {
		fputs(", wait channel ", f);
		text_put_clean(f, t->wchan);
	}
	if (t->python)
		fprintf(f, ", GIL %s%s", dump_gil_name(t->gil), t->gc == 1 ? ", in GC" : "");
	fprintf(f, "%s%s%s\n", t->moving ? " (moving: its stack changed under every read)" : "",
		t->truncated ? " (stack truncated)" : "",
		t->read_error ? " (a frame could not be read)" : "");
	if (!t->python)
		fputs("    (no Python thread state)\n", f);
}

static void text_frame(FILE *f, const struct dump_frame *df, bool locals)
{
	fputs("    ", f);
	text_put_clean(f, df->func ? df->func : "<unreadable code object>");
	fputs(" (", f);
	text_put_clean(f, df->file ? df->file : "?");
	if (df->line > 0)
		fprintf(f, ":%d)\n", df->line);
	else
		fputs(":?)\n", f);
	if (df->source) {
		fputs("        > ", f);
		text_put_clean(f, df->source);
		fputc('\n', f);
	}
	if (locals)
		text_locals(f, df);
}

/* The native frames of t shown before its Python frame k, from *kn on (advanced). */
static void text_natives(FILE *f, const struct dump_thread *t, size_t k, size_t *kn)
{
	for (; *kn < t->nnative && t->native[*kn].at <= k; (*kn)++) {
		if (t->native[*kn].at < k)
			continue;
		fputs("    [native] ", f);
		text_put_clean(f, t->native[*kn].name);
		if (t->native[*kn].file[0]) {
			fputs(" (", f);
			text_put_clean(f, t->native[*kn].file);
			fputc(')', f);
		}
		fputc('\n', f);
	}
}

/* Why a thread's native frames are not all there (--native), or NULL. */
static const char *native_note(const struct dump_thread *t)
{
	switch (t->native_status) {
	case DUMP_NATIVE_PARTIAL:
		return "the unwind ended before the outermost Python frames: their native frames are "
		       "not shown";
	case DUMP_NATIVE_BELOW:
		return "the native and Python stacks disagree: only the native frames below the "
		       "innermost Python frame are shown";
	case DUMP_NATIVE_RUNNING:
		return "not read: the thread is running, and its registers cannot be read without "
		       "stopping it";
	case DUMP_NATIVE_MOVING:
		return "not read: the thread left its wait each time its stack was read";
	case DUMP_NATIVE_CUT:
		return "cut short by a bound (see the end of the process)";
	default:
		return NULL;
	}
}

static void text_native_note(FILE *f, const struct dump_thread *t)
{
	const char *note = native_note(t);

	if (note)
		fprintf(f, "    (native frames: %s)\n", note);
	else if (t->native_status == DUMP_NATIVE_UNREAD)
		fprintf(f, "    (native frames: not read: %s)\n", strerror(-t->native_err));
}

/* Native frames not shown (their Python frame was not): from kn on. */
static size_t natives_left(const struct dump_thread *t, size_t kn)
{
	return t->nnative - kn;
}

/* One thread and its frames, as far as they fit; what does not is counted. */
static void text_thread_frames(struct dump_out *o, const struct dump_report *rep,
			       struct dump_process *dp, const struct dump_thread *t)
{
	FILE *f = dump_out__begin(o, DUMP_EL_ITEM);
	size_t k = 0, kn = 0;

	if (f) {
		text_thread(f, t);
		text_native_note(f, t);
	}
	if (!written(o, f)) {
		dp->cut.threads++;
	} else {
		for (k = 0; k <= t->nframes; k++) {
			size_t from = kn;

			f = dump_out__begin(o, DUMP_EL_ITEM);
			if (f)
				text_natives(f, t, k, &kn);
			if (f && k < t->nframes)
				text_frame(f, &t->frames[k], rep->locals);
			if (!written(o, f)) {
				kn = from;
				break;
			}
			dp->cut.locals += k < t->nframes && t->frames[k].locals_cut;
		}
		f = t->frames_cut && k > t->nframes ? dump_out__begin(o, DUMP_EL_ITEM) : NULL;
		if (f)
			fprintf(f, "    ... %zu more frames not read (cut short)\n", t->frames_cut);
		if (f)
			written(o, f);
	}
	k = k > t->nframes ? t->nframes : k;
	dp->cut.frames += t->nframes - k + t->frames_cut + natives_left(t, kn);
}

/* The process's first lines: false if even they do not fit. */
static bool text_head(struct dump_out *o, const struct dump_process *dp, bool first)
{
	FILE *f = dump_out__begin(o, DUMP_EL_ITEM);

	if (!f)
		return false;
	fprintf(f, "%sProcess %d: ", first ? "" : "\n", (int)dp->pid);
	text_put_clean(f, dp->cmdline);
	fprintf(f, "\nPython %s (", dp->version);
	text_put_clean(f, dp->exe);
	fprintf(f, "), %zu threads\n", dp->nthreads + dp->cut.threads);
	if (dp->threads_left_out)
		fprintf(f, "(only the first %d Python threads were read)\n", PY_DUMP_THREADS);
	if (dp->thread_list_loops)
		fputs("(its Python thread list loops back on itself: each thread is shown once)\n",
		      f);
	return written(o, f);
}

static bool cut_any(const struct dump_cuts *c)
{
	return c->why || c->threads || c->frames || c->locals || c->tasks || c->sources ||
	       c->thread_list || c->task_lists;
}

/* "N things" (or "1 thing") after the separator *sep, if n; the next separator is a comma. */
static void cut_count(FILE *f, const char **sep, size_t n, const char *things)
{
	if (!n)
		return;
	fprintf(f, "%s%zu %.*s", *sep, n, (int)strlen(things) - (n == 1), things);
	*sep = ", ";
}

/* A clause after what came before: "; " between clauses. */
static void cut_clause(FILE *f, const char **sep, bool on, const char *text)
{
	if (!on)
		return;
	fprintf(f, "%s%s", **sep == '(' ? "" : "; ", text);
	*sep = "; ";
}

/* What the bounds left out of the process, in one closing line (from the reserve). */
static void text_cut(struct dump_out *o, const struct dump_report *rep,
		     const struct dump_process *dp)
{
	const struct dump_cuts *c = &dp->cut;
	const char *sep = "left out: ";
	char why[160], text[200];
	FILE *f;

	if (!cut_any(c))
		return;
	f = dump_out__begin(o, DUMP_EL_CLOSE);
	fputs("\n(", f);
	cut_count(f, &sep, c->threads, "threads");
	cut_count(f, &sep, c->frames, "frames");
	if (c->locals)
		fprintf(f, "%sthe locals of %zu frame%s", sep, c->locals,
			c->locals == 1 ? "" : "s");
	sep = c->locals ? ", " : sep;
	cut_count(f, &sep, c->tasks, "asyncio tasks");
	if (sep[0] == 'l') /* nothing counted */
		sep = "(";
	cut_clause(f, &sep, c->sources, "some source lines were not read");
	snprintf(text, sizeof(text), "threads past the first %d are not listed", DUMP_MAX_TASKS);
	cut_clause(f, &sep, c->threads_over, text);
	cut_clause(f, &sep, c->thread_list, "the Python thread list was not read to its end");
	cut_clause(f, &sep, c->task_lists, "the asyncio task lists were not read to their end");
	dump_cut_text(&rep->limits, c->why, why, sizeof(why));
	snprintf(text, sizeof(text), "cut short by %s", why);
	cut_clause(f, &sep, c->why, text);
	fputs(")\n", f);
	written(o, f);
}

static bool text_process(struct dump_out *o, const struct dump_report *rep, struct dump_process *dp,
			 bool first)
{
	size_t j;

	if (!text_head(o, dp, first))
		return false;
	for (j = 0; j < dp->nthreads; j++)
		text_thread_frames(o, rep, dp, &dp->threads[j]);
	if (rep->async)
		dump_tasks_text(o, dp);
	text_cut(o, rep, dp);
	return true;
}

static void json_opt_string(FILE *f, const char *s)
{
	if (s)
		json_string(f, s);
	else
		fputs("null", f);
}

/* inspect.Parameter's kind of an argument, lower case; NULL for another local. */
static const char *param_key(uint8_t param)
{
	static const char *const keys[] = {
		NULL,		"positional_only", "positional_or_keyword",
		"keyword_only", "var_positional",  "var_keyword"
	};

	return param < sizeof(keys) / sizeof(keys[0]) ? keys[param] : NULL;
}

/* A lock's state: {"locked", "owner_tid", "owner_name", "count"} (an RLock's owner). */
static void json_lock(FILE *f, const struct dump_local *l, const struct dump_thread *threads,
		      size_t nthreads)
{
	const struct dump_thread *owner = NULL;
	size_t i;

	fprintf(f, ", \"lock\": {\"kind\": \"%s\", \"locked\": %s",
		l->info.lock == 2 ? "RLock" : "lock", l->info.locked ? "true" : "false");
	if (l->info.lock != 2) {
		fputc('}', f);
		return;
	}
	for (i = 0; l->info.owner && i < nthreads; i++)
		if (threads[i].python && threads[i].ident == l->info.owner)
			owner = &threads[i];
	fprintf(f, ", \"owner_ident\": %" PRIu64 ", \"owner_tid\": ", l->info.owner);
	if (owner && owner->tid > 0)
		fprintf(f, "%d", (int)owner->tid);
	else
		fputs("null", f);
	fputs(", \"owner_name\": ", f);
	json_opt_string(f, owner && owner->pyname[0] ? owner->pyname : NULL);
	fprintf(f, ", \"count\": %" PRIu64 "}", l->info.count);
}

static void json_locals(FILE *f, const struct dump_frame *df, const struct dump_thread *threads,
			size_t nthreads)
{
	size_t i;

	fputs(", \"locals\": [", f);
	for (i = 0; i < df->nlocals; i++) {
		const struct dump_local *l = &df->locals[i];

		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		json_string(f, l->name);
		fputs(", \"type\": ", f);
		json_opt_string(f, l->unbound ? NULL : l->type);
		fputs(", \"value\": ", f);
		json_opt_string(f, l->value);
		fprintf(f, ", \"unbound\": %s, \"unreadable\": %s, \"argument\": ",
			l->unbound ? "true" : "false", l->unreadable ? "true" : "false");
		json_opt_string(f, param_key(l->param));
		if (l->info.lock)
			json_lock(f, l, threads, nthreads);
		fputc('}', f);
	}
	fprintf(f, "], \"locals_total\": %zu, \"locals_unbound_hidden\": %zu, \"locals_error\": ",
		df->total_locals, df->unbound_hidden);
	json_opt_string(f, df->locals_err ? strerror(-df->locals_err) : NULL);
	fprintf(f, ", \"locals_cut\": %s", df->locals_cut ? "true" : "false");
}

static void json_frame(FILE *f, const struct dump_frame *df, bool locals,
		       const struct dump_process *dp, bool kinds)
{
	fputs(kinds ? "{\"kind\": \"python\", \"function\": " : "{\"function\": ", f);
	json_opt_string(f, df->func);
	fputs(", \"file\": ", f);
	json_opt_string(f, df->file);
	fputs(", \"line\": ", f);
	if (df->line > 0)
		fprintf(f, "%d", df->line);
	else
		fputs("null", f);
	fputs(", \"source\": ", f);
	json_opt_string(f, df->source);
	if (locals)
		json_locals(f, df, dp->threads, dp->nthreads);
	fputc('}', f);
}

/* A thread's fields, up to its frames' opening bracket. */
static void json_thread(FILE *f, const struct dump_thread *t)
{
	char sc[160];

	syscall_text(t, sc, sizeof(sc));
	fprintf(f, "{\"tid\": %d, \"name\": ", (int)t->tid);
	json_string(f, t->name);
	fputs(", \"python_name\": ", f);
	json_opt_string(f, t->pyname[0] ? t->pyname : NULL);
	fprintf(f,
		", \"state\": \"%s\", \"kernel_state\": \"%c\", \"syscall\": ", dump_state_name(t),
		t->state > ' ' && t->state < 0x7f ? t->state : '?');
	if (t->syscall >= 0) {
		fprintf(f, "{\"nr\": %ld, \"name\": ", t->syscall);
		json_opt_string(f, dump_syscall_name(t->syscall));
		fputs(", \"text\": ", f);
		json_string(f, sc);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	if (t->syscall == 202)
		fprintf(f, ", \"futex\": \"%#lx\"", t->args[0]);
	else
		fputs(", \"futex\": null", f);
	fputs(", \"wchan\": ", f);
	json_opt_string(f, t->wchan[0] ? t->wchan : NULL);
	fprintf(f, ", \"python\": %s, \"gil\": \"%s\", \"gc\": %s, \"moving\": %s, ",
		t->python ? "true" : "false", dump_gil_name(t->gil),
		t->gc < 0 ? "null" :
		t->gc	  ? "true" :
			    "false",
		t->moving ? "true" : "false");
	fprintf(f, "\"truncated\": %s, \"frames\": [", t->truncated ? "true" : "false");
}

/* The native frames of t before its Python frame k, from *kn on; *sep: a comma first. */
static void json_natives(FILE *f, const struct dump_thread *t, size_t k, size_t *kn, bool *sep)
{
	for (; *kn < t->nnative && t->native[*kn].at <= k; (*kn)++) {
		if (t->native[*kn].at < k)
			continue;
		fputs(*sep ? ", {\"kind\": \"native\", \"function\": " :
			     "{\"kind\": \"native\", \"function\": ",
		      f);
		json_string(f, t->native[*kn].name);
		fputs(", \"file\": ", f);
		json_opt_string(f, t->native[*kn].file[0] ? t->native[*kn].file : NULL);
		fprintf(f, ", \"address\": \"0x%" PRIx64 "\"}", t->native[*kn].pc);
		*sep = true;
	}
}

/* With --native, how the thread's native frames were read. */
static void json_native(FILE *f, const struct dump_thread *t)
{
	const char *note = native_note(t);

	fputs(", \"native\": {\"status\": ", f);
	json_opt_string(f, dump_native_key(t->native_status));
	fputs(", \"note\": ", f);
	json_opt_string(f, note					  ? note :
			   t->native_status == DUMP_NATIVE_UNREAD ? strerror(-t->native_err) :
								    NULL);
	fprintf(f, ", \"frames\": %zu}", t->nnative);
}

/* One thread and its frames, as far as they fit; *shown: threads written before. */
static void json_thread_frames(struct dump_out *o, const struct dump_report *rep,
			       struct dump_process *dp, const struct dump_thread *t, size_t *shown)
{
	FILE *f = dump_out__begin(o, DUMP_EL_ITEM);
	size_t k = 0, kn = 0;
	bool sep = false;

	if (f) {
		fputs(*shown ? ", " : "", f);
		json_thread(f, t);
	}
	if (!written(o, f)) {
		dp->cut.threads++;
	} else {
		(*shown)++;
		for (k = 0; k <= t->nframes; k++) {
			size_t from = kn;
			bool was = sep;

			f = dump_out__begin(o, DUMP_EL_ITEM);
			if (f)
				json_natives(f, t, k, &kn, &sep);
			if (f && k < t->nframes) {
				fputs(sep ? ", " : "", f);
				json_frame(f, &t->frames[k], rep->locals, dp, rep->native);
				sep = true;
			}
			if (!written(o, f)) {
				kn = from;
				sep = was;
				break;
			}
			dp->cut.locals += k < t->nframes && t->frames[k].locals_cut;
		}
		k = k > t->nframes ? t->nframes : k;
		f = dump_out__begin(o, DUMP_EL_CLOSE);
		fprintf(f, "], \"frames_not_shown\": %zu",
			t->nframes - k + t->frames_cut + natives_left(t, kn));
		if (rep->native)
			json_native(f, t);
		fputc('}', f);
		written(o, f);
	}
	k = k > t->nframes ? t->nframes : k;
	dp->cut.frames += t->nframes - k + t->frames_cut + natives_left(t, kn);
}

static bool json_head(struct dump_out *o, const struct dump_process *dp, bool first)
{
	FILE *f = dump_out__begin(o, DUMP_EL_ITEM);

	if (!f)
		return false;
	fprintf(f, "%s{\"pid\": %d, \"python\": \"%s\", \"exe\": ", first ? "" : ", ", (int)dp->pid,
		dp->version);
	json_string(f, dp->exe);
	fputs(", \"cmdline\": ", f);
	json_string(f, dp->cmdline);
	fprintf(f,
		", \"python_threads_left_out\": %s, \"thread_list_loops\": %s, \"read_ms\": %.1f, "
		"\"threads\": [",
		dp->threads_left_out ? "true" : "false", dp->thread_list_loops ? "true" : "false",
		dp->read_ns / 1e6);
	return written(o, f);
}

static void json_cut(struct dump_out *o, const struct dump_process *dp)
{
	const struct dump_cuts *c = &dp->cut;
	FILE *f = dump_out__begin(o, DUMP_EL_CLOSE);
	const char *key = dump_cut_key(c->why);

	fputs(", \"cut\": {\"reason\": ", f);
	json_opt_string(f, key);
	fprintf(f,
		", \"threads\": %zu, \"threads_over_limit\": %zu, \"frames\": %zu, "
		"\"locals\": %zu, \"tasks\": %zu, \"sources\": %s, \"thread_list_unfinished\": %s, "
		"\"task_lists_unfinished\": %s}}",
		c->threads, c->threads_over, c->frames, c->locals, c->tasks,
		c->sources ? "true" : "false", c->thread_list ? "true" : "false",
		c->task_lists ? "true" : "false");
	written(o, f);
}

static bool json_process(struct dump_out *o, const struct dump_report *rep, struct dump_process *dp,
			 bool first)
{
	size_t j, shown = 0;
	FILE *f;

	if (!json_head(o, dp, first))
		return false;
	for (j = 0; j < dp->nthreads; j++)
		json_thread_frames(o, rep, dp, &dp->threads[j], &shown);
	f = dump_out__begin(o, DUMP_EL_CLOSE);
	fputc(']', f);
	written(o, f);
	if (rep->async)
		dump_tasks_json(o, dp);
	json_cut(o, dp);
	return true;
}

bool dump_write_process(struct dump_out *o, const struct dump_report *rep, struct dump_process *dp,
			bool first)
{
	bool shown = rep->json ? json_process(o, rep, dp, first) : text_process(o, rep, dp, first);

	/* what filled the output: this process's bound, or what the dump had left */
	if (o->full && !dp->cut.why)
		dp->cut.why = o->proc_by_dump ? DUMP_CUT_DUMP_BYTES : DUMP_CUT_BYTES;
	return shown;
}
