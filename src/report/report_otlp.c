// SPDX-License-Identifier: GPL-2.0-only
/*
 * OTLP profiles (opentelemetry-proto v1.11.0, profiles/v1development): one
 * ExportProfilesServiceRequest, the body of an OTLP/HTTP push, encoded by
 * hand. One resource (o->sample_labels become its attributes, "process.pid"
 * and "process.user.id" integers), one scope (pybpfprof), one Profile of
 * sample count; the dictionary holds the functions, one location per
 * (function, line) frame, one stack per distinct stack and thread, and
 * thread.id / thread.name attributes. Every dictionary table starts with its zero value, as the
 * format requires. report_otlp_mem: the memory stacks instead, one Profile
 * per kind (touched, mapped, released and inuse space, in bytes), sharing one
 * dictionary stack per memory stack. Not a run format (-f does not list it): the agent's
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
#include "report_pbuf.h"

// clang-format off
/* Field numbers of OTLP profiles v1development (tests/fixtures/otlp_profiles.proto). */
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

/* The resource: the agent's labels as attributes. */
static void encode_resource(struct pbuf *rp, const struct report_opts *o)
{
	struct pbuf res = {}, kv = {}, any = {};
	size_t i;

	for (i = 0; i < o->nsample_labels; i++) {
		const char *key = o->sample_labels[i][0], *val = o->sample_labels[i][1];

		pb_string(&kv, KV_KEY, key);
		if (!strcmp(key, "process.pid") || !strcmp(key, "process.user.id"))
			pb_uint(&any, ANY_INT, strtoull(val, NULL, 10));
		else
			pb_string(&any, ANY_STRING, val);
		pb_msg(&kv, KV_VALUE, &any);
		pb_msg(&res, RES_ATTRIBUTES, &kv);
	}
	pb_msg(rp, RP_RESOURCE, &res);
	rp->oom |= kv.oom | any.oom;
	free(res.d);
	free(kv.d);
	free(any.d);
}

/*
 * thread.id and thread.name (its Python name, else its comm) of one thread:
 * two attribute_table entries from *next.
 */
static void thread_attrs(struct pbuf *dict, struct pb_strtab *t, const struct profile_target *pp,
			 uint32_t tid)
{
	struct pbuf kvu = {}, any = {};
	const char *name = "";
	size_t i;

	for (i = 0; i < pp->nthreads; i++)
		if (pp->threads[i].tid == tid)
			name = pp->threads[i].pyname[0] ? pp->threads[i].pyname :
							  pp->threads[i].name;
	pb_uint(&kvu, KVU_KEY, pb_strtab__id(t, "thread.id"));
	pb_uint(&any, ANY_INT, tid);
	pb_msg(&kvu, KVU_VALUE, &any);
	pb_msg(dict, DICT_ATTRIBUTE, &kvu);
	pb_uint(&kvu, KVU_KEY, pb_strtab__id(t, "thread.name"));
	pb_string(&any, ANY_STRING, name);
	pb_msg(&kvu, KVU_VALUE, &any);
	pb_msg(dict, DICT_ATTRIBUTE, &kvu);
	dict->oom |= kvu.oom | any.oom;
	free(kvu.d);
	free(any.d);
}

/* Samples into prof, their stacks and thread attributes into dict. */
static void encode_samples(struct pbuf *prof, struct pbuf *dict, struct pb_strtab *t,
			   const struct profile *p)
{
	struct pbuf sample = {}, packed = {}, stack = {};
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
				pb_varint(&packed, s->frames[k] + 1ULL);
			pb_msg(&stack, STACK_LOCATIONS, &packed);
			pb_msg(dict, DICT_STACK, &stack);
			thread_attrs(dict, t, pp, s->tid);
			pb_uint(&sample, SAMPLE_STACK, nstacks++);
			pb_varint(&packed, nattrs);
			pb_varint(&packed, nattrs + 1);
			nattrs += 2;
			pb_msg(&sample, SAMPLE_ATTRS, &packed);
			pb_varint(&packed, s->count);
			pb_msg(&sample, SAMPLE_VALUES, &packed);
			pb_msg(prof, PROF_SAMPLES, &sample);
		}
	}
	prof->oom |= sample.oom | packed.oom | stack.oom;
	free(sample.d);
	free(packed.d);
	free(stack.d);
}

/* Functions, locations and the zero entries every table starts with. */
static void encode_tables(struct pbuf *dict, struct pb_strtab *t, const struct profile *p)
{
	static const uint8_t zero[16];
	struct pbuf msg = {}, sub = {};
	size_t i;

	pb_msg(dict, DICT_MAPPING, &msg);
	pb_msg(dict, DICT_LOCATION, &msg);
	pb_msg(dict, DICT_FUNCTION, &msg);
	pb_msg(dict, DICT_ATTRIBUTE, &msg);
	pb_msg(dict, DICT_STACK, &msg);
	pb_bytes(&msg, LINK_TRACE_ID, zero, 16);
	pb_bytes(&msg, LINK_SPAN_ID, zero, 8);
	pb_msg(dict, DICT_LINK, &msg);
	for (i = 0; i < p->nframes; i++) {
		pb_uint(&sub, LINE_FUNCTION, p->frames[i].func + 1ULL);
		if (p->frames[i].line > 0)
			pb_uint(&sub, LINE_LINE, p->frames[i].line);
		pb_msg(&msg, LOC_LINES, &sub);
		pb_msg(dict, DICT_LOCATION, &msg);
	}
	for (i = 0; i < p->nfuncs; i++) {
		pb_uint(&msg, FN_NAME, pb_strtab__id(t, p->funcs[i].qualname));
		pb_uint(&msg, FN_FILENAME, pb_strtab__id(t, p->funcs[i].file));
		if (p->funcs[i].firstline > 0)
			pb_uint(&msg, FN_START_LINE, p->funcs[i].firstline);
		pb_msg(dict, DICT_FUNCTION, &msg);
	}
	dict->oom |= msg.oom | sub.oom;
	free(msg.d);
	free(sub.d);
}

/* One (type, unit) ValueType message into field of msg. */
static void value_type(struct pbuf *msg, int field, struct pb_strtab *t, const char *type,
		       const char *unit)
{
	struct pbuf vt = {};

	pb_uint(&vt, VT_TYPE, pb_strtab__id(t, type));
	pb_uint(&vt, VT_UNIT, pb_strtab__id(t, unit));
	pb_msg(msg, field, &vt);
	msg->oom |= vt.oom;
	free(vt.d);
}

/* What a Profile message's header says: its values, and the events between two samples. */
struct otlp_kind {
	const char *type, *unit, *period_type, *period_unit;
	uint64_t period;
};

/* The Profile message's header: types, times, period and a random id. */
static void encode_header(struct pbuf *prof, struct pb_strtab *t, const struct profile *p,
			  const struct otlp_kind *k)
{
	struct timespec rt;
	uint8_t id[16];

	value_type(prof, PROF_SAMPLE_TYPE, t, k->type, k->unit);
	/* wall-clock start: now, less the time since the profile's start */
	clock_gettime(CLOCK_REALTIME, &rt);
	pb_fixed64(prof, PROF_TIME,
		   rt.tv_sec * 1000000000ULL + rt.tv_nsec - (uint64_t)(mono_ns() - p->start_ns));
	pb_uint(prof, PROF_DURATION, (uint64_t)(p->duration_s * 1e9));
	value_type(prof, PROF_PERIOD_TYPE, t, k->period_type, k->period_unit);
	pb_uint(prof, PROF_PERIOD, k->period);
	/* all zeroes is an invalid id: getrandom, or the clock's bits */
	if (getrandom(id, sizeof(id), GRND_NONBLOCK) != sizeof(id)) {
		uint64_t a = mono_ns(), b = rt.tv_nsec | 1;

		memcpy(id, &a, 8);
		memcpy(id + 8, &b, 8);
	}
	pb_bytes(prof, PROF_ID, id, sizeof(id));
}

/* The memory kinds of the agent's --mem, one Profile each, as --mem-pprof names them. */
static const struct {
	const char *type;
	enum profile_mem_kind kind;
} mem_types[] = {
	{ "touched_space", PROFILE_MEM_TOUCHED },
	{ "mapped_space", PROFILE_MEM_MAPPED },
	{ "released_space", PROFILE_MEM_RELEASED },
	{ "inuse_space", PROFILE_MEM_RETAINED },
};

/*
 * The memory stacks: one dictionary stack each (after the zero stack, so the
 * first is 1), then one Profile per kind into sp, of the stacks with bytes of it.
 */
static void encode_mem_profiles(struct pbuf *sp, struct pbuf *dict, struct pb_strtab *t,
				const struct profile *p)
{
	struct otlp_kind k = { NULL, "bytes", "space", "bytes",
			       (uint64_t)p->mem_period * p->page_size };
	struct pbuf prof = {}, sample = {}, packed = {}, stack = {};
	size_t i, j, m, f;

	for (i = 0; i < p->ntargets; i++)
		for (j = 0; j < p->targets[i].mem.nstacks; j++) {
			const struct profile_mem_stack *s = &p->targets[i].mem.stacks[j];

			for (f = 0; f < s->nframes; f++)
				pb_varint(&packed, s->frames[f] + 1ULL);
			pb_msg(&stack, STACK_LOCATIONS, &packed);
			pb_msg(dict, DICT_STACK, &stack);
		}
	for (m = 0; m < sizeof(mem_types) / sizeof(mem_types[0]); m++) {
		uint64_t at = 1;

		k.type = mem_types[m].type;
		encode_header(&prof, t, p, &k);
		for (i = 0; i < p->ntargets; i++)
			for (j = 0; j < p->targets[i].mem.nstacks; j++, at++) {
				const struct profile_mem_stack *s = &p->targets[i].mem.stacks[j];

				if (!s->nframes || !s->bytes[mem_types[m].kind])
					continue;
				pb_uint(&sample, SAMPLE_STACK, at);
				pb_varint(&packed, s->bytes[mem_types[m].kind]);
				pb_msg(&sample, SAMPLE_VALUES, &packed);
				pb_msg(&prof, PROF_SAMPLES, &sample);
			}
		pb_msg(sp, SP_PROFILES, &prof);
	}
	sp->oom |= prof.oom | sample.oom | packed.oom | stack.oom;
	free(prof.d);
	free(sample.d);
	free(packed.d);
	free(stack.d);
}

/* One request: the CPU profile, or (mem) the memory kinds' profiles. */
static int write_either(FILE *f, const struct profile *p, const struct report_opts *o, bool mem)
{
	struct pbuf req = {}, rp = {}, sp = {}, scope = {}, prof = {}, dict = {};
	const struct otlp_kind cpu = { "samples", "count", "cpu", "nanoseconds",
				       p->frequency_hz ? 1000000000ULL / p->frequency_hz : 0 };
	struct pb_strtab t;
	int err;

	pb_strtab__init(&t, DICT_STRING);
	pb_strtab__id(&t, "");
	encode_resource(&rp, o);
	pb_string(&scope, SCOPE_NAME, "pybpfprof");
	pb_string(&scope, SCOPE_VERSION, o->tool_version);
	pb_msg(&sp, SP_SCOPE, &scope);
	/* the tables first: each starts with its zero entry, before the samples' stacks */
	encode_tables(&dict, &t, p);
	if (mem) {
		encode_mem_profiles(&sp, &dict, &t, p);
	} else {
		encode_header(&prof, &t, p, &cpu);
		encode_samples(&prof, &dict, &t, p);
		pb_msg(&sp, SP_PROFILES, &prof);
	}
	pb_msg(&rp, RP_SCOPE_PROFILES, &sp);
	pb_msg(&req, REQ_RESOURCE_PROFILES, &rp);
	/* the string table last, when complete */
	pb_put(&dict, t.out.d, t.out.n);
	dict.oom |= t.out.oom;
	pb_msg(&req, REQ_DICTIONARY, &dict);
	err = req.oom ? -ENOMEM : 0;
	if (!err && fwrite(req.d, 1, req.n, f) != req.n)
		err = -EIO;
	pb_strtab__free(&t);
	free(req.d);
	free(rp.d);
	free(sp.d);
	free(scope.d);
	free(prof.d);
	free(dict.d);
	return err;
}

static int write_otlp(FILE *f, const struct profile *p, const struct report_opts *o)
{
	return write_either(f, p, o, false);
}

static int write_otlp_mem(FILE *f, const struct profile *p, const struct report_opts *o)
{
	return write_either(f, p, o, true);
}

/* The agent's --mem: the memory stacks' kinds, one Profile each, in one request. */
const struct report_writer report_otlp_mem = {
	.name = "otlp-mem",
	.write = write_otlp_mem,
};

const struct report_writer report_otlp = {
	.name = "otlp",
	.write = write_otlp,
};
