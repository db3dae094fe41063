// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mem-timeline: resident memory over the run as a self-contained SVG, one
 * panel per process. The largest rises between two readings are marked and
 * labelled with the Python line that touched or mapped the most memory in
 * that interval (from the memory events' times), so the picture answers
 * "what made it grow there" without the report beside it. Apart from those
 * transient rises, the baseline (the low points, a rolling minimum) is drawn
 * and its growth over the run labelled with the lines that retain the most
 * at the end (PROFILE_MEM_RETAINED), held a second or more where the ages
 * are known: what stays, not what passes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"

#define SVG_WIDTH 960
#define PANEL_HEIGHT 320
#define MARGIN_LEFT 80
#define MARGIN_RIGHT 24
#define MARGIN_TOP 40
#define MARGIN_BOTTOM 40
#define MAX_LABELS 5
/* The baseline at t: the lowest reading from t to this much later (a forward minimum). */
#define BASELINE_WINDOW_S 1.0
/* Lines named on the baseline's label, and the share of the retained bytes each needs. */
#define BASELINE_LINES 2
#define BASELINE_MIN_SHARE 0.05

/* Events this much before a rise's first reading still count for it (one reading interval). */
#define LABEL_SLACK_S 0.05

struct rise {
	size_t at; /* index of the reading after the rise */
	uint64_t bytes;
};

/* The largest rises of the timeline, at most max, largest first; returns how many. */
static size_t top_rises(const struct profile_mem *m, struct rise *out, size_t max)
{
	size_t i, j, n = 0;

	for (i = 1; i < m->nrss; i++) {
		uint64_t d;

		if (m->rss[i].rss <= m->rss[i - 1].rss)
			continue;
		d = m->rss[i].rss - m->rss[i - 1].rss;
		if (n == max && d <= out[n - 1].bytes)
			continue;
		j = n < max ? n++ : n - 1;
		while (j > 0 && out[j - 1].bytes < d) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = (struct rise){ i, d };
	}
	return n;
}

/* The frame with the most bytes touched or mapped in [t0, t1]; UINT32_MAX if none. */
static uint32_t top_frame(const struct profile_mem *m, double t0, double t1, uint64_t *bytes)
{
	struct {
		uint32_t frame;
		uint64_t bytes;
	} seen[64];
	size_t n = 0, i, j, best = 0;

	for (i = 0; i < m->nevents; i++) {
		const struct profile_mem_event *e = &m->events[i];

		if (e->t_s < t0 || e->t_s > t1 || e->kind == PROFILE_MEM_UNMAPPED)
			continue;
		for (j = 0; j < n && seen[j].frame != e->frame; j++)
			;
		if (j == n) {
			if (n == 64)
				continue; /* a window with this many lines: the first 64 compete */
			seen[n].frame = e->frame;
			seen[n++].bytes = 0;
		}
		seen[j].bytes += e->bytes;
	}
	if (!n)
		return UINT32_MAX;
	for (i = 1; i < n; i++)
		if (seen[i].bytes > seen[best].bytes)
			best = i;
	*bytes = seen[best].bytes;
	return seen[best].frame;
}

static double mib(uint64_t b)
{
	return b / (1024.0 * 1024.0);
}

/*
 * The lowest reading within BASELINE_WINDOW_S after reading i: a steady
 * rise is its own baseline, a saw's teeth fall to their troughs.
 */
static uint64_t baseline_at(const struct profile_mem *m, size_t i)
{
	uint64_t low = m->rss[i].rss;
	size_t j;

	for (j = i + 1; j < m->nrss && m->rss[j].t_s - m->rss[i].t_s <= BASELINE_WINDOW_S; j++)
		low = m->rss[j].rss < low ? m->rss[j].rss : low;
	return low;
}

/* The last reading with a whole window after it (a peak at the very end is not baseline). */
static size_t baseline_end(const struct profile_mem *m)
{
	size_t i = m->nrss - 1;

	while (i > 0 && m->rss[m->nrss - 1].t_s - m->rss[i].t_s < BASELINE_WINDOW_S)
		i--;
	return i ? i : m->nrss - 1;
}

/* "file.py:N qualname" of a frame, escaped. */
static void frame_label(FILE *f, const struct profile *p, uint32_t fr)
{
	const struct profile_frame *frame = &p->frames[fr];
	const struct profile_func *fn = &p->funcs[frame->func];
	const char *base = strrchr(fn->file, '/');
	char num[16];

	report_xml_text(f, base ? base + 1 : fn->file, SIZE_MAX);
	fprintf(f, ":%s ", report_line_str(frame->line, num, sizeof(num)));
	report_xml_text(f, fn->qualname, SIZE_MAX);
}

/*
 * The baseline, dashed, and its growth from the first reading to the last
 * labelled with the lines retaining the most at the end.
 */
static void write_baseline(FILE *f, const struct profile *p, const struct profile_target *pp,
			   double w, double h, double tmax, double ymax)
{
	const struct profile_mem *m = &pp->mem;
	uint64_t first = baseline_at(m, 0), last = baseline_at(m, baseline_end(m)), all = 0;
	struct mem_line_stat *ls = NULL;
	size_t n = 0, i, named = 0;
	double y = MARGIN_TOP + h - h * mib(last) / ymax;

	fputs("<polyline class=\"base\" points=\"", f);
	for (i = 0; i < m->nrss; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", MARGIN_LEFT + w * m->rss[i].t_s / tmax,
			MARGIN_TOP + h - h * mib(baseline_at(m, i)) / ymax);
	fputs("\"/>\n", f);
	if (last <= first || profile_target__mem_line_stats(p, pp, &ls, &n))
		return;
	/* held, not in flight: what was mapped in the run's last second is no baseline */
	for (i = 0; p->mem_ages && i < n; i++)
		ls[i].self[PROFILE_MEM_RETAINED] -= ls[i].self[PROFILE_MEM_RETAINED_RECENT];
	for (i = 0; i < n; i++)
		all += ls[i].self[PROFILE_MEM_RETAINED];
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" class=\"baseline\" text-anchor=\"end\">"
		"baseline +%.1f MiB, retained by ",
		MARGIN_LEFT + w - 4, y + 16 > MARGIN_TOP + h - 4 ? y - 20 : y + 16,
		mib(last - first));
	/* the lines with the most retained, most first */
	while (named < BASELINE_LINES) {
		size_t best = n;

		for (i = 0; i < n; i++)
			if (ls[i].self[PROFILE_MEM_RETAINED] >= BASELINE_MIN_SHARE * all &&
			    ls[i].self[PROFILE_MEM_RETAINED] &&
			    (best == n || ls[i].self[PROFILE_MEM_RETAINED] >
						  ls[best].self[PROFILE_MEM_RETAINED]))
				best = i;
		if (best == n)
			break;
		fputs(named++ ? ", " : "", f);
		frame_label(f, p, ls[best].frame);
		fprintf(f, " (%.1f MiB)", mib(ls[best].self[PROFILE_MEM_RETAINED]));
		ls[best].self[PROFILE_MEM_RETAINED] = 0;
	}
	fputs(named ? "</text>\n" : "no line (mapped before the run?)</text>\n", f);
	free(ls);
}

/* The panel's title, its frame, and the grid with both axes' figures. */
static void write_frame(FILE *f, const struct profile_target *pp, int y0, double w, double h,
			double tmax, double ymax)
{
	int k;

	fprintf(f,
		"<g transform=\"translate(0,%d)\">\n<text x=\"%d\" y=\"24\" class=\"title\">"
		"pid %d: ",
		y0, MARGIN_LEFT, pp->pid);
	report_xml_text(f, pp->cmdline[0] ? pp->cmdline : pp->comm, SIZE_MAX);
	fprintf(f, " (peak %.1f MiB)</text>\n", mib(pp->mem.peak_rss));
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" class=\"frame\"/>\n",
		MARGIN_LEFT, MARGIN_TOP, w, h);
	for (k = 0; k <= 4; k++) {
		double y = MARGIN_TOP + h - h * k / 4;

		fprintf(f,
			"<line x1=\"%d\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%d\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">%.0f MiB</text>\n",
			MARGIN_LEFT, MARGIN_LEFT + w, y, y, MARGIN_LEFT - 6, y + 4, ymax * k / 4);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">"
			"%.1f s</text>\n",
			MARGIN_LEFT + w * k / 4, MARGIN_TOP + h + 18, tmax * k / 4);
	}
}

static void write_panel(FILE *f, const struct profile *p, const struct profile_target *pp, int y0)
{
	const struct profile_mem *m = &pp->mem;
	double w = SVG_WIDTH - MARGIN_LEFT - MARGIN_RIGHT,
	       h = PANEL_HEIGHT - MARGIN_TOP - MARGIN_BOTTOM;
	double tmax = p->duration_s > 0 ? p->duration_s : 1, ymax = 1;
	struct rise cand[4 * MAX_LABELS], rises[MAX_LABELS];
	size_t i, j, nr = 0, nc;

	for (i = 0; i < m->nrss; i++) {
		if (mib(m->rss[i].rss) > ymax)
			ymax = mib(m->rss[i].rss);
		if (m->rss[i].t_s > tmax)
			tmax = m->rss[i].t_s;
	}
	ymax *= 1.15; /* headroom for the labels */
	write_frame(f, pp, y0, w, h, tmax, ymax);
	if (!m->nrss) {
		fprintf(f,
			"<text x=\"%.0f\" y=\"%.0f\" class=\"axis\">no reading of resident memory"
			"</text>\n</g>\n",
			MARGIN_LEFT + 10.0, MARGIN_TOP + h / 2);
		return;
	}
	fputs("<polyline class=\"rss\" points=\"", f);
	for (i = 0; i < m->nrss; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", MARGIN_LEFT + w * m->rss[i].t_s / tmax,
			MARGIN_TOP + h - h * mib(m->rss[i].rss) / ymax);
	fputs("\"/>\n", f);
	write_baseline(f, p, pp, w, h, tmax, ymax);

	/* The largest rises, but apart from each other so their labels do not overlap. */
	nc = top_rises(m, cand, 4 * MAX_LABELS);
	for (i = 0; i < nc && nr < MAX_LABELS; i++) {
		for (j = 0; j < nr; j++)
			if (w * (m->rss[cand[i].at].t_s - m->rss[rises[j].at].t_s) / tmax < 120 &&
			    w * (m->rss[rises[j].at].t_s - m->rss[cand[i].at].t_s) / tmax < 120)
				break;
		if (j == nr)
			rises[nr++] = cand[i];
	}
	for (i = 0; i < nr; i++) {
		const struct profile_rss_point *pt = &m->rss[rises[i].at];
		double x = MARGIN_LEFT + w * pt->t_s / tmax,
		       y = MARGIN_TOP + h - h * mib(pt->rss) / ymax;
		uint64_t bytes = 0;
		uint32_t fr = top_frame(m, m->rss[rises[i].at - 1].t_s - LABEL_SLACK_S, pt->t_s,
					&bytes);
		const char *anchor = x > MARGIN_LEFT + w * 0.7 ? "end" : "start";

		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" class=\"mark\"/>\n", x, y);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"%s\">"
			"%s+%.1f MiB ",
			x + (*anchor == 's' ? 6 : -6), y - 6 - 12.0 * (i % 2), anchor,
			/* given back within the baseline's window: a peak, not growth */
			baseline_at(m, rises[i].at) + rises[i].bytes / 2 < pt->rss ? "transient " :
										     "",
			mib(rises[i].bytes));
		if (fr != UINT32_MAX)
			frame_label(f, p, fr);
		else
			fputs("(no Python line sampled)", f);
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
}

static int write_svg(FILE *f, const struct profile *p, const struct report_opts *o)
{
	size_t i;
	int h = PANEL_HEIGHT * (p->ntargets ? p->ntargets : 1);

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n<title>pybpfprof %s: resident memory over %.1f s</title>\n"
		"<style>.title{font:bold 14px sans-serif}.axis{font:11px sans-serif;fill:#555}"
		".label{font:12px monospace;fill:#a00}.frame{fill:#fcfcfc;stroke:#999}"
		".grid{stroke:#ddd}.rss{fill:none;stroke:#1f5fbf;stroke-width:1.5}"
		".mark{fill:#a00}.base{fill:none;stroke:#2a2;stroke-width:1.5;stroke-dasharray:6 3}"
		".baseline{font:bold 12px monospace;fill:#272}</style>\n",
		SVG_WIDTH, h, SVG_WIDTH, h, o->tool_version, p->duration_s);
	for (i = 0; i < p->ntargets; i++)
		write_panel(f, p, &p->targets[i], (int)i * PANEL_HEIGHT);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

/* Not in the -f registry: written beside the report, by --mem-timeline. */
const struct report_writer report_mem_svg = {
	.name = "mem-timeline",
	.exts = { ".svg" },
	.write = write_svg,
};
