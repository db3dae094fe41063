// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump's output: the source lines of the frames (read with the
 * target's rights, proc/source.c), then text or JSON. Text goes through
 * text_sanitize (the target's names, paths, source and values may hold
 * anything); JSON escapes them.
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
#include "proc/source.h"
#include "util/text.h"

#define DUMP_SOURCE_MS 2000
#define DUMP_FILES_MAX 256

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

static void text_locals(FILE *f, const struct dump_frame *df)
{
	size_t i;

	if (df->locals_err) {
		fprintf(f, "        locals: unreadable (%s)\n", strerror(-df->locals_err));
		return;
	}
	for (i = 0; i < df->nlocals; i++) {
		fputs("        ", f);
		text_put_clean(f, df->locals[i].name);
		fputs(" = ", f);
		text_put_clean(f, df->locals[i].value);
		fputc('\n', f);
	}
	if (df->total_locals > df->nlocals)
		fprintf(f, "        ... %zu more locals\n", df->total_locals - df->nlocals);
}

static void text_thread(FILE *f, const struct dump_thread *t, bool locals)
{
	char sc[160];
	size_t i;

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
	for (i = 0; i < t->nframes; i++) {
		const struct dump_frame *df = &t->frames[i];

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
}

int dump_write_text(FILE *f, void *report)
{
	const struct dump_report *rep = report;
	size_t i, j;

	for (i = 0; i < rep->nprocs; i++) {
		const struct dump_process *dp = &rep->procs[i];

		fprintf(f, "%sProcess %d: ", i ? "\n" : "", (int)dp->pid);
		text_put_clean(f, dp->cmdline);
		fprintf(f, "\nPython %s (", dp->version);
		text_put_clean(f, dp->exe);
		fprintf(f, "), %zu threads\n", dp->nthreads);
		if (dp->threads_left_out)
			fprintf(f, "(only the first %d Python threads were read)\n",
				PY_DUMP_THREADS);
		for (j = 0; j < dp->nthreads; j++)
			text_thread(f, &dp->threads[j], rep->locals);
		if (rep->async)
			dump_tasks_text(f, dp);
	}
	return ferror(f) ? -EIO : 0;
}

static void json_opt_string(FILE *f, const char *s)
{
	if (s)
		json_string(f, s);
	else
		fputs("null", f);
}

static void json_frame(FILE *f, const struct dump_frame *df, bool locals)
{
	size_t i;

	fputs("{\"function\": ", f);
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
	if (locals) {
		fputs(", \"locals\": [", f);
		for (i = 0; i < df->nlocals; i++) {
			const struct dump_local *l = &df->locals[i];

			fprintf(f, "%s{\"name\": ", i ? ", " : "");
			json_string(f, l->name);
			fputs(", \"type\": ", f);
			json_opt_string(f, l->unbound ? NULL : l->type);
			fputs(", \"value\": ", f);
			json_opt_string(f, l->value);
			fprintf(f, ", \"unbound\": %s, \"unreadable\": %s}",
				l->unbound ? "true" : "false", l->unreadable ? "true" : "false");
		}
		fprintf(f, "], \"locals_total\": %zu, \"locals_error\": ", df->total_locals);
		json_opt_string(f, df->locals_err ? strerror(-df->locals_err) : NULL);
	}
	fputc('}', f);
}

static void json_thread(FILE *f, const struct dump_thread *t, bool locals)
{
	char sc[160];
	size_t i;

	syscall_text(t, sc, sizeof(sc));
	fprintf(f, "{\"tid\": %d, \"name\": ", (int)t->tid);
	json_string(f, t->name);
	fputs(", \"python_name\": ", f);
	json_opt_string(f, t->pyname[0] ? t->pyname : NULL);
	fprintf(f,
		", \"state\": \"%s\", \"kernel_state\": \"%c\", \"syscall\": ", dump_state_name(t),
		t->state > ' ' && t->state < 0x7f ? t->state : '?');
	if (t->syscall >= 0)
		fprintf(f, "{\"nr\": %ld, \"name\": ", t->syscall);
	if (t->syscall >= 0)
		json_opt_string(f, dump_syscall_name(t->syscall));
	if (t->syscall >= 0)
		fputs(", \"text\": ", f);
	json_opt_string(f, t->syscall >= 0 ? sc : NULL);
	if (t->syscall >= 0)
		fputc('}', f);
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
	for (i = 0; i < t->nframes; i++) {
		fputs(i ? ", " : "", f);
		json_frame(f, &t->frames[i], locals);
	}
	fputs("]}", f);
}

int dump_write_json(FILE *f, void *report)
{
	const struct dump_report *rep = report;
	size_t i, j;

	fputs("{\"processes\": [", f);
	for (i = 0; i < rep->nprocs; i++) {
		const struct dump_process *dp = &rep->procs[i];

		fprintf(f, "%s{\"pid\": %d, \"python\": \"%s\", \"exe\": ", i ? ", " : "",
			(int)dp->pid, dp->version);
		json_string(f, dp->exe);
		fputs(", \"cmdline\": ", f);
		json_string(f, dp->cmdline);
		fprintf(f, ", \"python_threads_left_out\": %s, \"threads\": [",
			dp->threads_left_out ? "true" : "false");
		for (j = 0; j < dp->nthreads; j++) {
			fputs(j ? ", " : "", f);
			json_thread(f, &dp->threads[j], rep->locals);
		}
		fputc(']', f);
		if (rep->async)
			dump_tasks_json(f, dp);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The files and lines to read: each file once, its lines ascending and unique. */
static size_t source_requests(struct dump_process *dp, struct source_file *files, int **lines,
			      bool relative)
{
	size_t nf = 0, i, j, k;

	for (i = 0; i < dp->nthreads; i++)
		for (j = 0; j < dp->threads[i].nframes; j++) {
			const struct dump_frame *df = &dp->threads[i].frames[j];
			int *l;

			if (!df->file || !df->file[0] || (df->file[0] != '/') != relative ||
			    df->line <= 0)
				continue;
			for (k = 0; k < nf && strcmp(files[k].name, df->file); k++)
				;
			if (k == nf && nf == DUMP_FILES_MAX)
				continue;
			if (k == nf) {
				files[nf].name = df->file;
				lines[nf++] = NULL;
			}
			l = realloc(lines[k], (files[k].nlines + 1) * sizeof(int));
			if (!l)
				continue;
			lines[k] = l;
			l[files[k].nlines++] = df->line;
		}
	for (k = 0; k < nf; k++) {
		qsort(lines[k], files[k].nlines, sizeof(int), cmp_int);
		for (i = j = 0; i < files[k].nlines; i++)
			if (!j || lines[k][j - 1] != lines[k][i])
				lines[k][j++] = lines[k][i];
		files[k].nlines = j;
		files[k].lines = lines[k];
	}
	return nf;
}

/* Gives each frame the text of its line from what was read. */
static void source_attach(struct dump_process *dp, struct source_file *files, size_t nf)
{
	size_t i, j, k, m;

	for (i = 0; i < dp->nthreads; i++)
		for (j = 0; j < dp->threads[i].nframes; j++) {
			struct dump_frame *df = &dp->threads[i].frames[j];
			const char *s;

			for (k = 0; k < nf && (!df->file || strcmp(files[k].name, df->file)); k++)
				;
			if (k == nf || files[k].err || !files[k].texts)
				continue;
			for (m = 0; m < files[k].nlines && files[k].lines[m] != df->line; m++)
				;
			if (m == files[k].nlines || !files[k].texts[m])
				continue;
			for (s = files[k].texts[m]; *s == ' ' || *s == '\t'; s++)
				;
			df->source = strdup(s);
		}
}

/*
 * The files named from dir: absolute names inside the process's root,
 * relative ones (a 3.8 __main__ started as "python3 app.py") inside its
 * current directory, which is where it found them if it has not moved since.
 */
static void read_from(pid_t pid, const char *dir, bool relative, int status_fd,
		      struct dump_process *dp)
{
	struct source_file files[DUMP_FILES_MAX] = { 0 };
	int *lines[DUMP_FILES_MAX] = { 0 };
	struct source_creds creds = { 0 };
	char path[64];
	int dir_fd;
	size_t nf, k;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, dir);
	dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	nf = source_requests(dp, files, lines, relative);
	/* with the process's own rights, or not at all */
	if (nf && status_fd >= 0 && dir_fd >= 0 && !source_creds__read(status_fd, &creds)) {
		source_read(dir_fd, &creds, files, nf, DUMP_SOURCE_MS);
		source_attach(dp, files, nf);
		source_creds__free(&creds);
	}
	source_files_free(files, nf);
	for (k = 0; k < nf; k++)
		free(lines[k]);
	if (dir_fd >= 0)
		close(dir_fd);
}

void dump_read_sources(pid_t pid, struct dump_process *dp)
{
	char path[64];
	int status_fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status_fd = open(path, O_RDONLY | O_CLOEXEC);
	read_from(pid, "root", false, status_fd, dp);
	read_from(pid, "cwd", true, status_fd, dp);
	if (status_fd >= 0)
		close(status_fd);
}

void dump_report_free(struct dump_report *rep)
{
	size_t i, j, k, m;

	for (i = 0; i < rep->nprocs; i++) {
		struct dump_process *dp = &rep->procs[i];

		for (j = 0; j < dp->nthreads; j++) {
			struct dump_thread *t = &dp->threads[j];

			for (k = 0; k < t->nframes; k++) {
				struct dump_frame *df = &t->frames[k];

				for (m = 0; m < df->nlocals; m++)
					free(df->locals[m].value);
				free(df->locals);
				free(df->func);
				free(df->file);
				free(df->source);
			}
			free(t->frames);
		}
		free(dp->threads);
		dump_tasks_free(dp);
	}
	free(rep->procs);
}
