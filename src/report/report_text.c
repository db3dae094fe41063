// SPDX-License-Identifier: GPL-2.0-only
/*
 * The default report: a header with the honest counts, then per process the
 * functions by self time, the hottest lines with their source text, and for
 * the hottest functions a line-by-line table like line_profiler's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report/report_ci.h"
#include "report/report_source.h"
#include "report_mem.h"
#include "report_procs.h"
#include "report_threads.h"
#include "report_wall.h"
#include "report_signatures.h"
#include "report_timeline.h"
#include "report_usdt.h"
#include "report_where.h"
#include "util/hashmap.h"
#include "util/text.h"
#include "report_tick.h"
#include "util/vec.h"
#include "proc/source.h"

#define SRC_TEXT 160 /* bytes of source text looked up per line */

#define NAME_MIN 8
#define NAME_MAX 48   /* a Python name's column */
#define NATIVE_MAX 72 /* a native name's: library+0xOFFSET names are long */
#define LOC_MIN 24    /* the least a location is fitted to */
#define SRC_MIN 26    /* the least a line of source is fitted to */

/* The widest line: --native's and --kernel's library+0xOFFSET names need more. */
static int text_width(const struct profile *p)
{
	return p->native_mode || p->kernel_mode ? REPORT_TEXT_WIDTH : REPORT_SCREEN_WIDTH;
}

static bool is_machine(const struct profile_func *fn)
{
	return fn->kind != PROFILE_FUNC_PYTHON;
}

/* Widens the function column w to fit fn's name, within its kind's bound. */
static int fit_name(int w, const struct profile_func *fn)
{
	char q[REPORT_FIELD];
	int len = report_cols(text_clean(q, sizeof(q), fn->qualname));
	int max = is_machine(fn) ? NATIVE_MAX : NAME_MAX;

	return len <= w ? w : len > max ? max : len;
}

/* fn's name fitted to width columns: a native name keeps its +0xOFFSET. */
static void print_name(FILE *f, const struct profile_func *fn, int width, bool pad)
{
	char q[REPORT_FIELD];

	report_fit(q, sizeof(q), fn->qualname, width,
		   is_machine(fn) ? REPORT_FIT_NAME : REPORT_FIT_RIGHT);
	report_put_padded(f, q, pad ? width : 0);
}

/* What is left of a line width wide after used columns, never less than LOC_MIN. */
static int left_of(int width, int used)
{
	return width - used < LOC_MIN ? LOC_MIN : width - used;
}

/*
 * "file.py:12" with the path shortened from the left to fit width; machine
 * code (--kernel, --native) by its library or "[kernel]" alone.
 */
static void print_location(FILE *f, const char *file, int line, int width, bool machine, bool pad)
{
	char loc[REPORT_FIELD], fit[REPORT_FIELD];

	if (machine)
		snprintf(loc, sizeof(loc), "%s", file);
	else if (line > 0)
		snprintf(loc, sizeof(loc), "%s:%d", file, line);
	else if (file[0])
		snprintf(loc, sizeof(loc), "%s:?", file); /* an instruction with no line */
	else
		snprintf(loc, sizeof(loc), "?");
	report_fit(fit, sizeof(fit), loc, width, REPORT_FIT_LEFT);
	report_put_padded(f, fit, pad ? width : 0);
}

/*
 * The sampling error of a table's shares, said once in its title: the widest
 * half 95 % interval among the counts shown (Wilson's, report_ci.h; widest
 * for the share nearest 50 %), so that every share of the table is known to
 * ± that many points or better. A column of its own per share would take the
 * 100 columns' room the names need; JSON has each share's own interval.
 */
static double widest_half(const uint64_t *k, size_t nk, uint64_t n)
{
	double most = 0, h;
	size_t i;

	for (i = 0; i < nk; i++) {
		h = report_ci_half_pp(report_ci_wilson(k[i], n));
		most = h > most ? h : most;
	}
	return most;
}

#define FUNC_PREFIX 37 /* "   %5.1f%%  %5.1f%%  %7.2f  %7.2f  " */

static void print_functions(FILE *f, const struct profile *p, const struct profile_target *pp,
			    const struct report_opts *o)
{
	int width = text_width(p), most = width - FUNC_PREFIX - 2 - LOC_MIN, w;
	struct func_stat *st;
	size_t n, i, shown;
	double err;

	if (profile_target__func_stats(p, pp, &st, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_functions ? n : o->top_functions;
	for (i = 0, w = NAME_MIN; i < shown; i++)
		w = fit_name(w, &p->funcs[st[i].func]);
	if (w > most) /* the location keeps LOC_MIN columns, its line number whole */
		w = most;
	for (i = 0, err = 0; i < shown; i++) {
		const uint64_t k[2] = { st[i].self, st[i].total };
		double h = widest_half(k, 2, pp->samples);

		err = h > err ? h : err;
	}
	fprintf(f,
		"\n  Functions by self time (top %zu of %zu, each share ±%.1f pp or less at 95 %%)\n",
		shown, n, err);
	fprintf(f, "    self%%  total%%   self s  total s  %-*s  %s\n", w, "function", "location");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[st[i].func];

		fprintf(f, "   %5.1f%%  %5.1f%%  %7.2f  %7.2f  ",
			report_pct(st[i].self, pp->samples), report_pct(st[i].total, pp->samples),
			report_seconds(p, st[i].self), report_seconds(p, st[i].total));
		print_name(f, fn, w, true);
		fputs("  ", f);
		print_location(f, fn->file, fn->firstline, left_of(width, FUNC_PREFIX + w + 2),
			       is_machine(fn), false);
		fputc('\n', f);
	}
	free(st);
}

/* Frame ids by their count in cost, most first (then by id). */
static int cmp_cost(const void *a, const void *b, void *arg)
{
	const uint64_t *cost = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (cost[x] != cost[y])
		return cost[x] < cost[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

/*
 * Per frame of p, over pp's stacks: py[], the samples in which it was the
 * innermost Python line (profile__innermost_line), the native code it called
 * and --mode wall's waits counted with it (a line's own cost, as without
 * --native); nat[], the samples in which it was
 * the innermost frame and machine code (--native, --kernel).
 */
static int line_costs(const struct profile *p, const struct profile_target *pp, uint64_t **py,
		      uint64_t **nat)
{
	size_t i;

	*py = calloc(p->nframes ? p->nframes : 1, sizeof(**py));
	*nat = calloc(p->nframes ? p->nframes : 1, sizeof(**nat));
	if (!*py || !*nat) {
		free(*py);
		free(*nat);
		return -ENOMEM;
	}
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		uint32_t k = profile__innermost_line(p, s);

		if (k < s->nframes)
			(*py)[s->frames[k]] += s->count;
		if (s->nframes && is_machine(&p->funcs[p->frames[s->frames[0]].func]))
			(*nat)[s->frames[0]] += s->count;
	}
	return 0;
}

/* The ids of the frames with a cost, most first, in *ids (*n of them). */
static int by_cost(const struct profile *p, const uint64_t *cost, uint32_t **ids, size_t *n)
{
	size_t i;

	*n = 0;
	*ids = malloc((p->nframes ? p->nframes : 1) * sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (i = 0; i < p->nframes; i++)
		if (cost[i])
			(*ids)[(*n)++] = (uint32_t)i;
	qsort_r(*ids, *n, sizeof(**ids), cmp_cost, (void *)cost);
	return 0;
}

/*
 * The top rows of a table of frames by cost: by_cost's ids and count, how
 * many are shown (--lines), and the width their names take. -ENOMEM said
 * in the report.
 */
static int top_frames(FILE *f, const struct profile *p, const uint64_t *cost,
		      const struct report_opts *o, uint32_t **ids, size_t *n, size_t *shown, int *w)
{
	size_t i;

	if (by_cost(p, cost, ids, n)) {
		fprintf(f, "  (out of memory)\n");
		return -ENOMEM;
	}
	*shown = *n < o->top_lines ? *n : o->top_lines;
	for (i = 0, *w = NAME_MIN; i < *shown; i++)
		*w = fit_name(*w, &p->funcs[p->frames[(*ids)[i]].func]);
	return 0;
}

/* widest_half over the shown rows of a table of frames by cost */
static double frames_error(const uint64_t *cost, const uint32_t *ids, size_t shown, uint64_t n)
{
	double most = 0, h;
	size_t i;

	for (i = 0; i < shown; i++) {
		h = widest_half(&cost[ids[i]], 1, n);
		most = h > most ? h : most;
	}
	return most;
}

#define LINE_PREFIX 20	   /* "   %7llu  %5.1f%%  " */
#define LINE_LOC 36	   /* the location's column, REPORT_TEXT_WIDTH wide */
#define LINE_LOC_SCREEN 28 /* and REPORT_SCREEN_WIDTH wide */

static void print_python_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			       const uint64_t *cost, const struct report_opts *o)
{
	const char *machine = p->native_mode && p->kernel_mode ? "native and kernel" :
			      p->native_mode		       ? "native" :
			      p->kernel_mode		       ? "kernel" :
								 NULL;
	int width = text_width(p), loc = width < REPORT_TEXT_WIDTH ? LINE_LOC_SCREEN : LINE_LOC, w;
	char src[SRC_TEXT], fit[SRC_TEXT];
	uint32_t *ids;
	size_t n, i, shown;

	if (top_frames(f, p, cost, o, &ids, &n, &shown, &w))
		return;
	if (w > width - LINE_PREFIX - loc - 4 - SRC_MIN)
		w = width - LINE_PREFIX - loc - 4 - SRC_MIN;
	fprintf(f, "\n  Hottest lines (top %zu of %zu, each share ±%.1f pp or less at 95 %%)",
		shown, n, frames_error(cost, ids, shown, pp->samples));
	if (machine)
		fprintf(f, ": the %s code a line called counted with it", machine);
	fputc('\n', f);
	fprintf(f, "   samples   self%%  %-*s  %-*s  %s\n", loc, "location", w, "function",
		"source");
	for (i = 0; i < shown; i++) {
		const struct profile_frame *fr = &p->frames[ids[i]];
		const struct profile_func *fn = &p->funcs[fr->func];

		src[0] = '\0';
		report_frame_source(p, pp, ids[i], src, sizeof(src));
		fprintf(f, "   %7llu  %5.1f%%  ", (unsigned long long)cost[ids[i]],
			report_pct(cost[ids[i]], pp->samples));
		print_location(f, fn->file, fr->line, loc, false, true);
		fputs("  ", f);
		print_name(f, fn, w, src[0]);
		if (src[0])
			fprintf(f, "  %s",
				report_fit(fit, sizeof(fit), src,
					   width - (LINE_PREFIX + loc + 2 + w + 2),
					   REPORT_FIT_RIGHT));
		fputc('\n', f);
	}
	free(ids);
}

static void print_native_frames(FILE *f, const struct profile *p, const struct profile_target *pp,
				const uint64_t *cost, const struct report_opts *o)
{
	uint32_t *ids;
	size_t n, i, shown;
	int w;

	if (top_frames(f, p, cost, o, &ids, &n, &shown, &w))
		return;
	if (n)
		fprintf(f,
			"\n  Hottest native frames (top %zu of %zu, each share ±%.1f pp or less at "
			"95 %%)\n",
			shown, n, frames_error(cost, ids, shown, pp->samples));
	if (n)
		fprintf(f, "   samples   self%%  %-*s  %s\n", w, "function", "library");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[p->frames[ids[i]].func];

		fprintf(f, "   %7llu  %5.1f%%  ", (unsigned long long)cost[ids[i]],
			report_pct(cost[ids[i]], pp->samples));
		print_name(f, fn, w, true);
		fputs("  ", f);
		print_location(f, fn->file, 0, left_of(text_width(p), LINE_PREFIX + w + 2), true,
			       false);
		fputc('\n', f);
	}
	free(ids);
}

/*
 * The hottest lines of Python code; with --native or --kernel, the hottest
 * native frames in a table of their own, so that the library code a line
 * called does not push the Python lines out of theirs.
 */
static void print_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			const struct report_opts *o)
{
	uint64_t *py, *nat;

	if (line_costs(p, pp, &py, &nat)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	print_python_lines(f, p, pp, py, o);
	print_native_frames(f, p, pp, nat, o);
	free(py);
	free(nat);
}

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
		/* a line's own: the native code it called and its waits (--mode wall) too */
		uint32_t own = profile__innermost_line(p, s);

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
			if (j == own)
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

#define ROW_PREFIX 48 /* "    %5d  %8llu  %5.1f%%  %5.1f%%  %7llu  " */

static void print_row(FILE *f, const struct profile_target *pp, const struct func_stat *fs,
		      const struct line_row *r, const char *src, int width)
{
	char fit[SRC_TEXT];

	if (r->line > 0)
		fprintf(f, "    %5d", r->line);
	else
		fprintf(f, "        ?");
	fprintf(f, "  %8llu  %5.1f%%  %5.1f%%  %7llu", (unsigned long long)r->total,
		report_pct(r->total, fs->total), report_pct(r->total, pp->samples),
		(unsigned long long)r->self);
	if (src[0])
		fprintf(f, "  %s",
			report_fit(fit, sizeof(fit), src, width - ROW_PREFIX, REPORT_FIT_RIGHT));
	fputc('\n', f);
}

/* The table's rows, their source looked up SRC_CHUNK rows at a time. */
static void print_rows(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct func_stat *fs, const struct line_row *rows, size_t n,
		       bool readable)
{
	const char *file = p->funcs[fs->func].file;
	char *texts = malloc(SRC_CHUNK * SRC_TEXT);
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
			texts[k * SRC_TEXT] = '\0';
		}
		if (readable)
			report_source_lines(p, pp, file, nums, m, texts, SRC_TEXT, found);
		for (k = 0; k < m; k++)
			print_row(f, pp, fs, &rows[i + k],
				  readable && !found[k] && rows[i + k].line > 0 ?
					  "(no such line)" :
					  texts + k * SRC_TEXT,
				  text_width(p));
	}
	free(texts);
}

/* --opcodes: the instructions of the rows' lines, under their table. */
static void func_line_ops(FILE *f, const struct profile *p, const struct profile_target *pp,
			  uint32_t func, const struct line_row *rows, size_t n)
{
	int *lines = calloc(n + 1, sizeof(*lines));
	uint64_t *self = calloc(n + 1, sizeof(*self));
	size_t i;

	if (!p->opcodes)
		goto out;
	if (!lines || !self) {
		fprintf(f, "    (out of memory)\n");
		goto out;
	}
	for (i = 0; i < n; i++) {
		lines[i] = rows[i].line;
		self[i] = rows[i].self;
	}
	report_op_text_func(f, p, pp, func, lines, self, n);
out:
	free(lines);
	free(self);
}

/* own: the function's lines' own cost (own_costs), what "in the function itself" says */
static void print_func_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			     const struct func_stat *fs, uint64_t own)
{
	const struct profile_func *fn = &p->funcs[fs->func];
	struct line_row *rows;
	size_t n;
	char name[REPORT_FIELD];
	int changed;

	report_fit(name, sizeof(name), fn->qualname, NAME_MAX, REPORT_FIT_RIGHT);
	fprintf(f, "\n  Line by line: %s  ", name);
	print_location(f, fn->file, fn->firstline,
		       left_of(text_width(p), 16 + report_cols(name) + 2), false, false);
	/* on a line of their own: beside a name and a path they made lines of 150 columns */
	fprintf(f, "\n    (%llu samples, %.1f%% of the process; %.1f%% in the function itself)\n",
		(unsigned long long)fs->total, report_pct(fs->total, pp->samples),
		report_pct(own, fs->total));
	if (func_lines(p, pp, fs->func, &rows, &n)) {
		fprintf(f, "    (out of memory)\n");
		return;
	}
	changed = report_source_changed(p, pp, fn->file);
	/* a note names the file whole: it says which file to look at */
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
	func_line_ops(f, p, pp, fs->func, rows, n);
	free(rows);
}

/* Functions by own_cost (their lines' own cost, native code included), then by total. */
static int cmp_own(const void *a, const void *b, void *arg)
{
	const uint64_t *own = arg;
	const struct func_stat *x = a, *y = b;

	if (own[x->func] != own[y->func])
		return own[x->func] < own[y->func] ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Per function of p: the sum of its lines' own cost (line_costs' py), in *own. */
static int own_costs(const struct profile *p, const struct profile_target *pp, uint64_t **own)
{
	uint64_t *py, *nat;
	size_t i;

	*own = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(**own));
	if (!*own || line_costs(p, pp, &py, &nat)) {
		free(*own);
		return -ENOMEM;
	}
	for (i = 0; i < p->nframes; i++)
		(*own)[p->frames[i].func] += py[i];
	free(py);
	free(nat);
	return 0;
}

/*
 * Line-by-line tables of the functions whose own lines cost the most, the
 * native code they called included: by self time alone, a function whose
 * lines call C code (--native moves their self time to native frames) would
 * be passed over for ones with a handful of samples; by total time, the
 * callers above it would fill the tables.
 */
static void print_line_report(FILE *f, const struct profile *p, const struct profile_target *pp,
			      const struct report_opts *o)
{
	struct func_stat *st;
	uint64_t *own;
	size_t n, i, shown = 0;

	if (!o->line_report || profile_target__func_stats(p, pp, &st, &n))
		return;
	if (own_costs(p, pp, &own)) {
		free(st);
		fprintf(f, "  (out of memory)\n");
		return;
	}
	if (n) /* qsort_r wants a non-NULL array even for none */
		qsort_r(st, n, sizeof(*st), cmp_own, own);
	for (i = 0; i < n && shown < o->line_report; i++) {
		/* machine code (--kernel) and --mode wall's off-CPU pseudo-functions have no lines */
		if (p->funcs[st[i].func].unresolved ||
		    p->funcs[st[i].func].kind != PROFILE_FUNC_PYTHON ||
		    !strcmp(p->funcs[st[i].func].file, PROFILE_OFFCPU_FILE))
			continue;
		print_func_lines(f, p, pp, &st[i], own[st[i].func]);
		shown++;
	}
	free(own);
	free(st);
}

#define PYTHON_MAX 24 /* a Python version's columns (the target's string) */

/*
 * A section's first lines: pid and command line (cut at the right: the
 * process table gave its role, JSON has it whole), Python and executable
 * (cut at the left).
 */
static void print_process_head(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	const char *gone = !pp->exited		   ? "" :
			   report_is_merged(p, pp) ? " (all exited during the run)" :
						     " (exited during the run)";
	char head[64], fit[REPORT_FIELD], py[REPORT_FIELD];
	int width = text_width(p), used;

	if (report_is_merged(p, pp))
		head[0] = '\0';
	else if (pp->nspid != pp->pid)
		snprintf(head, sizeof(head), "pid %d (pid %d in its namespace)  ", pp->pid,
			 pp->nspid);
	else
		snprintf(head, sizeof(head), "pid %d  ", pp->pid);
	used = (int)strlen(head);
	fprintf(f, "\n%s%s\n", head,
		report_fit(fit, sizeof(fit),
			   report_is_merged(p, pp) || pp->cmdline[0] ? pp->cmdline : pp->comm,
			   width - used, REPORT_FIT_RIGHT));
	report_fit(py, sizeof(py), pp->python, PYTHON_MAX, REPORT_FIT_RIGHT);
	used = 11 + report_cols(py) + (int)strlen(gone); /* "  Python , " */
	fprintf(f, "  Python %s, %s%s\n", py,
		report_fit(fit, sizeof(fit), pp->exe, left_of(width, used), REPORT_FIT_LEFT), gone);
}

static void print_process(FILE *f, const struct profile *p, const struct profile_target *pp,
			  const struct report_opts *o)
{
	char time[128], flaws[96];
	int n;

	print_process_head(f, p, pp);
	n = fprintf(f, "  %llu samples (%s);", (unsigned long long)pp->samples,
		    report_samples_time(p, pp, time, sizeof(time)));
	n += snprintf(flaws, sizeof(flaws), "%llu truncated, %llu partial, %llu unresolved",
		      (unsigned long long)pp->truncated, (unsigned long long)pp->partial,
		      (unsigned long long)pp->unresolved);
	/* --mode wall's times fill a line: the flaws go to the next */
	fprintf(f, "%s%s\n", n + 1 > text_width(p) ? "\n    " : " ", flaws);
	report_text_thread_list(f, pp);
	if (!pp->samples) {
		fprintf(f,
			"  no samples with Python code: the process was idle or ran only C code\n");
	} else {
		print_functions(f, p, pp, o);
		print_lines(f, p, pp, o);
		report_where_text(f, p, pp, o);
		report_exc_text(f, p, pp, o);
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

/* What --pid, --match and --thread left out: the totals above are of what they kept. */
static void print_selection(FILE *f, const struct profile *p)
{
	if (!p->selection)
		return;
	fputs("selected: ", f);
	text_put_clean(f, p->selection);
	fprintf(f,
		"; left out: %llu process%s, %llu thread%s, %llu samples (dropped, ticks and the "
		"other counters above are the whole run's)\n",
		(unsigned long long)p->sel_procs_out, p->sel_procs_out == 1 ? "" : "es",
		(unsigned long long)p->sel_threads_out, p->sel_threads_out == 1 ? "" : "s",
		(unsigned long long)p->sel_samples_out);
	if (p->sel_threads_cut)
		fputs("          the truncated, partial and unresolved counts of a process cut by "
		      "--thread are its whole process's (they are not kept by thread)\n",
		      f);
}

#define PIDS_PID 9   /* ", 4194304" */
#define PIDS_MORE 16 /* ", 4194304 more" */

#define PIDS_MERGED ", merged into one section"
#define PIDS_LABEL (REPORT_FIELD + 4 * PYTHON_MAX + 32) /* interpreter_label's buffer */

/*
 * " (Python 3.11.2, /usr/bin/python3.11)" of pp into buf, to fit a pids line
 * width wide beside besides columns of other words.
 */
static const char *interpreter_label(const struct profile_target *pp, int width, int besides,
				     char *buf, size_t len)
{
	char py[4 * PYTHON_MAX + 8], exe[REPORT_FIELD];
	int room;

	report_fit(py, sizeof(py), pp->python, PYTHON_MAX, REPORT_FIT_RIGHT);
	/* the first pid's label always fits: "pids:", its pid, room to say how many more */
	room = width - 5 - PIDS_PID - PIDS_MORE - besides - 13 - report_cols(py);
	snprintf(buf, len, " (Python %s, %s)", py,
		 report_fit(exe, sizeof(exe), pp->exe, room, REPORT_FIT_LEFT));
	return buf;
}

static bool same_interpreter(const struct profile_target *a, const struct profile_target *b)
{
	return a->python && b->python && a->exe && b->exe && !strcmp(a->python, b->python) &&
	       !strcmp(a->exe, b->exe);
}

/*
 * "pids: 24450, 24459 (Python 3.11.2, /usr/bin/python3.11), 12 more": the
 * pids that fit the line, a run of pids of one interpreter named once, the
 * rest counted (the process table lists them).
 */
static void print_pids(FILE *f, const struct profile *p)
{
	int width = text_width(p), used = 5, k;
	char label[PIDS_LABEL], num[32];
	bool open = false; /* pids written whose interpreter is not yet */
	size_t i, n = p->ntargets;

	fputs("pids:", f);
	for (i = 0; i < n; i++) {
		const struct profile_target *pp = &p->targets[i];
		bool ends = i + 1 == n || !same_interpreter(pp, &p->targets[i + 1]);

		k = snprintf(num, sizeof(num), "%s %d", i ? "," : "", pp->pid);
		interpreter_label(pp, width, 0, label, sizeof(label));
		/* room for its interpreter and the count of the rest, whichever comes */
		if (i && used + k + report_cols(label) + (i + 1 < n ? PIDS_MORE : 0) > width)
			break;
		fputs(num, f);
		used += k;
		if (ends) {
			fputs(label, f);
			used += report_cols(label);
		}
		open = !ends;
	}
	if (open)
		fputs(interpreter_label(&p->targets[i - 1], width, 0, label, sizeof(label)), f);
	if (i < n)
		fprintf(f, ", %zu more", n - i);
	fputc('\n', f);
}

/* --merge: "pids: 4242, 4243, merged into one section (Python ...)", the pids that fit. */
static void print_merged_pids(FILE *f, const struct profile *p)
{
	int width = text_width(p), used = 5, k;
	char label[PIDS_LABEL], num[32];
	size_t i;

	if (p->ntargets)
		interpreter_label(&p->targets[0], width, sizeof(PIDS_MERGED) - 1, label,
				  sizeof(label));
	else
		label[0] = '\0';
	fputs("pids:", f);
	for (i = 0; i < p->nmerged; i++) {
		k = snprintf(num, sizeof(num), "%s %d", i ? "," : "", p->merged_pids[i]);
		if (i && used + k + PIDS_MORE + (int)sizeof(PIDS_MERGED) - 1 + report_cols(label) >
				 width)
			break;
		fputs(num, f);
		used += k;
	}
	if (i < p->nmerged)
		fprintf(f, ", %zu more", p->nmerged - i);
	fprintf(f, PIDS_MERGED "%s\n", label);
}

static int write_text(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct report_totals t = report_totals(p);
	char procs[64], causes[200];
	size_t i, *order;

	fprintf(f, "pybpfprof %s: %s profile, %s, %.2f s at %u Hz\n", o->tool_version, p->mode,
		report_nprocs(p, procs, sizeof(procs)), p->duration_s, p->frequency_hz);
	if (p->nmerged)
		print_merged_pids(f, p);
	else if (p->ntargets)
		print_pids(f, p);
	fprintf(f,
		"samples: %llu total, %llu dropped, %llu truncated, %llu unresolved (%llu partial)\n"
		"         %llu ticks in threads without Python frames\n",
		(unsigned long long)t.samples, (unsigned long long)p->counts.dropped,
		(unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		(unsigned long long)t.partial, (unsigned long long)p->counts.no_python);
	if (report_dropped_causes(&p->counts, causes, sizeof(causes))[0])
		fprintf(f, "         dropped: %s\n", causes);
	if (p->counts.unreadable)
		fprintf(f, "         %llu ticks whose innermost frame could not be read\n",
			(unsigned long long)p->counts.unreadable);
	print_selection(f, p);
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
			"outermost Python frame,\n"
			"               %llu whose native and Python frames did not "
			"agree: native frames shown below the innermost Python frame only),\n"
			"               %llu refused (unwind tables refused, or over the unwind's "
			"time budget), %llu without (lost or not unwindable)\n",
			(unsigned long long)p->ustacks, (unsigned long long)p->ustack_partial,
			(unsigned long long)p->ustack_unplaced,
			(unsigned long long)p->ustack_refused,
			(unsigned long long)p->ustack_missing);
	report_usdt_text_counts(f, p);
	report_tick_text_counts(f, p);
	report_timeline_text(f, p);
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
