// SPDX-License-Identifier: GPL-2.0-only
/*
 * The memory sections of the text and JSON reports (--mem): growth by line
 * with its source text, like memory_profiler's Increment column, and by
 * function; the totals; the stack at the peak of resident memory; the
 * resident-size timeline (JSON). Reads only the profile model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report/report_source.h"
#include "report_mem.h"
#include "util/text.h"

static int64_t net_of(const uint64_t *b)
{
	return (int64_t)(b[PROFILE_MEM_MAPPED] - b[PROFILE_MEM_UNMAPPED]);
}

/* "1.5 MiB" into buf; signed when sign is set ("+200.0 MiB", "-4.0 KiB"). */
static const char *human(char *buf, size_t len, int64_t v, bool sign)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = v < 0 ? -(double)v : (double)v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%s%.*f %s", v < 0 ? "-" : sign ? "+" : "", u ? 1 : 0, d, units[u]);
	return buf;
}

static const struct profile_mem_stack *peak_stack(const struct profile_target *pp)
{
	return pp->mem.peak_stack ? &pp->mem.stacks[pp->mem.peak_stack - 1] : NULL;
}

/* Lines ordered by one kind of bytes, most first (ties by frame). */
static enum profile_mem_kind sort_kind;

static int cmp_kind(const void *a, const void *b)
{
	const struct mem_line_stat *x = a, *y = b;
	uint64_t lx = x->self[sort_kind], ly = y->self[sort_kind];

	return lx != ly ? (lx < ly ? 1 : -1) : x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Lines with bytes of kind, most first, into *out (n of them); the caller frees it. */
static size_t lines_by(const struct mem_line_stat *ls, size_t n, enum profile_mem_kind kind,
		       struct mem_line_stat **out)
{
	size_t i, k = 0;

	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return 0;
	for (i = 0; i < n; i++)
		if (ls[i].self[kind])
			(*out)[k++] = ls[i];
	sort_kind = kind;
	qsort(*out, k, sizeof(**out), cmp_kind);
	return k;
}

/* A line table's cells for one frame, each made safe to print. */
struct cells {
	char loc[64];		 /* "file.py:N" (base name) */
	char func[REPORT_FIELD]; /* its function */
	char src[160];		 /* its source */
};

static void line_cells(const struct profile *p, const struct profile_target *pp, uint32_t frame,
		       struct cells *c)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];
	const char *base = strrchr(fn->file, '/');
	char num[16];

	report_frame_source(p, pp, frame, c->src, sizeof(c->src));
	snprintf(c->loc, sizeof(c->loc), "%s:%s", base ? base + 1 : fn->file,
		 report_line_str(fr->line, num, sizeof(num)));
	text_sanitize(c->loc);
	text_clean(c->func, sizeof(c->func), fn->qualname);
}

/* --mem=alloc: sampled allocations never freed, by line: the leak candidates. */
static void print_live(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o, const struct mem_line_stat *ls, size_t n)
{
	struct mem_line_stat *live;
	size_t k = lines_by(ls, n, PROFILE_MEM_LIVE, &live), i,
	       shown = k < o->top_lines ? k : o->top_lines;
	char a[32], b[32];
	struct cells cell;

	fprintf(f,
		"\n  Live at the end, by line: allocated during the run and not freed (top %zu "
		"of %zu)\n",
		shown, k);
	fprintf(f, "        live  allocated  %-28s  %-16s  %s\n", "location", "function", "source");
	for (i = 0; i < shown; i++) {
		line_cells(p, pp, live[i].frame, &cell);

		fprintf(f, "  %10s %10s  %-28s  %-16s  %s\n",
			human(a, sizeof(a), live[i].self[PROFILE_MEM_LIVE], false),
			human(b, sizeof(b), live[i].self[PROFILE_MEM_ALLOCATED], false), cell.loc,
			cell.func, cell.src);
	}
	free(live);
}

/* Retained bytes held for a second or more (what a leak is made of): retained - recent. */
static uint64_t held_of(const uint64_t *b)
{
	return b[PROFILE_MEM_RETAINED] - b[PROFILE_MEM_RETAINED_RECENT];
}

/* Held bytes first, then retained (ties by frame). */
static int cmp_held(const void *a, const void *b)
{
	const struct mem_line_stat *x = a, *y = b;
	uint64_t hx = held_of(x->self), hy = held_of(y->self);

	if (hx != hy)
		return hx < hy ? 1 : -1;
	return cmp_kind(a, b);
}

/* The retained section's last line: in all, by age when known, and without a stack. */
static void retained_total(FILE *f, const struct profile *p, const struct profile_target *pp,
			   uint64_t all, uint64_t recent)
{
	char a[32], b[32], c[32], d[32];

	if (p->mem_ages)
		fprintf(f,
			"  %s retained in all: %s held 1 s or more, %s mapped in the last second "
			"before the end (in flight, not held); %s of it mapped with no Python "
			"stack\n",
			human(a, sizeof(a), all, false), human(b, sizeof(b), all - recent, false),
			human(c, sizeof(c), recent, false),
			human(d, sizeof(d), pp->mem.retained_no_stack, false));
	else
		fprintf(f, "  %s retained in all, %s of it mapped with no Python stack\n",
			human(a, sizeof(a), all, false),
			human(b, sizeof(b), pp->mem.retained_no_stack, false));
}

/*
 * What the process still holds, by the line that mapped it: exact, as every
 * release was matched to the mapping it undid (mem_ranges.h). Split by age
 * where known, held bytes first: a temporary that happened to be built when
 * the run ended is in flight, not leaked.
 */
static void print_retained(FILE *f, const struct profile *p, const struct profile_target *pp,
			   const struct report_opts *o, const struct mem_line_stat *ls, size_t n)
{
	uint64_t tot[PROFILE_MEM_NKINDS], all, recent;
	struct mem_line_stat *r;
	size_t k = lines_by(ls, n, PROFILE_MEM_RETAINED, &r), i;
	size_t shown = k < o->top_lines ? k : o->top_lines;
	char a[32], b[32], c[32], d[32];
	struct cells cell;

	if (p->mem_ages)
		qsort(r, k, sizeof(*r), cmp_held);
	profile_target__mem_totals(pp, tot);
	all = tot[PROFILE_MEM_RETAINED] + pp->mem.retained_no_stack;
	recent = tot[PROFILE_MEM_RETAINED_RECENT] + pp->mem.retained_recent_no_stack;
	fprintf(f,
		"\n  Retained at the end, by line: mapped during the run and still mapped at the "
		"end or at the process's exit (exact; %stop %zu of %zu)\n",
		p->mem_ages ? "held 1 s or more first; " : "", shown, k);
	fprintf(f, "    retained %s share      mapped  %-28s  %-16s  %s\n",
		p->mem_ages ? "  held >=1s   last 1 s " : "", "location", "function", "source");
	for (i = 0; i < shown; i++) {
		line_cells(p, pp, r[i].frame, &cell);

		fprintf(f, "  %10s ", human(a, sizeof(a), r[i].self[PROFILE_MEM_RETAINED], false));
		if (p->mem_ages)
			fprintf(f, "%11s %10s ", human(c, sizeof(c), held_of(r[i].self), false),
				human(d, sizeof(d), r[i].self[PROFILE_MEM_RETAINED_RECENT], false));
		fprintf(f, "%5.1f%% %11s  %-28s  %-16s  %s\n",
			all ? 100.0 * r[i].self[PROFILE_MEM_RETAINED] / all : 0.0,
			human(b, sizeof(b), r[i].self[PROFILE_MEM_MAPPED], false), cell.loc,
			cell.func, cell.src);
	}
	retained_total(f, p, pp, all, recent);
	free(r);
}

/* Address space mapped and given back during the run, by the line that mapped it. */
static void print_churn(FILE *f, const struct profile *p, const struct profile_target *pp,
			const struct report_opts *o, const struct mem_line_stat *ls, size_t n)
{
	double secs = p->duration_s > 0 ? p->duration_s : 1;
	struct mem_line_stat *r;
	size_t k = lines_by(ls, n, PROFILE_MEM_RELEASED, &r), i;
	size_t shown = k < o->top_lines ? k : o->top_lines;
	char a[32], b[32], c[32];
	struct cells cell;

	fprintf(f,
		"\n  Churn, by line: mapped during the run and released again, each release "
		"charged to the line that mapped the range (exact; top %zu of %zu)\n",
		shown, k);
	fprintf(f, "      mapped   released   released/s  %-28s  %-16s  %s\n", "location",
		"function", "source");
	for (i = 0; i < shown; i++) {
		line_cells(p, pp, r[i].frame, &cell);

		fprintf(f, "  %10s %10s %10s/s  %-28s  %-16s  %s\n",
			human(a, sizeof(a), r[i].self[PROFILE_MEM_MAPPED], false),
			human(b, sizeof(b), r[i].self[PROFILE_MEM_RELEASED], false),
			human(c, sizeof(c), r[i].self[PROFILE_MEM_RELEASED] / secs, false),
			cell.loc, cell.func, cell.src);
	}
	fprintf(f,
		"  not charged to a line: %s released of ranges mapped before the run (or not "
		"tracked), %s of ranges mapped with no Python stack\n",
		human(a, sizeof(a), pp->mem.released_unknown, false),
		human(b, sizeof(b), pp->mem.released_no_stack, false));
	if (pp->mem.ranges.untracked || pp->mem.ranges_unmatched || p->mem_ranges_lost)
		fprintf(f,
			"  %llu mappings (%s) not tracked (table full), %llu calls whose stack "
			"record was lost, %llu address records lost: their releases are not matched\n",
			(unsigned long long)pp->mem.ranges.untracked,
			human(a, sizeof(a), pp->mem.ranges.untracked_bytes, false),
			(unsigned long long)pp->mem.ranges_unmatched,
			(unsigned long long)p->mem_ranges_lost);
	free(r);
}

/* What was touched, mapped and unmapped, and allocated (--mem=alloc), in all. */
static void print_totals(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	uint64_t tot[PROFILE_MEM_NKINDS];
	char a[32], b[32], c[32], d[32];

	profile_target__mem_totals(pp, tot);
	fprintf(f,
		"\n  Memory: touched %s (a sampled estimate: page faults sampled 1 in %u on "
		"average, %s each), mapped %s, unmapped %s (exact: system calls)\n",
		human(a, sizeof(a), tot[PROFILE_MEM_TOUCHED], false), p->mem_period,
		human(b, sizeof(b), (int64_t)p->mem_period * p->page_size, false),
		human(c, sizeof(c), tot[PROFILE_MEM_MAPPED], false),
		human(d, sizeof(d), tot[PROFILE_MEM_UNMAPPED], false));
	fprintf(f,
		"  %s net growth by the stacks' own system calls; %llu memory records "
		"truncated, %llu partial, %llu unresolved\n",
		human(a, sizeof(a), net_of(tot), true), (unsigned long long)pp->mem.truncated,
		(unsigned long long)pp->mem.partial, (unsigned long long)pp->mem.unresolved);
	if (p->mem_alloc)
		fprintf(f,
			"  allocated %s (allocator calls sampled 1 per %s), of which live at the end "
			"%s (%s more whose record was lost)\n",
			human(a, sizeof(a), tot[PROFILE_MEM_ALLOCATED], false),
			human(b, sizeof(b), p->alloc_period, false),
			human(c, sizeof(c), tot[PROFILE_MEM_LIVE], false),
			human(d, sizeof(d), pp->mem.live_lost, false));
}

/* The peak of resident memory, and the stack sampled at it (16 frames at most). */
static void print_peak(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	const struct profile_mem_stack *peak = peak_stack(pp);
	char a[32], src[160];
	size_t i;

	fprintf(f, "  peak resident memory %s", human(a, sizeof(a), pp->mem.peak_rss, false));
	if (!peak) {
		fputs("; no page fault sampled at it\n", f);
		return;
	}
	fprintf(f, "; stack at the peak (%.2f s):\n", pp->mem.peak_t_s);
	for (i = 0; i < peak->nframes && i < 16; i++) {
		const struct profile_frame *fr = &p->frames[peak->frames[i]];
		const struct profile_func *fn = &p->funcs[fr->func];
		char num[16];

		if (report_source_line(p, pp, fn->file, fr->line, src, sizeof(src)))
			src[0] = 0;
		fputs("    ", f);
		text_put_clean(f, fn->qualname);
		fputs("  ", f);
		text_put_clean(f, fn->file);
		fprintf(f, ":%s%s%s\n", report_line_str(fr->line, num, sizeof(num)),
			src[0] ? "  " : "", src);
	}
	if (peak->nframes > 16)
		fprintf(f, "    ... %u more frames\n", peak->nframes - 16);
}

/* Growth by line, then (--mem=alloc) what is live at the end by line. -ENOMEM if not shown. */
static int print_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o)
{
	struct mem_line_stat *ls = NULL;
	char a[32], b[32], c[32], d[32];
	struct cells cell;
	size_t n = 0, i, shown;

	if (profile_target__mem_line_stats(p, pp, &ls, &n)) {
		fprintf(f, "  (out of memory)\n");
		return -ENOMEM;
	}
	shown = n < o->top_lines ? n : o->top_lines;
	fprintf(f, "\n  Memory growth by line (top %zu of %zu)\n", shown, n);
	fprintf(f, "     touched     mapped   unmapped         net  %-28s  %-16s  %s\n", "location",
		"function", "source");
	for (i = 0; i < shown; i++) {
		line_cells(p, pp, ls[i].frame, &cell);

		fprintf(f, "  %10s %10s %10s %11s  %-28s  %-16s  %s\n",
			human(a, sizeof(a), ls[i].self[PROFILE_MEM_TOUCHED], false),
			human(b, sizeof(b), ls[i].self[PROFILE_MEM_MAPPED], false),
			human(c, sizeof(c), ls[i].self[PROFILE_MEM_UNMAPPED], false),
			human(d, sizeof(d), net_of(ls[i].self), true), cell.loc, cell.func,
			cell.src);
	}
	if (p->mem_alloc)
		print_live(f, p, pp, o, ls, n);
	free(ls);
	return 0;
}

/* Growth by function: its own, then with its callees. */
static void print_funcs(FILE *f, const struct profile *p, const struct profile_target *pp,
			const struct report_opts *o)
{
	struct mem_func_stat *fs = NULL;
	char a[32], b[32], c[32], d[32];
	size_t n = 0, i, shown;

	if (profile_target__mem_func_stats(p, pp, &fs, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_functions ? n : o->top_functions;
	fprintf(f, "\n  Memory growth by function (top %zu of %zu; self, then with callees)\n",
		shown, n);
	fprintf(f, "     touched  total touched         net   total net  function\n");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[fs[i].func];

		fprintf(f, "  %10s  %13s %11s %11s  ",
			human(a, sizeof(a), fs[i].self[PROFILE_MEM_TOUCHED], false),
			human(b, sizeof(b), fs[i].total[PROFILE_MEM_TOUCHED], false),
			human(c, sizeof(c), net_of(fs[i].self), true),
			human(d, sizeof(d), net_of(fs[i].total), true));
		text_put_clean(f, fn->qualname);
		fputs(" (", f);
		text_put_clean(f, fn->file);
		fprintf(f, ":%d)\n", fn->firstline);
	}
	free(fs);
}

void report_mem_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		     const struct report_opts *o)
{
	struct mem_line_stat *ls = NULL;
	size_t n = 0;

	/* what is held first: the question a leak hunt asks */
	if (!profile_target__mem_line_stats(p, pp, &ls, &n)) {
		print_retained(f, p, pp, o, ls, n);
		print_churn(f, p, pp, o, ls, n);
		free(ls);
	}
	print_totals(f, p, pp);
	print_peak(f, p, pp);
	/* after "(out of memory)" the section ends */
	if (print_lines(f, p, pp, o))
		return;
	print_funcs(f, p, pp, o);
}

static void json_frame(FILE *f, const struct profile *p, uint32_t frame)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];

	fputs("{\"file\": ", f);
	json_string(f, fn->file);
	fprintf(f, ", \"line\": %d, \"qualname\": ", fr->line);
	json_string(f, fn->qualname);
}

/* A row's bytes by kind; retained_recent where the ages are known (not in older files). */
static void json_bytes(FILE *f, const struct profile *p, const uint64_t *b)
{
	fprintf(f,
		"\"touched\": %" PRIu64 ", \"mapped\": %" PRIu64 ", \"unmapped\": %" PRIu64
		", \"net\": %" PRId64 ", \"allocated\": %" PRIu64 ", \"live\": %" PRIu64
		", \"released\": %" PRIu64 ", \"retained\": %" PRIu64,
		b[PROFILE_MEM_TOUCHED], b[PROFILE_MEM_MAPPED], b[PROFILE_MEM_UNMAPPED], net_of(b),
		b[PROFILE_MEM_ALLOCATED], b[PROFILE_MEM_LIVE], b[PROFILE_MEM_RELEASED],
		b[PROFILE_MEM_RETAINED]);
	if (p->mem_ages)
		fprintf(f, ", \"retained_recent\": %" PRIu64, b[PROFILE_MEM_RETAINED_RECENT]);
}

/* What the range matching could not charge to a line, and why (mem_ranges.h). */
static void json_ranges(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	fprintf(f,
		"\"released_unknown\": %" PRIu64 ", \"released_no_stack\": %" PRIu64
		", \"retained_no_stack\": %" PRIu64 ", \"ranges_untracked\": %" PRIu64
		", \"ranges_untracked_bytes\": %" PRIu64 ", \"ranges_unmatched\": %" PRIu64
		", \"ranges_lost\": %" PRIu64,
		pp->mem.released_unknown, pp->mem.released_no_stack, pp->mem.retained_no_stack,
		pp->mem.ranges.untracked, pp->mem.ranges.untracked_bytes, pp->mem.ranges_unmatched,
		p->mem_ranges_lost);
	if (p->mem_ages)
		fprintf(f,
			", \"retained_recent_no_stack\": %" PRIu64 ", \"recent_s\": %.9g"
			", \"retained_at_ns\": %" PRIu64,
			pp->mem.retained_recent_no_stack, MEM_RANGE_RECENT_NS / 1e9,
			pp->mem.retained_at_ns);
}

void report_mem_json(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	const struct profile_mem_stack *peak = peak_stack(pp);
	struct mem_line_stat *ls = NULL, *live = NULL;
	struct mem_func_stat *fs = NULL;
	uint64_t tot[PROFILE_MEM_NKINDS];
	size_t n = 0, nfs = 0, i, k;

	profile_target__mem_totals(pp, tot);
	fprintf(f,
		",\n     \"memory\": {\"period_faults\": %u, \"page_size\": %u, "
		"\"alloc_period\": ",
		p->mem_period, p->page_size);
	if (p->mem_alloc)
		fprintf(f, "%" PRIu64 ", \"live_lost\": %" PRIu64 ", ", p->alloc_period,
			pp->mem.live_lost);
	else
		fputs("null, \"live_lost\": 0, ", f);
	json_bytes(f, p, tot);
	fprintf(f,
		", \"truncated\": %" PRIu64 ", \"partial\": %" PRIu64 ", \"unresolved\": %" PRIu64
		",\n      ",
		pp->mem.truncated, pp->mem.partial, pp->mem.unresolved);
	json_ranges(f, p, pp);
	fprintf(f, ",\n      \"peak_rss\": %" PRIu64 ", \"peak_t_s\": ", pp->mem.peak_rss);
	if (peak)
		fprintf(f, "%.3f", pp->mem.peak_t_s);
	else
		fputs("null", f);
	fputs(", \"peak_stack\": [", f);
	for (i = 0; peak && i < peak->nframes; i++) {
		fputs(i ? ", " : "", f);
		json_frame(f, p, peak->frames[i]);
		fputc('}', f);
	}
	fputs("],\n      \"lines\": [", f);
	if (profile_target__mem_line_stats(p, pp, &ls, &n)) {
		ls = NULL;
		n = 0;
	}
	for (i = 0; i < n; i++) {
		fputs(i ? ",\n        " : "\n        ", f);
		json_frame(f, p, ls[i].frame);
		fprintf(f, ", \"bytes\": %" PRIu64 ", ", ls[i].self[PROFILE_MEM_TOUCHED]);
		json_bytes(f, p, ls[i].self);
		fputc('}', f);
	}
	fputs("],\n      \"functions\": [", f);
	if (!profile_target__mem_func_stats(p, pp, &fs, &nfs)) {
		for (i = 0; i < nfs; i++) {
			const struct profile_func *fn = &p->funcs[fs[i].func];

			fputs(i ? ",\n        " : "\n        ", f);
			fputs("{\"qualname\": ", f);
			json_string(f, fn->qualname);
			fputs(", \"file\": ", f);
			json_string(f, fn->file);
			fprintf(f, ", \"line\": %d, ", fn->firstline);
			json_bytes(f, p, fs[i].self);
			fprintf(f, ", \"total_touched\": %" PRIu64 ", \"total_net\": %" PRId64 "}",
				fs[i].total[PROFILE_MEM_TOUCHED], net_of(fs[i].total));
		}
		free(fs);
	}
	fputs("],\n      \"rss_timeline\": [", f);
	for (i = 0; i < pp->mem.nrss; i++)
		fprintf(f, "%s[%.3f, %" PRIu64 "]", i ? ", " : "", pp->mem.rss[i].t_s,
			pp->mem.rss[i].rss);
	fputs("],\n      \"live_at_end\": [", f);
	k = lines_by(ls, n, PROFILE_MEM_LIVE, &live);
	for (i = 0; i < k; i++) {
		fputs(i ? ",\n        " : "\n        ", f);
		json_frame(f, p, live[i].frame);
		fprintf(f, ", \"bytes\": %" PRIu64 ", \"allocated\": %" PRIu64 "}",
			live[i].self[PROFILE_MEM_LIVE], live[i].self[PROFILE_MEM_ALLOCATED]);
	}
	fputs("]}", f);
	free(live);
	free(ls);
}
