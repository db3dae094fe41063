// SPDX-License-Identifier: GPL-2.0-only
/*
 * A source heatmap in one self-contained HTML file (inline script and style,
 * nothing fetched): every profiled source file of every process, each
 * sampled line shaded by its samples, with its self and total share and
 * their 95 % intervals (report_ci.h, as the JSON report's), on- and
 * off-CPU samples with --mode wall or --gil, bytes with --mem, and the
 * instructions its own samples ran with --opcodes. The page
 * lists the files by samples and the hottest lines first; a click on a
 * function marks its lines; the search field finds lines by text, function
 * or file.
 *
 * A line's self samples are those whose innermost Python frame ran (or
 * blocked) there: native and kernel frames below it (--native, --kernel) and
 * the off-CPU pseudo-frame (--mode wall) are charged to the Python line that
 * called them. Its total samples count each stack once. A sample whose
 * innermost Python frame has no known line is counted apart, not shaded.
 * Only sampled lines are shown (the model keeps the source of those only):
 * a gap between two says how many lines it skips.
 *
 * Every target string (file, function, source line, command line) reaches
 * the page as a JSON string inside <script type="application/json">
 * (report_script_string: no "</", no control character), and the page's
 * script puts it into the document as text (textContent), never as markup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report/report_ci.h"
#include "report/report_source.h"
#include "proc/source.h"

#define NO_SLOT UINT32_MAX

/* One (file, line) of the profile: the frames at it share it. */
struct hm_slot {
	uint32_t frame;	 /* its first frame (its function and file) */
	uint32_t stamp;	 /* the last stack that counted its total */
	uint32_t target; /* the process its counts are of */
	uint64_t self, total, off_self, off_total;
	uint64_t mem_self, mem_total, alloc_self, alloc_total;
};

struct hm_func {
	uint32_t stamp, target;
	uint64_t self, total;
	uint32_t file_gen, index; /* its index in the list of the file file_gen */
};

struct hm {
	const struct profile *p;
	uint32_t *slot_of; /* per frame id: its slot, or NO_SLOT */
	struct hm_slot *slots;
	struct hm_func *funcs;
	size_t nslots;
	/*
	 * The slots the process's stacks reach, ascending: a process costs its
	 * own stacks, not the whole profile's lines (thousands of processes).
	 */
	uint32_t *touched;
	size_t ntouched;
	uint32_t target;   /* the process being counted */
	uint32_t gen;	   /* the stack being counted */
	uint32_t file_gen; /* the file being written */
	uint64_t no_line;  /* samples whose innermost Python frame has no line */
	bool mem_pass;	   /* counting memory stacks: bytes, not samples */
	uint64_t mem_kind; /* of a memory stack: touched bytes */
	uint64_t alloc;	   /* and allocated bytes */
	/* --opcodes: the process's (slot, instruction) samples, by slot then most first */
	struct hm_op *ops;
	size_t nops;
};

struct hm_op {
	uint32_t slot, op; /* slot leads: report_lower_bound's key */
	uint64_t samples;
};

static int cmp_frame(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	const struct profile_frame *x = &p->frames[*(const uint32_t *)a],
				   *y = &p->frames[*(const uint32_t *)b];
	int c = strcmp(p->funcs[x->func].file, p->funcs[y->func].file);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* A frame that is a line of a Python source file. */
static bool is_source_frame(const struct profile *p, uint32_t frame)
{
	const struct profile_frame *fr = &p->frames[frame];
	const struct profile_func *fn = &p->funcs[fr->func];

	return fn->kind == PROFILE_FUNC_PYTHON && !fn->unresolved && fr->line > 0 && fn->file &&
	       strcmp(fn->file, PROFILE_OFFCPU_FILE);
}

/* The slots: every frame at a line of a source file, one slot per (file, line). */
static int hm_init(struct hm *h, const struct profile *p)
{
	uint32_t *order = malloc((p->nframes + 1) * sizeof(*order)); /* by (file, line) */
	size_t i, n = 0;

	memset(h, 0, sizeof(*h));
	h->p = p;
	h->slot_of = malloc((p->nframes + 1) * sizeof(*h->slot_of));
	h->funcs = calloc(p->nfuncs + 1, sizeof(*h->funcs));
	if (!order || !h->slot_of || !h->funcs)
		goto out;
	for (i = 0; i < p->nframes; i++) {
		h->slot_of[i] = NO_SLOT;
		if (is_source_frame(p, i))
			order[n++] = i;
	}
	if (n)
		qsort_r(order, n, sizeof(*order), cmp_frame, (void *)p);
	h->slots = calloc(n + 1, sizeof(*h->slots));
	h->touched = calloc(n + 1, sizeof(*h->touched));
	for (i = 0; h->slots && h->touched && i < n; i++) {
		if (!h->nslots || cmp_frame(&order[i], &h->slots[h->nslots - 1].frame, (void *)p))
			h->slots[h->nslots++].frame = order[i];
		h->slot_of[order[i]] = h->nslots - 1;
	}
out:
	free(order);
	return h->slots && h->touched ? 0 : -ENOMEM;
}

static void hm_free(struct hm *h)
{
	free(h->slot_of);
	free(h->slots);
	free(h->touched);
	free(h->funcs);
	free(h->ops);
}

static int cmp_hm_op_id(const void *a, const void *b)
{
	const struct hm_op *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

static int cmp_hm_op(const void *a, const void *b, void *arg)
{
	const struct hm_op *x = a, *y = b;
	const struct profile *p = arg;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(p->opnames[x->op].name, p->opnames[y->op].name);
}

/*
 * --opcodes: the process's instruction samples per line (slot), the frames
 * of several functions at one line summed. 0 or -ENOMEM.
 */
static int hm_ops(struct hm *h, const struct profile_target *pp)
{
	struct op_stat *st;
	size_t n, i, j, k = 0;

	free(h->ops);
	h->ops = NULL;
	h->nops = 0;
	if (!h->p->opcodes)
		return 0;
	if (profile_target__op_stats(h->p, pp, &st, &n))
		return -ENOMEM;
	h->ops = calloc(n + 1, sizeof(*h->ops));
	if (!h->ops) {
		free(st);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (h->slot_of[st[i].frame] != NO_SLOT)
			h->ops[k++] = (struct hm_op){ h->slot_of[st[i].frame], st[i].op,
						      st[i].samples };
	free(st);
	/* the frames of several functions at one line: one entry per (line, instruction) */
	if (k)
		qsort(h->ops, k, sizeof(*h->ops), cmp_hm_op_id);
	for (i = 0, j = 0; i < k; i++) {
		if (j && h->ops[j - 1].slot == h->ops[i].slot && h->ops[j - 1].op == h->ops[i].op)
			h->ops[j - 1].samples += h->ops[i].samples;
		else
			h->ops[j++] = h->ops[i];
	}
	k = j;
	if (k)
		qsort_r(h->ops, k, sizeof(*h->ops), cmp_hm_op, (void *)h->p);
	h->nops = k;
	return 0;
}

/* --opcodes: after a comma, [[name, samples], ...] of slot i's own samples, most first. */
static void write_line_ops(FILE *f, const struct hm *h, size_t i)
{
	/* the first entry of slot i (the entries' leading key) */
	size_t lo = report_lower_bound(h->ops, h->nops, sizeof(*h->ops), (uint32_t)i), k;

	if (!h->p->opcodes)
		return;
	fputs(",[", f);
	for (k = lo; k < h->nops && h->ops[k].slot == i; k++) {
		fputs(k > lo ? ",[" : "[", f);
		report_script_string(f, h->p->opnames[h->ops[k].op].name);
		fprintf(f, ",%llu]", (unsigned long long)h->ops[k].samples);
	}
	fputc(']', f);
}

/* A slot's counts for this process (zeroed at its first use, and listed). */
static struct hm_slot *slot_at(struct hm *h, uint32_t slot)
{
	struct hm_slot *s = &h->slots[slot];

	if (s->target != h->target) {
		uint32_t frame = s->frame, stamp = s->stamp;

		memset(s, 0, sizeof(*s));
		s->frame = frame;
		s->stamp = stamp;
		s->target = h->target;
		h->touched[h->ntouched++] = slot;
	}
	return s;
}

static struct hm_func *func_at(struct hm *h, uint32_t func)
{
	struct hm_func *fn = &h->funcs[func];

	if (fn->target != h->target) {
		fn->target = h->target;
		fn->self = fn->total = 0;
	}
	return fn;
}

static void hm_self(struct hm *h, struct hm_slot *s, uint64_t count, bool off)
{
	if (h->mem_pass) {
		s->mem_self += h->mem_kind;
		s->alloc_self += h->alloc;
		return;
	}
	s->self += count;
	s->off_self += off ? count : 0;
	func_at(h, h->p->frames[s->frame].func)->self += count;
}

static void hm_total(struct hm *h, uint32_t frame, uint64_t count, bool off)
{
	struct hm_slot *s = slot_at(h, h->slot_of[frame]);
	struct hm_func *fn = func_at(h, h->p->frames[frame].func);

	if (s->stamp != h->gen) {
		s->stamp = h->gen;
		if (h->mem_pass) {
			s->mem_total += h->mem_kind;
			s->alloc_total += h->alloc;
		} else {
			s->total += count;
			s->off_total += off ? count : 0;
		}
	}
	if (!h->mem_pass && fn->stamp != h->gen) {
		fn->stamp = h->gen;
		fn->total += count;
	}
}

/* One stack, innermost frame first: self to its innermost Python line, total once to each. */
static void hm_stack(struct hm *h, const uint32_t *frames, uint32_t n, uint64_t count, bool off)
{
	/* the others (native, kernel, off-CPU) are its callees */
	uint32_t k, own = profile__innermost_line_of(h->p, frames, n);

	h->gen++;
	for (k = 0; k < n; k++) {
		uint32_t fr = frames[k];

		if (fr >= h->p->nframes)
			continue;
		if (k == own) {
			if (h->slot_of[fr] != NO_SLOT)
				hm_self(h, slot_at(h, h->slot_of[fr]), count, off);
			else if (!h->mem_pass)
				h->no_line += count;
		}
		if (h->slot_of[fr] != NO_SLOT)
			hm_total(h, fr, count, off);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void hm_count(struct hm *h, const struct profile_target *pp)
{
	const struct profile *p = h->p;
	size_t i;

	h->target++;
	h->ntouched = 0;
	h->no_line = 0;
	h->mem_pass = false;
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		bool off = (p->wall || p->gil) && profile__offcpu_class(p, s) >= 0;

		hm_stack(h, s->frames, s->nframes, s->count, off);
	}
	h->mem_pass = true;
	for (i = 0; i < pp->mem.nstacks; i++) {
		const struct profile_mem_stack *s = &pp->mem.stacks[i];

		h->mem_kind = s->bytes[PROFILE_MEM_TOUCHED];
		h->alloc = s->bytes[PROFILE_MEM_ALLOCATED];
		hm_stack(h, s->frames, s->nframes, 1, false);
	}
	if (h->ntouched)
		qsort(h->touched, h->ntouched, sizeof(*h->touched), cmp_u32);
}

static bool slot_used(const struct hm_slot *s)
{
	return s->total || s->mem_total || s->alloc_total;
}

static const char *slot_file(const struct hm *h, size_t i)
{
	return h->p->funcs[h->p->frames[h->slots[i].frame].func].file;
}

/* [lo, hi] of k of n samples, in percent, after a comma. */
static void write_ci(FILE *f, uint64_t k, uint64_t n)
{
	struct report_ci c = report_ci_wilson(k, n);

	fprintf(f, ",%.3f,%.3f", 100.0 * c.lo, 100.0 * c.hi);
}

/*
 * A line: [line, self, total, self lo, self hi, total lo, total hi, off-CPU
 * self, off-CPU total, touched self, touched total, allocated self,
 * allocated total, its function's index in the file's list, source text,
 * and with --opcodes its instructions (write_line_ops)].
 */
static void write_line(FILE *f, const struct hm *h, const struct profile_target *pp, size_t i,
		       uint32_t fn_index)
{
	const struct hm_slot *s = &h->slots[i];
	const struct profile_frame *fr = &h->p->frames[s->frame];
	char text[SOURCE_TEXT_MAX + 1];

	fprintf(f, "[%d,%llu,%llu", fr->line, (unsigned long long)s->self,
		(unsigned long long)s->total);
	write_ci(f, s->self, pp->samples);
	write_ci(f, s->total, pp->samples);
	fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%u,", (unsigned long long)s->off_self,
		(unsigned long long)s->off_total, (unsigned long long)s->mem_self,
		(unsigned long long)s->mem_total, (unsigned long long)s->alloc_self,
		(unsigned long long)s->alloc_total, fn_index);
	if (report_source_line(h->p, pp, slot_file(h, i), fr->line, text, sizeof(text)))
		text[0] = '\0';
	report_script_string(f, text);
	write_line_ops(f, h, i);
	fputc(']', f);
}

/* Why the file's source is not shown ("" when it is): its first line's reading error. */
static const char *file_error(const struct hm *h, const struct profile_target *pp, size_t i)
{
	char text[SOURCE_TEXT_MAX + 1];
	int err = report_source_line(h->p, pp, slot_file(h, i),
				     h->p->frames[h->slots[i].frame].line, text, sizeof(text));

	if (!err)
		return "";
	if (slot_file(h, i)[0] != '/')
		return "no source file (the code was not loaded from a file)";
	return err == -ENOENT ? "not found (no such file, or not that line in it)" :
				source_strerror(err);
}

/*
 * The file's functions, each once, in the order their lines come:
 * [qualname, first line, self, total]; fidx[k] is the function's index in
 * that list of the slot touched[a + k].
 */
static void write_funcs(FILE *f, struct hm *h, size_t a, size_t b, uint32_t *fidx)
{
	size_t i, n = 0;

	fputs("\"f\":[", f);
	h->file_gen++;
	for (i = a; i < b; i++) {
		const struct hm_slot *s = &h->slots[h->touched[i]];
		uint32_t func = h->p->frames[s->frame].func;
		struct hm_func *fn = func_at(h, func);

		if (!slot_used(s))
			continue;
		if (fn->file_gen == h->file_gen) {
			fidx[i - a] = fn->index;
			continue;
		}
		fn->file_gen = h->file_gen;
		fn->index = fidx[i - a] = n;
		fputs(n ? ",[" : "[", f);
		report_script_string(f, h->p->funcs[func].qualname);
		fprintf(f, ",%d,%llu,%llu]", h->p->funcs[func].firstline,
			(unsigned long long)fn->self, (unsigned long long)fn->total);
		n++;
	}
	fputs("],", f);
}

/* The slots touched[a..b) (one file, one used) of process number proc, one entry of "files". */
static int write_file(FILE *f, struct hm *h, const struct profile_target *pp, size_t proc, size_t a,
		      size_t b, bool first)
{
	uint32_t *fidx = calloc(b - a, sizeof(*fidx));
	size_t i;
	bool any = false;

	if (!fidx)
		return -ENOMEM;
	fputs(first ? "\n{\"n\":" : ",\n{\"n\":", f);
	report_script_string(f, slot_file(h, h->touched[a]));
	fprintf(f, ",\"p\":%zu,\"err\":", proc);
	for (i = a; i < b && !slot_used(&h->slots[h->touched[i]]); i++)
		;
	report_script_string(f, file_error(h, pp, h->touched[i]));
	fputc(',', f);
	write_funcs(f, h, a, b, fidx);
	fputs("\"l\":[", f);
	for (i = a; i < b; i++) {
		if (!slot_used(&h->slots[h->touched[i]]))
			continue;
		fputs(any ? ",\n" : "\n", f);
		write_line(f, h, pp, h->touched[i], fidx[i - a]);
		any = true;
	}
	fputs("]}", f);
	free(fidx);
	return 0;
}

/* Every file of process number proc with a sampled line; *no_line: its samples without one. */
static int write_files(FILE *f, struct hm *h, const struct profile_target *pp, size_t proc,
		       bool *first, uint64_t *no_line)
{
	size_t a, b;
	int err;

	hm_count(h, pp);
	err = hm_ops(h, pp);
	if (err)
		return err;
	*no_line = h->no_line;
	for (a = 0; a < h->ntouched; a = b) {
		const char *file = slot_file(h, h->touched[a]);
		bool used = false;

		for (b = a; b < h->ntouched && !strcmp(slot_file(h, h->touched[b]), file); b++)
			used |= slot_used(&h->slots[h->touched[b]]);
		if (!used)
			continue;
		err = write_file(f, h, pp, proc, a, b, *first);
		if (err)
			return err;
		*first = false;
	}
	return 0;
}

/* "files", then "procs": per process [label, samples, samples without a line]. */
static int write_body(FILE *f, const struct profile *p)
{
	uint64_t *no_line = calloc(p->ntargets + 1, sizeof(*no_line));
	char label[512];
	bool first = true;
	struct hm h;
	size_t i;
	int err = no_line ? hm_init(&h, p) : -ENOMEM;

	fputs("\"files\":[", f);
	for (i = 0; !err && i < p->ntargets; i++)
		err = write_files(f, &h, &p->targets[i], i, &first, &no_line[i]);
	fputs("],\n\"procs\":[", f);
	for (i = 0; !err && i < p->ntargets; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		report_script_string(f, report_proc_label(&p->targets[i], label, sizeof(label)));
		fprintf(f, ",%llu,%llu]", (unsigned long long)p->targets[i].samples,
			(unsigned long long)no_line[i]);
	}
	fputs("]", f);
	if (no_line)
		hm_free(&h);
	free(no_line);
	return err;
}

// clang-format off
static const char page_head[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>pybpfprof heatmap</title>\n"
"<style>\n"
"body{font:12px sans-serif;margin:8px;background:#fff;color:#222}\n"
"#bar{display:flex;gap:8px;align-items:center;position:sticky;top:0;background:#fff;"
"z-index:1;padding:4px 0;border-bottom:1px solid #ccc}\n"
"h2{font-size:14px;margin:14px 0 4px}h3{font-size:13px;margin:18px 0 4px;"
"word-break:break-all}\n"
"table{border-collapse:collapse}td,th{padding:1px 6px;text-align:left;vertical-align:top}\n"
"td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\n"
"td.code{font-family:monospace;white-space:pre;width:100%}\n"
"td.ops{font-family:monospace;font-size:11px;white-space:nowrap}\n"
"tr.ln.sel td.code{outline:2px solid #1565c0}\n"
"tr.ln.match td{box-shadow:inset 0 0 0 2px #e040fb}\n"
"tr.gap td{color:#888;font-style:italic}\n"
".click{cursor:pointer}.click:hover{text-decoration:underline}\n"
".fn{display:inline-block;margin:0 10px 2px 0}.err{color:#b71c1c}\n"
"</style></head><body>\n"
"<div id=\"bar\"><b id=\"title\"></b></div>\n"
"<div id=\"tools\" style=\"margin:6px 0\"><label>Shade by <select id=\"metric\"></select>"
"</label> <input id=\"search\" placeholder=\"Search lines, functions, files\" size=\"32\"> "
"<span id=\"found\"></span></div>\n"
"<div id=\"note\"></div>\n"
"<h2>Files</h2><table id=\"files\"></table>\n"
"<h2>Hottest lines</h2><table id=\"hot\"></table>\n"
"<div id=\"sources\"></div>\n"
"<script type=\"application/json\" id=\"profile\">\n{";

static const char page_tail[] =
"}\n</script>\n"
"<script>\n"
"'use strict';\n"
"const P = JSON.parse(document.getElementById('profile').textContent);\n"
"const $ = id => document.getElementById(id);\n"
"/* a line's fields (report_heatmap.c's write_line) */\n"
"const LINE = 0, SELF = 1, TOTAL = 2, SLO = 3, SHI = 4, TLO = 5, THI = 6, OFFS = 7, OFFT = 8,\n"
"  MEMS = 9, MEMT = 10, ALLOCS = 11, ALLOCT = 12, FN = 13, TEXT = 14, OPS = 15, HOT_ROWS = 50;\n"
"function el(tag, cls, text) { const e = document.createElement(tag);\n"
"  if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }\n"
"function cell(tr, text, cls) { tr.appendChild(el('td', cls, text)); }\n"
"function n(f) { return P.procs[f.p][1]; }\n"
"function share(k, all) { return all ? (100 * k / all).toFixed(1) + '%' : '-'; }\n"
"/* a share and its 95 % interval's half width (Wilson's, from the samples) */\n"
"function pm(k, all, lo, hi) { return all && k ? share(k, all) + ' \\u00b1' + "
"((hi - lo) / 2).toFixed(1) : ''; }\n"
"function bytes(b) { const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0;\n"
"  while (b >= 1024 && i < 4) { b /= 1024; i++; } return b ? (i ? b.toFixed(1) : b) + ' ' + "
"u[i] : ''; }\n"
"/* --opcodes: the instructions a line's own samples ran, most first, as shares of them */\n"
"function ops(l) { const o = l[OPS] || [], all = o.reduce((s, x) => s + x[1], 0);\n"
"  const r = o.map(x => x[0] + ' ' + share(x[1], all)).join(', ');\n"
"  return l[SELF] > all ? r + (r ? ', ' : '') + '(not read) ' + share(l[SELF] - all, l[SELF]) : r; }\n"
"/* what lines are shaded and files ordered by: [label, field, bytes?] */\n"
"const metrics = [['self samples', SELF], ['total samples', TOTAL]];\n"
"if (P.wall) metrics.push(['off-CPU self samples', OFFS]);\n"
"if (P.mem) metrics.push(['bytes touched (self)', MEMS, 1]);\n"
"if (P.alloc) metrics.push(['bytes allocated (self)', ALLOCS, 1]);\n"
"let metric = metrics[0];\n"
"const anyCpu = P.files.some(f => f.l.some(l => l[TOTAL]));\n"
"if (!anyCpu && metrics.length > 2) metric = metrics[2];\n"
"for (const [i, m] of metrics.entries()) { const o = el('option', '', m[0]); o.value = i;\n"
"  if (m === metric) o.selected = true; $('metric').appendChild(o); }\n"
"function fileName(f) { return P.procs.length > 1 ? f.n + '  [' + P.procs[f.p][0] + ']' : "
"f.n; }\n"
"function fileSum(f, k) { let s = 0; for (const l of f.l) s += l[k]; return s; }\n"
"function rowOf(fi, line) { return document.querySelector('tr.ln[data-file=\"' + fi + "
"'\"][data-line=\"' + line + '\"]'); }\n"
"function goTo(row) { if (row) row.scrollIntoView({block: 'center'}); }\n"
"function cols(tr, f, l) {\n"
"  cell(tr, l ? String(l[LINE]) : 'line', 'n');\n"
"  cell(tr, l ? pm(l[SELF], n(f), l[SLO], l[SHI]) : 'self \\u00b1 95%', 'n');\n"
"  cell(tr, l ? pm(l[TOTAL], n(f), l[TLO], l[THI]) : 'total \\u00b1 95%', 'n');\n"
"  if (P.wall) { cell(tr, l ? share(l[SELF] - l[OFFS], n(f)) : 'on-CPU self', 'n');\n"
"    cell(tr, l ? share(l[OFFS], n(f)) : 'off-CPU self', 'n'); }\n"
"  if (P.mem) { cell(tr, l ? bytes(l[MEMS]) : 'touched self', 'n');\n"
"    cell(tr, l ? bytes(l[MEMT]) : 'touched total', 'n'); }\n"
"  if (P.alloc) { cell(tr, l ? bytes(l[ALLOCS]) : 'allocated self', 'n');\n"
"    cell(tr, l ? bytes(l[ALLOCT]) : 'allocated total', 'n'); }\n"
"  if (P.opcodes) cell(tr, l ? ops(l) : 'instructions (of self)', 'ops');\n"
"}\n"
"function source(f, fi) {\n"
"  const sec = el('div', 'src'); sec.id = 'file' + fi; sec.appendChild(el('h3', '', fileName(f)));\n"
"  if (f.err) sec.appendChild(el('div', 'err', 'source not shown: ' + f.err));\n"
"  const fns = el('div');\n"
"  f.f.forEach((fn, k) => { const s = el('span', 'fn click', fn[0] + ' ' + share(fn[2], n(f)) "
"+ ' self, ' + share(fn[3], n(f)) + ' total');\n"
"    s.dataset.file = fi; s.dataset.fn = k; s.dataset.name = fn[0]; fns.appendChild(s); });\n"
"  sec.appendChild(fns);\n"
"  const t = el('table', 'lines'), head = el('tr'); cols(head, f, null);\n"
"  head.appendChild(el('td', 'code', 'source')); t.appendChild(head);\n"
"  let last = 0;\n"
"  for (const l of f.l) {\n"
"    if (last && l[LINE] > last + 1) { const g = el('tr', 'gap');\n"
"      g.appendChild(el('td', '', '\\u22ee')); const c = el('td', '', (l[LINE] - last - 1) + "
"' lines without samples'); c.colSpan = 9; g.appendChild(c); t.appendChild(g); }\n"
"    const tr = el('tr', 'ln'); tr.dataset.file = fi; tr.dataset.line = l[LINE];\n"
"    tr.dataset.fn = f.f[l[FN]] ? f.f[l[FN]][0] : ''; tr.line = l;\n"
"    cols(tr, f, l); cell(tr, l[TEXT], 'code'); t.appendChild(tr);\n"
"    last = l[LINE];\n"
"  }\n"
"  sec.appendChild(t); return sec;\n"
"}\n"
"let most = 0;\n"
"function shade() {\n"
"  most = 0; for (const f of P.files) for (const l of f.l) most = Math.max(most, l[metric[1]]);\n"
"  for (const tr of document.querySelectorAll('tr.ln')) { const v = tr.line[metric[1]];\n"
"    tr.dataset.heat = most ? v / most : 0;\n"
"    tr.style.background = v ? 'hsl(8,90%,' + (96 - 50 * v / most).toFixed(1) + '%)' : ''; }\n"
"}\n"
"function value(f, l) { return metric[2] ? bytes(l[metric[1]]) : share(l[metric[1]], n(f)); }\n"
"function lists() {\n"
"  const order = P.files.map((f, i) => i), k = metric[1];\n"
"  order.sort((a, b) => fileSum(P.files[b], k) - fileSum(P.files[a], k) || a - b);\n"
"  const ft = $('files'); ft.textContent = '';\n"
"  for (const i of order) { const f = P.files[i], tr = el('tr', 'file click');\n"
"    tr.dataset.file = i; tr.dataset.sum = fileSum(f, k);\n"
"    cell(tr, metric[2] ? bytes(fileSum(f, k)) : share(fileSum(f, k), n(f)), 'n');\n"
"    cell(tr, fileName(f)); ft.appendChild(tr); }\n"
"  const all = []; P.files.forEach((f, i) => f.l.forEach(l => { if (l[k]) all.push([i, l]); }));\n"
"  all.sort((a, b) => b[1][k] - a[1][k] || a[0] - b[0] || a[1][LINE] - b[1][LINE]);\n"
"  const ht = $('hot'); ht.textContent = '';\n"
"  for (const [i, l] of all.slice(0, HOT_ROWS)) { const f = P.files[i], tr = el('tr', 'hot click');\n"
"    tr.dataset.file = i; tr.dataset.line = l[LINE];\n"
"    cell(tr, value(f, l), 'n'); cell(tr, fileName(f) + ':' + l[LINE]);\n"
"    cell(tr, f.f[l[FN]] ? f.f[l[FN]][0] : ''); cell(tr, l[TEXT], 'code'); ht.appendChild(tr); }\n"
"}\n"
"$('files').addEventListener('click', e => { const r = e.target.closest('tr.file');\n"
"  if (r) $('file' + r.dataset.file).scrollIntoView(); });\n"
"$('hot').addEventListener('click', e => { const r = e.target.closest('tr.hot');\n"
"  if (r) { const row = rowOf(r.dataset.file, r.dataset.line); mark('sel', [row]); goTo(row); } });\n"
"function mark(cls, rows) { for (const r of document.querySelectorAll('tr.ln.' + cls))\n"
"  r.classList.remove(cls); for (const r of rows) if (r) r.classList.add(cls); }\n"
"/* a function's lines: marked, the hottest shown */\n"
"$('sources').addEventListener('click', e => { const s = e.target.closest('.fn'); if (!s) return;\n"
"  const rows = Array.from(document.querySelectorAll('tr.ln[data-file=\"' + s.dataset.file + "
"'\"]')).filter(r => r.line[FN] === +s.dataset.fn);\n"
"  mark('sel', rows); rows.sort((a, b) => b.line[metric[1]] - a.line[metric[1]]); goTo(rows[0]); });\n"
"$('search').addEventListener('input', e => { const q = e.target.value.toLowerCase();\n"
"  const rows = q ? Array.from(document.querySelectorAll('tr.ln')).filter(r => {\n"
"    const f = P.files[r.dataset.file];\n"
"    return (r.line[TEXT] + '\\n' + r.dataset.fn + '\\n' + f.n + ':' + r.line[LINE])\n"
"      .toLowerCase().includes(q); }) : [];\n"
"  mark('match', rows); $('found').textContent = q ? rows.length + ' line' + "
"(rows.length === 1 ? '' : 's') + ' found' : ''; goTo(rows[0]); });\n"
"$('metric').addEventListener('change', e => { metric = metrics[+e.target.value]; shade(); "
"lists(); });\n"
"$('title').textContent = P.title;\n"
"$('note').textContent = P.procs.filter(q => q[2]).map(q => q[0] + ': ' + q[2] + ' of ' + "
"q[1] + ' samples ran in a Python frame with no known line (not shaded)').join('; ');\n"
"/* the files in the order of the list */\n"
"P.files.map((f, i) => i).sort((a, b) => fileSum(P.files[b], metric[1]) - "
"fileSum(P.files[a], metric[1]) || a - b).forEach(i => $('sources').appendChild("
"source(P.files[i], i)));\n"
"shade(); lists();\n"
"</script></body></html>\n";
// clang-format on

static int write_heatmap(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char title[768];
	int err;

	fputs(page_head, f);
	report_page_title(p, o->tool_version,
			  "shares of each process's samples, \xc2\xb1 the 95% interval", title,
			  sizeof(title));
	fputs("\"title\":", f);
	report_script_string(f, title);
	fprintf(f, ",\n\"wall\":%s,\"mem\":%s,\"alloc\":%s,\"opcodes\":%s,\n",
		p->wall || p->gil ? "true" : "false", p->mem ? "true" : "false",
		p->mem_alloc ? "true" : "false", p->opcodes ? "true" : "false");
	err = write_body(f, p);
	if (err)
		return err;
	fputs(page_tail, f);
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_heatmap = {
	.name = "heatmap",
	.exts = { ".heat.html" },
	.write = write_heatmap,
};
