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

static int cmp_live(const void *a, const void *b)
{
	const struct mem_line_stat *x = a, *y = b;
	uint64_t lx = x->self[PROFILE_MEM_LIVE], ly = y->self[PROFILE_MEM_LIVE];

	return lx != ly ? (lx < ly ? 1 : -1) : x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Lines with live bytes, most first, into *out (n of them); the caller frees it. */
static size_t live_lines(const struct mem_line_stat *ls, size_t n, struct mem_line_stat **out)
{
	size_t i, k = 0;

	*out = calloc(n + 1, sizeof(**out));
	if (!*out)
		return 0;
	for (i = 0; i < n; i++)
		if (ls[i].self[PROFILE_MEM_LIVE])
			(*out)[k++] = ls[i];
	qsort(*out, k, sizeof(**out), cmp_live);
	return k;
}

/* A line table's cells for one frame: "file.py:N" (base name), its source; returns its function. */
static const char *line_cells(const struct profile *p, const struct profile_target *pp,
			      uint32_t frame, char *loc, size_t loclen, char *src, size_t srclen)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];
	const char *base = strrchr(fn->file, '/');

	char num[16];

	report_frame_source(p, pp, frame, src, srclen);
	snprintf(loc, loclen, "%s:%s", base ? base + 1 : fn->file,
		 report_line_str(fr->line, num, sizeof(num)));
	return fn->qualname;
}

/* --mem=alloc: sampled allocations never freed, by line: the leak candidates. */
static void print_live(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o, const struct mem_line_stat *ls, size_t n)
{
	struct mem_line_stat *live;
	size_t k = live_lines(ls, n, &live), i, shown = k < o->top_lines ? k : o->top_lines;
	char a[32], b[32], src[160];

	fprintf(f,
		"\n  Live at the end, by line: allocated during the run and not freed (top %zu "
		"of %zu)\n",
		shown, k);
	fprintf(f, "        live  allocated  %-28s  %-16s  %s\n", "location", "function", "source");
	for (i = 0; i < shown; i++) {
		char loc[64];
		const char *qualname = line_cells(p, pp, live[i].frame, loc, sizeof(loc), src,
						  sizeof(src));

		fprintf(f, "  %10s %10s  %-28s  %-16s  %s\n",
			human(a, sizeof(a), live[i].self[PROFILE_MEM_LIVE], false),
			human(b, sizeof(b), live[i].self[PROFILE_MEM_ALLOCATED], false), loc,
			qualname, src);
	}
	free(live);
}

/* What was touched, mapped and unmapped, and allocated (--mem=alloc), in all. */
static void print_totals(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	uint64_t tot[PROFILE_MEM_NKINDS];
	char a[32], b[32], c[32], d[32];

	profile_target__mem_totals(pp, tot);
	fprintf(f,
		"\n  Memory: touched %s (page faults sampled 1 in %u on average, %s each), "
		"mapped %s, unmapped %s\n",
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
		fprintf(f, "    %s  %s:%s%s%s\n", fn->qualname, fn->file,
			report_line_str(fr->line, num, sizeof(num)), src[0] ? "  " : "", src);
	}
	if (peak->nframes > 16)
		fprintf(f, "    ... %u more frames\n", peak->nframes - 16);
}

/* Growth by line, then (--mem=alloc) what is live at the end by line. -ENOMEM if not shown. */
static int print_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o)
{
	struct mem_line_stat *ls = NULL;
	char a[32], b[32], c[32], d[32], src[160];
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
		char loc[64];
		const char *qualname = line_cells(p, pp, ls[i].frame, loc, sizeof(loc), src,
						  sizeof(src));

		fprintf(f, "  %10s %10s %10s %11s  %-28s  %-16s  %s\n",
			human(a, sizeof(a), ls[i].self[PROFILE_MEM_TOUCHED], false),
			human(b, sizeof(b), ls[i].self[PROFILE_MEM_MAPPED], false),
			human(c, sizeof(c), ls[i].self[PROFILE_MEM_UNMAPPED], false),
			human(d, sizeof(d), net_of(ls[i].self), true), loc, qualname, src);
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

		fprintf(f, "  %10s  %13s %11s %11s  %s (%s:%d)\n",
			human(a, sizeof(a), fs[i].self[PROFILE_MEM_TOUCHED], false),
			human(b, sizeof(b), fs[i].total[PROFILE_MEM_TOUCHED], false),
			human(c, sizeof(c), net_of(fs[i].self), true),
			human(d, sizeof(d), net_of(fs[i].total), true), fn->qualname, fn->file,
			fn->firstline);
	}
	free(fs);
}

void report_mem_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		     const struct report_opts *o)
{
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

static void json_bytes(FILE *f, const uint64_t *b)
{
	fprintf(f,
		"\"touched\": %" PRIu64 ", \"mapped\": %" PRIu64 ", \"unmapped\": %" PRIu64
		", \"net\": %" PRId64 ", \"allocated\": %" PRIu64 ", \"live\": %" PRIu64,
		b[PROFILE_MEM_TOUCHED], b[PROFILE_MEM_MAPPED], b[PROFILE_MEM_UNMAPPED], net_of(b),
		b[PROFILE_MEM_ALLOCATED], b[PROFILE_MEM_LIVE]);
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
	json_bytes(f, tot);
	fprintf(f,
		", \"truncated\": %" PRIu64 ", \"partial\": %" PRIu64 ", \"unresolved\": %" PRIu64
		",\n      \"peak_rss\": %" PRIu64 ", \"peak_t_s\": ",
		pp->mem.truncated, pp->mem.partial, pp->mem.unresolved, pp->mem.peak_rss);
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
		json_bytes(f, ls[i].self);
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
			json_bytes(f, fs[i].self);
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
	k = live_lines(ls, n, &live);
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
