// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flight recorder's ring (agent_ring.h): variable-length records in one
 * buffer allocated at the start (its pages touched only as records come, so
 * a quiet host holds little of it). A record is never split at the end of
 * the buffer: when it does not fit before the end, the rest of the buffer is
 * left unused (wrap marks it) and the record goes to the start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "agent_metrics.h"
#include "agent_ring.h"

size_t agent_ring_rec_bytes(uint32_t n)
{
	return sizeof(struct agent_ring_rec) + ((size_t)n * sizeof(uint32_t) + 7) / 8 * 8;
}

int agent_ring__init(struct agent_ring *r, size_t max_bytes, long long window_ns)
{
	memset(r, 0, sizeof(*r));
	r->cap = max_bytes / 8 * 8;
	r->window_ns = window_ns;
	r->buf = r->cap ? malloc(r->cap) : NULL;
	return r->buf ? 0 : -ENOMEM;
}

void agent_ring__free(struct agent_ring *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static const struct agent_ring_rec *oldest(const struct agent_ring *r)
{
	return (const struct agent_ring_rec *)(r->buf + r->head);
}

/* Lets the oldest record go. */
static void drop_oldest(struct agent_ring *r)
{
	size_t len = agent_ring_rec_bytes(oldest(r)->nframes);

	r->head += len;
	r->used -= len;
	r->n--;
	if (r->wrap && r->head == r->wrap) {
		r->head = 0;
		r->wrap = 0;
	}
	if (!r->n)
		r->head = r->tail = r->wrap = 0;
}

/* Where a record of len bytes can go now, or SIZE_MAX (no room without dropping). */
static size_t room(const struct agent_ring *r, size_t len)
{
	if (!r->n)
		return len <= r->cap ? 0 : SIZE_MAX;
	if (r->tail > r->head || (r->tail == r->head && !r->wrap)) {
		/* free: [tail, cap) and [0, head) */
		if (r->cap - r->tail >= len)
			return r->tail;
		return r->head >= len ? 0 : SIZE_MAX;
	}
	/* wrapped: free is [tail, head) */
	return r->head - r->tail >= len ? r->tail : SIZE_MAX;
}

bool agent_ring__push(struct agent_ring *r, long long mono_ns, int pid, uint32_t tid,
		      const uint32_t *frames, uint32_t n)
{
	size_t len = agent_ring_rec_bytes(n), at;
	struct agent_ring_rec *rec;

	if (len > r->cap) {
		r->refused++;
		return false;
	}
	while (r->n && oldest(r)->mono_ns < mono_ns - r->window_ns) {
		drop_oldest(r);
		r->aged++;
	}
	while ((at = room(r, len)) == SIZE_MAX) {
		drop_oldest(r);
		r->evicted++;
	}
	if (r->n && at == 0 && r->tail != 0)
		r->wrap = r->tail; /* [tail, cap) left unused */
	rec = (struct agent_ring_rec *)(r->buf + at);
	*rec = (struct agent_ring_rec){ mono_ns, pid, tid, n, 0 };
	memcpy(rec + 1, frames, (size_t)n * sizeof(uint32_t));
	r->tail = at + len;
	r->used += len;
	r->n++;
	r->recorded++;
	return true;
}

void agent_ring__each(const struct agent_ring *r, long long since_ns,
		      void (*fn)(void *ctx, const struct agent_ring_rec *rec,
				 const uint32_t *frames),
		      void *ctx)
{
	size_t at = r->head;
	uint64_t i;

	for (i = 0; i < r->n; i++) {
		const struct agent_ring_rec *rec;

		if (r->wrap && at == r->wrap)
			at = 0;
		rec = (const struct agent_ring_rec *)(r->buf + at);
		if (rec->mono_ns >= since_ns)
			fn(ctx, rec, (const uint32_t *)(rec + 1));
		at += agent_ring_rec_bytes(rec->nframes);
	}
}

bool agent_rate_keep(uint64_t *state, unsigned hz, unsigned rate_hz)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	if (hz >= rate_hz)
		return true;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	/* the top 32 bits, uniform in [0, 2^32): kept when under hz / rate_hz of it */
	return (x >> 32) * rate_hz < (uint64_t)hz << 32;
}

void agent_gate__init(struct agent_gate *g, long long cooldown_ns)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	g->cooldown_ns = cooldown_ns;
}

bool agent_gate__try(struct agent_gate *g, long long now_ns, enum agent_trigger t)
{
	bool ok;

	pthread_mutex_lock(&g->lock);
	ok = !g->last_ns || now_ns - g->last_ns >= g->cooldown_ns;
	if (ok) {
		g->last_ns = now_ns ? now_ns : 1;
		g->http_due |= t == AGENT_TRIGGER_HTTP;
	} else {
		g->refused[t]++;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

bool agent_gate__take_http(struct agent_gate *g)
{
	bool due;

	pthread_mutex_lock(&g->lock);
	due = g->http_due;
	g->http_due = false;
	pthread_mutex_unlock(&g->lock);
	return due;
}

void agent_cpu_window__add(struct agent_cpu_window *w, long long b)
{
	long long i;

	if (b < 0 || b <= w->last - AGENT_CPU_BUCKETS)
		return;
	if (b > w->last) {
		/* the buckets after the newest, up to b, start empty (each at most once) */
		if (b - w->last >= AGENT_CPU_BUCKETS)
			memset(w->n, 0, sizeof(w->n));
		else
			for (i = w->last + 1; i <= b; i++)
				w->n[i % AGENT_CPU_BUCKETS] = 0;
		w->last = b;
	}
	w->n[b % AGENT_CPU_BUCKETS]++;
}

uint64_t agent_cpu_window__sum(const struct agent_cpu_window *w, long long upto, unsigned k)
{
	uint64_t s = 0;
	long long i;

	for (i = upto - (long long)k; i < upto; i++)
		if (i >= 0 && i <= w->last && i > w->last - AGENT_CPU_BUCKETS)
			s += w->n[i % AGENT_CPU_BUCKETS];
	return s;
}
