// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope's
 * importer: one line per distinct stack, "root;...;leaf count", each frame
 * "qualname (file:line)". With several processes each stack starts at a
 * "pid N (role)" frame so they stay apart. Threads of a process are merged:
 * the same stack in two threads is one line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"

#define LABEL_MAX 1024

/* Every frame's label once (a stack repeats its frames' labels many times). */
static char **frame_labels(const struct profile *p)
{
	char **labels = calloc(p->nframes + 1, sizeof(*labels));
	char buf[LABEL_MAX];
	size_t i;

	for (i = 0; labels && i < p->nframes; i++) {
		labels[i] = strdup(report_frame_label(p, i, buf, sizeof(buf)));
		if (!labels[i]) {
			while (i--)
				free(labels[i]);
			free(labels);
			return NULL;
		}
	}
	return labels;
}

/* Threads off: the counts of stacks with equal frames summed into the first one. */
static uint64_t *merge_threads(const struct profile_target *pp)
{
	uint64_t *merged = calloc(pp->nstacks + 1, sizeof(*merged));
	struct hashmap seen; /* frames hash -> first stack with those frames */
	size_t j;

	if (!merged)
		return NULL;
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
				free(merged);
				merged = NULL;
				break;
			}
		}
	}
	hashmap__free(&seen);
	return merged;
}

static int write_folded(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char **labels = frame_labels(p), root[LABEL_MAX];
	size_t i, j, k;
	int err = 0;

	if (!labels)
		return -ENOMEM;
	for (i = 0; i < p->ntargets && !err; i++) {
		const struct profile_target *pp = &p->targets[i];
		uint64_t *merged = merge_threads(pp);

		if (!merged) {
			err = -ENOMEM;
			break;
		}
		report_proc_label(pp, root, sizeof(root));
		for (j = 0; j < pp->nstacks; j++) {
			const struct profile_stack *s = &pp->stacks[j];

			if (!merged[j] || !s->nframes)
				continue;
			if (p->ntargets > 1) {
				fputs(root, f);
				fputc(';', f);
			}
			for (k = s->nframes; k-- > 0;) {
				fputs(labels[s->frames[k]], f);
				if (k)
					fputc(';', f);
			}
			fprintf(f, " %llu\n", (unsigned long long)merged[j]);
		}
		free(merged);
	}
	for (i = 0; i < p->nframes; i++)
		free(labels[i]);
	free(labels);
	return err ? err : ferror(f) ? -EIO : 0;
}

const struct report_writer report_folded = {
	.name = "folded",
	.exts = { ".folded" },
	.write = write_folded,
	.plain_text = true,
};
