/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `pybpfprof diff`: two profiles compared by function and by line, in shares
 * of each profile's own samples (so runs at different rates and of different
 * lengths compare), and written as text, JSON or a differential flame graph.
 *
 * Functions match by qualname and module: the same qualname and the same
 * file key (report_diff_file_key), else, for files that are no library's,
 * the same qualname and the longest run of equal trailing path components
 * (at least the file name), each BEFORE function taken once. Lines match by
 * matched function and line number. Processes are merged: pids of two runs
 * say nothing about each other.
 */
#ifndef PYBPFPROF_REPORT_DIFF_H
#define PYBPFPROF_REPORT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"
#include "report/report_ci.h"

struct outfile;

enum { DIFF_BEFORE, DIFF_AFTER };

/* One function or one line of either profile; [DIFF_BEFORE] and [DIFF_AFTER]. */
struct report_diff_row {
	const char *qualname; /* AFTER's spelling when it has the row, else BEFORE's */
	const char *file;
	int line;		    /* functions: first line; lines: the line (-1: unknown) */
	uint64_t self[2], total[2]; /* samples */
	double self_pct[2], total_pct[2];
	/* 95 % intervals of AFTER's share minus BEFORE's (fractions; report_ci.h) */
	struct report_ci d_self, d_total;
	bool in[2];    /* has samples in that profile */
	bool claimed;  /* while building: an AFTER function matched it */
	uint64_t seen; /* while building: the last stack its total counted */
};

struct report_diff_side {
	const struct profile *p;
	const char *path;    /* the file it was read from, for the header */
	uint64_t samples;    /* every sample with a Python stack: the shares' whole */
	struct profile view; /* stacks by matched function, one frame per function */
};

struct report_diff {
	struct report_diff_side side[2];
	struct report_diff_row *funcs, *lines; /* biggest change first (report_diff_cmp) */
	size_t nfuncs, nlines;
};

struct report_diff_opts {
	const char *tool_version;
	unsigned top_functions, top_lines; /* rows per table of the text report */
};

/*
 * Compares two profiles (not changed; they must outlive d). 0, -ENOMEM, or
 * -EINVAL with the reason in why: different modes, or a profile without samples.
 */
int report_diff__build(struct report_diff *d, const struct profile *before, const char *before_path,
		       const struct profile *after, const char *after_path, char *why,
		       size_t whylen);
void report_diff__free(struct report_diff *d);
/*
 * A profile's header: "N samples at F Hz in D s, P processes (D dropped,
 * T truncated, U unresolved, P partial)". Returns buf.
 */
char *report_diff_side_str(const struct report_diff_side *sd, char *buf, size_t len);

/*
 * The part of a file's path that names its module whatever the root: what
 * follows the last site-packages/ or dist-packages/ ("pkg:" before it), else
 * the last lib/pythonX.Y/ or lib64/pythonX.Y/ ("lib:"); else the whole path,
 * and *library false (a program's own file, matched by trailing components).
 * Returns buf.
 */
char *report_diff_file_key(const char *file, bool *library, char *buf, size_t len);
/* Trailing path components two paths share ("a/b/c.py" and "x/b/c.py": 2). */
unsigned report_diff_common_suffix(const char *a, const char *b);
/*
 * Whether a function's self share grew by more than pp percentage points
 * beyond the luck of the draw: the low end of the 95 % interval of its growth
 * lies above pp (--fail-above; pp >= 0), which also makes it significant.
 */
bool report_diff_row_over(const struct report_diff_row *r, double pp);

/*
 * Order of the rows: larger |delta self pp| first, then larger |delta total
 * pp|, then qualname, file and line; qsort-compatible.
 */
int report_diff_cmp(const void *a, const void *b);

enum report_diff_format { DIFF_TEXT, DIFF_JSON, DIFF_HTML };

/* By -f name or by a file's ending (.txt, .json, .html); -1 if none. */
int report_diff_format_find(const char *name);
int report_diff_format_for_path(const char *path);
/* Names and endings, for messages. */
#define REPORT_DIFF_FORMATS "text, json, html"
#define REPORT_DIFF_EXTENSIONS ".txt, .json, .html"

/* The writers, to f. 0 or -errno. */
int report_diff_text(FILE *f, const struct report_diff *d, const struct report_diff_opts *o);
int report_diff_json(FILE *f, const struct report_diff *d, const struct report_diff_opts *o);
int report_diff_html(FILE *f, const struct report_diff *d, const struct report_diff_opts *o);

/*
 * Writes in format fmt to of (outfile__open'ed: put in place whole) or to
 * stdout (of NULL); text is made safe to print. 0, or -errno with the reason in why.
 */
int report_diff_write(int fmt, struct outfile *of, const struct report_diff *d,
		      const struct report_diff_opts *o, char *why, size_t whylen);

#endif
