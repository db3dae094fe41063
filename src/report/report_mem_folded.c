// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mem-folded: the memory stacks as folded text ("frame;frame;... bytes",
 * outermost first, one line per stack), the input of flamegraph.pl, inferno
 * and speedscope, so the flame graph is of bytes of new memory touched rather
 * than of CPU time. Frames and the per-process root frame are labelled as in
 * the CPU folded writer (report_frame_label, report_proc_label).
 * --mem-retained-folded: the same, weighted by the bytes each stack mapped
 * and still held at the end (PROFILE_MEM_RETAINED), for a flame graph of
 * what stays.
 */
#include <errno.h>
#include <inttypes.h>
#include "report/report_writer.h"
#include "report/report_common.h"

/* Every memory stack with bytes of kind, outermost frame first. */
static int write_kind(FILE *f, const struct profile *p, enum profile_mem_kind kind)
{
	char label[4096];
	size_t i, j;
	uint32_t k;

	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->mem.nstacks; j++) {
			const struct profile_mem_stack *s = &pp->mem.stacks[j];

			if (!s->bytes[kind])
				continue;
			fputs(report_proc_label(pp, label, sizeof(label)), f);
			for (k = s->nframes; k-- > 0;) {
				fputc(';', f);
				fputs(report_frame_label(p, s->frames[k], label, sizeof(label)), f);
			}
			fprintf(f, " %" PRIu64 "\n", s->bytes[kind]);
		}
	}
	return ferror(f) ? -EIO : 0;
}

static int write_folded(FILE *f, const struct profile *p, const struct report_opts *o)
{
	(void)o;
	return write_kind(f, p, PROFILE_MEM_TOUCHED);
}

static int write_retained(FILE *f, const struct profile *p, const struct report_opts *o)
{
	(void)o;
	return write_kind(f, p, PROFILE_MEM_RETAINED);
}

/* Not in the -f registry: written beside the report, by --mem-retained-folded. */
const struct report_writer report_mem_retained_folded = {
	.name = "mem-retained-folded",
	.exts = { ".folded" },
	.write = write_retained,
	.plain_text = true,
};

/* Not in the -f registry: written beside the report, by --mem-folded. */
const struct report_writer report_mem_folded = {
	.name = "mem-folded",
	.exts = { ".folded" },
	.write = write_folded,
	.plain_text = true,
};
