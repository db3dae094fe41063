// SPDX-License-Identifier: GPL-2.0-only
/*
 * OTLP profiles (opentelemetry-proto v1.11.0, profiles/v1development): one
 * ExportProfilesServiceRequest, the body of an OTLP/HTTP push, encoded by
 * hand. One resource (o->sample_labels become its attributes, "process.pid"
 * an integer), one scope (pybpfprof), one Profile of sample count; the
 * dictionary holds the functions, one location per (function, line) frame,
 * one stack per distinct stack and thread, and thread.id / thread.name
 * attributes. Every dictionary table starts with its zero value, as the
 * format requires. Not a run format (-f does not list it): the agent's
 * --otlp sink uses it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "util/hashmap.h"
#include "util/mono.h"
#include "util/vec.h"
#include "report/report_writer.h"

// clang-format off
/* Field numbers of the .proto files under tests/proto/. */
enum {
	REQ_RESOURCE_PROFILES = 1, REQ_DICTIONARY = 2,
	RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2,
	RES_ATTRIBUTES = 1,
	KV_KEY = 1, KV_VALUE = 2,
	ANY_STRING = 1, ANY_INT = 3,
	SP_SCOPE = 1, SP_PROFILES = 2,
	SCOPE_NAME = 1, SCOPE_VERSION = 2,
	PROF_SAMPLE_TYPE = 1, PROF_SAMPLES = 2, PROF_TIME = 3, PROF_DURATION = 4,
	PROF_PERIOD_TYPE = 5, PROF_PERIOD = 6, PROF_ID = 7,
	VT_TYPE = 1, VT_UNIT = 2,
	SAMPLE_STACK = 1, SAMPLE_ATTRS = 2, SAMPLE_VALUES = 4,
	DICT_MAPPING = 1, DICT_LOCATION = 2, DICT_FUNCTION = 3, DICT_LINK = 4, DICT_STRING = 5,
	DICT_ATTRIBUTE = 6, DICT_STACK = 7,
	LOC_LINES = 3, LINE_FUNCTION = 1, LINE_LINE = 2,
	FN_NAME = 1, FN_FILENAME = 3, FN_START_LINE = 4,
	LINK_TRACE_ID = 1, LINK_SPAN_ID = 2,
	KVU_KEY = 1, KVU_VALUE = 2,
	STACK_LOCATIONS = 1,
};
// clang-format on

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

struct obuf {
	uint8_t *d;
	size_t n, cap;
	bool oom;
};

static void ob_put(struct obuf *b, const void *data, size_t len)
{
	size_t ncap;
	void *nd;

	if (b->oom || !len)
		return;
	if (b->n + len > b->cap) {
		for (ncap = b->cap ? b->cap : 256; ncap < b->n + len;)
			ncap *= 2;
		nd = realloc(b->d, ncap);
		if (!nd) {
			b->oom = true;
			return;
		}
		b->d = nd;
		b->cap = ncap;
	}
	memcpy(b->d + b->n, data, len);
	b->n += len;
}

static void ob_varint(struct obuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	ob_put(b, tmp, n);
}

static void ob_uint(struct obuf *b, unsigned field, uint64_t v)
{
	ob_varint(b, field << 3 | WIRE_VARINT);
	ob_varint(b, v);
}

static void ob_fixed64(struct obuf *b, unsigned field, uint64_t v)
{
	uint8_t le[8];
	int i;

	for (i = 0; i < 8; i++)
		le[i] = v >> (8 * i);
	ob_varint(b, field << 3 | WIRE_I64);
	ob_put(b, le, 8);
}

static void ob_bytes(struct obuf *b, unsigned field, const void *data, size_t len)
{
	ob_varint(b, field << 3 | WIRE_LEN);
	ob_varint(b, len);
	ob_put(b, data, len);
}

/* Appends sub as a message field and empties it for reuse. */
static void ob_msg(struct obuf *b, unsigned field, struct obuf *sub)
{
	b->oom |= sub->oom;
	ob_bytes(b, field, sub->d, sub->n);
	sub->n = 0;
}

/* The dictionary's string table: index 0 is "", each string once. */
struct ostrs {
	struct obuf out;
	struct hashmap index;
	char **strs;
	size_t n, cap;
};

static uint64_t ostrs__id(struct ostrs *t, const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s), 0x0c0ffee), *slot;

	for (;; h++) {
		slot = hashmap__find(&t->index, h);
		if (!slot)
			break;
		if (!strcmp(t->strs[*slot], s))
			return *slot;
	}
	if (vec_grow((void **)&t->strs, &t->cap, t->n + 1, sizeof(*t->strs))) {
		t->out.oom = true;
		return 0;
	}
	t->strs[t->n] = strdup(s);
	if (!t->strs[t->n] || hashmap__set(&t->index, h, t->n)) {
		free(t->strs[t->n]);
		t->out.oom = true;
		return 0;
	}
	ob_bytes(&t->out, DICT_STRING, s, strlen(s));
	return t->n++;
}

static void ostrs__free(struct ostrs *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->out.d);
	hashmap__free(&t->index);
}

/* A string OTLP can carry (valid UTF-8): printable ASCII kept, other bytes '_'. */
static void ascii_copy(char *out, size_t len, const char *in)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '_';
	out[i] = '\0';
}

/* The resource: the agent's labels as attributes. */
static void encode_resource(struct obuf *rp, const struct report_opts *o)
{
	struct obuf res = {}, kv = {}, any = {};
	size_t i;

	for (i = 0; i < o->nsample_labels; i++) {
		const char *key = o->sample_labels[i][0], *val = o->sample_labels[i][1];

		ob_bytes(&kv, KV_KEY, key, strlen(key));
		if (!strcmp(key, "process.pid"))
			ob_uint(&any, ANY_INT, strtoull(val, NULL, 10));
		else
			ob_bytes(&any, ANY_STRING, val, strlen(val));
		ob_msg(&kv, KV_VALUE, &any);
		ob_msg(&res, RES_ATTRIBUTES, &kv);
	}
	ob_msg(rp, RP_RESOURCE, &res);
	rp->oom |= kv.oom | any.oom;
	free(res.d);
	free(kv.d);
	free(any.d);
}

/* thread.id and thread.name of one thread: two attribute_table entries from *next. */
static void thread_attrs(struct obuf *dict, struct ostrs *t, const struct profile_target *pp,
			 uint32_t tid)
{
	struct obuf kvu = {}, any = {};
	char name[sizeof(pp->threads->name)] = "";
	size_t i;

	for (i = 0; i < pp->nthreads; i++)
		if (pp->threads[i].tid == tid)
			ascii_copy(name, sizeof(name), pp->threads[i].name);
	ob_uint(&kvu, KVU_KEY, ostrs__id(t, "thread.id"));
	ob_uint(&any, ANY_INT, tid);
	ob_msg(&kvu, KVU_VALUE, &any);
	ob_msg(dict, DICT_ATTRIBUTE, &kvu);
	ob_uint(&kvu, KVU_KEY, ostrs__id(t, "thread.name"));
	ob_bytes(&any, ANY_STRING, name, strlen(name));
	ob_msg(&kvu, KVU_VALUE, &any);
	ob_msg(dict, DICT_ATTRIBUTE, &kvu);
	dict->oom |= kvu.oom | any.oom;
	free(kvu.d);
	free(any.d);
}

/* Samples into prof, their stacks and thread attributes into dict. */
static void encode_samples(struct obuf *prof, struct obuf *dict, struct ostrs *t,
			   const struct profile *p)
{
	struct obuf sample = {}, packed = {}, stack = {};
	uint64_t nstacks = 1, nattrs = 1;
	size_t i, j, k;

	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->nstacks; j++) {
			const struct profile_stack *s = &pp->stacks[j];

			if (!s->nframes)
				continue;
			for (k = 0; k < s->nframes;
			     k++) /* leaf first; location 0 is the zero one */
				ob_varint(&packed, s->frames[k] + 1ULL);
			ob_msg(&stack, STACK_LOCATIONS, &packed);
			ob_msg(dict, DICT_STACK, &stack);
			thread_attrs(dict, t, pp, s->tid);
			ob_uint(&sample, SAMPLE_STACK, nstacks++);
			ob_varint(&packed, nattrs);
			ob_varint(&packed, nattrs + 1);
			nattrs += 2;
			ob_msg(&sample, SAMPLE_ATTRS, &packed);
			ob_varint(&packed, s->count);
			ob_msg(&sample, SAMPLE_VALUES, &packed);
			ob_msg(prof, PROF_SAMPLES, &sample);
		}
	}
	prof->oom |= sample.oom | packed.oom | stack.oom;
	free(sample.d);
	free(packed.d);
	free(stack.d);
}

/* Functions, locations and the zero entries every table starts with. */
static void encode_tables(struct obuf *dict, struct ostrs *t, const struct profile *p)
{
	static const uint8_t zero[16];
	struct obuf msg = {}, sub = {};
	size_t i;

	ob_msg(dict, DICT_MAPPING, &msg);
	ob_msg(dict, DICT_LOCATION, &msg);
	ob_msg(dict, DICT_FUNCTION, &msg);
	ob_msg(dict, DICT_ATTRIBUTE, &msg);
	ob_msg(dict, DICT_STACK, &msg);
	ob_bytes(&msg, LINK_TRACE_ID, zero, 16);
	ob_bytes(&msg, LINK_SPAN_ID, zero, 8);
	ob_msg(dict, DICT_LINK, &msg);
	for (i = 0; i < p->nframes; i++) {
		ob_uint(&sub, LINE_FUNCTION, p->frames[i].func + 1ULL);
		if (p->frames[i].line > 0)
			ob_uint(&sub, LINE_LINE, p->frames[i].line);
		ob_msg(&msg, LOC_LINES, &sub);
		ob_msg(dict, DICT_LOCATION, &msg);
	}
	for (i = 0; i < p->nfuncs; i++) {
		ob_uint(&msg, FN_NAME, ostrs__id(t, p->funcs[i].qualname));
		ob_uint(&msg, FN_FILENAME, ostrs__id(t, p->funcs[i].file));
		if (p->funcs[i].firstline > 0)
			ob_uint(&msg, FN_START_LINE, p->funcs[i].firstline);
		ob_msg(dict, DICT_FUNCTION, &msg);
	}
	dict->oom |= msg.oom | sub.oom;
	free(msg.d);
	free(sub.d);
}

/* The Profile message's header: types, times, period and a random id. */
static void encode_header(struct obuf *prof, struct ostrs *t, const struct profile *p)
{
	uint64_t period_ns = p->frequency_hz ? 1000000000ULL / p->frequency_hz : 0;
	struct obuf vt = {};
	struct timespec rt;
	uint8_t id[16];

	ob_uint(&vt, VT_TYPE, ostrs__id(t, "samples"));
	ob_uint(&vt, VT_UNIT, ostrs__id(t, "count"));
	ob_msg(prof, PROF_SAMPLE_TYPE, &vt);
	/* wall-clock start: now, less the time since the profile's start */
	clock_gettime(CLOCK_REALTIME, &rt);
	ob_fixed64(prof, PROF_TIME,
		   rt.tv_sec * 1000000000ULL + rt.tv_nsec - (uint64_t)(mono_ns() - p->start_ns));
	ob_uint(prof, PROF_DURATION, (uint64_t)(p->duration_s * 1e9));
	ob_uint(&vt, VT_TYPE, ostrs__id(t, "cpu"));
	ob_uint(&vt, VT_UNIT, ostrs__id(t, "nanoseconds"));
	ob_msg(prof, PROF_PERIOD_TYPE, &vt);
	ob_uint(prof, PROF_PERIOD, period_ns);
	/* all zeroes is an invalid id: getrandom, or the clock's bits */
	if (getrandom(id, sizeof(id), GRND_NONBLOCK) != sizeof(id)) {
		uint64_t a = mono_ns(), b = rt.tv_nsec | 1;

		memcpy(id, &a, 8);
		memcpy(id + 8, &b, 8);
	}
	ob_bytes(prof, PROF_ID, id, sizeof(id));
	prof->oom |= vt.oom;
	free(vt.d);
}

static int write_otlp(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct obuf req = {}, rp = {}, sp = {}, scope = {}, prof = {}, dict = {};
	struct ostrs t = {};
	int err;

	hashmap__init(&t.index);
	ostrs__id(&t, "");
	encode_resource(&rp, o);
	ob_bytes(&scope, SCOPE_NAME, "pybpfprof", 9);
	ob_bytes(&scope, SCOPE_VERSION, o->tool_version, strlen(o->tool_version));
	ob_msg(&sp, SP_SCOPE, &scope);
	encode_header(&prof, &t, p);
	/* the tables first: each starts with its zero entry, before the samples' stacks */
	encode_tables(&dict, &t, p);
	encode_samples(&prof, &dict, &t, p);
	ob_msg(&sp, SP_PROFILES, &prof);
	ob_msg(&rp, RP_SCOPE_PROFILES, &sp);
	ob_msg(&req, REQ_RESOURCE_PROFILES, &rp);
	/* the string table last, when complete */
	ob_put(&dict, t.out.d, t.out.n);
	dict.oom |= t.out.oom;
	ob_msg(&req, REQ_DICTIONARY, &dict);
	err = req.oom ? -ENOMEM : 0;
	if (!err && fwrite(req.d, 1, req.n, f) != req.n)
		err = -EIO;
	ostrs__free(&t);
	free(req.d);
	free(rp.d);
	free(sp.d);
	free(scope.d);
	free(prof.d);
	free(dict.d);
	return err;
}

const struct report_writer report_otlp = {
	.name = "otlp",
	.write = write_otlp,
};
