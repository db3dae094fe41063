// SPDX-License-Identifier: GPL-2.0-only
/*
 * --signatures in the collector: a signature record (the argument types BPF
 * read at the tick) waits for its CPU sample, sent right after it, and
 * renames the sample's innermost frames "qualname(x: int, ...)", one
 * function per distinct signature and process (at most COLLECTOR_SIG_MAX).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session/collector.h"
#include "collector_parts.h"

/* Distinct signatures kept per process: beyond, a frame keeps its plain name. */
#define COLLECTOR_SIG_MAX 4096

/* The reader that names ts's argument types, made at its first signature. */
static struct py_reader *sig_reader(struct collector_target *ts)
{
	if (!ts->sig_reader) {
		ts->sig_reader = malloc(sizeof(*ts->sig_reader));
		if (ts->sig_reader &&
		    py_reader__init(ts->sig_reader, ts->t.pid, &ts->t.layout, ts->t.version)) {
			free(ts->sig_reader);
			ts->sig_reader = NULL;
		}
	}
	return ts->sig_reader;
}

/*
 * The frame id standing for frame id `frame` called with the arguments of f:
 * its function renamed "qualname(x: int, ...)", interned once per key.
 * UINT32_MAX when it cannot be named (then the plain frame is kept).
 */
static uint32_t sig_frame_id(struct collector *c, struct collector_target *ts,
			     const struct py_sig_frame *f, uint32_t frame)
{
	struct profile *p = c->prof;
	struct py_reader *r = sig_reader(ts);
	char text[PY_SIG_TEXT], *name;
	uint32_t base = p->frames[frame].func, func;
	int line = p->frames[frame].line;
	uint64_t key, *slot;

	/* nothing to split a function without arguments by (a module's code) */
	if (!r || p->funcs[base].unresolved || !f->nargs)
		return UINT32_MAX;
	key = hash_u64(py_signature_key(r, f) ^ base);
	slot = hashmap__find(&ts->sig_funcs, key);
	if (slot)
		return profile__frame(p, (uint32_t)*slot, line);
	if (ts->sig_funcs.len >= COLLECTOR_SIG_MAX) {
		p->sig_capped++;
		return UINT32_MAX;
	}
	py_signature_text(r, f, text, sizeof(text));
	if (asprintf(&name, "%s%s", p->funcs[base].qualname, text) < 0)
		return UINT32_MAX;
	/* funcs may move as one is added: file and line are read before */
	func = profile__func(p, name, p->funcs[base].file, p->funcs[base].firstline, false);
	free(name);
	if (func == UINT32_MAX || hashmap__set(&ts->sig_funcs, key, func))
		return UINT32_MAX;
	return profile__frame(p, func, line);
}

/* A signature record: kept until its sample comes (or COLLECTOR_SIG_PENDING more). */
void collector__sig_keep(struct collector *c, const void *data, size_t size)
{
	struct py_sig_record *slot = &c->sig_pending[c->sig_next++ % COLLECTOR_SIG_PENDING];

	if (size < sizeof(*slot)) {
		c->malformed++;
		return;
	}
	if (slot->kind == PY_KIND_SIGNATURE)
		c->prof->sig_missing++; /* its sample never came: dropped */
	memcpy(slot, data, sizeof(*slot));
}

/* Renames s's innermost frames (in c->scratch) by the signature record sent before it. */
void collector__sig_apply(struct collector *c, struct collector_target *ts,
			  const struct py_sample *s)
{
	struct py_sig_record *r = NULL;
	uint32_t i, id;

	for (i = 0; i < COLLECTOR_SIG_PENDING; i++) {
		struct py_sig_record *q = &c->sig_pending[i];

		if (q->kind == PY_KIND_SIGNATURE && q->pid == s->pid && q->tid == s->tid &&
		    q->ktime_ns == s->ktime_ns) {
			r = q;
			break;
		}
	}
	if (!r) {
		c->prof->sig_missing++;
		return;
	}
	r->kind = 0; /* used */
	c->prof->sig_samples++;
	for (i = 0; i < r->value && i < PY_SIG_FRAMES && i < s->nframes; i++) {
		if (r->frames[i].code != s->frames[i].code ||
		    r->frames[i].fingerprint != s->frames[i].fingerprint)
			continue;
		id = sig_frame_id(c, ts, &r->frames[i], c->scratch[i]);
		if (id != UINT32_MAX)
			c->scratch[i] = id;
	}
}
