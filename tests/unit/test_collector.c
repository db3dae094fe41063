/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Samples of a pid with no section yet (a child whose fork notice, on the
 * other ring, was not read yet) are parked, counted as unknown until its
 * notice claims them, and forgotten two poll rounds later if none does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "session/collector.h"
#include "cli/config.h"

#define CHILD 999999 /* no such process: its names are not read */

struct fake_tracker {
	struct collector *c;
	bool forked; /* the fork notice was read */
	int asked;
};

static struct collector_target *on_unknown(void *ctx, int pid)
{
	struct fake_tracker *ft = ctx;
	struct target t;

	ft->asked++;
	if (!ft->forked || pid != CHILD)
		return NULL;
	memset(&t, 0, sizeof(t));
	t.pid = CHILD;
	if (collector__add_target(ft->c, &t))
		return NULL;
	return &ft->c->targets[ft->c->ntargets - 1];
}

/* A CPU sample of pid with no frame (the header is all a record needs). */
static void sample(struct collector *c, int pid)
{
	struct py_sample s;

	memset(&s, 0, PY_SAMPLE_HEADER_SIZE);
	s.pid = pid;
	s.tid = pid;
	s.kind = PY_KIND_CPU;
	collector__sample(c, &s, PY_SAMPLE_HEADER_SIZE);
}

static void setup(struct profile *p, struct collector *c, struct fake_tracker *ft)
{
	profile__init(p, "cpu", 99);
	assert_int_equal(collector__init(c, p, (size_t)PYPROF_DEFAULT_MAX_CACHE_MB << 20), 0);
	memset(ft, 0, sizeof(*ft));
	ft->c = c;
	c->on_unknown = on_unknown;
	c->on_unknown_ctx = ft;
}

static void test_claimed_by_fork_notice(void **state)
{
	struct fake_tracker ft;
	struct collector c;
	struct profile p;

	(void)state;
	setup(&p, &c, &ft);
	sample(&c, CHILD);
	sample(&c, CHILD);
	assert_int_equal(c.unknown_pid, 2);
	assert_int_equal(c.nparked, 2);
	/* the notice, read in the same round: both samples land in the section */
	ft.forked = true;
	collector__replay(&c, CHILD);
	assert_int_equal(c.unknown_pid, 0);
	assert_int_equal(c.nparked, 0);
	assert_int_equal(c.ntargets, 1);
	assert_int_equal(p.targets[0].pid, CHILD);
	assert_int_equal(p.targets[0].samples, 2);
	collector__free(&c);
	profile__free(&p);
}

static void test_forgotten_after_two_rounds(void **state)
{
	struct fake_tracker ft;
	struct collector c;
	struct profile p;

	(void)state;
	setup(&p, &c, &ft);
	sample(&c, CHILD);
	collector__expire_parked(&c); /* the round it was parked in ends */
	assert_int_equal(c.nparked, 1);
	collector__expire_parked(&c); /* one more: no notice came */
	assert_int_equal(c.nparked, 0);
	assert_int_equal(c.unknown_pid, 1); /* still counted as dropped */
	ft.forked = true;
	collector__replay(&c, CHILD); /* too late: nothing to claim */
	assert_int_equal(c.unknown_pid, 1);
	assert_int_equal(c.ntargets, 0);
	collector__free(&c);
	profile__free(&p);
}

static void test_bounded(void **state)
{
	struct fake_tracker ft;
	struct collector c;
	struct profile p;
	int i;

	(void)state;
	setup(&p, &c, &ft);
	for (i = 0; i < COLLECTOR_PARK_MAX + 10; i++)
		sample(&c, CHILD);
	assert_int_equal(c.nparked, COLLECTOR_PARK_MAX);
	assert_int_equal(c.unknown_pid, COLLECTOR_PARK_MAX + 10);
	ft.forked = true;
	collector__replay(&c, CHILD);
	assert_int_equal(p.targets[0].samples, COLLECTOR_PARK_MAX);
	assert_int_equal(c.unknown_pid, 10);
	collector__free(&c);
	profile__free(&p);
}

static void test_no_tracker_no_parking(void **state)
{
	struct collector c;
	struct profile p;

	(void)state;
	profile__init(&p, "cpu", 99);
	assert_int_equal(collector__init(&c, &p, (size_t)PYPROF_DEFAULT_MAX_CACHE_MB << 20), 0);
	sample(&c, CHILD);
	assert_int_equal(c.unknown_pid, 1);
	assert_int_equal(c.nparked, 0);
	collector__free(&c);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claimed_by_fork_notice),
		cmocka_unit_test(test_forgotten_after_two_rounds),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_no_tracker_no_parking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
