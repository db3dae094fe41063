// SPDX-License-Identifier: GPL-2.0-only
/*
 * The differential flame graph of `pybpfprof diff -o x.html`: one
 * self-contained HTML file (inline script and style, nothing fetched). The
 * boxes are AFTER's call tree by matched function, widths its shares; each
 * box is red where its share of the samples grew since BEFORE, blue where it
 * shrank, deeper the bigger the change. Hover shows both shares and the
 * delta; click zooms; the search field highlights functions like the flame
 * graph's. Both trees come from the one walk the flame graphs use
 * (report_flame_tree.h) over the two views report_diff__build made, whose
 * labels are the same function rows on both sides.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "saved/report_diff.h"
#include "report/report_common.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "report/report_flame_tree.h"

/*
 * A node is known on both sides by its path: the hash of its labels from the
 * root, chained as the walk opens them (a 64-bit hash; two paths that
 * collide would share BEFORE's samples, with a chance of about n^2 / 2^64).
 */
struct walk {
	uint64_t *hash; /* per depth: the path's hash down to it */
	size_t cap;
	int err;
	struct hashmap *before; /* path hash -> BEFORE's samples */
	FILE *f;		/* AFTER's walk writes its tree here */
};

static void path_open(struct walk *w, uint32_t depth, uint32_t label)
{
	uint64_t parent, pair[2];

	if (vec_grow((void **)&w->hash, &w->cap, (size_t)depth + 1, sizeof(*w->hash))) {
		w->err = -ENOMEM;
		return;
	}
	parent = depth ? w->hash[depth - 1] : 0;
	pair[0] = parent;
	pair[1] = label;
	w->hash[depth] = hash_bytes(pair, sizeof(pair), 0x5eed);
}

static void before_open(void *ctx, uint32_t depth, uint32_t label, bool first)
{
	(void)first;
	path_open(ctx, depth, label);
}

static void before_close(void *ctx, uint32_t depth, uint32_t label, uint64_t start,
			 uint64_t samples)
{
	struct walk *w = ctx;
	uint64_t *slot;

	(void)label, (void)start;
	if (w->err)
		return;
	slot = hashmap__find(w->before, w->hash[depth]);
	if (slot)
		*slot += samples;
	else if (hashmap__set(w->before, w->hash[depth], samples))
		w->err = -ENOMEM;
}

static void after_open(void *ctx, uint32_t depth, uint32_t label, bool first)
{
	struct walk *w = ctx;

	path_open(w, depth, label);
	fprintf(w->f, "%s[%u,[", first ? "" : ",", label);
}

/* [label, [children], AFTER's samples, BEFORE's samples at the same path] */
static void after_close(void *ctx, uint32_t depth, uint32_t label, uint64_t start, uint64_t samples)
{
	struct walk *w = ctx;
	uint64_t *slot = w->err ? NULL : hashmap__find(w->before, w->hash[depth]);

	(void)label, (void)start;
	fprintf(w->f, "],%llu,%llu]", (unsigned long long)samples,
		(unsigned long long)(slot ? *slot : 0));
}

static int write_tree(FILE *f, const struct report_diff *d)
{
	static const struct report_flame_tree_ops bops = { before_open, before_close };
	static const struct report_flame_tree_ops aops = { after_open, after_close };
	struct hashmap before;
	struct walk w = { .before = &before, .f = f };
	uint64_t btotal, atotal;
	int err;

	hashmap__init(&before);
	err = report_flame_tree_walk(&d->side[DIFF_BEFORE].view, &bops, &w, &btotal);
	if (!err && !w.err) {
		fputs("[-1,[", f);
		err = report_flame_tree_walk(&d->side[DIFF_AFTER].view, &aops, &w, &atotal);
		fprintf(f, "],%llu,%llu]", (unsigned long long)atotal, (unsigned long long)btotal);
	}
	hashmap__free(&before);
	free(w.hash);
	return err ? err : w.err;
}

static void write_names(FILE *f, const struct profile *view)
{
	size_t i;

	fputs("\"names\": [", f);
	for (i = 0; i < view->nfuncs; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		report_script_string(f, view->funcs[i].qualname);
		fputc(',', f);
		report_script_string(f, view->funcs[i].file);
		fputc(']', f);
	}
	fputs("],\n", f);
}

// clang-format off
static const char page_head[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>pybpfprof differential flame graph</title>\n"
"<style>\n"
"body{font:12px sans-serif;margin:8px;background:#fff;color:#222}\n"
"#bar{display:flex;gap:8px;align-items:center;margin-bottom:6px}\n"
"#chart{position:relative;width:100%;overflow:hidden}\n"
".frame{position:absolute;height:16px;box-sizing:border-box;border:1px solid #fff;"
"overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:0 3px;line-height:14px;"
"cursor:pointer}\n"
".frame.match{outline:2px solid #e040fb;outline-offset:-2px}\n"
".frame.dim{opacity:.55}\n"
"#tip{position:fixed;display:none;background:#ffe;border:1px solid #888;padding:4px 6px;"
"pointer-events:none;white-space:pre;z-index:2}\n"
"</style></head><body>\n"
"<div id=\"bar\"><b id=\"title\"></b>"
"<button id=\"reset\">Reset zoom</button>"
"<input id=\"search\" placeholder=\"Search (regular expression)\" size=\"30\">"
"<span id=\"matched\"></span></div>\n"
"<div id=\"legend\">Widths: AFTER's shares. Red: the share grew since BEFORE (slower); "
"blue: it shrank (faster); the deeper the colour, the bigger the change.</div>\n"
"<div id=\"chart\"></div><div id=\"tip\"></div>\n"
"<script type=\"application/json\" id=\"profile\">\n{";

static const char page_tail[] =
"}\n</script>\n"
"<script>\n"
"'use strict';\n"
"const P = JSON.parse(document.getElementById('profile').textContent);\n"
"const chart = document.getElementById('chart'), tip = document.getElementById('tip');\n"
"const ROW = 17, MIN_PCT = 0.05;\n"
"let zoomed = null, query = null, scale = 1;\n"
"/* Nodes are [name index, [children], AFTER samples, BEFORE samples]. */\n"
"function link(n, parent) { n.parent = parent; n.h = 1;\n"
"  for (const c of n[1]) { link(c, n); n.h = Math.max(n.h, c.h + 1); } }\n"
"link(P.root, null);\n"
"function name(n) { return n[0] < 0 ? 'all' : P.names[n[0]][0]; }\n"
"function where(n) { return n[0] < 0 ? '' : P.names[n[0]][1]; }\n"
"function after(n) { return P.root[2] ? 100 * n[2] / P.root[2] : 0; }\n"
"function before(n) { return P.root[3] ? 100 * n[3] / P.root[3] : 0; }\n"
"function delta(n) { return after(n) - before(n); }\n"
"/* the biggest change of any box is the deepest colour (1 pp at least) */\n"
"(function big(n) { scale = Math.max(scale, Math.abs(delta(n))); n[1].forEach(big); })(P.root);\n"
"function light(n) { return 92 - 42 * Math.min(1, Math.abs(delta(n)) / scale); }\n"
"function color(n) { const d = delta(n);\n"
"  if (Math.abs(d) < 0.005) return 'hsl(0,0%,88%)';\n"
"  return 'hsl(' + (d > 0 ? 0 : 220) + ',85%,' + light(n).toFixed(1) + '%)'; }\n"
"function box(n, left, width, level, rows, dim) {\n"
"  const d = document.createElement('div');\n"
"  d.className = 'frame' + (dim ? ' dim' : '') + (query && query.test(name(n)) ? ' match' : '');\n"
"  d.style.left = left + '%'; d.style.width = width + '%';\n"
"  d.style.top = ((rows - 1 - level) * ROW) + 'px';\n"
"  d.style.background = color(n); if (light(n) < 65) d.style.color = '#fff';\n"
"  d.textContent = name(n);\n"
"  d.dataset.name = name(n); d.dataset.where = where(n);\n"
"  d.dataset.after = after(n).toFixed(4); d.dataset.before = before(n).toFixed(4);\n"
"  d.dataset.delta = delta(n).toFixed(4);\n"
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
"  let ha = 0, hb = 0;\n"
"  if (query) { const s = (n, under) => { const m = query.test(name(n)); "
"if (m && !under) { ha += n[2]; hb += n[3]; } for (const c of n[1]) s(c, under || m); }; "
"s(P.root, false); }\n"
"  document.getElementById('matched').textContent = query ? 'Matched: ' + "
"(P.root[2] ? (100 * ha / P.root[2]).toFixed(1) : '0.0') + '% after, ' + "
"(P.root[3] ? (100 * hb / P.root[3]).toFixed(1) : '0.0') + '% before' : '';\n"
"}\n"
"chart.addEventListener('click', e => {\n"
"  const d = e.target.closest('.frame'); if (!d) return;\n"
"  zoomed = d.node === P.root ? null : d.node; render();\n"
"});\n"
"chart.addEventListener('mousemove', e => {\n"
"  const d = e.target.closest('.frame');\n"
"  if (!d) { tip.style.display = 'none'; return; }\n"
"  const n = d.node, dl = delta(n);\n"
"  tip.textContent = name(n) + (where(n) ? '\\n' + where(n) : '') +\n"
"    '\\nafter: ' + after(n).toFixed(2) + '% (' + n[2] + ' samples)' +\n"
"    '\\nbefore: ' + before(n).toFixed(2) + '% (' + n[3] + ' samples)' +\n"
"    '\\ndelta: ' + (dl >= 0 ? '+' : '') + dl.toFixed(2) + ' pp';\n"
"  tip.style.display = 'block';\n"
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

static void side_title(char *buf, size_t len, const struct report_diff_side *sd)
{
	char counts[256];

	snprintf(buf, len, "%s (%s)", sd->path, report_diff_side_str(sd, counts, sizeof(counts)));
}

int report_diff_html(FILE *f, const struct report_diff *d, const struct report_diff_opts *o)
{
	char title[2 * 4200 + 64], b[4200], a[4200];
	int err;

	side_title(b, sizeof(b), &d->side[DIFF_BEFORE]);
	side_title(a, sizeof(a), &d->side[DIFF_AFTER]);
	snprintf(title, sizeof(title), "pybpfprof %s diff: %s -> %s", o->tool_version, b, a);
	fputs(page_head, f);
	fputs("\"title\": ", f);
	report_script_string(f, title);
	fputs(",\n", f);
	write_names(f, &d->side[DIFF_AFTER].view);
	fputs("\"root\": ", f);
	err = write_tree(f, d);
	if (err)
		return err;
	fputs(page_tail, f);
	return ferror(f) ? -EIO : 0;
}
