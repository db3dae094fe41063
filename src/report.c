// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writer registry and the helpers writers share: percentages, estimated
 * seconds, JSON strings, and source lines read through the target's own root
 * (/proc/PID/root) without following links out of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "report.h"
#include "text.h"

static const struct report_writer *writers[] = {
	&report_text, &report_json, &report_folded, &report_flame,
	&report_speedscope, &report_pstats, &report_pprof,
};
#define NWRITERS (sizeof(writers) / sizeof(writers[0]))

const struct report_writer *report_find(const char *name)
{
	size_t i;

	for (i = 0; i < NWRITERS; i++)
		if (!strcmp(writers[i]->name, name))
			return writers[i];
	return NULL;
}

const struct report_writer *report_for_path(const char *path)
{
	const struct report_writer *best = NULL;
	size_t i, j, n = path ? strlen(path) : 0, best_len = 0;

	for (i = 0; i < NWRITERS; i++)
		for (j = 0; j < 3 && writers[i]->exts[j]; j++) {
			size_t e = strlen(writers[i]->exts[j]);

			if (e < n && e > best_len && !strcmp(path + n - e, writers[i]->exts[j])) {
				best = writers[i];
				best_len = e;
			}
		}
	return best;
}

const char *report_names(void)
{
	return "text, json, folded, flamegraph, speedscope, pstats, pprof";
}

int report_check_writable(const char *path, char *why, size_t whylen)
{
	char *copy, *dir;
	struct stat st;
	int err = 0;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			err = -EISDIR;
		else if (access(path, W_OK))
			err = -errno;
	} else if (errno != ENOENT) {
		err = -errno;
	} else {
		copy = strdup(path);
		if (!copy)
			return -ENOMEM;
		dir = dirname(copy);
		if (access(dir, W_OK | X_OK))
			err = -errno;
		free(copy);
	}
	if (err)
		snprintf(why, whylen, "cannot write the output file %s: %s", path, strerror(-err));
	return err;
}

/*
 * Names, paths and command lines in the profile are the target's, escape
 * sequences included: a plain-text report is built in memory and made safe
 * to print before it reaches the terminal or the file.
 */
static int write_plain_text(const struct report_writer *w, FILE *f, const struct profile *p,
			    const struct report_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int err;

	if (!mem)
		return -errno;
	err = w->write(mem, p, o);
	if (fclose(mem) && !err)
		err = -errno;
	if (!err) {
		text_sanitize_lines(text);
		if (fputs(text, f) == EOF)
			err = -EIO;
	}
	free(text);
	return err;
}

int report_write(const struct report_writer *w, const char *path, const struct profile *p,
		 const struct report_opts *o)
{
	FILE *f = stdout;
	int err;

	if (path && strcmp(path, "-")) {
		f = fopen(path, "we");
		if (!f)
			return -errno;
	}
	err = w->plain_text ? write_plain_text(w, f, p, o) : w->write(f, p, o);
	if (fflush(f) && !err)
		err = -errno;
	if (f != stdout && fclose(f) && !err)
		err = -errno;
	return err;
}

double report_seconds(const struct profile *p, uint64_t samples)
{
	return p->frequency_hz ? (double)samples / p->frequency_hz : 0.0;
}

double report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

const char *report_line_str(int line, char *buf, size_t len)
{
	if (line < 1)
		return "?";
	snprintf(buf, len, "%d", line);
	return buf;
}

/*
 * Opens file as a process with root directory root_fd sees it, staying inside
 * that root, or as a host path when root_fd is -1. The fd, or -errno.
 */
static int open_source(int root_fd, const char *file)
{
	/*
	 * The name comes from the target (co_filename can be anything): never
	 * block on a FIFO or device at open, and read regular files only, so
	 * /dev/zero or a pipe cannot hang the report.
	 */
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
				.resolve = RESOLVE_IN_ROOT };
	int fd = root_fd >= 0 ? syscall(SYS_openat2, root_fd, file, &how, sizeof(how))
			      : open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Source read per file, in 4 KiB chunks: 64 MiB, far beyond any real source file. */
#define SOURCE_MAX_CHUNKS 16384

/* Copies the trimmed text of one line into out (width bytes). */
static void trim_into(const char *text, char *out, size_t width)
{
	const char *start = text + strspn(text, " \t");
	size_t n = strcspn(start, "\r\n");

	while (n && start[n - 1] == ' ')
		n--;
	snprintf(out, width, "%.*s", (int)n, start);
}

int report_source_lines(int root_fd, const char *file, const int *lines, size_t n, char *texts,
			size_t width, bool *found)
{
	char chunk[4096];
	size_t i = 0, k, nfound = 0, chunks = 0;
	bool at_start = true;
	int fd, cur = 1;
	FILE *f;

	for (k = 0; k < n; k++) {
		texts[k * width] = '\0';
		if (found)
			found[k] = false;
	}
	if (file[0] != '/' || !width)
		return -ENOENT;
	fd = open_source(root_fd, file);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	while (i < n && lines[i] <= 0)
		i++;
	/*
	 * Fixed-size chunks: a huge line (minified code) costs no memory, only its
	 * start is kept; and no more than SOURCE_MAX_CHUNKS of them per file.
	 */
	while (i < n && chunks++ < SOURCE_MAX_CHUNKS && fgets(chunk, sizeof(chunk), f)) {
		bool ends = strchr(chunk, '\n') != NULL;

		if (at_start && cur == lines[i]) {
			for (k = i; k < n && lines[k] == cur; k++) {
				trim_into(chunk, texts + k * width, width);
				if (found)
					found[k] = true;
				nfound++;
			}
			i = k;
		}
		at_start = ends;
		if (ends)
			cur++;
	}
	fclose(f);
	return nfound;
}

int report_source_line(int root_fd, const char *file, int line, char *buf, size_t len)
{
	int n = report_source_lines(root_fd, file, &line, 1, buf, len, NULL);

	return n < 0 ? n : n ? 0 : -ENOENT;
}

void report_frame_source(const struct profile *p, const struct profile_proc *pp, uint32_t frame,
			 char *src, size_t len)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];

	if (report_source_line(pp->root_fd, fn->file, fr->line, src, len))
		snprintf(src, len, "%s", fn->unresolved ? "" : "(source not available)");
}

int report_source_changed(int root_fd, const char *file, double start_time)
{
	struct stat st;
	int fd, err = 0;

	if (file[0] != '/')
		return -ENOENT;
	fd = open_source(root_fd, file);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st))
		err = -errno;
	close(fd);
	if (err || start_time <= 0)
		return err;
	/*
	 * A second of slack: the start time comes from the boot time in whole
	 * seconds, so it may be up to a second early, and a file written just
	 * before the program started must not be flagged.
	 */
	return (double)st.st_mtim.tv_sec > start_time + 1 ? 1 : 0;
}

/* A frame of a folded line holds no ';' (the separator) and no line break. */
static char *folded_frame(char *buf)
{
	char *c;

	for (c = buf; *c; c++)
		if (*c == ';' || (unsigned char)*c < 0x20)
			*c = *c == ';' ? ':' : ' ';
	return buf;
}

char *report_frame_label(const struct profile *p, uint32_t frame, char *buf, size_t len)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];

	if (fn->unresolved || !fn->file[0])
		snprintf(buf, len, "%s", fn->qualname);
	else if (fr->line > 0)
		snprintf(buf, len, "%s (%s:%d)", fn->qualname, fn->file, fr->line);
	else
		snprintf(buf, len, "%s (%s)", fn->qualname, fn->file);
	return folded_frame(buf);
}

struct report_totals report_totals(const struct profile *p)
{
	struct report_totals t = { 0 };
	size_t i;

	for (i = 0; i < p->nprocs; i++) {
		t.samples += p->procs[i].samples;
		t.truncated += p->procs[i].truncated;
		t.partial += p->procs[i].partial;
		t.unresolved += p->procs[i].unresolved;
	}
	return t;
}

char *report_counts(const struct profile *p, char *buf, size_t len)
{
	struct report_totals t = report_totals(p);

	snprintf(buf, len, "%llu samples (%llu dropped, %llu truncated, %llu unresolved, "
		 "%llu partial)", (unsigned long long)t.samples,
		 (unsigned long long)p->counts.dropped, (unsigned long long)t.truncated,
		 (unsigned long long)t.unresolved, (unsigned long long)t.partial);
	return buf;
}

char *report_proc_label(const struct profile_proc *pp, char *buf, size_t len)
{
	snprintf(buf, len, "pid %d (%s)", pp->pid, pp->comm);
	return folded_frame(buf);
}

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	/*
	 * Control characters (C0, DEL, C1) are escaped, so that printing the
	 * file on a terminal is safe; bytes that are not UTF-8 become U+FFFD,
	 * so the file stays valid JSON whatever the target's strings hold.
	 */
	fputc('"', f);
	for (; *p; p += n) {
		n = 1;
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
			continue;
		}
		if (*p == '\n' || *p == '\t') {
			fputs(*p == '\n' ? "\\n" : "\\t", f);
			continue;
		}
		switch (text_next(p, &n)) {
		case TEXT_PRINTABLE:
			fwrite(p, 1, n, f);
			break;
		case TEXT_CONTROL:	/* C0 and DEL are one byte, C1 is 0xC2 then its code */
			fprintf(f, "\\u%04x", p[n - 1]);
			break;
		case TEXT_INVALID:
			fputs("\\ufffd", f);
			break;
		}
	}
	fputc('"', f);
}
