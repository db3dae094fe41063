// SPDX-License-Identifier: GPL-2.0-only
/*
 * An interactive flame graph in one self-contained HTML file (inline script
 * and style, nothing fetched): the merged call tree as JSON, drawn as one
 * box per (frame, path), root at the bottom, siblings in frame-id order.
 * Hover shows the function, file:line, samples and %; a click zooms into a
 * box; the search field highlights matching functions and says how much of
 * the total they hold. Same frames and counts as the folded output. The page
 * opens scrolled to the box with the most self samples: root at the bottom,
 * a deep tower of imports would otherwise push the work below the first
 * screen. "Merge lines" redraws the tree with one box per function.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report/report_flame_tree.h"
#include "report_wall.h"

static void json_open(void *ctx, uint32_t depth, uint32_t label, bool first)
{
	(void)depth;
	fprintf(ctx, "%s[%u,[", first ? "" : ",", label);
}

static void json_close(void *ctx, uint32_t depth, uint32_t label, uint64_t start, uint64_t samples)
{
	(void)depth, (void)label, (void)start;
	fprintf(ctx, "],%llu]", (unsigned long long)samples);
}

/*
 * The call tree (report_flame_tree.h) as nested JSON, [label, [children], samples],
 * written as it is walked. The root's label is -1.
 */
static int write_tree(FILE *f, const struct profile *p)
{
	static const struct report_flame_tree_ops ops = { json_open, json_close };
	uint64_t total;
	int err;

	fputs("[-1,[", f);
	err = report_flame_tree_walk(p, &ops, f, &total);
	if (!err)
		fprintf(f, "],%llu]", (unsigned long long)total);
	return err;
}

static void write_names(FILE *f, const struct profile *p)
{
	float *off = report_wall_frame_offshare(p);
	char label[512];
	size_t i;

	fputs("\"names\": [", f);
	for (i = 0; i < p->nframes; i++) {
		const struct profile_frame *fr = &p->frames[i];
		const struct profile_func *fn = &p->funcs[fr->func];

		fputs(i ? ",\n[" : "\n[", f);
		report_script_string(f, fn->qualname);
		fputc(',', f);
		if (fn->file[0] && fr->line > 0)
			snprintf(label, sizeof(label), "%s:%d", fn->file, fr->line);
		else
			snprintf(label, sizeof(label), "%s", fn->file);
		report_script_string(f, label);
		/* --mode wall: mostly off the CPU (drawn blue) */
		fputs(off && off[i] >= OFFCPU_MOSTLY ? ",1]" : "]", f);
	}
	free(off);
	for (i = 0; i < p->ntargets; i++) {
		fputs(i || p->nframes ? ",\n[" : "\n[", f);
		report_script_string(f, report_proc_label(&p->targets[i], label, sizeof(label)));
		fputs(", \"\"]", f);
	}
	fputs("],\n", f);
	/* each name's function, for the page's "Merge lines": a process is one of its own */
	fputs("\"funcs\": [", f);
	for (i = 0; i < p->nframes; i++)
		fprintf(f, "%s%u", i ? "," : "", p->frames[i].func);
	for (i = 0; i < p->ntargets; i++)
		fprintf(f, "%s%zu", i || p->nframes ? "," : "", p->nfuncs + i);
	fputs("],\n", f);
}

// clang-format off
static const char page_head[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>pybpfprof flame graph</title>\n"
"<style>\n"
"body{font:12px sans-serif;margin:8px;background:#fff;color:#222}\n"
"#bar{display:flex;gap:8px;align-items:center;margin-bottom:6px;position:sticky;top:0;"
"background:#fff;z-index:1;padding:4px 0}\n"
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
"<label><input type=\"checkbox\" id=\"merge\"> Merge lines</label>"
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
"let zoomed = null, query = null, tree = P.root, busiest = null;\n"
"/* Nodes are [name index, [children], samples]. Parents, so a zoom can keep the path\n"
" * to the root visible, and heights, so a zoom knows how many rows it needs. */\n"
"function link(n, parent) { n.parent = parent; n.h = 1;\n"
"  for (const c of n[1]) { link(c, n); n.h = Math.max(n.h, c.h + 1); } }\n"
"/* A function's lines merged: the nodes of one function under one node become one, their\n"
" * children merged the same way (P.funcs: each name's function). */\n"
"function merged(nodes) {\n"
"  const m = [nodes[0][0], [], 0], groups = new Map();\n"
"  m.merged = true;\n"
"  for (const n of nodes) { m[2] += n[2];\n"
"    for (const c of n[1]) { const k = P.funcs[c[0]];\n"
"      if (!groups.has(k)) groups.set(k, []); groups.get(k).push(c); } }\n"
"  for (const g of groups.values()) m[1].push(merged(g));\n"
"  return m;\n"
"}\n"
"/* The node with the most self samples: the first screen shows it. */\n"
"function hottest(n) { let best = n, most = -1;\n"
"  (function walk(x) { let s = x[2]; for (const c of x[1]) { s -= c[2]; walk(c); }\n"
"    if (x[0] >= 0 && s > most) { most = s; best = x; } })(n);\n"
"  return best; }\n"
"function use(t) { tree = t; zoomed = null; link(tree, null); busiest = hottest(tree); }\n"
"use(P.root);\n"
"function name(n) { return n[0] < 0 ? 'all' : P.names[n[0]][0]; }\n"
"function where(n) { if (n[0] < 0) return ''; const w = P.names[n[0]][1];\n"
"  return n.merged ? w.replace(/:[0-9]+$/, '') : w; }\n"
"function color(s, off) { let h = 0; for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) >>> 0; "
"return 'hsl(' + ((off ? 200 : 0) + h % (off ? 30 : 50)) + ',80%,' + (55 + h % 15) + '%)'; }\n"
"function off(n) { return n[0] >= 0 && P.names[n[0]].length > 2; }\n"
"function box(n, left, width, level, rows, dim) {\n"
"  const d = document.createElement('div');\n"
"  d.className = 'frame' + (dim ? ' dim' : '') + (query && query.test(name(n)) ? ' match' : '');\n"
"  d.style.left = left + '%'; d.style.width = width + '%';\n"
"  d.style.top = ((rows - 1 - level) * ROW) + 'px';\n"
"  d.style.background = color(name(n), off(n));\n"
"  d.textContent = name(n);\n"
"  d.dataset.name = name(n); d.dataset.where = where(n); d.dataset.samples = n[2];\n"
"  d.node = n; if (n === busiest) d.dataset.busiest = '1';\n"
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
"  const top = zoomed || tree;\n"
"  const path = []; for (let a = top.parent; a; a = a.parent) path.unshift(a);\n"
"  const rows = path.length + top.h;\n"
"  chart.textContent = ''; chart.style.height = (rows * ROW) + 'px';\n"
"  path.forEach((a, i) => box(a, 0, 100, i, rows, true));\n"
"  draw(top, 0, 100, path.length, rows);\n"
"  let hit = 0;\n"
"  if (query) { const s = (n, under) => { const m = query.test(name(n)); "
"if (m && !under) hit += n[2]; for (const c of n[1]) s(c, under || m); }; s(tree, false); }\n"
"  document.getElementById('matched').textContent = query ? 'Matched: ' + "
"(tree[2] ? (100 * hit / tree[2]).toFixed(1) : '0.0') + '%' : '';\n"
"}\n"
"chart.addEventListener('click', e => {\n"
"  const d = e.target.closest('.frame'); if (!d) return;\n"
"  zoomed = d.node === tree ? null : d.node; render();\n"
"});\n"
"chart.addEventListener('mousemove', e => {\n"
"  const d = e.target.closest('.frame');\n"
"  if (!d) { tip.style.display = 'none'; return; }\n"
"  const n = d.node, pct = tree[2] ? (100 * n[2] / tree[2]).toFixed(2) : '0.00';\n"
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
"/* The first screen shows the busiest frame, however deep the page below or above it. */\n"
"function show() { render(); const b = chart.querySelector('[data-busiest]');\n"
"  if (b) b.scrollIntoView({block: 'center'}); }\n"
"document.getElementById('merge').addEventListener('change', e => {\n"
"  use(e.target.checked ? merged([P.root]) : P.root); show(); });\n"
"document.getElementById('title').textContent = P.title;\n"
"if (P.mergeLines) { document.getElementById('merge').checked = true; use(merged([P.root])); }\n"
"show();\n"
"</script></body></html>\n";
// clang-format on

static int write_flame(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char title[640];
	int err;

	fputs(page_head, f);
	/* the bar stays on screen: the busiest process and thread are named on every screen */
	report_page_title(p, o->tool_version, NULL, title, sizeof(title));
	/* --mode wall: the legend of the colours */
	if (p->wall || p->gil)
		strncat(title, "; blue: frames mostly off the CPU (blocked), warm: on the CPU",
			sizeof(title) - strlen(title) - 1);
	fputs("\"title\": ", f);
	report_script_string(f, title);
	fputs(o->merge_lines ? ",\n\"mergeLines\": true,\n" : ",\n", f);
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
