// SPDX-License-Identifier: GPL-2.0-only
/*
 * An interactive flame graph in one self-contained SVG file, the view
 * flamegraph.pl users know: the call tree of report_flame_tree.h drawn as one
 * rect and text per node, width proportional to samples, root at the
 * bottom, siblings in frame-id order, with several processes one section
 * per process above the root. Drawn in C, so that it reads without script;
 * the script inside (CDATA, nothing fetched) adds the details line on
 * hover, click to zoom (ancestors kept, full width; siblings hidden), Reset
 * Zoom and Search (a regular expression: matches highlighted, their share
 * of the samples shown). Every string from the target is escaped for XML.
 * So that a huge profile still gives a file a browser opens, nodes under
 * 0.1% of the samples are not drawn, nor more than SVG_MAX_FRAMES of them
 * (the narrowest go first); the subtitle says how many were left out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "util/text.h"
#include "util/vec.h"
#include "report/report_flame_tree.h"
#include "report_wall.h"

#define SVG_MAX_FRAMES 10000
#define SVG_WIDTH 1200
#define SVG_PAD 10	    /* left and right margin; the script uses the same */
#define SVG_ROW 16	    /* one level of the tree */
#define SVG_TOP 66	    /* title, buttons and the busiest process */
#define SVG_BOTTOM 34	    /* details and matched share */
#define SVG_CHAR 7.08	    /* mean width of a 12px character; the script's CHAR */
#define SVG_ROOT UINT32_MAX /* the root's label */

/* pass 1: the nodes wide enough to draw, to choose the threshold and the height */
struct node_size {
	uint64_t samples;
	uint32_t depth;
};

struct svg {
	FILE *f;
	const struct profile *p;
	uint64_t total, min_samples; /* a node is drawn with at least min_samples */
	uint32_t levels;	     /* rows drawn, the root's included */
	struct node_size *wide;	     /* pass 1: nodes of at least 0.1% */
	size_t nwide, cap, nall;
	int err;
	float *off;	  /* --mode wall: each frame's off-CPU share, or NULL */
	bool merge_lines; /* --merge-lines: a node is a function, where it is its file */
};

/* Characters in s as report_xml_text counts them. */
static size_t xml_chars(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t count = 0;
	int n;

	for (; *c; c += n, count++)
		text_next(c, &n);
	return count;
}

/* A node's name and where it is ("file:line", or "" for the root and processes). */
static const char *node_name(const struct svg *g, uint32_t label, char *where, size_t wlen,
			     char *buf, size_t len)
{
	const struct profile *p = g->p;
	const struct profile_frame *fr;
	const struct profile_func *fn;

	where[0] = '\0';
	if (label == SVG_ROOT)
		return "all";
	if (label >= p->nframes)
		return report_proc_label(&p->targets[label - p->nframes], buf, len);
	fr = &p->frames[label];
	fn = &p->funcs[fr->func];
	if (fn->file[0] && fr->line > 0 && !g->merge_lines)
		snprintf(where, wlen, "%s:%d", fn->file, fr->line);
	else
		snprintf(where, wlen, "%s", fn->file);
	return fn->qualname;
}

/*
 * Warm colours from the name, so a function keeps its colour across the
 * graph; blues for a frame mostly off the CPU (--mode wall).
 */
static void node_fill(FILE *f, uint32_t label, size_t nframes, const char *name, bool off)
{
	const unsigned char *c = (const unsigned char *)name;
	uint32_t h = 2166136261u;

	if (label == SVG_ROOT || label >= nframes) {
		fputs(label == SVG_ROOT ? "rgb(200,200,200)" : "rgb(170,190,220)", f);
		return;
	}
	for (; *c; c++)
		h = (h ^ *c) * 16777619u;
	if (off)
		fprintf(f, "rgb(%u,%u,%u)", (h >> 16) % 80, 100 + (h >> 8) % 80, 205 + h % 50);
	else
		fprintf(f, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 200, (h >> 16) % 55);
}

/* The name in the box, cut to what its width holds (none under 3 characters). */
static void node_text(FILE *f, const char *name, double width)
{
	double room = (width - 6) / SVG_CHAR;
	size_t fit = room > 0 ? (size_t)room : 0, n = xml_chars(name);

	if (fit < 3)
		return;
	if (n <= fit) {
		report_xml_text(f, name, n);
		return;
	}
	report_xml_text(f, name, fit - 2);
	fputs("..", f);
}

/* One node: a group with its data for the script, a tooltip, the box and its text. */
static void write_node(struct svg *g, uint32_t level, uint32_t label, uint64_t start,
		       uint64_t samples)
{
	double span = SVG_WIDTH - 2 * SVG_PAD, x = SVG_PAD, w = span;
	double y = SVG_TOP + (double)(g->levels - 1 - level) * SVG_ROW;
	char where[4200], buf[512];
	const char *name = node_name(g, label, where, sizeof(where), buf, sizeof(buf));
	FILE *f = g->f;

	if (g->total) {
		x += span * start / g->total;
		w = span * samples / g->total;
	}
	fprintf(f, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\" data-n=\"",
		(unsigned long long)start, (unsigned long long)samples, level);
	report_xml_text(f, name, SIZE_MAX);
	fputs("\" data-l=\"", f);
	report_xml_text(f, where, SIZE_MAX);
	fputs("\"><title>", f);
	report_xml_text(f, name, SIZE_MAX);
	if (where[0]) {
		fputs(" (", f);
		report_xml_text(f, where, SIZE_MAX);
		fputc(')', f);
	}
	fprintf(f, ": %llu samples, %.2f%%</title>", (unsigned long long)samples,
		report_pct(samples, g->total));
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"", x, y, w,
		SVG_ROW - 1);
	node_fill(f, label, g->p->nframes, name,
		  g->off && label < g->p->nframes && g->off[label] >= OFFCPU_MOSTLY);
	fprintf(f, "\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3, y + SVG_ROW - 4.5);
	node_text(f, name, w);
	fputs("</text></g>\n", f);
}

static void size_open(void *ctx, uint32_t depth, uint32_t label, bool first)
{
	(void)ctx, (void)depth, (void)label, (void)first;
}

/* Pass 1: every node counted, those of at least 0.1% kept with their depth. */
static void size_close(void *ctx, uint32_t depth, uint32_t label, uint64_t start, uint64_t samples)
{
	struct svg *g = ctx;

	(void)label, (void)start;
	g->nall++;
	if (g->err || samples * 1000 < g->total)
		return;
	if (vec_grow((void **)&g->wide, &g->cap, g->nwide + 1, sizeof(*g->wide))) {
		g->err = -ENOMEM;
		return;
	}
	g->wide[g->nwide++] = (struct node_size){ samples, depth };
}

/* Pass 2: the nodes drawn, in the order the walk leaves them. */
static void draw_close(void *ctx, uint32_t depth, uint32_t label, uint64_t start, uint64_t samples)
{
	struct svg *g = ctx;

	if (samples >= g->min_samples && samples)
		write_node(g, depth + 1, label, start, samples);
}

static int cmp_wider(const void *a, const void *b)
{
	uint64_t x = ((const struct node_size *)a)->samples,
		 y = ((const struct node_size *)b)->samples;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The threshold and the rows from pass 1. Beyond SVG_MAX_FRAMES nodes the
 * threshold rises above the first node left out; a parent has at least its
 * children's samples, so what is drawn is still a tree from the root.
 */
static size_t choose_threshold(struct svg *g)
{
	size_t i, drawn = 0;
	uint32_t deepest = 0;

	g->min_samples = (g->total + 999) / 1000;
	if (g->nwide > SVG_MAX_FRAMES) {
		qsort(g->wide, g->nwide, sizeof(*g->wide), cmp_wider);
		g->min_samples = g->wide[SVG_MAX_FRAMES].samples + 1;
	}
	for (i = 0; i < g->nwide; i++)
		if (g->wide[i].samples >= g->min_samples && g->wide[i].samples) {
			drawn++;
			deepest = g->wide[i].depth + 1 > deepest ? g->wide[i].depth + 1 : deepest;
		}
	g->levels = deepest + 1;
	return drawn;
}

// clang-format off
static const char svg_style[] =
"<style>\n"
"text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
"#title{font-size:16px;font-weight:bold}\n"
"#reset,#search{cursor:pointer;fill:#1a4fb5}\n"
"g.f{cursor:pointer}\n"
"g.f text{pointer-events:none}\n"
"g.f:hover rect{stroke:#000;stroke-width:0.5}\n"
"g.above{opacity:0.6}\n"
"</style>\n";

/* Frames are <g class="f"> with data-x/-w (left edge and width in samples), -d (level, 0 the
 * root), -n (name), -l (file:line); the C code above draws them, this redraws them. */
static const char svg_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var W = +document.documentElement.getAttribute('width'), PAD = 10, CHAR = 7.08;\n"
"var frames = [], total = 1, query = '';\n"
"var details = document.getElementById('details'), matched = document.getElementById('matched');\n"
"var reset = document.getElementById('reset'), search = document.getElementById('search');\n"
"function describe(f) {\n"
"  return f.name + (f.where ? ' (' + f.where + ')' : '') + ': ' + f.w + ' samples, ' +\n"
"    (100 * f.w / total).toFixed(2) + '%';\n"
"}\n"
"function place(f, x, w) {\n"
"  f.rect.setAttribute('x', x.toFixed(2)); f.rect.setAttribute('width', w.toFixed(2));\n"
"  f.text.setAttribute('x', (x + 3).toFixed(2));\n"
"  var fit = Math.floor((w - 6) / CHAR);\n"
"  f.text.textContent = fit < 3 ? '' : f.name.length <= fit ? f.name :\n"
"    f.name.slice(0, fit - 2) + '..';\n"
"}\n"
"/* Zoom into z (null: the whole graph): its subtree rescaled to the full width, its\n"
" * ancestors kept at the full width and faded, everything else hidden. */\n"
"function zoom(z) {\n"
"  var x0 = z ? z.x : 0, w0 = z ? z.w : total, d0 = z ? z.d : 0, span = W - 2 * PAD;\n"
"  reset.setAttribute('visibility', z ? 'visible' : 'hidden');\n"
"  frames.forEach(function (f) {\n"
"    var inside = f.x >= x0 && f.x + f.w <= x0 + w0, around = f.x <= x0 && f.x + f.w >= x0 + w0;\n"
"    f.g.classList.toggle('above', f.d < d0 && around);\n"
"    if (f.d >= d0 && inside && w0) {\n"
"      f.g.style.display = ''; place(f, PAD + (f.x - x0) / w0 * span, f.w / w0 * span);\n"
"    } else if (f.d < d0 && around) {\n"
"      f.g.style.display = ''; place(f, PAD, span);\n"
"    } else {\n"
"      f.g.style.display = 'none';\n"
"    }\n"
"  });\n"
"}\n"
"/* Highlights the frames whose name matches q; the share is that of the samples under\n"
" * any match, a match under another counted once. */\n"
"function find(q) {\n"
"  var re = null, spans = [], sum = 0, end = -1;\n"
"  if (q) {\n"
"    try { re = new RegExp(q); } catch (e) { matched.textContent = 'invalid: ' + q; return; }\n"
"  }\n"
"  query = q;\n"
"  frames.forEach(function (f) {\n"
"    var m = re !== null && re.test(f.name);\n"
"    f.g.classList.toggle('match', m);\n"
"    f.rect.setAttribute('fill', m ? 'rgb(230,0,230)' : f.fill);\n"
"    if (m) spans.push([f.x, f.x + f.w]);\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  spans.forEach(function (s) {\n"
"    if (s[1] > end) { sum += s[1] - Math.max(s[0], end); end = s[1]; }\n"
"  });\n"
"  matched.textContent = re ? 'Matched: ' + (100 * sum / total).toFixed(1) + '%' : ' ';\n"
"  search.textContent = re ? 'Clear search' : 'Search';\n"
"}\n"
"Array.prototype.forEach.call(document.getElementsByClassName('f'), function (g) {\n"
"  var f = { g: g, x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),\n"
"    d: +g.getAttribute('data-d'), name: g.getAttribute('data-n'),\n"
"    where: g.getAttribute('data-l'), rect: g.getElementsByTagName('rect')[0],\n"
"    text: g.getElementsByTagName('text')[0] };\n"
"  f.fill = f.rect.getAttribute('fill');\n"
"  if (!f.d) total = f.w || 1;\n"
"  frames.push(f);\n"
"  g.addEventListener('mouseover', function () { details.textContent = describe(f); });\n"
"  g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  g.addEventListener('click', function () { zoom(f.d ? f : null); });\n"
"});\n"
"reset.addEventListener('click', function () { zoom(null); });\n"
"search.addEventListener('click', function () {\n"
"  if (query) { find(''); return; }\n"
"  var q = prompt('Search (regular expression)', '');\n"
"  if (q !== null) find(q);\n"
"});\n"
"document.addEventListener('keydown', function (e) {\n"
"  if ((e.ctrlKey || e.metaKey) && e.key === 'f') {\n"
"    e.preventDefault(); var q = prompt('Search (regular expression)', query);\n"
"    if (q !== null) find(q);\n"
"  } else if (e.key === 'Escape') {\n"
"    zoom(null);\n"
"  }\n"
"});\n"
"]]></script>\n";
// clang-format on

static void write_header(struct svg *g, const struct report_opts *o, size_t drawn)
{
	const struct profile *p = g->p;
	unsigned height = SVG_TOP + g->levels * SVG_ROW + SVG_BOTTOM;
	char counts[200], busiest[REPORT_BUSIEST_LEN];
	FILE *f = g->f;

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\">\n"
		"<title>pybpfprof flame graph</title>\n%s"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"20\" text-anchor=\"middle\">",
		SVG_WIDTH, height, SVG_WIDTH, height, svg_style, SVG_WIDTH / 2);
	fputs("pybpfprof ", f);
	report_xml_text(f, o->tool_version ? o->tool_version : "", SIZE_MAX);
	fputs(": ", f);
	report_xml_text(f, p->mode, SIZE_MAX);
	fprintf(f,
		" profile at %u Hz</text>\n<text id=\"subtitle\" x=\"%d\" y=\"38\" "
		"text-anchor=\"middle\">%s",
		p->frequency_hz, SVG_WIDTH / 2, report_counts(p, counts, sizeof(counts)));
	if (g->off)
		fputs("; blue: frames mostly off the CPU (blocked), warm: on the CPU", f);
	if (g->nall > drawn)
		fprintf(f, "; %zu frames narrower than %.3g%% of the samples not drawn",
			g->nall - drawn,
			g->nwide > SVG_MAX_FRAMES ? report_pct(g->min_samples, g->total) : 0.1);
	/* the first rows a browser shows, root at the bottom: which process and thread */
	fprintf(f, "</text>\n<text id=\"busiest\" x=\"%d\" y=\"56\" text-anchor=\"middle\">",
		SVG_WIDTH / 2);
	report_xml_text(f, report_busiest(p, busiest, sizeof(busiest)), SIZE_MAX);
	fprintf(f,
		"</text>\n"
		"<text id=\"reset\" x=\"%d\" y=\"20\" visibility=\"hidden\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<g id=\"frames\">\n",
		SVG_PAD, SVG_WIDTH - SVG_PAD, SVG_PAD, height - 12, SVG_WIDTH - SVG_PAD,
		height - 12);
}

/* Samples of every stack with a frame: the root's, known before pass 1 needs it. */
static uint64_t tree_total(const struct profile *p)
{
	uint64_t total = 0;
	size_t i, j;

	for (i = 0; i < p->ntargets; i++)
		for (j = 0; j < p->targets[i].nstacks; j++)
			if (p->targets[i].stacks[j].nframes)
				total += p->targets[i].stacks[j].count;
	return total;
}

static int write_svg(FILE *f, const struct profile *p, const struct report_opts *o)
{
	static const struct report_flame_tree_ops sizes = { size_open, size_close };
	static const struct report_flame_tree_ops draw = { size_open, draw_close };
	struct svg g = { .f = f,
			 .p = p,
			 .total = tree_total(p),
			 .off = report_wall_frame_offshare(p),
			 .merge_lines = o->merge_lines };
	uint32_t *rep = o->merge_lines ? report_func_frames(p) : NULL;
	uint64_t total;
	size_t drawn;
	int err;

	if (o->merge_lines && !rep) {
		free(g.off);
		return -ENOMEM;
	}
	err = report_flame_tree_walk_rep(p, rep, &sizes, &g, &total);
	if (!err)
		err = g.err;
	if (err)
		goto out;
	drawn = choose_threshold(&g);
	write_header(&g, o, drawn);
	write_node(&g, 0, SVG_ROOT, 0, g.total);
	err = report_flame_tree_walk_rep(p, rep, &draw, &g, &total);
	if (err)
		goto out;
	fprintf(f, "</g>\n%s</svg>\n", svg_script);
	err = ferror(f) ? -EIO : 0;
out:
	free(rep);
	free(g.wide);
	free(g.off);
	return err;
}

const struct report_writer report_svg = {
	.name = "svg",
	.exts = { ".svg" },
	.write = write_svg,
};
