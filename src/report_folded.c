// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope's
 * importer: one line per distinct stack, "root;...;leaf count", each frame
 * "qualname (file:line)". With several processes each stack starts at a
 * "pid N (comm)" frame so they stay apart. Threads of a process are merged:
 * the same stack in two threads is one line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define LABEL_MAX 1024

static int write_folded(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct hashmap seen;	/* stack hash -> first stack index with those frames */
	char label[LABEL_MAX];
	size_t i, j, k;

	for (i = 0; i < p->nprocs; i++) {
		const struct profile_proc *pp = &p->procs[i];
		uint64_t *merged = calloc(pp->nstacks + 1, sizeof(*merged));

		if (!merged)
			return -ENOMEM;
		/* Threads off: sum the counts of stacks with equal frames into the first one. */
		hashmap__init(&seen);
		for (j = 0; j < pp->nstacks; j++) {
			const struct profile_stack *s = &pp->stacks[j];
			uint64_t h = hash_bytes(s->frames, s->nframes * sizeof(*s->frames), 0);
			uint64_t *slot;

			for (;; h++) {
				slot = hashmap__find(&seen, h);
				if (!slot || (pp->stacks[*slot].nframes == s->nframes &&
					      !memcmp(pp->stacks[*slot].frames, s->frames,
						      s->nframes * sizeof(*s->frames))))
					break;
			}
			if (slot) {
				merged[*slot] += s->count;
			} else {
				merged[j] = s->count;
				if (hashmap__set(&seen, h, j)) {
					hashmap__free(&seen);
					free(merged);
					return -ENOMEM;
				}
			}
		}
		hashmap__free(&seen);
		for (j = 0; j < pp->nstacks; j++) {
			const struct profile_stack *s = &pp->stacks[j];

			if (!merged[j] || !s->nframes)
				continue;
			if (p->nprocs > 1)
				fprintf(f, "%s;", report_proc_label(pp, label, sizeof(label)));
			for (k = s->nframes; k-- > 0;)
				fprintf(f, "%s%s", report_frame_label(p, s->frames[k], label,
								      sizeof(label)), k ? ";" : "");
			fprintf(f, " %llu\n", (unsigned long long)merged[j]);
		}
		free(merged);
	}
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_folded = {
	.name = "folded",
	.exts = { ".folded" },
	.write = write_folded,
};
