// SPDX-License-Identifier: GPL-2.0-only
/*
 * --signatures in the reports. The collector named a sampled frame
 * "scale(x: int, factor: int)": the function's qualname, then its
 * signature. Here those functions are gathered back under their plain name
 * (same file, same first line), hottest function first, and each one's
 * signatures listed by self samples.
 */
#include <stdlib.h>
#include <string.h>
#include "report/report_common.h"
#include "report_signatures.h"
#include "util/text.h"

/* One signature of a function; group_self sums its function's signatures. */
struct sig_row {
	uint32_t func;
	uint64_t self, total, group_self;
	size_t base_len; /* the qualname's length before its signature */
};

/* The length of name's plain qualname if it carries a signature, else 0. */
static size_t sig_base_len(const char *name)
{
	const char *paren = strchr(name, '(');
	size_t len = strlen(name);

	return paren && paren > name && len && name[len - 1] == ')' ? (size_t)(paren - name) : 0;
}

/* Only for qsort's comparisons: the profile of the rows being sorted. */
static const struct profile *sort_p;

static int cmp_group(const struct sig_row *a, const struct sig_row *b)
{
	const struct profile_func *fa = &sort_p->funcs[a->func], *fb = &sort_p->funcs[b->func];
	int c = strcmp(fa->file, fb->file);

	if (c)
		return c;
	if (fa->firstline != fb->firstline)
		return fa->firstline < fb->firstline ? -1 : 1;
	if (a->base_len != b->base_len)
		return a->base_len < b->base_len ? -1 : 1;
	return strncmp(fa->qualname, fb->qualname, a->base_len);
}

static int cmp_by_group(const void *x, const void *y)
{
	return cmp_group(x, y);
}

static int cmp_rows(const void *x, const void *y)
{
	const struct sig_row *a = x, *b = y;
	int c;

	if (a->group_self != b->group_self)
		return a->group_self > b->group_self ? -1 : 1;
	c = cmp_group(a, b);
	if (c)
		return c;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(sort_p->funcs[a->func].qualname, sort_p->funcs[b->func].qualname);
}

/* The signature rows of pp, grouped by function, hottest group first. -1: out of memory. */
static int sig_rows(const struct profile *p, const struct profile_target *pp, struct sig_row **out,
		    size_t *n)
{
	struct func_stat *st;
	struct sig_row *rows;
	size_t nst, i, j, k = 0;

	if (profile_target__func_stats(p, pp, &st, &nst))
		return -1;
	rows = calloc(nst ? nst : 1, sizeof(*rows));
	if (!rows) {
		free(st);
		return -1;
	}
	for (i = 0; i < nst; i++) {
		size_t b = sig_base_len(p->funcs[st[i].func].qualname);

		if (b && (st[i].self || st[i].total))
			rows[k++] = (struct sig_row){ st[i].func, st[i].self, st[i].total, 0, b };
	}
	free(st);
	sort_p = p;
	qsort(rows, k, sizeof(*rows), cmp_by_group);
	for (i = 0; i < k; i = j) {
		uint64_t sum = 0;
		size_t m;

		for (j = i; j < k && !cmp_group(&rows[i], &rows[j]); j++)
			sum += rows[j].self;
		for (m = i; m < j; m++)
			rows[m].group_self = sum;
	}
	qsort(rows, k, sizeof(*rows), cmp_rows);
	*out = rows;
	*n = k;
	return 0;
}

void report_signatures_text(FILE *f, const struct profile *p, const struct profile_target *pp,
			    const struct report_opts *o)
{
	struct sig_row *rows;
	size_t n, i, groups = 0;
	char lbuf[24], q[REPORT_FIELD], file[REPORT_FIELD];

	if (!p->signatures)
		return;
	if (sig_rows(p, pp, &rows, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	fprintf(f,
		"\n  Signatures: the two innermost frames by their arguments' types (in the run: "
		"%llu samples with them, %llu without, %llu frames over the limit)\n",
		(unsigned long long)p->sig_samples, (unsigned long long)p->sig_missing,
		(unsigned long long)p->sig_capped);
	fprintf(f, "    self%%  total%%  samples  function, then each signature\n");
	for (i = 0; i < n; i++) {
		const struct profile_func *fn = &p->funcs[rows[i].func];

		if (!i || cmp_group(&rows[i - 1], &rows[i])) {
			if (groups++ >= o->top_functions)
				break;
			snprintf(q, sizeof(q), "%.*s", (int)rows[i].base_len, fn->qualname);
			fprintf(f, "   %5.1f%%          %7llu  ",
				report_pct(rows[i].group_self, pp->samples),
				(unsigned long long)rows[i].group_self);
			text_put_clean(f, q);
			fprintf(f, "  %s:%s\n", text_clean(file, sizeof(file), fn->file),
				report_line_str(fn->firstline, lbuf, sizeof(lbuf)));
		}
		fprintf(f, "   %5.1f%%  %5.1f%%  %7llu    %s\n",
			report_pct(rows[i].self, pp->samples),
			report_pct(rows[i].total, pp->samples), (unsigned long long)rows[i].self,
			text_clean(q, sizeof(q), fn->qualname + rows[i].base_len));
	}
	if (!n)
		fprintf(f, "    (no sampled function had arguments)\n");
	free(rows);
}

void report_signatures_json(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	struct sig_row *rows;
	size_t n = 0, i;
	char *base;

	if (!p->signatures)
		return;
	if (sig_rows(p, pp, &rows, &n))
		n = 0, rows = NULL;
	fputs(",\n     \"signatures\": [", f);
	for (i = 0; i < n; i++) {
		const struct profile_func *fn = &p->funcs[rows[i].func];
		bool first = !i || cmp_group(&rows[i - 1], &rows[i]);

		if (first) {
			base = strndup(fn->qualname, rows[i].base_len);
			fputs(i ? "]},\n     {\"function\": " : "\n     {\"function\": ", f);
			json_string(f, base ? base : "");
			free(base);
			fputs(", \"file\": ", f);
			json_string(f, fn->file);
			fprintf(f, ", \"line\": %d, \"self\": %llu, \"signatures\": [",
				fn->firstline, (unsigned long long)rows[i].group_self);
		}
		fputs(first ? "{\"signature\": " : ", {\"signature\": ", f);
		json_string(f, fn->qualname + rows[i].base_len);
		fprintf(f, ", \"func\": %u, \"self\": %llu, \"total\": %llu}", rows[i].func,
			(unsigned long long)rows[i].self, (unsigned long long)rows[i].total);
	}
	fputs(n ? "]}]" : "]", f);
	free(rows);
}
