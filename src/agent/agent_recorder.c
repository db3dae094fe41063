// SPDX-License-Identifier: GPL-2.0-only
/*
 * A flight recorder capture (agent_ring.h): the ring's last seconds turned
 * into profile sections the pprof writer takes, each sample a stack of its
 * own so that it keeps its time (a number label on its pprof Sample); and
 * the same samples on a timeline, for the Perfetto writer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "report/report_common.h"
#include "report/report_writer.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "agent_ring.h"

struct build {
	struct agent_capture *c;
	const struct profile *all;
	struct hashmap sections; /* pid -> 1 + its newest section in all */
	struct hashmap slots;	 /* pid -> 1 + its section in c, or 0: left out */
	/*
	 * of each of c's sections; c->times and b->cap_stacks grow in step
	 * with c->targets, and each section's times with its stacks, by
	 * vec_grow from the same capacity to the same need: the same size
	 */
	size_t *cap_stacks;
	long long real_off;
	bool (*keep)(void *ctx, size_t section);
	void *ctx;
	int err;
};

static char empty_name[] = "";

/* A new section of c for pid: the names of its section in all, if any, borrowed. */
static int new_slot(struct build *b, int pid, const uint64_t *sec)
{
	struct agent_capture *c = b->c;
	size_t cap = c->cap, cap2 = c->cap;
	struct profile_target *t;

	if (vec_grow((void **)&c->targets, &c->cap, c->n + 1, sizeof(*c->targets)) ||
	    vec_grow((void **)&c->times, &cap, c->n + 1, sizeof(*c->times)) ||
	    vec_grow((void **)&b->cap_stacks, &cap2, c->n + 1, sizeof(*b->cap_stacks)))
		return -ENOMEM;
	t = &c->targets[c->n];
	memset(t, 0, sizeof(*t));
	c->times[c->n] = NULL;
	b->cap_stacks[c->n] = 0;
	t->pid = pid;
	t->root_fd = -1;
	t->exe = t->cmdline = t->comm = t->python = empty_name;
	hashmap__init(&t->stack_index);
	if (sec) {
		const struct profile_target *s = &b->all->targets[*sec - 1];

		t->nspid = s->nspid;
		t->exe = s->exe ? s->exe : empty_name;
		t->cmdline = s->cmdline ? s->cmdline : empty_name;
		t->comm = s->comm ? s->comm : empty_name;
		t->python = s->python ? s->python : empty_name;
		t->threads = s->threads;
		t->nthreads = s->nthreads;
	}
	return hashmap__set(&b->slots, (uint64_t)(uint32_t)pid, ++c->n) ? -ENOMEM : 0;
}

static void take(void *ctx, const struct agent_ring_rec *rec, const uint32_t *frames)
{
	struct build *b = ctx;
	struct agent_capture *c = b->c;
	uint64_t key = (uint32_t)rec->pid, *slot, *sec;
	struct profile_target *t;
	struct profile_stack *s;
	size_t cap;

	if (b->err)
		return;
	slot = hashmap__find(&b->slots, key);
	if (!slot) {
		sec = hashmap__find(&b->sections, key);
		if (sec && !b->keep(b->ctx, *sec - 1)) {
			b->err = hashmap__set(&b->slots, key, 0) ? -ENOMEM : 0;
			c->left_out++;
			return;
		}
		if ((b->err = new_slot(b, rec->pid, sec)))
			return;
		slot = hashmap__find(&b->slots, key);
	}
	if (!*slot) {
		c->left_out++;
		return;
	}
	t = &c->targets[*slot - 1];
	cap = b->cap_stacks[*slot - 1];
	if (vec_grow((void **)&t->stacks, &b->cap_stacks[*slot - 1], t->nstacks + 1,
		     sizeof(*t->stacks)) ||
	    vec_grow((void **)&c->times[*slot - 1], &cap, t->nstacks + 1, sizeof(uint64_t))) {
		b->err = -ENOMEM;
		return;
	}
	s = &t->stacks[t->nstacks];
	memset(s, 0, sizeof(*s));
	s->frames = malloc((rec->nframes ? rec->nframes : 1) * sizeof(uint32_t));
	if (!s->frames) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(s->frames, frames, rec->nframes * sizeof(uint32_t));
	s->nframes = rec->nframes;
	s->tid = rec->tid;
	s->count = 1;
	c->times[*slot - 1][t->nstacks++] = rec->mono_ns + b->real_off;
	t->samples++;
	c->samples++;
	if (!c->first_ns)
		c->first_ns = rec->mono_ns;
}

int agent_capture__build(struct agent_capture *c, const struct agent_ring *r,
			 const struct profile *all, long long since_ns, long long real_off,
			 bool (*keep)(void *ctx, size_t section), void *ctx)
{
	struct build b = { .c = c, .all = all, .real_off = real_off, .keep = keep, .ctx = ctx };
	size_t i;

	memset(c, 0, sizeof(*c));
	hashmap__init(&b.sections);
	hashmap__init(&b.slots);
	/* a reused pid: its newest section is the process now */
	for (i = 0; i < all->ntargets && !b.err; i++)
		b.err = hashmap__set(&b.sections, (uint64_t)(uint32_t)all->targets[i].pid, i + 1) ?
				-ENOMEM :
				0;
	if (!b.err)
		agent_ring__each(r, since_ns, take, &b);
	hashmap__free(&b.sections);
	hashmap__free(&b.slots);
	free(b.cap_stacks);
	if (b.err)
		agent_capture__free(c);
	return b.err;
}

void agent_capture__free(struct agent_capture *c)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		for (j = 0; j < c->targets[i].nstacks; j++)
			free(c->targets[i].stacks[j].frames);
		free(c->targets[i].stacks);
		hashmap__free(&c->targets[i].stack_index);
		free(c->times[i]);
	}
	free(c->targets);
	free(c->times);
	memset(c, 0, sizeof(*c));
}

/* c's samples as v's timeline events, each a CPU sample at its time. 0 or -ENOMEM. */
static int fill_timeline(struct profile *v, struct agent_capture *c)
{
	struct profile_timeline *t = &v->timeline;
	size_t i, j;
	int err = 0;

	for (i = 0; i < c->n && !err; i++) {
		struct profile_target *pp = &c->targets[i];

		err = profile_timeline__add_proc(t, pp->pid, pp->comm, pp->cmdline, false);
		pp->tl_proc = (uint32_t)i + 1;
		for (j = 0; j < pp->nstacks && !err; j++) {
			const struct profile_stack *s = &pp->stacks[j];
			uint64_t at = c->times[i][j], from = (uint64_t)v->start_unix_ns;
			struct profile_tl_event e = { .t_ns = at > from ? (int64_t)(at - from) : 0,
						      .proc = (uint32_t)i,
						      .tid = s->tid,
						      .kind = PROFILE_TL_CPU };

			e.ref = profile_timeline__stack(t, s->frames, s->nframes);
			if (e.ref == UINT32_MAX) { /* beyond the stack table's bound */
				t->dropped[PROFILE_TL_CPU]++;
				continue;
			}
			err = profile_timeline__append(t, &e);
		}
	}
	return err;
}

int agent_capture__timeline(struct profile *v, struct agent_capture *c, uint8_t **out, size_t *len)
{
	struct report_opts ro = { .tool_version = PYBPFPROF_VERSION };
	char *raw = NULL;
	size_t rawlen = 0;
	FILE *f;
	int err;

	*out = NULL;
	*len = 0;
	memset(&v->timeline, 0, sizeof(v->timeline));
	profile__timeline_on(v, c->samples + 1);
	err = fill_timeline(v, c);
	if (!err) {
		f = open_memstream(&raw, &rawlen);
		err = !f ? -ENOMEM : report_perfetto.write(f, v, &ro) | fclose(f) ? -ENOMEM : 0;
	}
	if (!err) {
		f = open_memstream((char **)out, len);
		err = !f						 ? -ENOMEM :
		      report_gzip(f, (uint8_t *)raw, rawlen) | fclose(f) ? -ENOMEM :
									   0;
	}
	free(raw);
	profile_timeline__free(&v->timeline);
	if (err) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	return err;
}
