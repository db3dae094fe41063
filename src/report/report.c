// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writer registry and the helpers writers share: percentages, estimated
 * seconds, JSON strings, and source lines read through the target's own root
 * (/proc/PID/root), with its own rights (source.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/outfile.h"
#include "util/log.h"
#include "util/mono.h"
#include "report/report.h"
#include "target/source.h"
#include "util/text.h"

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

struct report_fill {
	const struct report_writer *w;
	const struct profile *p;
	const struct report_opts *o;
};

static int fill_report(FILE *f, void *arg)
{
	const struct report_fill *a = arg;

	return a->w->plain_text ? write_plain_text(a->w, f, a->p, a->o) : a->w->write(f, a->p, a->o);
}

int report_write(const struct report_writer *w, struct outfile *of, const struct profile *p,
		 const struct report_opts *o, char *why, size_t whylen)
{
	struct report_fill a = { w, p, o };
	int err;

	if (of)
		return outfile__write(of, fill_report, &a, why, whylen);
	err = fill_report(stdout, &a);
	if (fflush(stdout) && !err)
		err = -errno;
	if (err)
		snprintf(why, whylen, "%s", strerror(-err));
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
 * Sources: every file of a process's frames is read at the first need, in
 * one helper with the process's rights (source.c); the reports then look
 * lines up. Each process has SOURCES_PROC_MS, and all of them together
 * SOURCES_TOTAL_MS: many hostile processes cannot hold a report for long.
 */
#define SOURCES_PROC_MS 2000
#define SOURCES_TOTAL_MS 10000

static long long sources_budget_ms = SOURCES_TOTAL_MS;

struct src_entry {
	const char *file;
	int line;
	uint64_t weight;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct src_entry *x = a, *y = b;
	int c = strcmp(x->file, y->file);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

struct src_order {
	size_t index;
	uint64_t weight;
};

static int cmp_order(const void *a, const void *b)
{
	const struct src_order *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Adds count (at least 1) to each frame's weight: frame id -> weight. */
static int add_weights(struct hashmap *w, const uint32_t *frames, uint32_t n, uint64_t count)
{
	uint32_t j;

	for (j = 0; j < n; j++) {
		uint64_t *slot = hashmap__find(w, frames[j]);

		if (slot)
			*slot += count ? count : 1;
		else if (hashmap__set(w, frames[j], count ? count : 1))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The files of pp's frames (CPU and memory stacks) with their lines, the
 * most sampled files first (if time runs out, the cold ones go unread).
 * Costs the process's own stacks, not the whole profile's frames.
 */
static int sources_plan(const struct profile *p, const struct profile_target *pp,
			struct proc_sources *s)
{
	struct hashmap w;
	struct src_entry *e = NULL;
	struct src_order *order = NULL;
	struct source_file *byname = NULL;
	size_t i, j, n = 0, nfiles = 0, nlines = 0;
	int err = -ENOMEM;

	hashmap__init(&w);
	for (i = 0; i < pp->nstacks; i++)
		if (add_weights(&w, pp->stacks[i].frames, pp->stacks[i].nframes,
				pp->stacks[i].count))
			goto out;
	for (i = 0; i < pp->mem.nstacks; i++)
		if (add_weights(&w, pp->mem.stacks[i].frames, pp->mem.stacks[i].nframes, 1))
			goto out;
	e = calloc(w.len + 1, sizeof(*e));
	if (!e)
		goto out;
	for (i = 0; i < w.cap; i++) {
		const struct profile_func *fn;

		if (!w.used[i] || w.keys[i] >= p->nframes)
			continue;
		fn = &p->funcs[p->frames[w.keys[i]].func];
		if (fn->unresolved || fn->file[0] != '/')
			continue;
		e[n++] = (struct src_entry){ fn->file, p->frames[w.keys[i]].line, w.vals[i] };
	}
	if (n)
		qsort(e, n, sizeof(*e), cmp_entry);
	for (i = 0; i < n; i++) {
		nfiles += !i || strcmp(e[i].file, e[i - 1].file);
		nlines += e[i].line > 0 && (!i || cmp_entry(&e[i], &e[i - 1]));
	}
	byname = calloc(nfiles + 1, sizeof(*byname));
	order = calloc(nfiles + 1, sizeof(*order));
	s->files = calloc(nfiles + 1, sizeof(*s->files));
	s->byname = calloc(nfiles + 1, sizeof(*s->byname));
	s->lines = calloc(nlines + 1, sizeof(*s->lines));
	if (!byname || !order || !s->files || !s->byname || !s->lines)
		goto out;
	/* one entry per file, by name; its lines ascending, once each */
	for (i = 0, j = 0, nfiles = 0, nlines = 0; i < n; i = j) {
		struct source_file *f = &byname[nfiles];

		f->name = e[i].file;
		f->lines = s->lines + nlines;
		order[nfiles] = (struct src_order){ .index = nfiles };
		for (j = i; j < n && !strcmp(e[j].file, e[i].file); j++) {
			order[nfiles].weight += e[j].weight;
			if (e[j].line > 0 && (j == i || e[j].line != e[j - 1].line))
				s->lines[nlines++] = e[j].line;
		}
		f->nlines = s->lines + nlines - f->lines;
		nfiles++;
	}
	if (nfiles)
		qsort(order, nfiles, sizeof(*order), cmp_order);
	for (i = 0; i < nfiles; i++) {
		s->files[i] = byname[order[i].index];
		s->byname[order[i].index] = i;
	}
	s->nfiles = nfiles;
	err = 0;
out:
	hashmap__free(&w);
	free(e);
	free(order);
	free(byname);
	return err;
}

/*
 * With the rights of one more set of credentials: a file stays readable only
 * if these may read it too (the texts are the first reader's).
 */
static int sources_also(int root_fd, const struct source_creds *c, struct proc_sources *s,
			long long timeout)
{
	struct source_file *again = calloc(s->nfiles, sizeof(*again));
	size_t i;
	int spent;

	if (!again)
		return -ENOMEM;
	for (i = 0; i < s->nfiles; i++) {
		again[i].name = s->files[i].name;
		again[i].lines = s->files[i].lines;
		again[i].nlines = s->files[i].nlines;
	}
	spent = source_read(root_fd, c, again, s->nfiles, timeout);
	for (i = 0; i < s->nfiles; i++)
		if (!s->files[i].err && again[i].err) {
			source_files_free(&s->files[i], 1);
			s->files[i].err = again[i].err;
		}
	source_files_free(again, s->nfiles);
	free(again);
	return spent;
}

/* Reads pp's sources, once. Their errors are the files' own. */
static struct proc_sources *sources_of(const struct profile *p, const struct profile_target *pp)
{
	struct proc_sources *s = pp->sources;
	long long left = SOURCES_PROC_MS, start = mono_ns();
	size_t k;
	int spent;

	if (!s || s->loaded)
		return s;
	s->loaded = true;
	if (s->load_err)
		return s;
	s->load_err = sources_plan(p, pp, s);
	if (s->load_err || !s->nfiles)
		return s;
	/* its rights at this moment too, if it still runs (else those last seen) */
	proc_sources__look(s);
	if (!s->ncreds)
		s->load_err = -SOURCE_ENOCREDS;
	else if (s->too_many)
		s->load_err = -SOURCE_EMIXED;
	else if (sources_budget_ms <= 0)
		s->load_err = -SOURCE_EBUDGET;
	if (s->load_err)
		return s;
	if (left > sources_budget_ms)
		left = sources_budget_ms;
	for (k = 0; k < s->ncreds && left > 0; k++) {
		spent = k ? sources_also(pp->root_fd, &s->creds[k], s, left)
			  : source_read(pp->root_fd, &s->creds[k], s->files, s->nfiles, left);
		if (spent > 0) {
			left -= spent;
			sources_budget_ms -= spent;
		}
	}
	if (k < s->ncreds)	/* no time left to check the others' rights: show nothing */
		s->load_err = -SOURCE_ETIMEDOUT;
	pr_info("pid %d: %zu source files read in %.1f ms with %zu set%s of credentials\n",
		pp->pid, s->nfiles, (mono_ns() - start) / 1e6, s->ncreds, s->ncreds == 1 ? "" : "s");
	return s;
}

/* The file as read for pp, or NULL with *err why it was not. */
static const struct source_file *source_file_of(const struct profile *p,
						const struct profile_target *pp, const char *file,
						int *err)
{
	const struct proc_sources *s = sources_of(p, pp);
	size_t lo = 0, hi = s ? s->nfiles : 0;

	*err = -ENOENT;
	if (file[0] != '/')
		return NULL;
	if (!s) {
		*err = -SOURCE_ENOCREDS;
		return NULL;
	}
	if (s->load_err) {
		*err = s->load_err;
		return NULL;
	}
	while (lo < hi) {	/* by name */
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(file, s->files[s->byname[mid]].name);

		if (!c) {
			const struct source_file *f = &s->files[s->byname[mid]];

			*err = f->err;
			return f->err ? NULL : f;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* The text of a line of f, or NULL. */
static const char *source_text(const struct source_file *f, int line)
{
	size_t lo = 0, hi = f->nlines;

	while (lo < hi && f->texts) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->lines[mid] == line)
			return f->texts[mid];
		if (f->lines[mid] < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int report_source_lines(const struct profile *p, const struct profile_target *pp, const char *file,
			const int *lines, size_t n, char *texts, size_t width, bool *found)
{
	const struct source_file *f;
	size_t k, nfound = 0;
	int err;

	for (k = 0; k < n; k++) {
		if (width)
			texts[k * width] = '\0';
		if (found)
			found[k] = false;
	}
	f = source_file_of(p, pp, file, &err);
	if (!f)
		return err;
	for (k = 0; k < n && width; k++) {
		const char *t = source_text(f, lines[k]);

		if (!t)
			continue;
		snprintf(texts + k * width, width, "%s", t);
		if (found)
			found[k] = true;
		nfound++;
	}
	return nfound;
}

int report_source_line(const struct profile *p, const struct profile_target *pp, const char *file,
		       int line, char *buf, size_t len)
{
	int n = report_source_lines(p, pp, file, &line, 1, buf, len, NULL);

	return n < 0 ? n : n ? 0 : -ENOENT;
}

void report_frame_source(const struct profile *p, const struct profile_target *pp, uint32_t frame,
			 char *src, size_t len)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];

	if (report_source_line(p, pp, fn->file, fr->line, src, len))
		snprintf(src, len, "%s", fn->unresolved ? "" : "(source not available)");
}

int report_source_changed(const struct profile *p, const struct profile_target *pp,
			  const char *file)
{
	const struct source_file *f;
	int err;

	f = source_file_of(p, pp, file, &err);
	if (!f)
		return err;
	if (pp->start_time <= 0)
		return 0;
	/*
	 * A second of slack: the start time comes from the boot time in whole
	 * seconds, so it may be up to a second early, and a file written just
	 * before the program started must not be flagged.
	 */
	return (double)f->mtime > pp->start_time + 1 ? 1 : 0;
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

	for (i = 0; i < p->ntargets; i++) {
		t.samples += p->targets[i].samples;
		t.truncated += p->targets[i].truncated;
		t.partial += p->targets[i].partial;
		t.unresolved += p->targets[i].unresolved;
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

char *report_proc_label(const struct profile_target *pp, char *buf, size_t len)
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
