// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mode wall: off-CPU intervals become stacks. A thread that leaves the CPU
 * leaves its stack here (pending, one per thread); when it comes back, the
 * interval is added to that stack with a pseudo-frame "<off-CPU: CLASS>"
 * innermost, weighted in samples at the run's frequency (ns x Hz / 1e9, the
 * fraction carried to the thread's next interval), so that every writer
 * shows on-CPU and off-CPU time in one unit without knowing of either: the
 * process's and the thread's samples count them too. The exact ns go to the
 * thread, per class.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "profile/profile.h"
#include "util/vec.h"

static const char *const class_names[PROFILE_OFFCPU_NCLASSES] = {
	"sleep", "I/O", "lock", "GIL wait", "waiting for a CPU", "other",
};

const char *profile_offcpu_class_name(unsigned cls)
{
	return cls < PROFILE_OFFCPU_NCLASSES ? class_names[cls] : "other";
}

uint64_t profile_ns_to_samples(unsigned hz, uint64_t ns, uint64_t *rem_ns)
{
	/* in units of ns x Hz, so that no interval's fraction is lost */
	unsigned __int128 total = (unsigned __int128)ns * hz + *rem_ns;
	uint64_t samples = (uint64_t)(total / 1000000000u);

	*rem_ns = (uint64_t)(total % 1000000000u);
	return samples;
}

static struct profile_offcpu_pending *pending_of(struct profile_target *pp, uint32_t tid, bool add)
{
	size_t i;

	for (i = 0; i < pp->npending; i++)
		if (pp->pending[i].tid == tid)
			return &pp->pending[i];
	if (!add || vec_grow((void **)&pp->pending, &pp->cap_pending, pp->npending + 1,
			     sizeof(*pp->pending)))
		return NULL;
	pp->pending[pp->npending].tid = tid;
	return &pp->pending[pp->npending++];
}

int profile_target__offcpu_block(struct profile_target *pp, uint32_t tid, const uint32_t *frames,
				 uint32_t n, unsigned cls, uint64_t start_ns, bool primed)
{
	struct profile_offcpu_pending *q = pending_of(pp, tid, true);
	uint32_t *copy;

	if (!q)
		return -ENOMEM;
	copy = realloc(q->frames, (n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, frames, n * sizeof(*copy));
	q->frames = copy;
	q->nframes = n;
	q->cls = cls < PROFILE_OFFCPU_NCLASSES ? cls : PROFILE_OFFCPU_OTHER;
	q->start_ns = start_ns;
	q->primed = primed;
	q->open = true;
	return 0;
}

int profile_target__offcpu_again(struct profile_target *pp, uint32_t tid, unsigned cls,
				 uint64_t start_ns)
{
	struct profile_offcpu_pending *q = pending_of(pp, tid, false);

	if (!q || !q->frames || q->primed)
		return -ENOENT;
	q->cls = cls < PROFILE_OFFCPU_NCLASSES ? cls : PROFILE_OFFCPU_OTHER;
	q->start_ns = start_ns;
	q->open = true;
	return 0;
}

/* The pseudo-function's frame of a class: interned once per profile. */
static uint32_t class_frame(struct profile *p, unsigned cls)
{
	char name[48];
	uint32_t func;

	snprintf(name, sizeof(name), "<off-CPU: %s>", profile_offcpu_class_name(cls));
	func = profile__func(p, name, PROFILE_OFFCPU_FILE, 0, false);
	return func == UINT32_MAX ? UINT32_MAX : profile__frame(p, func, -1);
}

static int charge(struct profile *p, struct profile_target *pp, struct profile_offcpu_pending *q,
		  uint64_t ns)
{
	struct profile_thread *th = profile_target__thread(pp, q->tid);
	uint64_t samples = profile_ns_to_samples(p->frequency_hz, ns, &q->rem_ns);
	struct profile_tl_add a = { .kind = PROFILE_TL_OFFCPU,
				    .arg = (uint8_t)q->cls,
				    .tid = q->tid,
				    .ktime_ns = q->start_ns,
				    .dur_ns = ns,
				    .frames = q->frames,
				    .nframes = q->nframes };
	uint32_t *frames, pseudo;
	int err;

	/* every interval, the ones too short to make a sample too */
	profile_target__tl_add(p, pp, &a);
	if (!th)
		return -ENOMEM;
	th->offcpu_ns[q->cls] += ns;
	if (!samples)
		return 0;
	/* interned only now: a class whose intervals never made a sample has no
	 * frame, so no writer shows a name that carries no weight */
	pseudo = class_frame(p, q->cls);
	if (pseudo == UINT32_MAX)
		return -ENOMEM;
	frames = malloc((q->nframes + 1) * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	frames[0] = pseudo;
	memcpy(frames + 1, q->frames, q->nframes * sizeof(*frames));
	err = profile_target__add_stack(pp, q->tid, frames, q->nframes + 1, samples);
	free(frames);
	/* the process's share of every stack counts off-CPU time too */
	if (!err) {
		pp->samples += samples;
		th->samples += samples;
	}
	return err;
}

int profile_target__offcpu_end(struct profile *p, struct profile_target *pp, uint32_t tid,
			       uint64_t ns, uint64_t end_ns)
{
	struct profile_offcpu_pending *q = pending_of(pp, tid, false);

	if (!q || !q->open) {
		p->offcpu_unmatched++;
		return -ENOENT;
	}
	q->open = false;
	if (end_ns >= ns && end_ns)
		q->start_ns = end_ns - ns;
	return charge(p, pp, q, ns);
}

void profile__offcpu_close_all(struct profile *p)
{
	size_t i, j;

	for (i = 0; i < p->ntargets; i++)
		for (j = 0; j < p->targets[i].npending; j++)
			p->targets[i].pending[j].open = false;
}

int profile_target__offcpu_open_at_end(struct profile_target *pp, uint32_t tid, unsigned cls,
				       uint64_t start_ns, bool same)
{
	struct profile_offcpu_pending *q = pending_of(pp, tid, false);

	if (!q || !q->frames || (same && q->primed))
		return -ENOENT;
	/*
	 * Its own stack record is stamped at or after the interval's start: an
	 * older one is the last interval's, and this one's record was lost.
	 */
	if (!same && q->start_ns < start_ns)
		return -ENOENT;
	if (same)
		q->cls = cls < PROFILE_OFFCPU_NCLASSES ? cls : PROFILE_OFFCPU_OTHER;
	q->start_ns = start_ns;
	q->open = true;
	return 0;
}

void profile__offcpu_flush(struct profile *p, uint64_t end_ns)
{
	size_t i, j;

	for (i = 0; i < p->ntargets; i++) {
		struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->npending; j++) {
			struct profile_offcpu_pending *q = &pp->pending[j];

			if (!q->open)
				continue;
			q->open = false;
			/* blocked from the first moment to the last: shown with --idle only */
			if (q->primed && !p->idle) {
				p->offcpu_idle_hidden++;
				continue;
			}
			charge(p, pp, q, end_ns > q->start_ns ? end_ns - q->start_ns : 0);
		}
	}
}

int profile__offcpu_class(const struct profile *p, const struct profile_stack *s)
{
	const struct profile_func *f;
	unsigned cls;

	if (!s->nframes || s->frames[0] >= p->nframes)
		return -1;
	f = &p->funcs[p->frames[s->frames[0]].func];
	if (!f->file || strcmp(f->file, PROFILE_OFFCPU_FILE))
		return -1;
	for (cls = 0; cls < PROFILE_OFFCPU_NCLASSES; cls++) {
		const char *n = profile_offcpu_class_name(cls);
		size_t len = strlen(n);

		if (!strncmp(f->qualname, "<off-CPU: ", 10) && !strncmp(f->qualname + 10, n, len) &&
		    !strcmp(f->qualname + 10 + len, ">"))
			return (int)cls;
	}
	return PROFILE_OFFCPU_OTHER;
}

static uint64_t *gil_count(uint64_t *held, uint64_t *released, uint64_t *unknown,
			   enum profile_gil state)
{
	return state == PROFILE_GIL_HELD     ? held :
	       state == PROFILE_GIL_RELEASED ? released :
					       unknown;
}

void profile_target__add_gil(struct profile_target *pp, uint32_t tid, enum profile_gil state)
{
	struct profile_thread *th = profile_target__thread(pp, tid);
	struct profile_stack *s = pp->last_stack < pp->nstacks ? &pp->stacks[pp->last_stack] : NULL;

	if (s)
		*gil_count(&s->gil_held, &s->gil_released, &s->gil_unknown, state) += 1;
	if (th)
		*gil_count(&th->gil_held, &th->gil_released, &th->gil_unknown, state) += 1;
}
