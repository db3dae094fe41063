// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof's profile.proto, gzip-compressed, as go tool pprof, Pyroscope, Parca
 * and Grafana read it. The protobuf is encoded by hand: a Profile is a few
 * repeated messages of varints and strings. One Function per profile
 * function, one Location per (function, line) frame, one Sample per distinct
 * stack and thread, with values [samples, cpu nanoseconds] and pid/tid labels.
 * --merge-lines: one Location per function instead (report_frame_places), its
 * line the function's first, as go tool pprof -lines then has one row per
 * function; the memory profile keeps its lines, as --mem-folded does.
 * --mem-pprof: the memory stacks instead, one Sample per stack and process,
 * with values in bytes per kind (mem_types), inuse_space (retained at the
 * end) the default, as go tool pprof's heap profiles have it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "util/mono.h"
#include "report/report_writer.h"
#include "report_pbuf.h"
#include "report/report_common.h"
#include "util/vec.h"

// clang-format off
/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12, PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_FILENAME = 4, FUNCTION_START_LINE = 5,
};
// clang-format on

static void value_type(struct pbuf *b, unsigned field, struct pb_strtab *t, const char *type,
		       const char *unit, struct pbuf *sub)
{
	pb_uint(sub, VALUE_TYPE_TYPE, pb_strtab__id(t, type));
	pb_uint(sub, VALUE_TYPE_UNIT, pb_strtab__id(t, unit));
	pb_msg(b, field, sub);
}

static void label_num(struct pbuf *sample, struct pb_strtab *t, const char *key, uint64_t v,
		      struct pbuf *sub)
{
	pb_uint(sub, LABEL_KEY, pb_strtab__id(t, key));
	pb_uint(sub, LABEL_NUM, v);
	pb_msg(sample, SAMPLE_LABEL, sub);
}

static void label_str(struct pbuf *sample, struct pb_strtab *t, const char *key, const char *v,
		      struct pbuf *sub)
{
	pb_uint(sub, LABEL_KEY, pb_strtab__id(t, key));
	pb_uint(sub, LABEL_STR, pb_strtab__id(t, v));
	pb_msg(sample, SAMPLE_LABEL, sub);
}

/* The agent's labels, and the thread's name when it has one: its Python name, else its comm. */
static void extra_labels(struct pbuf *sample, struct pb_strtab *t, const struct profile_target *pp,
			 uint32_t tid, const struct report_opts *o, struct pbuf *sub)
{
	size_t i;

	for (i = 0; i < o->nsample_labels; i++)
		label_str(sample, t, o->sample_labels[i][0], o->sample_labels[i][1], sub);
	for (i = 0; i < pp->nthreads; i++)
		if (pp->threads[i].tid == tid &&
		    (pp->threads[i].pyname[0] || pp->threads[i].name[0])) {
			label_str(sample, t, "thread_name", profile_thread__label(&pp->threads[i]),
				  sub);
			break;
		}
}

static void encode_samples(struct pbuf *b, const struct profile *p, struct pb_strtab *t,
			   uint64_t period_ns, const struct report_opts *o, const uint32_t *place)
{
	struct pbuf sub = {}, packed = {};
	size_t i, j, k;

	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->nstacks; j++) {
			const struct profile_stack *s = &pp->stacks[j];
			struct pbuf sample = {};

			if (!s->nframes)
				continue;
			/* leaf first, as pprof orders locations; location id = place + 1 */
			for (k = 0; k < s->nframes; k++)
				pb_varint(&packed, place[s->frames[k]] + 1ULL);
			pb_bytes(&sample, SAMPLE_LOCATION_ID, packed.d, packed.n);
			packed.n = 0;
			pb_varint(&packed, s->count);
			pb_varint(&packed, s->count * period_ns);
			pb_bytes(&sample, SAMPLE_VALUE, packed.d, packed.n);
			packed.n = 0;
			/* --merge's section has no one pid: none rather than 0 */
			if (!report_is_merged(p, pp))
				label_num(&sample, t, "pid", pp->pid, &sub);
			label_num(&sample, t, "tid", s->tid, &sub);
			if (o->stack_num_label)
				label_num(&sample, t, o->stack_num_label, o->stack_nums[i][j],
					  &sub);
			extra_labels(&sample, t, pp, s->tid, o, &sub);
			pb_msg(b, PROFILE_SAMPLE, &sample);
			free(sample.d);
		}
	}
	b->oom |= sub.oom | packed.oom;
	free(sub.d);
	free(packed.d);
}

/* --mem-pprof's sample types, in this order in every Sample's values. */
static const struct {
	const char *type;
	enum profile_mem_kind kind;
} mem_types[] = {
	{ "touched_space", PROFILE_MEM_TOUCHED },   /* sampled page faults: an estimate */
	{ "mapped_space", PROFILE_MEM_MAPPED },	    /* exact */
	{ "released_space", PROFILE_MEM_RELEASED }, /* of it, unmapped during the run */
	{ "inuse_space", PROFILE_MEM_RETAINED },    /* of it, still mapped at the end */
};
#define NMEM_TYPES (sizeof(mem_types) / sizeof(mem_types[0]))

static void encode_mem_samples(struct pbuf *b, const struct profile *p, struct pb_strtab *t,
			       const uint32_t *place)
{
	struct pbuf sub = {}, packed = {};
	size_t i, j, k;

	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->mem.nstacks; j++) {
			const struct profile_mem_stack *s = &pp->mem.stacks[j];
			struct pbuf sample = {};
			uint64_t any = 0;

			for (k = 0; k < NMEM_TYPES; k++)
				any |= s->bytes[mem_types[k].kind];
			if (!s->nframes || !any)
				continue;
			for (k = 0; k < s->nframes; k++)
				pb_varint(&packed, place[s->frames[k]] + 1ULL);
			pb_bytes(&sample, SAMPLE_LOCATION_ID, packed.d, packed.n);
			packed.n = 0;
			for (k = 0; k < NMEM_TYPES; k++)
				pb_varint(&packed, s->bytes[mem_types[k].kind]);
			pb_bytes(&sample, SAMPLE_VALUE, packed.d, packed.n);
			packed.n = 0;
			/* --merge's section has no one pid: none rather than 0 */
			if (!report_is_merged(p, pp))
				label_num(&sample, t, "pid", pp->pid, &sub);
			pb_msg(b, PROFILE_SAMPLE, &sample);
			free(sample.d);
		}
	}
	b->oom |= sub.oom | packed.oom;
	free(sub.d);
	free(packed.d);
}

/* The mapping, the Locations of the frames listed by place, and the Functions. */
static void encode_tables(struct pbuf *b, const struct profile *p, struct pb_strtab *t,
			  const uint32_t *place, bool merge_lines)
{
	struct pbuf msg = {}, sub = {};
	size_t i, n = 0;

	/*
	 * One mapping that says every location is already symbolized, so pprof
	 * looks for no binary to symbolize addresses with (there are none).
	 */
	pb_uint(&msg, MAPPING_ID, 1);
	pb_uint(&msg, MAPPING_FILENAME,
		pb_strtab__id(t, p->ntargets ? p->targets[0].exe : "python"));
	pb_uint(&msg, MAPPING_HAS_FUNCTIONS, 1);
	pb_uint(&msg, MAPPING_HAS_FILENAMES, 1);
	pb_uint(&msg, MAPPING_HAS_LINE_NUMBERS, 1);
	pb_msg(b, PROFILE_MAPPING, &msg);
	for (i = 0; i < p->nframes; i++) {
		int line = report_frame_line(p, (uint32_t)i, merge_lines);

		if (place[i] != n)
			continue;
		pb_uint(&msg, LOCATION_ID, ++n);
		pb_uint(&msg, LOCATION_MAPPING_ID, 1);
		pb_uint(&sub, LINE_FUNCTION_ID, p->frames[i].func + 1ULL);
		if (line > 0)
			pb_uint(&sub, LINE_LINE, line);
		pb_msg(&msg, LOCATION_LINE, &sub);
		pb_msg(b, PROFILE_LOCATION, &msg);
	}
	for (i = 0; i < p->nfuncs; i++) {
		const struct profile_func *fn = &p->funcs[i];

		pb_uint(&msg, FUNCTION_ID, i + 1);
		/* No system_name: pprof would run it through a C++ demangler, which
		 * turns names such as "<module>" into nothing. */
		pb_uint(&msg, FUNCTION_NAME, pb_strtab__id(t, fn->qualname));
		pb_uint(&msg, FUNCTION_FILENAME, pb_strtab__id(t, fn->file));
		if (fn->firstline > 0)
			pb_uint(&msg, FUNCTION_START_LINE, fn->firstline);
		pb_msg(b, PROFILE_FUNCTION, &msg);
	}
	b->oom |= msg.oom | sub.oom;
	free(msg.d);
	free(sub.d);
}

/* The sample types and samples: CPU time, or (mem) bytes per memory kind. */
static void encode_kinds(struct pbuf *b, const struct profile *p, struct pb_strtab *t, bool mem,
			 uint64_t period_ns, const struct report_opts *o, const uint32_t *place,
			 struct pbuf *sub)
{
	size_t k;

	if (!mem) {
		value_type(b, PROFILE_SAMPLE_TYPE, t, "samples", "count", sub);
		/* --mode wall: off-CPU intervals weigh in too, in samples' worth of ns */
		value_type(b, PROFILE_SAMPLE_TYPE, t, p->wall ? "wall" : "cpu", "nanoseconds", sub);
		encode_samples(b, p, t, period_ns, o, place);
		return;
	}
	for (k = 0; k < NMEM_TYPES; k++)
		value_type(b, PROFILE_SAMPLE_TYPE, t, mem_types[k].type, "bytes", sub);
	encode_mem_samples(b, p, t, place);
}

/*
 * The uncompressed Profile message: of CPU samples, or (mem) of the memory
 * stacks; its frames by place (report_frame_places), by function with merge.
 */
static int encode_profile(const struct profile *p, const struct report_opts *o, bool mem,
			  const uint32_t *place, bool merge, struct pbuf *b)
{
	uint64_t period_ns = p->frequency_hz ? 1000000000ULL / p->frequency_hz : 0;
	struct pb_strtab t;
	struct pbuf sub = {};
	char comment[REPORT_BUSIEST_LEN];
	int err;

	pb_strtab__init(&t, PROFILE_STRING_TABLE);
	pb_strtab__id(&t, "");
	encode_kinds(b, p, &t, mem, period_ns, o, place, &sub);
	encode_tables(b, p, &t, place, merge);
	/* A loaded profile has the moment saved; a run's is taken here, as it always was. */
	if (p->start_unix_ns > 0) {
		pb_uint(b, PROFILE_TIME_NANOS, (uint64_t)p->start_unix_ns);
	} else if (p->start_ns > 0) {
		struct timespec rt;

		/* Wall-clock start: now, less the time since pybpfprof started. */
		clock_gettime(CLOCK_REALTIME, &rt);
		pb_uint(b, PROFILE_TIME_NANOS,
			rt.tv_sec * 1000000000ULL + rt.tv_nsec -
				(uint64_t)(mono_ns() - p->start_ns));
	}
	pb_uint(b, PROFILE_DURATION_NANOS, (uint64_t)(p->duration_s * 1e9));
	if (mem) { /* a fault sample's bytes; the other kinds are exact */
		value_type(b, PROFILE_PERIOD_TYPE, &t, "space", "bytes", &sub);
		pb_uint(b, PROFILE_PERIOD, (uint64_t)p->mem_period * p->page_size);
		pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, pb_strtab__id(&t, "inuse_space"));
	} else {
		value_type(b, PROFILE_PERIOD_TYPE, &t, p->wall ? "wall" : "cpu", "nanoseconds",
			   &sub);
		pb_uint(b, PROFILE_PERIOD, period_ns);
	}
	snprintf(comment, sizeof(comment), "pybpfprof %s %s profile at %u Hz", o->tool_version,
		 p->mode, p->frequency_hz);
	pb_uint(b, PROFILE_COMMENT, pb_strtab__id(&t, comment));
	pb_uint(b, PROFILE_COMMENT, pb_strtab__id(&t, report_counts(p, comment, sizeof(comment))));
	/* go tool pprof prints the comments above its tables: its first view names them */
	if (!mem && report_busiest(p, comment, sizeof(comment))[0])
		pb_uint(b, PROFILE_COMMENT, pb_strtab__id(&t, comment));
	if (merge)
		pb_uint(b, PROFILE_COMMENT,
			pb_strtab__id(&t, "lines merged: a location per function"));
	if (o->comment)
		pb_uint(b, PROFILE_COMMENT, pb_strtab__id(&t, o->comment));
	/* The string table may sit anywhere in the message: append it last, when complete. */
	pb_put(b, t.out.d, t.out.n);
	b->oom |= t.out.oom | sub.oom;
	err = b->oom ? -ENOMEM : 0;
	pb_strtab__free(&t);
	free(sub.d);
	return err;
}

int report_gzip(FILE *f, const uint8_t *data, size_t len)
{
	uint8_t out[16384];
	z_stream z = {};
	int ret, err = 0;

	/* windowBits 15 + 16: a gzip header and trailer rather than zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	z.avail_in = len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

static int write_either(FILE *f, const struct profile *p, const struct report_opts *o, bool mem)
{
	bool merge = o->merge_lines && !mem;
	struct pbuf b = {};
	size_t nplaces;
	uint32_t *place = report_frame_places(p, merge, &nplaces);
	int err = place ? encode_profile(p, o, mem, place, merge, &b) : -ENOMEM;

	if (!err)
		err = report_gzip(f, b.d, b.n);
	free(b.d);
	free(place);
	return err ? err : ferror(f) ? -EIO : 0;
}

static int write_pprof(FILE *f, const struct profile *p, const struct report_opts *o)
{
	return write_either(f, p, o, false);
}

static int write_mem_pprof(FILE *f, const struct profile *p, const struct report_opts *o)
{
	return write_either(f, p, o, true);
}

const struct report_writer report_pprof = {
	.name = "pprof",
	.exts = { ".pb.gz", ".pprof" },
	.write = write_pprof,
};

/* Not in the -f registry: written beside the report, by --mem-pprof. */
const struct report_writer report_mem_pprof = {
	.name = "mem-pprof",
	.exts = { ".pb.gz" },
	.write = write_mem_pprof,
};
