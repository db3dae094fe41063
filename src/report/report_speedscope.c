// SPDX-License-Identifier: GPL-2.0-only
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * every frame once in a shared table, then one "sampled" profile per thread
 * of each process, its distinct stacks (root first) weighted by sample count;
 * the viewer opens on the busiest. With --merge-lines a frame is a function
 * (report_frame_places), its line the function's first: speedscope tells
 * frames apart by name, file and line, so one frame per line would be one
 * row per line in its tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* The frames listed by place (report_frame_places), each once. */
static void write_frames(FILE *f, const struct profile *p, const uint32_t *place, bool merge_lines)
{
	size_t i, n = 0;

	fputs("\"shared\": {\"frames\": [", f);
	for (i = 0; i < p->nframes; i++) {
		const struct profile_func *fn = &p->funcs[p->frames[i].func];
		int line = report_frame_line(p, (uint32_t)i, merge_lines);

		if (place[i] != n)
			continue;
		fputs(n++ ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		json_string(f, fn->qualname);
		if (fn->file[0]) {
			fputs(", \"file\": ", f);
			json_string(f, fn->file);
		}
		if (line > 0)
			fprintf(f, ", \"line\": %d", line);
		fputc('}', f);
	}
	fputs("]},\n", f);
}

static const char *thread_name(const struct profile_target *pp, uint32_t tid)
{
	size_t i;

	for (i = 0; i < pp->nthreads; i++)
		if (pp->threads[i].tid == tid)
			return profile_thread__label(&pp->threads[i]);
	return "?";
}

/* One profile: the stacks of thread tid, their frames by place. */
static void write_thread(FILE *f, const struct profile *p, const struct profile_target *pp,
			 uint32_t tid, const uint32_t *place)
{
	uint64_t total = 0;
	char name[256], procs[64], role[PROFILE_ROLE];
	size_t i, k, n = 0;

	for (i = 0; i < pp->nstacks; i++)
		if (pp->stacks[i].tid == tid && pp->stacks[i].nframes)
			total += pp->stacks[i].count;
	if (report_is_merged(p, pp))
		snprintf(name, sizeof(name), "%s, thread %u (%s)",
			 report_nprocs(p, procs, sizeof(procs)), tid, thread_name(pp, tid));
	else
		snprintf(name, sizeof(name), "pid %d (%s) thread %u (%s)", pp->pid,
			 profile_target__role(pp, role, sizeof(role)), tid, thread_name(pp, tid));
	fputs("  {\"type\": \"sampled\", \"name\": ", f);
	json_string(f, name);
	fprintf(f,
		", \"unit\": \"none\", \"startValue\": 0, \"endValue\": %llu,\n   \"samples\": [",
		(unsigned long long)total);
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		if (s->tid != tid || !s->nframes)
			continue;
		fputs(n++ ? ",\n    [" : "\n    [", f);
		for (k = s->nframes; k-- > 0;)
			fprintf(f, "%u%s", place[s->frames[k]], k ? ", " : "");
		fputc(']', f);
	}
	fputs("],\n   \"weights\": [", f);
	for (i = 0, n = 0; i < pp->nstacks; i++)
		if (pp->stacks[i].tid == tid && pp->stacks[i].nframes)
			fprintf(f, "%s%llu", n++ ? ", " : "",
				(unsigned long long)pp->stacks[i].count);
	fputs("]}", f);
}

/* Adds stack s's samples to its thread's profile in totals (its index + 1 in tids). */
static int count_stack(struct hashmap *tids, uint64_t **totals, size_t *n, size_t *cap,
		       const struct profile_stack *s)
{
	uint64_t *slot = hashmap__find(tids, s->tid);

	if (!slot) {
		if (vec_grow((void **)totals, cap, *n + 1, sizeof(**totals)) ||
		    hashmap__set(tids, s->tid, *n + 1))
			return -ENOMEM;
		(*totals)[*n] = 0;
		slot = hashmap__find(tids, s->tid);
		(*n)++;
	}
	if (s->nframes)
		(*totals)[*slot - 1] += s->count;
	return 0;
}

/*
 * The index of the profile with the most samples (the first of equals), in
 * the order write_speedscope writes them: speedscope opens on it, where the
 * first (the lowest pid's first thread) may be a client's few imports.
 */
static int busiest_profile(const struct profile *p, size_t *best)
{
	uint64_t *totals = NULL;
	size_t i, j, k, base = 0, n = 0, cap = 0;
	struct hashmap tids;
	int err = 0;

	*best = 0;
	for (i = 0; i < p->ntargets && !err; i++) {
		hashmap__init(&tids);
		for (j = 0; j < p->targets[i].nstacks && !err; j++)
			err = count_stack(&tids, &totals, &n, &cap, &p->targets[i].stacks[j]);
		hashmap__free(&tids);
		for (k = base; k < n; k++)
			if (totals[k] > totals[*best])
				*best = k;
		base = n; /* a tid seen again in the next process is another profile */
	}
	free(totals);
	return err;
}

/* One profile per thread of each process, their frames by place. */
static int write_profiles(FILE *f, const struct profile *p, const uint32_t *place)
{
	size_t i, j, nprofiles = 0;
	struct hashmap tids;

	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		/* Threads in the order of their first stack; a thread with none has no profile. */
		hashmap__init(&tids);
		for (j = 0; j < pp->nstacks; j++) {
			if (hashmap__find(&tids, pp->stacks[j].tid))
				continue;
			if (hashmap__set(&tids, pp->stacks[j].tid, 1)) {
				hashmap__free(&tids);
				return -ENOMEM;
			}
			fputs(nprofiles++ ? ",\n" : "\n", f);
			write_thread(f, p, pp, pp->stacks[j].tid, place);
		}
		hashmap__free(&tids);
	}
	return 0;
}

static int write_speedscope(FILE *f, const struct profile *p, const struct report_opts *o)
{
	char name[320], counts[200];
	size_t best, nplaces;
	uint32_t *place;
	int err;

	if (busiest_profile(p, &best))
		return -ENOMEM;
	place = report_frame_places(p, o->merge_lines, &nplaces);
	if (!place)
		return -ENOMEM;
	fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n", f);
	snprintf(name, sizeof(name), "pybpfprof %s profile at %u Hz, %s%s", p->mode,
		 p->frequency_hz, report_counts(p, counts, sizeof(counts)),
		 o->merge_lines ? ", lines merged" : "");
	fprintf(f, "\"exporter\": \"pybpfprof %s\", \"name\": ", o->tool_version);
	json_string(f, name);
	fprintf(f, ", \"activeProfileIndex\": %zu,\n", best);
	write_frames(f, p, place, o->merge_lines);
	fputs("\"profiles\": [", f);
	err = write_profiles(f, p, place);
	free(place);
	if (err)
		return err;
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_speedscope = {
	.name = "speedscope",
	.exts = { ".speedscope.json", ".speedscope" },
	.write = write_speedscope,
};
