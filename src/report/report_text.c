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

#define SRC_TEXT 160 /* bytes of source text looked up per line */

#define NAME_MIN 8
#define NAME_MAX 48   /* a Python name's column */
#define NATIVE_MAX 72 /* a native name's: library+0xOFFSET names are long */
#define LOC_MIN 24    /* the least a location is fitted to */

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

/* What is left of the line after used columns, never less than LOC_MIN. */
static int left_of(int used)
{
	return REPORT_TEXT_WIDTH - used < LOC_MIN ? LOC_MIN : REPORT_TEXT_WIDTH - used;
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

#define FUNC_PREFIX 37 /* "   %5.1f%%  %5.1f%%  %7.2f  %7.2f  " */

static void print_functions(FILE *f, const struct profile *p, const struct profile_target *pp,
			    const struct report_opts *o)
{
	struct func_stat *st;
	size_t n, i, shown;
	int w;

	if (profile_target__func_stats(p, pp, &st, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_functions ? n : o->top_functions;
	for (i = 0, w = NAME_MIN; i < shown; i++)
		w = fit_name(w, &p->funcs[st[i].func]);
	fprintf(f, "\n  Functions by self time (top %zu of %zu)\n", shown, n);
	fprintf(f, "    self%%  total%%   self s  total s  %-*s  %s\n", w, "function", "location");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[st[i].func];

		fprintf(f, "   %5.1f%%  %5.1f%%  %7.2f  %7.2f  ",
			report_pct(st[i].self, pp->samples), report_pct(st[i].total, pp->samples),
			report_seconds(p, st[i].self), report_seconds(p, st[i].total));
		print_name(f, fn, w, true);
		fputs("  ", f);
		print_location(f, fn->file, fn->firstline, left_of(FUNC_PREFIX + w + 2),
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
 * innermost Python frame, the native code it called counted with it (a
 * line's own cost, as without --native); nat[], the samples in which it was
 * the innermost frame and machine code (--native, --kernel).
 */
static int line_costs(const struct profile *p, const struct profile_target *pp, uint64_t **py,
		      uint64_t **nat)
{
	size_t i, j;

	*py = calloc(p->nframes ? p->nframes : 1, sizeof(**py));
	*nat = calloc(p->nframes ? p->nframes : 1, sizeof(**nat));
	if (!*py || !*nat) {
		free(*py);
		free(*nat);
		return -ENOMEM;
	}
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		for (j = 0; j < s->nframes; j++) {
			uint32_t fr = s->frames[j];

			if (!is_machine(&p->funcs[p->frames[fr].func])) {
				(*py)[fr] += s->count;
				break;
			}
			if (!j)
				(*nat)[fr] += s->count;
		}
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

#define LINE_PREFIX 20 /* "   %7llu  %5.1f%%  " */
#define LINE_LOC 36

static void print_python_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			       const uint64_t *cost, const struct report_opts *o)
{
	const char *machine = p->native_mode && p->kernel_mode ? "native and kernel" :
			      p->native_mode		       ? "native" :
			      p->kernel_mode		       ? "kernel" :
								 NULL;
	char src[SRC_TEXT], fit[SRC_TEXT];
	uint32_t *ids;
	size_t n, i, shown;
	int w;

	if (top_frames(f, p, cost, o, &ids, &n, &shown, &w))
		return;
	fprintf(f, "\n  Hottest lines (top %zu of %zu)", shown, n);
	if (machine)
		fprintf(f, ": the %s code a line called counted with it", machine);
	fputc('\n', f);
	fprintf(f, "   samples   self%%  %-*s  %-*s  %s\n", LINE_LOC, "location", w, "function",
		"source");
	for (i = 0; i < shown; i++) {
		const struct profile_frame *fr = &p->frames[ids[i]];
		const struct profile_func *fn = &p->funcs[fr->func];

		src[0] = '\0';
		report_frame_source(p, pp, ids[i], src, sizeof(src));
		fprintf(f, "   %7llu  %5.1f%%  ", (unsigned long long)cost[ids[i]],
			report_pct(cost[ids[i]], pp->samples));
		print_location(f, fn->file, fr->line, LINE_LOC, false, true);
		fputs("  ", f);
		print_name(f, fn, w, src[0]);
		if (src[0])
			fprintf(f, "  %s",
				report_fit(fit, sizeof(fit), src,
					   left_of(LINE_PREFIX + LINE_LOC + 2 + w + 2),
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
		fprintf(f, "\n  Hottest native frames (top %zu of %zu)\n", shown, n);
	if (n)
		fprintf(f, "   samples   self%%  %-*s  %s\n", w, "function", "library");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[p->frames[ids[i]].func];

		fprintf(f, "   %7llu  %5.1f%%  ", (unsigned long long)cost[ids[i]],
			report_pct(cost[ids[i]], pp->samples));
		print_name(f, fn, w, true);
		fputs("  ", f);
		print_location(f, fn->file, 0, left_of(LINE_PREFIX + w + 2), true, false);
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

#define ROW_PREFIX 48 /* "    %5d  %8llu  %5.1f%%  %5.1f%%  %7llu  " */

static void print_row(FILE *f, const struct profile_target *pp, const struct func_stat *fs,
		      const struct line_row *r, const char *src)
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
			report_fit(fit, sizeof(fit), src, REPORT_TEXT_WIDTH - ROW_PREFIX,
				   REPORT_FIT_RIGHT));
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
					  texts + k * SRC_TEXT);
	}
	free(texts);
}

static void print_func_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
			     const struct func_stat *fs)
{
	const struct profile_func *fn = &p->funcs[fs->func];
	struct line_row *rows;
	size_t n;
	char name[REPORT_FIELD], counts[128];
	int changed;

	snprintf(counts, sizeof(counts),
		 "  (%llu samples, %.1f%% of the process; %.1f%% in the function itself)",
		 (unsigned long long)fs->total, report_pct(fs->total, pp->samples),
		 report_pct(fs->self, fs->total));
	report_fit(name, sizeof(name), fn->qualname, NAME_MAX, REPORT_FIT_RIGHT);
	fprintf(f, "\n  Line by line: %s  ", name);
	print_location(f, fn->file, fn->firstline,
		       left_of(16 + report_cols(name) + 2 + (int)strlen(counts)), false, false);
	fprintf(f, "%s\n", counts);
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
		print_func_lines(f, p, pp, &st[i]);
		shown++;
	}
	free(own);
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
