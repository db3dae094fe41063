// SPDX-License-Identifier: GPL-2.0-only
/*
 * An interactive flame graph in one self-contained HTML file (inline script
 * and style, nothing fetched): the merged call tree as JSON, drawn as one
 * box per (frame, path), root at the bottom, siblings in frame-id order.
 * Hover shows the function, file:line, samples and %; a click zooms into a
 * box; the search field highlights matching functions and says how much of
 * the total they hold. Same frames and counts as the folded output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"

/* One stack of one process; the flame graph's paths are these, root first. */
struct entry {
	uint32_t proc, stack;
};

struct paths {
	const struct profile *p;
	bool by_proc; /* several processes: each path starts at its process */
};

static uint32_t path_len(const struct paths *ps, const struct entry *e)
{
	return ps->p->targets[e->proc].stacks[e->stack].nframes + ps->by_proc;
}

/* Label of step k of e's path: a frame id, or nframes + process index. */
static uint32_t path_at(const struct paths *ps, const struct entry *e, uint32_t k)
{
	const struct profile_stack *s = &ps->p->targets[e->proc].stacks[e->stack];

	if (ps->by_proc && !k)
		return ps->p->nframes + e->proc;
	k -= ps->by_proc;
	return s->frames[s->nframes - 1 - k];
}

static int cmp_paths(const void *a, const void *b, void *ctx)
{
	const struct entry *x = a, *y = b;
	const struct paths *ps = ctx;
	uint32_t nx = path_len(ps, x), ny = path_len(ps, y), k;

	for (k = 0; k < nx && k < ny; k++) {
		uint32_t lx = path_at(ps, x, k), ly = path_at(ps, y, k);

		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return nx < ny ? -1 : nx > ny;
}

/*
 * The call tree as nested JSON, [label, [children], samples], without
 * building it: with the paths sorted, a node's subtree is a run of
 * consecutive paths sharing its prefix, so walking them once, closing and
 * opening nodes where a path leaves the previous one, writes every node with
 * memory for one path. The root's label is -1.
 */
static int write_tree(FILE *f, const struct profile *p)
{
	struct paths ps = { .p = p, .by_proc = p->ntargets > 1 };
	struct entry *es;
	uint64_t *val, total = 0;
	uint32_t *open, depth = 0, maxlen = 1, k, n;
	bool *has_child;
	size_t ne = 0, i, j;
	int err = -ENOMEM;

	for (i = 0; i < p->ntargets; i++)
		ne += p->targets[i].nstacks;
	es = calloc(ne + 1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	for (i = 0, ne = 0; i < p->ntargets; i++)
		for (j = 0; j < p->targets[i].nstacks; j++)
			if (p->targets[i].stacks[j].nframes) {
				es[ne++] = (struct entry){ .proc = i, .stack = j };
				n = path_len(&ps, &es[ne - 1]);
				maxlen = n > maxlen ? n : maxlen;
			}
	qsort_r(es, ne, sizeof(*es), cmp_paths, &ps);
	open = calloc(maxlen, sizeof(*open));
	val = calloc(maxlen, sizeof(*val));
	has_child = calloc(maxlen + 1, sizeof(*has_child)); /* [0]: the root's */
	if (!open || !val || !has_child)
		goto out;
	fputs("[-1,[", f);
	for (i = 0; i < ne; i++) {
		const struct entry *e = &es[i];
		uint64_t count = p->targets[e->proc].stacks[e->stack].count;
		uint32_t len = path_len(&ps, e), common = 0;

		while (common < depth && common < len && open[common] == path_at(&ps, e, common))
			common++;
		for (; depth > common; depth--)
			fprintf(f, "],%llu]", (unsigned long long)val[depth - 1]);
		for (k = depth; k < len; k++) {
			open[k] = path_at(&ps, e, k);
			val[k] = 0;
			fprintf(f, "%s[%u,[", has_child[k] ? "," : "", open[k]);
			has_child[k] = true;
			has_child[k + 1] = false;
		}
		depth = len;
		for (k = 0; k < len; k++)
			val[k] += count;
		total += count;
	}
	for (; depth > 0; depth--)
		fprintf(f, "],%llu]", (unsigned long long)val[depth - 1]);
	fprintf(f, "],%llu]", (unsigned long long)total);
	err = 0;
out:
	free(es);
	free(open);
	free(val);
	free(has_child);
	return err;
}

/* A JSON string that is also safe inside <script>: no "</" can end it early. */
static void script_string(FILE *f, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;

	fputc('"', f);
	for (; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == '<')
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static void write_names(FILE *f, const struct profile *p)
{
	char label[512];
	size_t i;

	fputs("\"names\": [", f);
	for (i = 0; i < p->nframes; i++) {
		const struct profile_frame *fr = &p->frames[i];
		const struct profile_func *fn = &p->funcs[fr->func];

		fputs(i ? ",\n[" : "\n[", f);
		script_string(f, fn->qualname);
		fputc(',', f);
		if (fn->file[0] && fr->line > 0)
			snprintf(label, sizeof(label), "%s:%d", fn->file, fr->line);
		else
			snprintf(label, sizeof(label), "%s", fn->file);
		script_string(f, label);
		fputc(']', f);
	}
	for (i = 0; i < p->ntargets; i++) {
		fputs(i || p->nframes ? ",\n[" : "\n[", f);
		script_string(f, report_proc_label(&p->targets[i], label, sizeof(label)));
		fputs(", \"\"]", f);
	}
	fputs("],\n", f);
}

// clang-format off
static const char page_head[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>pybpfprof flame graph</title>\n"
"<style>\n"
"body{font:12px sans-serif;margin:8px;background:#fff;color:#222}\n"
"#bar{display:flex;gap:8px;align-items:center;margin-bottom:6px}\n"
"#chart{position:relative;width:100%;overflow:hidden}\n"
".frame{position:absolute;height:16px;box-sizing:border-box;border:1px solid #fff;"
"overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:0 3px;line-height:14px;"
"cursor:pointer}\n"
".frame.match{background:#e040fb !important}\n"
".frame.dim{opacity:.55}\n"
"#tip{position:fixed;display:none;background:#ffe;border:1px solid #888;padding:4px 6px;"
"pointer-events:none;white-space:pre;z-index:2}\n"
"</style></head><body>\n"
"<div id=\"bar\"><b id=\"title\"></b>"
"<button id=\"reset\">Reset zoom</button>"
"<input id=\"search\" placeholder=\"Search (regular expression)\" size=\"30\">"
"<span id=\"matched\"></span></div>\n"
"<div id=\"chart\"></div><div id=\"tip\"></div>\n"
"<script type=\"application/json\" id=\"profile\">\n{";

static const char page_tail[] =
"}\n</script>\n"
"<script>\n"
"'use strict';\n"
"const P = JSON.parse(document.getElementById('profile').textContent);\n"
"const chart = document.getElementById('chart'), tip = document.getElementById('tip');\n"
"const ROW = 17, MIN_PCT = 0.05;\n"
"let zoomed = null, query = null;\n"
"/* Nodes are [name index, [children], samples]. Parents, so a zoom can keep the path\n"
" * to the root visible, and heights, so a zoom knows how many rows it needs. */\n"
"function link(n, parent) { n.parent = parent; n.h = 1;\n"
"  for (const c of n[1]) { link(c, n); n.h = Math.max(n.h, c.h + 1); } }\n"
"link(P.root, null);\n"
"function name(n) { return n[0] < 0 ? 'all' : P.names[n[0]][0]; }\n"
"function where(n) { return n[0] < 0 ? '' : P.names[n[0]][1]; }\n"
"function color(s) { let h = 0; for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) >>> 0; "
"return 'hsl(' + (h % 50) + ',80%,' + (55 + h % 15) + '%)'; }\n"
"function box(n, left, width, level, rows, dim) {\n"
"  const d = document.createElement('div');\n"
"  d.className = 'frame' + (dim ? ' dim' : '') + (query && query.test(name(n)) ? ' match' : '');\n"
"  d.style.left = left + '%'; d.style.width = width + '%';\n"
"  d.style.top = ((rows - 1 - level) * ROW) + 'px';\n"
"  d.style.background = color(name(n));\n"
"  d.textContent = name(n);\n"
"  d.dataset.name = name(n); d.dataset.where = where(n); d.dataset.samples = n[2];\n"
"  d.node = n;\n"
"  chart.appendChild(d);\n"
"}\n"
"function draw(n, left, width, level, rows) {\n"
"  box(n, left, width, level, rows, false);\n"
"  let x = left;\n"
"  for (const c of n[1]) {\n"
"    const w = n[2] ? width * c[2] / n[2] : 0;\n"
"    if (w >= MIN_PCT) draw(c, x, w, level + 1, rows);\n"
"    x += w;\n"
"  }\n"
"}\n"
"function render() {\n"
"  const top = zoomed || P.root;\n"
"  const path = []; for (let a = top.parent; a; a = a.parent) path.unshift(a);\n"
"  const rows = path.length + top.h;\n"
"  chart.textContent = ''; chart.style.height = (rows * ROW) + 'px';\n"
"  path.forEach((a, i) => box(a, 0, 100, i, rows, true));\n"
"  draw(top, 0, 100, path.length, rows);\n"
"  let hit = 0;\n"
"  if (query) { const s = (n, under) => { const m = query.test(name(n)); "
"if (m && !under) hit += n[2]; for (const c of n[1]) s(c, under || m); }; s(P.root, false); }\n"
"  document.getElementById('matched').textContent = query ? 'Matched: ' + "
"(P.root[2] ? (100 * hit / P.root[2]).toFixed(1) : '0.0') + '%' : '';\n"
"}\n"
"chart.addEventListener('click', e => {\n"
"  const d = e.target.closest('.frame'); if (!d) return;\n"
"  zoomed = d.node === P.root ? null : d.node; render();\n"
"});\n"
"chart.addEventListener('mousemove', e => {\n"
"  const d = e.target.closest('.frame');\n"
"  if (!d) { tip.style.display = 'none'; return; }\n"
"  const n = d.node, pct = P.root[2] ? (100 * n[2] / P.root[2]).toFixed(2) : '0.00';\n"
"  tip.textContent = name(n) + (where(n) ? '\\n' + where(n) : '') + '\\n' + n[2] + "
"' samples (' + pct + '% of all)';\n"
"  tip.style.display = 'block';\n"
"  /* kept inside the window: flipped to the other side of the pointer near an edge */\n"
"  const x = e.clientX + 12 + tip.offsetWidth > innerWidth ? e.clientX - 12 - tip.offsetWidth "
": e.clientX + 12;\n"
"  const y = e.clientY + 12 + tip.offsetHeight > innerHeight ? e.clientY - 12 - "
"tip.offsetHeight : e.clientY + 12;\n"
"  tip.style.left = Math.max(0, x) + 'px'; tip.style.top = Math.max(0, y) + 'px';\n"
"});\n"
"chart.addEventListener('mouseleave', () => { tip.style.display = 'none'; });\n"
"document.getElementById('reset').addEventListener('click', () => { zoomed = null; "
"render(); });\n"
"document.getElementById('search').addEventListener('input', e => {\n"
"  try { query = e.target.value ? new RegExp(e.target.value) : null; } "
"catch (err) { query = null; }\n"
"  render();\n"
"});\n"
"document.getElementById('title').textContent = P.title;\n"
"render();\n"
"</script></body></html>\n";
// clang-format on

static int write_flame(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char title[320], counts[200];
	int err;

	fputs(page_head, f);
	snprintf(title, sizeof(title), "pybpfprof %s: %s profile at %u Hz, %s", o->tool_version,
		 p->mode, p->frequency_hz, report_counts(p, counts, sizeof(counts)));
	fputs("\"title\": ", f);
	script_string(f, title);
	fputs(",\n", f);
	write_names(f, p);
	fputs("\"root\": ", f);
	err = write_tree(f, p);
	if (err)
		return err;
	fputs(page_tail, f);
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_flame = {
	.name = "flamegraph",
	.exts = { ".html" },
	.write = write_flame,
};
