/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flight recorder's ring (src/agent/agent_ring.h): records kept in order
 * across the buffer's end, the window's old ones let go, the byte bound's
 * evictions and refusals counted, and the interval profiles' keep rate.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "agent/agent_metrics.h"
#include "agent/agent_ring.h"

struct seen {
	uint64_t n;
	long long first, last;
	bool ordered, frames_ok;
};

static void collect(void *ctx, const struct agent_ring_rec *rec, const uint32_t *frames)
{
	struct seen *s = ctx;
	uint32_t i;

	if (!s->n)
		s->first = rec->mono_ns;
	else if (rec->mono_ns <= s->last)
		s->ordered = false;
	s->last = rec->mono_ns;
	/* each record's frames are its time's, as pushed below; its tid names their count */
	for (i = 0; i < rec->nframes; i++)
		if (frames[i] != (uint32_t)rec->mono_ns + i || rec->tid != rec->nframes)
			s->frames_ok = false;
	s->n++;
}

static void push_at(struct agent_ring *r, long long t, uint32_t n)
{
	uint32_t frames[64];
	uint32_t i;

	for (i = 0; i < n; i++)
		frames[i] = (uint32_t)t + i;
	agent_ring__push(r, t, 7, n, frames, n);
}

static struct seen walk(const struct agent_ring *r, long long since)
{
	struct seen s = { .ordered = true, .frames_ok = true };

	agent_ring__each(r, since, collect, &s);
	return s;
}

/* Many wraps of records of every size: the newest kept in order, the count honest. */
static void test_wraps_in_order(void **state)
{
	struct agent_ring r;
	struct seen s;
	long long t;
	size_t bytes = 0;

	(void)state;
	assert_int_equal(agent_ring__init(&r, 4096, 1000000), 0);
	for (t = 1; t <= 5000; t++)
		push_at(&r, t, (uint32_t)(t * 7 % 41));
	s = walk(&r, 0);
	assert_true(s.ordered);
	assert_true(s.frames_ok);
	assert_int_equal(s.n, r.n);
	assert_int_equal(s.last, 5000);
	assert_true(r.used <= r.cap);
	assert_int_equal(r.recorded, 5000);
	assert_int_equal(r.recorded, r.n + r.evicted + r.aged);
	assert_int_equal(r.aged, 0);
	assert_true(r.evicted > 4000);
	/* what is held is the newest contiguous run, as full as a record's size allows */
	for (t = s.first; t <= 5000; t++)
		bytes += agent_ring_rec_bytes((uint32_t)(t * 7 % 41));
	assert_int_equal(bytes, r.used);
	assert_int_equal(s.last - s.first + 1, s.n);
	assert_true(r.used + 2 * agent_ring_rec_bytes(40) >= r.cap);
	agent_ring__free(&r);
}

/* Older than the window: let go as aged, not evicted; each() starts where it is told. */
static void test_window(void **state)
{
	struct agent_ring r;
	struct seen s;
	long long t;

	(void)state;
	assert_int_equal(agent_ring__init(&r, 1 << 20, 100), 0);
	for (t = 1; t <= 1000; t++)
		push_at(&r, t, 3);
	assert_int_equal(r.evicted, 0);
	assert_int_equal(r.n, 101); /* 900..1000 */
	assert_int_equal(r.aged, 899);
	s = walk(&r, 950);
	assert_int_equal(s.n, 51);
	assert_int_equal(s.first, 950);
	assert_true(s.ordered && s.frames_ok);
	agent_ring__free(&r);
}

/* A record larger than the ring is refused and nothing else is lost. */
static void test_refused(void **state)
{
	uint32_t frames[64] = { 0 };
	struct agent_ring r;

	(void)state;
	assert_int_equal(agent_ring__init(&r, agent_ring_rec_bytes(8), 1000), 0);
	assert_true(agent_ring__push(&r, 1, 1, 1, frames, 8));
	assert_false(agent_ring__push(&r, 2, 1, 1, frames, 64));
	assert_int_equal(r.refused, 1);
	assert_int_equal(r.n, 1);
	assert_true(agent_ring__push(&r, 3, 1, 1, frames, 2));
	assert_int_equal(r.evicted, 1);
	assert_int_equal(r.n, 1);
	agent_ring__free(&r);
}

/* The interval profiles' share of samples: hz / rate_hz, all of them at the same rate. */
static void test_rate_keep(void **state)
{
	uint64_t st = 1, kept = 0, i, n = 1000000;

	(void)state;
	for (i = 0; i < n; i++)
		kept += agent_rate_keep(&st, 99, 999);
	/* 99,099 expected; 4 standard deviations (290) */
	assert_true(kept > 99099 - 1200 && kept < 99099 + 1200);
	for (i = 0, kept = 0; i < 1000; i++)
		kept += agent_rate_keep(&st, 99, 99);
	assert_int_equal(kept, 1000);
}

/* One capture per cooldown, whichever trigger; the refused counted by trigger; /capture's due once. */
static void test_gate(void **state)
{
	struct agent_gate g;

	(void)state;
	agent_gate__init(&g, 10);
	assert_false(agent_gate__take_http(&g));
	assert_true(agent_gate__try(&g, 100, AGENT_TRIGGER_HTTP));
	assert_false(agent_gate__try(&g, 105, AGENT_TRIGGER_SIGNAL));
	assert_false(agent_gate__try(&g, 109, AGENT_TRIGGER_HTTP));
	assert_true(agent_gate__take_http(&g));
	assert_false(agent_gate__take_http(&g));
	assert_true(agent_gate__try(&g, 110, AGENT_TRIGGER_SIGNAL));
	assert_false(agent_gate__take_http(&g));
	assert_int_equal(g.refused[AGENT_TRIGGER_SIGNAL], 1);
	assert_int_equal(g.refused[AGENT_TRIGGER_HTTP], 1);
	/* a first trigger at the clock's 0 still starts the cooldown */
	agent_gate__init(&g, 10);
	assert_true(agent_gate__try(&g, 0, AGENT_TRIGGER_SIGNAL));
	assert_false(agent_gate__try(&g, 5, AGENT_TRIGGER_SIGNAL));
}

static bool loopback(int family, const char *addr)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	if (family == AF_INET) {
		assert_int_equal(inet_pton(AF_INET, addr, &s4.sin_addr), 1);
		return agent_addr_loopback((struct sockaddr *)&s4, sizeof(s4));
	}
	assert_int_equal(inet_pton(AF_INET6, addr, &s6.sin6_addr), 1);
	return agent_addr_loopback((struct sockaddr *)&s6, sizeof(s6));
}

/* Only the host's own loopback may ask for a capture. */
static void test_loopback(void **state)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	(void)state;
	assert_true(loopback(AF_INET, "127.0.0.1"));
	assert_true(loopback(AF_INET, "127.255.1.2"));
	assert_false(loopback(AF_INET, "128.0.0.1"));
	assert_false(loopback(AF_INET, "10.0.0.1"));
	assert_false(loopback(AF_INET, "0.0.0.0"));
	assert_true(loopback(AF_INET6, "::1"));
	assert_true(loopback(AF_INET6, "::ffff:127.0.0.1"));
	assert_false(loopback(AF_INET6, "::ffff:10.1.2.3"));
	assert_false(loopback(AF_INET6, "::"));
	assert_false(loopback(AF_INET6, "fe80::1"));
	assert_false(loopback(AF_INET6, "::2"));
	/* too short for its family, or none */
	inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
	assert_false(agent_addr_loopback((struct sockaddr *)&s4, 4));
	assert_false(agent_addr_loopback(NULL, 0));
}

/* --trigger-cpu's window: counts by bucket, old ones forgotten, late ones kept in place. */
static void test_cpu_window(void **state)
{
	struct agent_cpu_window w = { 0 };
	long long b;
	int i;

	(void)state;
	for (b = 0; b < 8; b++)
		for (i = 0; i < b; i++)
			agent_cpu_window__add(&w, b);
	assert_int_equal(agent_cpu_window__sum(&w, 8, 4), 4 + 5 + 6 + 7);
	assert_int_equal(agent_cpu_window__sum(&w, 8, 100), 28);
	/* a late sample of bucket 5 lands there */
	agent_cpu_window__add(&w, 5);
	assert_int_equal(agent_cpu_window__sum(&w, 6, 1), 6);
	/* a gap: the buckets in between are empty, not last round's */
	agent_cpu_window__add(&w, 8 + AGENT_CPU_BUCKETS - 1);
	assert_int_equal(agent_cpu_window__sum(&w, 8 + AGENT_CPU_BUCKETS, AGENT_CPU_BUCKETS), 1);
	/* one older than the window is dropped */
	agent_cpu_window__add(&w, 7);
	assert_int_equal(agent_cpu_window__sum(&w, 8 + AGENT_CPU_BUCKETS, AGENT_CPU_BUCKETS), 1);
	agent_cpu_window__add(&w, 10 * AGENT_CPU_BUCKETS);
	assert_int_equal(agent_cpu_window__sum(&w, 10 * AGENT_CPU_BUCKETS + 1, AGENT_CPU_BUCKETS),
			 1);
	/* buckets after the newest, or before 0, are empty */
	assert_int_equal(agent_cpu_window__sum(&w, 20 * AGENT_CPU_BUCKETS, 4), 0);
	agent_cpu_window__add(&w, -1);
	assert_int_equal(w.last, 10 * AGENT_CPU_BUCKETS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wraps_in_order), cmocka_unit_test(test_window),
		cmocka_unit_test(test_refused),	       cmocka_unit_test(test_rate_keep),
		cmocka_unit_test(test_gate),	       cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_cpu_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
