// SPDX-License-Identifier: GPL-2.0-only
/*
 * An interactive flame graph in one self-contained HTML file (inline script
 * and style, nothing fetched): the merged call tree as JSON, drawn as one
 * box per (frame, path). Hover shows the function, file:line, samples and %;
 * a click zooms into a box; the search field highlights matching functions
 * and says how much of the total they hold. Same frames and counts as the
 * folded output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

struct node {
	uint32_t label;		/* frame id, or nframes + process index, or UINT32_MAX: root */
	uint64_t value;
	uint32_t child, next;	/* first child, next sibling; 0: none (node 0 is the root) */
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	struct hashmap index;	/* hash(parent, label) -> node */
};

static uint32_t tree__child(struct tree *t, uint32_t parent, uint32_t label)
{
	uint64_t h = hash_u64((uint64_t)parent << 32 | label), *slot;
	struct node *nd;
	uint32_t id;

	for (;; h++) {
		slot = hashmap__find(&t->index, h);
		if (!slot)
			break;
		if (*slot >> 32 == parent && t->nodes[(uint32_t)*slot].label == label)
			return (uint32_t)*slot;
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		void *n = realloc(t->nodes, ncap * sizeof(*t->nodes));

		if (!n)
			return 0;
		t->nodes = n;
		t->cap = ncap;
	}
	id = t->n;
	if (hashmap__set(&t->index, h, (uint64_t)parent << 32 | id))
		return 0;
	nd = &t->nodes[t->n++];
	*nd = (struct node){ .label = label };
	/* Appended last among its siblings: children keep their first-seen order. */
	if (!t->nodes[parent].child) {
		t->nodes[parent].child = id;
	} else {
		uint32_t c = t->nodes[parent].child;

		while (t->nodes[c].next)
			c = t->nodes[c].next;
		t->nodes[c].next = id;
	}
	return id;
}

static int tree__build(struct tree *t, const struct profile *p)
{
	size_t i, j, k;

	hashmap__init(&t->index);
	t->nodes = calloc(256, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->cap = 256;
	t->n = 1;
	t->nodes[0].label = UINT32_MAX;
	for (i = 0; i < p->nprocs; i++) {
		const struct profile_proc *pp = &p->procs[i];

		for (j = 0; j < pp->nstacks; j++) {
			const struct profile_stack *s = &pp->stacks[j];
			uint32_t cur = 0;

			if (!s->nframes)
				continue;
			t->nodes[0].value += s->count;
			if (p->nprocs > 1) {
				cur = tree__child(t, cur, p->nframes + i);
				if (!cur)
					return -ENOMEM;
				t->nodes[cur].value += s->count;
			}
			for (k = s->nframes; k-- > 0;) {
				cur = tree__child(t, cur, s->frames[k]);
				if (!cur)
					return -ENOMEM;
				t->nodes[cur].value += s->count;
			}
		}
	}
	return 0;
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
	for (i = 0; i < p->nprocs; i++) {
		fputs(i || p->nframes ? ",\n[" : "\n[", f);
		script_string(f, report_proc_label(&p->procs[i], label, sizeof(label)));
		fputs(", \"\"]", f);
	}
	fputs("],\n", f);
}

/* Nodes as [name index, samples, [children]]; the root's name index is -1. */
static void write_node(FILE *f, const struct tree *t, uint32_t id)
{
	const struct node *nd = &t->nodes[id];
	uint32_t c;

	fprintf(f, "[%d,%llu,[", nd->label == UINT32_MAX ? -1 : (int)nd->label,
		(unsigned long long)nd->value);
	for (c = nd->child; c; c = t->nodes[c].next) {
		write_node(f, t, c);
		if (t->nodes[c].next)
			fputc(',', f);
	}
	fputs("]]", f);
}

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
"/* Parents, so a zoom can keep the path to the root visible. */\n"
"function link(n, parent) { n.parent = parent; for (const c of n[2]) link(c, n); }\n"
"link(P.root, null);\n"
"function name(n) { return n[0] < 0 ? 'all' : P.names[n[0]][0]; }\n"
"function where(n) { return n[0] < 0 ? '' : P.names[n[0]][1]; }\n"
"function depth(n) { let d = 0; for (const c of n[2]) d = Math.max(d, depth(c)); "
"return d + 1; }\n"
"function color(s) { let h = 0; for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) >>> 0; "
"return 'hsl(' + (h % 50) + ',80%,' + (55 + h % 15) + '%)'; }\n"
"function box(n, left, width, level, rows, dim) {\n"
"  const d = document.createElement('div');\n"
"  d.className = 'frame' + (dim ? ' dim' : '') + (query && query.test(name(n)) ? ' match' : '');\n"
"  d.style.left = left + '%'; d.style.width = width + '%';\n"
"  d.style.top = ((rows - 1 - level) * ROW) + 'px';\n"
"  d.style.background = color(name(n));\n"
"  d.textContent = name(n);\n"
"  d.dataset.name = name(n); d.dataset.where = where(n); d.dataset.samples = n[1];\n"
"  d.node = n;\n"
"  chart.appendChild(d);\n"
"}\n"
"function draw(n, left, width, level, rows) {\n"
"  box(n, left, width, level, rows, false);\n"
"  let x = left;\n"
"  for (const c of n[2]) {\n"
"    const w = n[1] ? width * c[1] / n[1] : 0;\n"
"    if (w >= MIN_PCT) draw(c, x, w, level + 1, rows);\n"
"    x += w;\n"
"  }\n"
"}\n"
"function render() {\n"
"  const top = zoomed || P.root;\n"
"  const path = []; for (let a = top.parent; a; a = a.parent) path.unshift(a);\n"
"  const rows = path.length + depth(top);\n"
"  chart.textContent = ''; chart.style.height = (rows * ROW) + 'px';\n"
"  path.forEach((a, i) => box(a, 0, 100, i, rows, true));\n"
"  draw(top, 0, 100, path.length, rows);\n"
"  let hit = 0;\n"
"  if (query) { const s = (n, under) => { const m = query.test(name(n)); "
"if (m && !under) hit += n[1]; for (const c of n[2]) s(c, under || m); }; s(P.root, false); }\n"
"  document.getElementById('matched').textContent = query ? 'Matched: ' + "
"(P.root[1] ? (100 * hit / P.root[1]).toFixed(1) : '0.0') + '%' : '';\n"
"}\n"
"chart.addEventListener('click', e => {\n"
"  const d = e.target.closest('.frame'); if (!d) return;\n"
"  zoomed = d.node === P.root ? null : d.node; render();\n"
"});\n"
"chart.addEventListener('mousemove', e => {\n"
"  const d = e.target.closest('.frame');\n"
"  if (!d) { tip.style.display = 'none'; return; }\n"
"  const n = d.node, pct = P.root[1] ? (100 * n[1] / P.root[1]).toFixed(2) : '0.00';\n"
"  tip.textContent = name(n) + (where(n) ? '\\n' + where(n) : '') + '\\n' + n[1] + "
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

static int write_flame(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct tree t = {};
	char title[160];
	int err = tree__build(&t, p);

	if (!err) {
		fputs(page_head, f);
		snprintf(title, sizeof(title), "pybpfprof %s: %s profile, %llu samples at %u Hz",
			 o->tool_version, p->mode, (unsigned long long)t.nodes[0].value,
			 p->frequency_hz);
		fputs("\"title\": ", f);
		script_string(f, title);
		fputs(",\n", f);
		write_names(f, p);
		fputs("\"root\": ", f);
		write_node(f, &t, 0);
		fputs(page_tail, f);
		err = ferror(f) ? -EIO : 0;
	}
	free(t.nodes);
	hashmap__free(&t.index);
	return err;
}

const struct report_writer report_flame = {
	.name = "flamegraph",
	.exts = { ".html", ".svg.html" },
	.write = write_flame,
};
