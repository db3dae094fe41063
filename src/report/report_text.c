// SPDX-License-Identifier: GPL-2.0-only
/*
 * The default report: a header with the honest counts, then per process the
 * functions by self time, the hottest lines with their source text, and for
 * the hottest functions a line-by-line table like line_profiler's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report/report_source.h"
#include "report_mem.h"
#include "report_procs.h"
#include "report_threads.h"
#include "report_wall.h"
#include "report_signatures.h"
#include "report_usdt.h"
#include "report_where.h"
#include "util/hashmap.h"
#include "util/text.h"
#include "util/vec.h"
#include "proc/source.h"

#define NAME_MIN 8
#define NAME_MAX 48

/* Widens the function column w to fit name, within bounds. */
static int fit_name(int w, const char *name)
{
	int len = strlen(name);

	return len <= w ? w : len > NAME_MAX ? NAME_MAX : len;
}

/*
 * "file.py:12" with the path shortened from the left to fit width; machine
 * code (--kernel) by its library or "[kernel]" alone.
 */
static void print_location(FILE *f, const char *file, int line, int width, bool machine)
{
	char loc[4096];
	int n;

	if (machine)
		snprintf(loc, sizeof(loc), "%s", file);
	else if (line > 0)
		snprintf(loc, sizeof(loc), "%s:%d", file, line);
	else if (file[0])
		snprintf(loc, sizeof(loc), "%s:?", file); /* an instruction with no line */
	else
		snprintf(loc, sizeof(loc), "?");
	text_sanitize(loc);
	n = strlen(loc);
	if (n > width && width > 3)
		fprintf(f, "...%-*s", width - 3, loc + n - (width - 3));
	else
		fprintf(f, "%-*s", width, loc);
}

static void print_functions(FILE *f, const struct profile *p, const struct profile_target *pp,
			    const struct report_opts *o)
{
	struct func_stat *st;
	char q[REPORT_FIELD];
	size_t n, i, shown;
	int w;

	if (profile_target__func_stats(p, pp, &st, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_functions ? n : o->top_functions;
	for (i = 0, w = NAME_MIN; i < shown; i++)
		w = fit_name(w, p->funcs[st[i].func].qualname);
	fprintf(f, "\n  Functions by self time (top %zu of %zu)\n", shown, n);
	fprintf(f, "    self%%  total%%   self s  total s  %-*s  %s\n", w, "function", "location");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[st[i].func];

		fprintf(f, "   %5.1f%%  %5.1f%%  %7.2f  %7.2f  %-*.*s  ",
			report_pct(st[i].self, pp->samples), report_pct(st[i].total, pp->samples),
			report_seconds(p, st[i].self), report_seconds(p, st[i].total), w, NAME_MAX,
			text_clean(q, sizeof(q), fn->qualname));
		print_location(f, fn->file, fn->firstline, 0, fn->kind != PROFILE_FUNC_PYTHON);
		fputc('\n', f);
	}
	free(st);
}

static void print_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			const struct report_opts *o)
{
	struct line_stat *st;
	char src[160], q[REPORT_FIELD];
	size_t n, i, shown;
	int w;

	if (profile_target__line_stats(p, pp, &st, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_lines ? n : o->top_lines;
	for (i = 0, w = NAME_MIN; i < shown; i++)
		w = fit_name(w, p->funcs[p->frames[st[i].frame].func].qualname);
	fprintf(f, "\n  Hottest lines (top %zu of %zu)\n", shown, n);
	fprintf(f, "   samples   self%%  %-36s  %-*s  %s\n", "location", w, "function", "source");
	for (i = 0; i < shown; i++) {
		const struct profile_frame *fr = &p->frames[st[i].frame];
		const struct profile_func *fn = &p->funcs[fr->func];

		src[0] = '\0';
		if (fn->kind == PROFILE_FUNC_PYTHON)
			report_frame_source(p, pp, st[i].frame, src, sizeof(src));
		fprintf(f, "   %7llu  %5.1f%%  ", (unsigned long long)st[i].self,
			report_pct(st[i].self, pp->samples));
		print_location(f, fn->file, fr->line, 36, fn->kind != PROFILE_FUNC_PYTHON);
		text_clean(q, sizeof(q), fn->qualname);
		if (src[0])
			fprintf(f, "  %-*.*s  %s\n", w, NAME_MAX, q, src);
		else
			fprintf(f, "  %.*s\n", NAME_MAX, q);
	}
	free(st);
}

#define SRC_WIDTH 160 /* source text shown per line */
#define SRC_CHUNK 256 /* rows whose source is looked up at once */

struct line_row {
	int line;
	uint64_t total, self;
	size_t last; /* stack index + 1 that last counted this line */
};

static int cmp_line_row(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

/* func's row for line in rows (found through index: line -> 1 + row), added if new. */
static struct line_row *line_row(struct line_row **rows, size_t *nrows, size_t *cap,
				 struct hashmap *index, int line)
{
	uint64_t *slot = hashmap__find(index, (uint32_t)line);

	if (slot)
		return &(*rows)[*slot - 1];
	if (vec_grow((void **)rows, cap, *nrows + 1, sizeof(**rows)) ||
	    hashmap__set(index, (uint32_t)line, *nrows + 1))
		return NULL;
	(*rows)[*nrows] = (struct line_row){ .line = line };
	return &(*rows)[(*nrows)++];
}

/*
 * Per line of func: samples with the function at that line (including what it
 * called from there: a line's cost, as line_profiler measures it), and of
 * those the ones where the line itself was running.
 */
static int func_lines(const struct profile *p, const struct profile_target *pp, uint32_t func,
		      struct line_row **out, size_t *n)
{
	struct line_row *rows = NULL, *r;
	size_t i, j, nrows = 0, cap = 0;
	struct hashmap index; /* a saved profile's function may have a million lines */

	hashmap__init(&index);
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		for (j = 0; j < s->nframes; j++) {
			const struct profile_frame *fr = &p->frames[s->frames[j]];

			if (fr->func != func)
				continue;
			r = line_row(&rows, &nrows, &cap, &index, fr->line);
			if (!r) {
				free(rows);
				hashmap__free(&index);
				return -ENOMEM;
			}
			if (!j)
				r->self += s->count;
			if (r->last != i + 1) { /* recursion: once per stack */
				r->last = i + 1;
				r->total += s->count;
			}
		}
	}
	hashmap__free(&index);
	if (nrows) /* qsort wants a non-NULL array even for none */
		qsort(rows, nrows, sizeof(*rows), cmp_line_row);
	*out = rows;
	*n = nrows;
	return 0;
}

static void print_row(FILE *f, const struct profile_target *pp, const struct func_stat *fs,
		      const struct line_row *r, const char *src)
{
	if (r->line > 0)
		fprintf(f, "    %5d", r->line);
	else
		fprintf(f, "        ?");
	fprintf(f, "  %8llu  %5.1f%%  %5.1f%%  %7llu", (unsigned long long)r->total,
		report_pct(r->total, fs->total), report_pct(r->total, pp->samples),
		(unsigned long long)r->self);
	fprintf(f, src[0] ? "  %s\n" : "%s\n", src);
}

/* The table's rows, their source looked up SRC_CHUNK rows at a time. */
static void print_rows(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct func_stat *fs, const struct line_row *rows, size_t n,
		       bool readable)
{
	const char *file = p->funcs[fs->func].file;
	char *texts = malloc(SRC_CHUNK * SRC_WIDTH);
	bool found[SRC_CHUNK] = { false };
	int nums[SRC_CHUNK];
	size_t i, k, m;

	if (!texts) {
		fprintf(f, "    (out of memory)\n");
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < SRC_CHUNK ? n - i : SRC_CHUNK;
		for (k = 0; k < m; k++) {
			nums[k] = rows[i + k].line;
			texts[k * SRC_WIDTH] = '\0';
		}
		if (readable)
			report_source_lines(p, pp, file, nums, m, texts, SRC_WIDTH, found);
		for (k = 0; k < m; k++)
			print_row(f, pp, fs, &rows[i + k],
				  readable && !found[k] && rows[i + k].line > 0 ?
					  "(no such line)" :
					  texts + k * SRC_WIDTH);
	}
	free(texts);
}

static void print_func_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			     const struct func_stat *fs)
{
	const struct profile_func *fn = &p->funcs[fs->func];
	struct line_row *rows;
	size_t n;
	int changed;

	fputs("\n  Line by line: ", f);
	text_put_clean(f, fn->qualname);
	fputs("  ", f);
	print_location(f, fn->file, fn->firstline, 0, fn->kind != PROFILE_FUNC_PYTHON);
	fprintf(f, "  (%llu samples, %.1f%% of the process; %.1f%% in the function itself)\n",
		(unsigned long long)fs->total, report_pct(fs->total, pp->samples),
		report_pct(fs->self, fs->total));
	if (func_lines(p, pp, fs->func, &rows, &n)) {
		fprintf(f, "    (out of memory)\n");
		return;
	}
	changed = report_source_changed(p, pp, fn->file);
	if (changed < 0) {
		fputs("    source: cannot read ", f);
		text_put_clean(f, fn->file[0] ? fn->file : "(no file)");
		fprintf(f, ": %s\n", source_strerror(changed));
	} else if (changed) {
		fputs("    source: ", f);
		text_put_clean(f, fn->file);
		fputs(" was modified after the process started: the text shown may not be what "
		      "runs\n",
		      f);
	}
	fprintf(f, "     line   samples   %%func  %%total     self  source\n");
	print_rows(f, p, pp, fs, rows, n, changed >= 0);
	free(rows);
}

static void print_line_report(FILE *f, const struct profile *p, const struct profile_target *pp,
			      const struct report_opts *o)
{
	struct func_stat *st;
	size_t n, i, shown = 0;

	if (!o->line_report || profile_target__func_stats(p, pp, &st, &n))
		return;
	for (i = 0; i < n && shown < o->line_report; i++) {
		/* machine code (--kernel) and --mode wall's off-CPU pseudo-functions have no lines */
		if (p->funcs[st[i].func].unresolved ||
		    p->funcs[st[i].func].kind != PROFILE_FUNC_PYTHON ||
		    !strcmp(p->funcs[st[i].func].file, PROFILE_OFFCPU_FILE))
			continue;
		print_func_lines(f, p, pp, &st[i]);
		shown++;
	}
	free(st);
}

static void print_process(FILE *f, const struct profile *p, const struct profile_target *pp,
			  const struct report_opts *o)
{
	char time[128];

	if (report_is_merged(p, pp)) {
		fputc('\n', f);
		text_put_clean(f, pp->cmdline);
	} else {
		if (pp->nspid != pp->pid)
			fprintf(f, "\npid %d (pid %d in its namespace)  ", pp->pid, pp->nspid);
		else
			fprintf(f, "\npid %d  ", pp->pid);
		text_put_clean(f, pp->cmdline[0] ? pp->cmdline : pp->comm);
	}
	fputs("\n  Python ", f);
	text_put_clean(f, pp->python);
	fputs(", ", f);
	text_put_clean(f, pp->exe);
	fprintf(f, "%s\n",
		pp->exited ? report_is_merged(p, pp) ? " (all exited during the run)" :
						       " (exited during the run)" :
			     "");
	fprintf(f, "  %llu samples (%s); %llu truncated, %llu partial, %llu unresolved\n",
		(unsigned long long)pp->samples, report_samples_time(p, pp, time, sizeof(time)),
		(unsigned long long)pp->truncated, (unsigned long long)pp->partial,
		(unsigned long long)pp->unresolved);
	report_text_thread_list(f, pp);
	if (!pp->samples) {
		fprintf(f,
			"  no samples with Python code: the process was idle or ran only C code\n");
	} else {
		print_functions(f, p, pp, o);
		print_lines(f, p, pp, o);
		report_where_text(f, p, pp, o);
		print_line_report(f, p, pp, o);
		report_signatures_text(f, p, pp, o);
		if (o->threads)
			report_text_threads(f, p, pp, o);
		report_wall_text(f, p, pp, o);
	}
	report_usdt_text_proc(f, p, pp, o);
	if (p->mem)
		report_mem_text(f, p, pp, o);
}

static int write_text(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct report_totals t = report_totals(p);
	char procs[64];
	size_t i, *order;

	fprintf(f, "pybpfprof %s: %s profile, %s, %.2f s at %u Hz\n", o->tool_version, p->mode,
		report_nprocs(p, procs, sizeof(procs)), p->duration_s, p->frequency_hz);
	for (i = 0; i < p->nmerged; i++)
		fprintf(f, "%s %d", i ? "," : "pids:", p->merged_pids[i]);
	if (p->nmerged && p->ntargets) {
		fputs(", merged into one section (Python ", f);
		text_put_clean(f, p->targets[0].python);
		fputs(", ", f);
		text_put_clean(f, p->targets[0].exe);
		fputs(")\n", f);
	}
	for (i = 0; !p->nmerged && i < p->ntargets; i++) {
		fprintf(f, "%s %d (Python ", i ? "," : "pids:", p->targets[i].pid);
		text_put_clean(f, p->targets[i].python);
		fputs(", ", f);
		text_put_clean(f, p->targets[i].exe);
		fprintf(f, ")%s", i + 1 == p->ntargets ? "\n" : "");
	}
	fprintf(f,
		"samples: %llu total, %llu dropped, %llu truncated, %llu unresolved"
		" (%llu partial; %llu ticks in threads without Python frames)\n",
		(unsigned long long)t.samples, (unsigned long long)p->counts.dropped,
		(unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		(unsigned long long)t.partial, (unsigned long long)p->counts.no_python);
	if (p->counts.unreadable)
		fprintf(f, "         %llu ticks whose innermost frame could not be read\n",
			(unsigned long long)p->counts.unreadable);
	/* only when the budget cost something: then some frames may lack a line or a name */
	if (p->cache.evicted || p->cache.refused)
		fprintf(f,
			"cache: %llu code objects evicted, %llu line tables refused (budget "
			"%llu MiB)\n",
			(unsigned long long)p->cache.evicted, (unsigned long long)p->cache.refused,
			(unsigned long long)(p->cache.budget_bytes >> 20));
	if (p->mem)
		fprintf(f,
			"memory records: %llu dropped, %llu truncated, %llu events in threads "
			"without Python frames\n",
			(unsigned long long)p->mem_counts.dropped,
			(unsigned long long)p->mem_counts.truncated,
			(unsigned long long)p->mem_counts.no_python);
	if (p->kernel_mode)
		fprintf(f,
			"kernel stacks: %llu samples in the kernel with theirs, %llu without "
			"(lost: ring buffer full)\n",
			(unsigned long long)p->kstacks, (unsigned long long)p->kstack_missing);
	if (p->native_mode)
		fprintf(f,
			"native stacks: %llu samples unwound (%llu stopped before their "
			"outermost Python frame, %llu whose native and Python frames did not "
			"agree: native frames shown below the innermost Python frame only), "
			"%llu refused (unwind tables refused, or over the unwind's time "
			"budget), %llu without (lost or not unwindable)\n",
			(unsigned long long)p->ustacks, (unsigned long long)p->ustack_partial,
			(unsigned long long)p->ustack_unplaced,
			(unsigned long long)p->ustack_refused,
			(unsigned long long)p->ustack_missing);
	report_usdt_text_counts(f, p);
	order = report_procs_order(p);
	if (!order)
		return -ENOMEM;
	report_text_procs(f, p, order, o);
	for (i = 0; i < p->ntargets; i++)
		if (report_proc_shown(p, &p->targets[order[i]], o))
			print_process(f, p, &p->targets[order[i]], o);
	free(order);
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_text = {
	.name = "text",
	.exts = { ".txt" },
	.write = write_text,
	.plain_text = true,
};
