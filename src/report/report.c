// SPDX-License-Identifier: GPL-2.0-only
/*
 * The writer registry: the writers by name and file ending, and the one way
 * a report is written (plain text made safe to print, the file put in place
 * whole). The helpers writers share are in report_common.c and
 * report_source.c; only this file knows the writers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/outfile.h"
#include "report/report.h"
#include "util/text.h"

static const struct report_writer *writers[] = {
	&report_text,	  &report_json,	      &report_folded,  &report_flame, &report_speedscope,
	&report_pstats,	  &report_pprof,      &report_svg,     &report_tree,  &report_dot,
	&report_perfetto, &report_trace_json, &report_heatmap,
};
#define NWRITERS (sizeof(writers) / sizeof(writers[0]))

const struct report_writer *report_find(const char *name)
{
	size_t i;

	for (i = 0; i < NWRITERS; i++)
		if (!strcmp(writers[i]->name, name))
			return writers[i];
	return NULL;
}

const struct report_writer *report_for_path(const char *path)
{
	const struct report_writer *best = NULL;
	size_t i, j, n = path ? strlen(path) : 0, best_len = 0;

	for (i = 0; i < NWRITERS; i++)
		for (j = 0; j < 3 && writers[i]->exts[j]; j++) {
			size_t e = strlen(writers[i]->exts[j]);

			if (e < n && e > best_len && !strcmp(path + n - e, writers[i]->exts[j])) {
				best = writers[i];
				best_len = e;
			}
		}
	return best;
}

const char *report_names(void)
{
	return "text, json, folded, flamegraph, speedscope, pstats, pprof, svg, tree, dot, "
	       "perfetto, trace-json, heatmap";
}

char *report_extensions(char *buf, size_t len)
{
	size_t i, j, n = 0;

	buf[0] = '\0';
	for (i = 0; i < NWRITERS; i++)
		for (j = 0; j < 3 && writers[i]->exts[j] && n < len; j++)
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", writers[i]->exts[j]);
	return buf;
}

/*
 * Names, paths and command lines in the profile are the target's, escape
 * sequences included: a plain-text report is built in memory and made safe
 * to print before it reaches the terminal or the file.
 */
static int write_plain_text(const struct report_writer *w, FILE *f, const struct profile *p,
			    const struct report_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int err;

	if (!mem)
		return -errno;
	err = w->write(mem, p, o);
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

struct report_fill {
	const struct report_writer *w;
	const struct profile *p;
	const struct report_opts *o;
};

static int fill_report(FILE *f, void *arg)
{
	const struct report_fill *a = arg;

	return a->w->plain_text ? write_plain_text(a->w, f, a->p, a->o) :
				  a->w->write(f, a->p, a->o);
}

/*
 * Colours only on a terminal that shows them: stdout is one, TERM names one
 * that is not "dumb", and the user has not asked for none (NO_COLOR set and
 * not empty, as no-color.org says). Files and pipes get plain text.
 */
static bool stdout_takes_color(void)
{
	const char *term = getenv("TERM"), *no = getenv("NO_COLOR");

	return isatty(STDOUT_FILENO) && term && *term && strcmp(term, "dumb") && !(no && *no);
}

int report_write(const struct report_writer *w, struct outfile *of, const struct profile *p,
		 const struct report_opts *o, char *why, size_t whylen)
{
	struct report_opts co = *o;
	struct report_fill a = { w, p, &co };
	int err;

	co.color = false;
	if (of)
		return outfile__write(of, fill_report, &a, why, whylen);
	co.color = stdout_takes_color();
	err = fill_report(stdout, &a);
	if (fflush(stdout) && !err)
		err = -errno;
	if (err)
		snprintf(why, whylen, "%s", strerror(-err));
	return err;
}
