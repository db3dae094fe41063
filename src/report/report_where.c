// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Python / native / system split in the text and JSON reports, as
 * scalene shows it: of the CPU samples charged to a function or a line,
 * how many ran the interpreter's own code, other native code (C extensions,
 * libraries) and the kernel. Shares are of the samples whose place is
 * known, which is every CPU sample of a process whose interpreter code was
 * found; the text says how many that is.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "report/report_common.h"
#include "report_where.h"
#include "util/text.h"

#define WHERE_NAME 40

static uint64_t split_sum(const uint64_t *s)
{
	return s[PROFILE_WHERE_PYTHON] + s[PROFILE_WHERE_NATIVE] + s[PROFILE_WHERE_SYSTEM];
}

/* "  61.0%   30.2%    8.8%  " */
static void print_shares(FILE *f, const uint64_t *s)
{
	uint64_t n = split_sum(s);

	fprintf(f, "  %5.1f%%  %5.1f%%  %5.1f%%  %7llu  ", report_pct(s[PROFILE_WHERE_PYTHON], n),
		report_pct(s[PROFILE_WHERE_NATIVE], n), report_pct(s[PROFILE_WHERE_SYSTEM], n),
		(unsigned long long)n);
}

/* Ids with a split, by their samples with a place, most first (then by id). */
static int cmp_by_split(const void *a, const void *b, void *arg)
{
	const profile_where_split *split = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t nx = split_sum(split[x]), ny = split_sum(split[y]);

	if (nx != ny)
		return nx < ny ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* The ids of split (n entries) with samples, sorted; *count of them. NULL: out of memory. */
static uint32_t *by_samples(const profile_where_split *split, size_t n, size_t *count)
{
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	size_t i;

	*count = 0;
	if (!ids)
		return NULL;
	for (i = 0; i < n; i++)
		if (split_sum(split[i]))
			ids[(*count)++] = (uint32_t)i;
	qsort_r(ids, *count, sizeof(*ids), cmp_by_split, (void *)split);
	return ids;
}

#define WHERE_PREFIX 35 /* print_shares' columns */
#define WHERE_LOC 24	/* the least a location is fitted to */

/* The widest line: as the text report's, wider with --native's and --kernel's names. */
static int where_width(const struct profile *p)
{
	return p->native_mode || p->kernel_mode ? REPORT_TEXT_WIDTH : REPORT_SCREEN_WIDTH;
}

/* A name's columns: WHERE_NAME, less when the line would leave its location too few. */
static int name_width(const struct profile *p)
{
	int most = where_width(p) - WHERE_PREFIX - 2 - WHERE_LOC;

	return most < WHERE_NAME ? most : WHERE_NAME;
}

/*
 * "file:line" into buf (REPORT_FIELD bytes), its path cut from the left to
 * fit after used columns of a line width wide.
 */
static char *where_location(char *buf, const char *file, int line, int used, int width)
{
	char loc[REPORT_FIELD], num[16];
	int room = width - used;

	snprintf(loc, sizeof(loc), "%s:%s", file, report_line_str(line, num, sizeof(num)));
	return report_fit(buf, REPORT_FIELD, loc, room < WHERE_LOC ? WHERE_LOC : room,
			  REPORT_FIT_LEFT);
}

static void print_funcs(FILE *f, const struct profile *p, const profile_where_split *by_func,
			size_t top)
{
	char q[REPORT_FIELD], file[REPORT_FIELD];
	size_t n, i;
	uint32_t *ids = by_samples(by_func, p->nfuncs, &n);

	if (!ids) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	fprintf(f, "    python  native  system  samples  function\n");
	for (i = 0; i < n && i < top; i++) {
		const struct profile_func *fn = &p->funcs[ids[i]];

		print_shares(f, by_func[ids[i]]);
		report_fit(q, sizeof(q), fn->qualname, name_width(p), REPORT_FIT_RIGHT);
		fprintf(f, "%s  %s\n", q,
			where_location(file, fn->file, fn->firstline,
				       WHERE_PREFIX + report_cols(q) + 2, where_width(p)));
	}
	free(ids);
}

static void print_lines(FILE *f, const struct profile *p, const profile_where_split *by_frame,
			size_t top)
{
	char q[REPORT_FIELD], file[REPORT_FIELD];
	size_t n, i;
	uint32_t *ids = by_samples(by_frame, p->nframes, &n);

	if (!ids) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	fprintf(f, "    python  native  system  samples  line\n");
	for (i = 0; i < n && i < top; i++) {
		const struct profile_frame *fr = &p->frames[ids[i]];
		const struct profile_func *fn = &p->funcs[fr->func];

		print_shares(f, by_frame[ids[i]]);
		report_fit(q, sizeof(q), fn->qualname, name_width(p), REPORT_FIT_RIGHT);
		fprintf(f, "%s  %s\n",
			where_location(file, fn->file, fr->line, WHERE_PREFIX + report_cols(q) + 2,
				       where_width(p)),
			q);
	}
	free(ids);
}

void report_where_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o)
{
	profile_where_split *by_func, *by_frame, total;

	if (profile_target__where_stats(p, pp, &by_func, &by_frame, total)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	if (!by_func)
		return;
	fprintf(f,
		"\n  Python / native / system: %.1f%% / %.1f%% / %.1f%% "
		"(of %llu samples whose place is known)\n",
		report_pct(total[PROFILE_WHERE_PYTHON], split_sum(total)),
		report_pct(total[PROFILE_WHERE_NATIVE], split_sum(total)),
		report_pct(total[PROFILE_WHERE_SYSTEM], split_sum(total)),
		(unsigned long long)split_sum(total));
	print_funcs(f, p, by_func, o->top_functions);
	fputc('\n', f);
	print_lines(f, p, by_frame, o->top_lines);
	free(by_func);
	free(by_frame);
}

void report_where_json(FILE *f, const uint64_t *split)
{
	if (!split || !split_sum(split))
		return;
	fprintf(f, ", \"where\": {\"python\": %llu, \"native\": %llu, \"system\": %llu}",
		(unsigned long long)split[PROFILE_WHERE_PYTHON],
		(unsigned long long)split[PROFILE_WHERE_NATIVE],
		(unsigned long long)split[PROFILE_WHERE_SYSTEM]);
}
