// SPDX-License-Identifier: GPL-2.0-only
/*
 * `pybpfprof diff` as text and as JSON, and the one way either (or the
 * differential flame graph) is written: to a file put in place whole, or to
 * stdout, plain text made safe to print first.
 *
 * The text puts what shrank (got faster) before what grew, each biggest
 * change first: in a diff of shares one function's loss is others' gain, so
 * a slow path that shrank and the fast path that took its place change by
 * about as much, and which of them one order would put first is noise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "saved/report_diff.h"
#include "report/report_common.h"
#include "util/outfile.h"
#include "util/text.h"

static double delta(const double *v)
{
	return v[DIFF_AFTER] - v[DIFF_BEFORE];
}

static bool both(const struct report_diff_row *r)
{
	return r->in[DIFF_BEFORE] && r->in[DIFF_AFTER];
}

static void side_line(FILE *f, const char *what, const struct report_diff_side *sd)
{
	char buf[256];

	fprintf(f, "%s ", what);
	text_put_clean(f, sd->path);
	fprintf(f, ": %s\n", report_diff_side_str(sd, buf, sizeof(buf)));
}

static void row_line(FILE *f, const struct report_diff_row *r)
{
	char num[16], ci[32];

	/* "±" is two bytes and one column: padded to 8 bytes, 7 columns */
	snprintf(ci, sizeof(ci), "±%.1f%s", report_ci_half_pp(r->d_self),
		 report_ci_significant(r->d_self) ? "*" : "");
	fprintf(f, "  %6.1f%% %6.1f%% %+7.1fpp  %-8s %6.1f%% %6.1f%% %+7.1fpp  ",
		r->self_pct[DIFF_BEFORE], r->self_pct[DIFF_AFTER], delta(r->self_pct), ci,
		r->total_pct[DIFF_BEFORE], r->total_pct[DIFF_AFTER], delta(r->total_pct));
	text_put_clean(f, r->qualname);
	fputs("  ", f);
	text_put_clean(f, r->file);
	fprintf(f, ":%s\n", report_line_str(r->line, num, sizeof(num)));
}

/*
 * The rows whose self (else total) share moved the way sign says (-1 shrank,
 * +1 grew), in report_diff_cmp's order, at most max; those only one side has
 * with one_side (lines: edited code moves them), else they have their own list.
 */
static void table(FILE *f, const struct report_diff_row *rows, size_t n, int sign, unsigned max,
		  const char *title, bool one_side)
{
	size_t i, shown = 0, all = 0;

	for (i = 0; i < n; i++) {
		const struct report_diff_row *r = &rows[i];
		double ds = delta(r->self_pct), dt = delta(r->total_pct);

		all += (one_side || both(r)) && (ds ? ds * sign > 0 : dt * sign > 0);
	}
	if (!all) {
		fprintf(f, "\n  %s: none\n", title);
		return;
	}
	fprintf(f, "\n  %s (top %zu of %zu)\n", title, all < max ? all : (size_t)max, all);
	fputs("   self%: before   after     delta  ±95%   total%: before   after     delta  "
	      "function  location\n",
	      f);
	for (i = 0; i < n && shown < max; i++) {
		const struct report_diff_row *r = &rows[i];
		double ds = delta(r->self_pct), dt = delta(r->total_pct);

		if (!(one_side || both(r)) || !(ds ? ds * sign > 0 : dt * sign > 0))
			continue;
		row_line(f, r);
		shown++;
	}
}

/* Functions that one profile has and the other has not, biggest first. */
static void only_in(FILE *f, const struct report_diff *d, int s, unsigned max)
{
	size_t i, shown = 0, all = 0;
	double sum = 0;

	for (i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].in[s] && !d->funcs[i].in[!s]) {
			all++;
			sum += d->funcs[i].self_pct[s];
		}
	if (!all) {
		fprintf(f, "\n  Only in %s: none\n", s == DIFF_BEFORE ? "BEFORE" : "AFTER");
		return;
	}
	fprintf(f, "\n  Only in %s: %zu function%s, %.1f%% of its samples (top %zu)\n",
		s == DIFF_BEFORE ? "BEFORE" : "AFTER", all, all == 1 ? "" : "s", sum,
		all < max ? all : (size_t)max);
	for (i = 0; i < d->nfuncs && shown < max; i++)
		if (d->funcs[i].in[s] && !d->funcs[i].in[!s]) {
			row_line(f, &d->funcs[i]);
			shown++;
		}
}

int report_diff_text(FILE *f, const struct report_diff *d, const struct report_diff_opts *o)
{
	size_t i, matched = 0;

	fprintf(f, "pybpfprof %s diff: %s profiles, in shares of each profile's own samples\n",
		o->tool_version, d->side[DIFF_AFTER].p->mode);
	side_line(f, "before:", &d->side[DIFF_BEFORE]);
	side_line(f, "after: ", &d->side[DIFF_AFTER]);
	for (i = 0; i < d->nfuncs; i++)
		matched += both(&d->funcs[i]);
	fprintf(f, "functions: %zu in both, %zu only in BEFORE or only in AFTER\n", matched,
		d->nfuncs - matched);
	fputs("±: half the 95 % interval of the self delta from both runs' sample counts; "
	      "*: significant (the interval excludes 0)\n",
	      f);
	table(f, d->funcs, d->nfuncs, -1, o->top_functions,
	      "Functions whose share shrank (faster), biggest change first", false);
	table(f, d->funcs, d->nfuncs, 1, o->top_functions,
	      "Functions whose share grew (slower), biggest change first", false);
	only_in(f, d, DIFF_BEFORE, o->top_functions);
	only_in(f, d, DIFF_AFTER, o->top_functions);
	table(f, d->lines, d->nlines, -1, o->top_lines, "Lines whose share shrank", true);
	table(f, d->lines, d->nlines, 1, o->top_lines, "Lines whose share grew", true);
	return ferror(f) ? -EIO : 0;
}

static void json_side(FILE *f, const char *name, const struct report_diff_side *sd)
{
	struct report_totals t = report_totals(sd->p);

	fprintf(f, "  \"%s\": {\"path\": ", name);
	json_string(f, sd->path);
	fprintf(f,
		", \"samples\": %llu, \"frequency_hz\": %u, \"duration_s\": %.3f, "
		"\"processes\": %zu, \"dropped\": %llu, \"truncated\": %llu, \"unresolved\": %llu, "
		"\"partial\": %llu},\n",
		(unsigned long long)sd->samples, sd->p->frequency_hz, sd->p->duration_s,
		sd->p->ntargets, (unsigned long long)sd->p->counts.dropped,
		(unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		(unsigned long long)t.partial);
}

static void json_rows(FILE *f, const char *name, const struct report_diff_row *rows, size_t n)
{
	size_t i;

	fprintf(f, "  \"%s\": [", name);
	for (i = 0; i < n; i++) {
		const struct report_diff_row *r = &rows[i];

		fputs(i ? ",\n    {\"qualname\": " : "\n    {\"qualname\": ", f);
		json_string(f, r->qualname);
		fputs(", \"file\": ", f);
		json_string(f, r->file);
		fprintf(f,
			", \"line\": %d, \"before_self_pct\": %.4f, \"after_self_pct\": %.4f, "
			"\"delta_self_pp\": %.4f, \"delta_self_ci95\": [%.4f, %.4f], "
			"\"delta_self_significant\": %s, \"before_total_pct\": %.4f, "
			"\"after_total_pct\": %.4f, \"delta_total_pp\": %.4f, "
			"\"delta_total_ci95\": [%.4f, %.4f], \"delta_total_significant\": %s, "
			"\"before_self\": %llu, \"after_self\": %llu, \"before_total\": %llu, "
			"\"after_total\": %llu, \"in_before\": %s, \"in_after\": %s}",
			r->line, r->self_pct[DIFF_BEFORE], r->self_pct[DIFF_AFTER],
			delta(r->self_pct), 100.0 * r->d_self.lo, 100.0 * r->d_self.hi,
			report_ci_significant(r->d_self) ? "true" : "false",
			r->total_pct[DIFF_BEFORE], r->total_pct[DIFF_AFTER], delta(r->total_pct),
			100.0 * r->d_total.lo, 100.0 * r->d_total.hi,
			report_ci_significant(r->d_total) ? "true" : "false",
			(unsigned long long)r->self[DIFF_BEFORE],
			(unsigned long long)r->self[DIFF_AFTER],
			(unsigned long long)r->total[DIFF_BEFORE],
			(unsigned long long)r->total[DIFF_AFTER],
			r->in[DIFF_BEFORE] ? "true" : "false",
			r->in[DIFF_AFTER] ? "true" : "false");
	}
	fputs(n ? "\n  ]" : "]", f);
}

int report_diff_json(FILE *f, const struct report_diff *d, const struct report_diff_opts *o)
{
	fputs("{\n  \"pybpfprof\": ", f);
	json_string(f, o->tool_version);
	fputs(",\n  \"kind\": \"diff\",\n  \"schema\": 1,\n  \"mode\": ", f);
	json_string(f, d->side[DIFF_AFTER].p->mode);
	fputs(",\n", f);
	json_side(f, "before", &d->side[DIFF_BEFORE]);
	json_side(f, "after", &d->side[DIFF_AFTER]);
	json_rows(f, "functions", d->funcs, d->nfuncs);
	fputs(",\n", f);
	json_rows(f, "lines", d->lines, d->nlines);
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
}

static const struct {
	const char *name, *ext;
	int (*write)(FILE *f, const struct report_diff *d, const struct report_diff_opts *o);
} formats[] = {
	[DIFF_TEXT] = { "text", ".txt", report_diff_text },
	[DIFF_JSON] = { "json", ".json", report_diff_json },
	[DIFF_HTML] = { "html", ".html", report_diff_html },
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

int report_diff_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return (int)i;
	return -1;
}

int report_diff_format_for_path(const char *path)
{
	size_t i, n = strlen(path);

	for (i = 0; i < NFORMATS; i++) {
		size_t e = strlen(formats[i].ext);

		if (n > e && !strcmp(path + n - e, formats[i].ext))
			return (int)i;
	}
	return -1;
}

struct diff_fill {
	int fmt;
	const struct report_diff *d;
	const struct report_diff_opts *o;
};

/* Text carries the targets' names and paths: built in memory and made safe to print. */
static int fill_diff(FILE *f, void *arg)
{
	const struct diff_fill *a = arg;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int err;

	if (a->fmt != DIFF_TEXT)
		return formats[a->fmt].write(f, a->d, a->o);
	mem = open_memstream(&text, &len);
	if (!mem)
		return -errno;
	err = report_diff_text(mem, a->d, a->o);
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

int report_diff_write(int fmt, struct outfile *of, const struct report_diff *d,
		      const struct report_diff_opts *o, char *why, size_t whylen)
{
	struct diff_fill a = { fmt, d, o };
	int err;

	if (fmt < 0 || (size_t)fmt >= NFORMATS) {
		snprintf(why, whylen, "no such diff format");
		return -EINVAL;
	}
	if (of)
		return outfile__write(of, fill_diff, &a, why, whylen);
	err = fill_diff(stdout, &a);
	if (fflush(stdout) && !err)
		err = -errno;
	if (err)
		snprintf(why, whylen, "%s", strerror(-err));
	return err;
}
