// SPDX-License-Identifier: GPL-2.0-only
/*
 * The file pstats.Stats() loads: Python's marshal encoding of the dict
 * cProfile dumps, {(file, line, name): (cc, nc, tt, ct, {caller: (nc, cc,
 * tt, ct)})}, which python3 -m pstats, snakeviz, PyCharm and gprof2dot read.
 *
 * With exact call statistics (--calls) the counts and times are exact. From
 * samples alone they are estimates: times are samples / frequency, and a
 * "call" is a sample the function was on the stack in (nc counts each
 * recursive activation, cc the sample once), so ncalls reads as samples.
 *
 * --opcodes: the instruction a sample's innermost Python frame was running
 * is an entry of its own below that frame's function, as a callee: (file,
 * line, "<BINARY_OP_ADD_INT>"), which pstats prints
 * file:line(<BINARY_OP_ADD_INT>). The samples it stands for are its own
 * time, no longer the function's; the function's cumulative time is
 * unchanged. Samples whose instruction was not read stay the function's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "util/text.h"
#include "util/vec.h"

struct fstat {
	uint64_t cc, nc;
	double tt, ct;
	size_t last; /* stack serial that last counted this function */
};

struct edge {
	uint32_t caller, callee;
	uint64_t cc, nc;
	double tt, ct;
	size_t last;
};

/* --opcodes: an instruction at a line, an entry past the functions (id p->nfuncs + i). */
struct op_entry {
	const char *file;
	int line;
	const char *name;
};

struct stats {
	struct fstat *funcs; /* the functions, then the op entries */
	struct edge *edges;
	size_t nedges, cap_edges;
	struct hashmap index; /* caller << 32 | callee -> edge index */
	struct op_entry *ops;
	size_t nops, cap_ops;
	struct hashmap op_index; /* hash of (file, line, name) -> index in ops */
};

static struct edge *stats__edge(struct stats *st, uint32_t caller, uint32_t callee)
{
	uint64_t key = (uint64_t)caller << 32 | callee;
	uint64_t *slot = hashmap__find(&st->index, key);
	struct edge *e;

	if (slot)
		return &st->edges[*slot];
	if (vec_grow((void **)&st->edges, &st->cap_edges, st->nedges + 1, sizeof(*st->edges)))
		return NULL;
	if (hashmap__set(&st->index, key, st->nedges))
		return NULL;
	e = &st->edges[st->nedges++];
	memset(e, 0, sizeof(*e));
	e->caller = caller;
	e->callee = callee;
	return e;
}

/*
 * --opcodes: the op entry of instruction op at frame (its function's file
 * and the frame's line), made at first sight; its index, or SIZE_MAX when
 * out of memory. Entries of several functions at one file and line are one:
 * pstats keys by (file, line, name).
 */
static size_t stats__op(struct stats *st, const struct profile *p, uint32_t frame, uint32_t op)
{
	const struct profile_frame *fr = &p->frames[frame];
	const char *file = p->funcs[fr->func].file, *name = p->opnames[op].name;
	uint64_t h = hash_bytes(name, strlen(name), hash_bytes(file, strlen(file), fr->line));
	uint64_t *slot;

	for (;; h++) {
		slot = hashmap__find(&st->op_index, h);
		if (!slot)
			break;
		if (st->ops[*slot].line == fr->line && !strcmp(st->ops[*slot].file, file) &&
		    !strcmp(st->ops[*slot].name, name))
			return *slot;
	}
	if (vec_grow((void **)&st->ops, &st->cap_ops, st->nops + 1, sizeof(*st->ops)) ||
	    hashmap__set(&st->op_index, h, st->nops))
		return SIZE_MAX;
	st->ops[st->nops] = (struct op_entry){ file, fr->line, name };
	return st->nops++;
}

/*
 * Whether a stack's instructions are entries: its innermost frame is a
 * Python one's (under --native they are its native callees' time instead).
 */
static bool stack_ops(const struct profile *p, const struct profile_stack *s)
{
	return s->nops && s->nframes &&
	       p->funcs[p->frames[s->frames[0]].func].kind == PROFILE_FUNC_PYTHON;
}

/* Every op entry of pp's stacks, made before the counts (the entries follow the functions). */
static int stats__find_ops(struct stats *st, const struct profile *p,
			   const struct profile_target *pp)
{
	size_t i, j;

	for (i = 0; i < pp->nstacks; i++)
		for (j = 0; stack_ops(p, &pp->stacks[i]) && j < pp->stacks[i].nops; j++)
			if (stats__op(st, p, pp->stacks[i].frames[0], pp->stacks[i].ops[j].op) ==
			    SIZE_MAX)
				return -ENOMEM;
	return 0;
}

/*
 * A stack's instructions as callees of its innermost function: their
 * samples are their own time, taken from the function's (which keeps the
 * samples whose instruction was not read). Returns those samples, or
 * UINT64_MAX when out of memory.
 */
static uint64_t stats__add_ops(struct stats *st, const struct profile *p,
			       const struct profile_stack *s)
{
	uint32_t func = p->frames[s->frames[0]].func;
	uint64_t sum = 0;
	size_t j, k;

	for (j = 0; stack_ops(p, s) && j < s->nops; j++) {
		uint64_t n = s->ops[j].samples;
		struct fstat *fs;
		struct edge *e;

		k = stats__op(st, p, s->frames[0], s->ops[j].op);
		e = k == SIZE_MAX ? NULL : stats__edge(st, func, (uint32_t)(p->nfuncs + k));
		if (!e)
			return UINT64_MAX;
		fs = &st->funcs[p->nfuncs + k];
		fs->cc += n;
		fs->nc += n;
		fs->tt += n;
		fs->ct += n;
		e->cc += n;
		e->nc += n;
		e->tt += n;
		e->ct += n;
		sum += n;
	}
	return sum;
}

/* Estimates from the sampled stacks, in samples (converted to seconds when written). */
static int stats__add_samples(struct stats *st, const struct profile *p,
			      const struct profile_target *pp, size_t *serial)
{
	size_t i, j;
	uint64_t ops;

	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		uint64_t c = s->count;

		if (!s->nframes)
			continue;
		++*serial;
		ops = stats__add_ops(st, p, s);
		if (ops == UINT64_MAX)
			return -ENOMEM;
		st->funcs[p->frames[s->frames[0]].func].tt += c - ops;
		for (j = 0; j < s->nframes; j++) {
			struct fstat *fs = &st->funcs[p->frames[s->frames[j]].func];
			struct edge *e;

			fs->nc += c;
			if (fs->last != *serial) {
				fs->last = *serial;
				fs->cc += c;
				fs->ct += c;
			}
			if (j + 1 == s->nframes)
				continue;
			e = stats__edge(st, p->frames[s->frames[j + 1]].func,
					p->frames[s->frames[j]].func);
			if (!e)
				return -ENOMEM;
			e->nc += c;
			if (e->last != *serial) {
				e->last = *serial;
				e->cc += c;
				e->ct += c;
			}
			if (!j)
				e->tt += c - ops;
		}
	}
	return 0;
}

/* Exact figures from --calls, already in seconds. */
static int stats__add_calls(struct stats *st, const struct profile_target *pp)
{
	size_t i;

	for (i = 0; i < pp->ncalls; i++) {
		const struct profile_call_edge *ce = &pp->calls[i];
		struct fstat *fs = &st->funcs[ce->func];
		uint64_t primitive = ce->caller == ce->func ? 0 : ce->calls;
		struct edge *e;

		fs->nc += ce->calls;
		fs->cc += primitive;
		fs->tt += ce->exclusive_ns / 1e9;
		fs->ct += ce->inclusive_ns / 1e9;
		if (ce->caller == UINT32_MAX)
			continue;
		e = stats__edge(st, ce->caller, ce->func);
		if (!e)
			return -ENOMEM;
		e->nc += ce->calls;
		e->cc += primitive;
		e->tt += ce->exclusive_ns / 1e9;
		e->ct += ce->inclusive_ns / 1e9;
	}
	return 0;
}

/* marshal: little-endian fixed-width fields behind a one-byte type code. */
static void m_u32(FILE *f, uint32_t v)
{
	unsigned char b[4] = { v, v >> 8, v >> 16, v >> 24 };

	fwrite(b, 1, 4, f);
}

static void m_int(FILE *f, uint64_t v)
{
	uint64_t d;
	uint32_t n = 0;

	if (v <= INT32_MAX) {
		fputc('i', f);
		m_u32(f, v);
		return;
	}
	/* Larger: a "long" of 15-bit digits, least significant first. */
	for (d = v; d; d >>= 15)
		n++;
	fputc('l', f);
	m_u32(f, n);
	for (d = v; d; d >>= 15) {
		fputc(d & 0xff, f);
		fputc((d >> 8) & 0x7f, f);
	}
}

static void m_float(FILE *f, double v)
{
	uint64_t bits;
	int i;

	memcpy(&bits, &v, sizeof(bits));
	fputc('g', f);
	for (i = 0; i < 8; i++)
		fputc((bits >> (8 * i)) & 0xff, f);
}

/*
 * A str as marshal writes it: marshal.load refuses bytes that are not UTF-8,
 * and pstats prints the names to a terminal, so they are made safe as the
 * text report's are ('?' for what is not printable, the tab kept).
 */
static void m_str(FILE *f, const char *s)
{
	const unsigned char *p;
	size_t n = 0;
	int k;

	for (p = (const unsigned char *)s; *p; p += k)
		n += text_next(p, &k) == TEXT_PRINTABLE || *p == '\t' ? k : 1;
	fputc('u', f);
	m_u32(f, n);
	for (p = (const unsigned char *)s; *p; p += k) {
		if (text_next(p, &k) == TEXT_PRINTABLE || *p == '\t')
			fwrite(p, 1, k, f);
		else
			fputc('?', f);
	}
}

/*
 * A function's key tuple, written in full the first time with marshal's
 * FLAG_REF set, later as a back-reference to it: a function that calls or is
 * called by many others costs five bytes per mention instead of its names.
 * refs[func] is the reference index + 1, *nrefs the flagged objects so far.
 */
#define FLAG_REF 0x80

static void m_key(FILE *f, const struct profile *p, const struct stats *st, uint32_t func,
		  uint32_t *refs, uint32_t *nrefs)
{
	const struct profile_func *fn = &p->funcs[func < p->nfuncs ? func : 0];
	char name[80];

	if (refs[func]) {
		fputc('r', f);
		m_u32(f, refs[func] - 1);
		return;
	}
	refs[func] = ++*nrefs;
	fputc('(' | FLAG_REF, f);
	m_u32(f, 3);
	if (func >= p->nfuncs) { /* --opcodes: an instruction at a line */
		const struct op_entry *op = &st->ops[func - p->nfuncs];

		snprintf(name, sizeof(name), "<%s>", op->name);
		m_str(f, op->file);
		m_int(f, op->line > 0 ? op->line : 0);
		m_str(f, name);
		return;
	}
	if (fn->unresolved || !fn->file[0]) {
		m_str(f, "~"); /* pstats prints ("~", 0, name) as {name} */
		m_int(f, 0);
	} else {
		m_str(f, fn->file);
		m_int(f, fn->firstline > 0 ? fn->firstline : 0);
	}
	m_str(f, fn->qualname);
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	return x->caller < y->caller ? -1 : x->caller > y->caller;
}

static int write_stats(FILE *f, const struct profile *p, const struct stats *st, const bool *exact)
{
	size_t i, e = 0, n = p->nfuncs + st->nops;
	uint32_t *refs = calloc(n + 1, sizeof(*refs)), nrefs = 0;

	if (!refs)
		return -ENOMEM;

	fputc('{', f);
	for (i = 0; i < n; i++) {
		const struct fstat *fs = &st->funcs[i];
		/* estimates are in samples until here */
		double div = exact[i] || !p->frequency_hz ? 1.0 : p->frequency_hz;

		if (!fs->nc)
			continue;
		m_key(f, p, st, i, refs, &nrefs);
		fputc('(', f);
		m_u32(f, 5);
		m_int(f, fs->cc);
		m_int(f, fs->nc);
		m_float(f, fs->tt / div);
		m_float(f, fs->ct / div);
		fputc('{', f);
		for (; e < st->nedges && st->edges[e].callee < i; e++)
			;
		for (; e < st->nedges && st->edges[e].callee == i; e++) {
			const struct edge *ed = &st->edges[e];

			m_key(f, p, st, ed->caller, refs, &nrefs);
			fputc('(', f);
			m_u32(f, 4);
			m_int(f, ed->nc);
			m_int(f, ed->cc);
			m_float(f, ed->tt / div);
			m_float(f, ed->ct / div);
		}
		fputc('0', f);
	}
	fputc('0', f);
	free(refs);
	return 0;
}

static int write_pstats(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct stats st = {};
	bool *exact = NULL;
	size_t i, j, serial = 0;
	int err = 0;

	hashmap__init(&st.index);
	hashmap__init(&st.op_index);
	for (i = 0; i < p->ntargets && !err; i++)
		if (!p->targets[i].ncalls)
			err = stats__find_ops(&st, p, &p->targets[i]);
	exact = calloc(p->nfuncs + st.nops + 1, sizeof(*exact));
	st.funcs = calloc(p->nfuncs + st.nops + 1, sizeof(*st.funcs));
	if (err || !st.funcs || !exact) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, err = 0; i < p->ntargets && !err; i++) {
		const struct profile_target *pp = &p->targets[i];

		if (!pp->ncalls) {
			err = stats__add_samples(&st, p, pp, &serial);
			continue;
		}
		err = stats__add_calls(&st, pp);
		for (j = 0; j < pp->ncalls; j++)
			exact[pp->calls[j].func] = true;
	}
	if (err)
		goto out;
	if (st.nedges) /* no edge: st.edges is NULL, which qsort must not see */
		qsort(st.edges, st.nedges, sizeof(*st.edges), cmp_edge);
	err = write_stats(f, p, &st, exact);
	if (!err && ferror(f))
		err = -EIO;
out:
	free(st.funcs);
	free(st.edges);
	free(st.ops);
	free(exact);
	hashmap__free(&st.index);
	hashmap__free(&st.op_index);
	return err;
}

const struct report_writer report_pstats = {
	.name = "pstats",
	.exts = { ".pstats", ".prof" },
	.write = write_pstats,
};
