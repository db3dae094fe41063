// SPDX-License-Identifier: GPL-2.0-only
/*
 * Source lines for the reports, read through the target's own root
 * (/proc/PID/root) with its own rights (proc/source.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/hashmap.h"
#include "util/log.h"
#include "util/mono.h"
#include "util/text.h"
#include "report/report_source.h"
#include "proc/source.h"

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
		spent = k ? sources_also(pp->root_fd, &s->creds[k], s, left) :
			    source_read(pp->root_fd, &s->creds[k], s->files, s->nfiles, left);
		if (spent > 0) {
			left -= spent;
			sources_budget_ms -= spent;
		}
	}
	if (k < s->ncreds) /* no time left to check the others' rights: show nothing */
		s->load_err = -SOURCE_ETIMEDOUT;
	pr_info("pid %d: %zu source files read in %.1f ms with %zu set%s of credentials\n", pp->pid,
		s->nfiles, (mono_ns() - start) / 1e6, s->ncreds, s->ncreds == 1 ? "" : "s");
	return s;
}

const struct proc_sources *report_sources(const struct profile *p, const struct profile_target *pp)
{
	return sources_of(p, pp);
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
	while (lo < hi) { /* by name */
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
		text_clean(texts + k * width, width, t); /* a saved profile's may hold anything */
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
