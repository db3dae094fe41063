// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope's
 * importer: one line per distinct stack, "root;...;leaf count", each frame
 * "qualname (file:line)". With several processes each stack starts at a
 * "pid N (role)" frame so they stay apart. Threads of a process are merged:
 * the same stack in two threads is one line; with --merge-lines a function's
 * lines are too, each frame "qualname (file)".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"

#define LABEL_MAX 1024

/* Every frame's label once (a stack repeats its frames' labels many times). */
static char **frame_labels(const struct profile *p, bool merge_lines)
{
	char **labels = calloc(p->nframes + 1, sizeof(*labels));
	char buf[LABEL_MAX];
	size_t i;

	for (i = 0; labels && i < p->nframes; i++) {
		labels[i] = strdup(merge_lines ? report_func_label(p, i, buf, sizeof(buf)) :
						 report_frame_label(p, i, buf, sizeof(buf)));
		if (!labels[i]) {
			while (i--)
				free(labels[i]);
			free(labels);
			return NULL;
		}
	}
	return labels;
}

/* Frame k of s as written: its function's stand-in with --merge-lines (rep). */
static uint32_t frame_at(const struct profile_stack *s, size_t k, const uint32_t *rep)
{
	return rep ? rep[s->frames[k]] : s->frames[k];
}

static uint64_t stack_hash(const struct profile_stack *s, const uint32_t *rep)
{
	uint64_t h = 0;
	size_t k;

	if (!rep)
		return hash_bytes(s->frames, s->nframes * sizeof(*s->frames), 0);
	for (k = 0; k < s->nframes; k++)
		h = hash_u64(h ^ frame_at(s, k, rep));
	return h;
}

static bool same_stack(const struct profile_stack *a, const struct profile_stack *b,
		       const uint32_t *rep)
{
	size_t k;

	if (a->nframes != b->nframes)
		return false;
	for (k = 0; k < a->nframes; k++)
		if (frame_at(a, k, rep) != frame_at(b, k, rep))
			return false;
	return true;
}

/*
 * Threads off, and with --merge-lines lines: the counts of stacks written
 * alike summed into the first one.
 */
static uint64_t *merge_threads(const struct profile_target *pp, const uint32_t *rep)
{
	uint64_t *merged = calloc(pp->nstacks + 1, sizeof(*merged));
	struct hashmap seen; /* frames hash -> first stack with those frames */
	size_t j;

	if (!merged)
		return NULL;
	hashmap__init(&seen);
	for (j = 0; j < pp->nstacks; j++) {
		const struct profile_stack *s = &pp->stacks[j];
		uint64_t h = stack_hash(s, rep);
		uint64_t *slot;

		for (;; h++) {
			slot = hashmap__find(&seen, h);
			if (!slot || same_stack(&pp->stacks[*slot], s, rep))
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

static void write_stack(FILE *f, const struct profile_stack *s, char **labels)
{
	size_t k;

	for (k = s->nframes; k-- > 0;) {
		fputs(labels[s->frames[k]], f);
		if (k)
			fputc(';', f);
	}
}

static int write_folded(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char **labels = frame_labels(p, o->merge_lines), root[LABEL_MAX];
	uint32_t *rep = o->merge_lines ? report_func_frames(p) : NULL;
	size_t i, j;
	int err = 0;

	if (!labels || (o->merge_lines && !rep))
		err = -ENOMEM;
	for (i = 0; i < p->ntargets && !err; i++) {
		const struct profile_target *pp = &p->targets[i];
		uint64_t *merged = merge_threads(pp, rep);

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
			write_stack(f, s, labels);
			fprintf(f, " %llu\n", (unsigned long long)merged[j]);
		}
		free(merged);
	}
	for (i = 0; labels && i < p->nframes; i++)
		free(labels[i]);
	free(labels);
	free(rep);
	return err ? err : ferror(f) ? -EIO : 0;
}

const struct report_writer report_folded = {
	.name = "folded",
	.exts = { ".folded" },
	.write = write_folded,
	.plain_text = true,
};
