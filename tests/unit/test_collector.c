/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Samples of a pid with no section yet (a child whose fork notice, on the
 * other ring, was not read yet) are parked, counted as unknown until its
 * notice claims them, and forgotten two poll rounds later if none does.
 * Also: memory range records find their stack record; off-CPU ends the
 * kernel could only infer are counted.
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

/* A stack record of thread tid: nframes unresolvable frames (nframes tells stacks apart). */
static void stack_record(struct collector *c, uint32_t tid, uint8_t kind, uint64_t ktime,
			 uint64_t value, uint16_t nframes)
{
	struct py_sample s;

	memset(&s, 0, sizeof(s));
	s.pid = CHILD;
	s.tid = tid;
	s.ktime_ns = ktime;
	s.kind = kind;
	s.value = value;
	s.nframes = nframes;
	for (uint16_t i = 0; i < nframes; i++)
		s.frames[i].code = 0x1000 + i;
	collector__sample(c, &s, PY_SAMPLE_HEADER_SIZE + nframes * sizeof(struct py_frame));
}

/* A --mem stack record of a memory call. */
static void mem_stack(struct collector *c, uint32_t tid, uint64_t ktime, uint16_t nframes,
		      uint64_t bytes)
{
	stack_record(c, tid, PY_KIND_MAP, ktime, bytes, nframes);
}

static void mem_range(struct collector *c, uint32_t tid, uint64_t stack_ktime, uint32_t op,
		      uint64_t addr, uint64_t len, size_t size)
{
	struct py_mem_range r = { .pid = CHILD,
				  .tid = tid,
				  .ktime_ns = stack_ktime + 1,
				  .kind = PY_KIND_MEM_RANGE,
				  .op = op,
				  .value = stack_ktime,
				  .addr = addr,
				  .len = len };

	collector__sample(c, &r, size);
}

/*
 * A range record names the stack record of its call by thread and time, even
 * with another thread's record in between; with none (or one never seen), the
 * range is nobody's, counted.
 */
static void test_mem_range_owner(void **state)
{
	struct profile_target *pp;
	struct collector c;
	struct profile p;
	struct target t;
	const size_t full = sizeof(struct py_mem_range);

	(void)state;
	profile__init(&p, "cpu+mem", 99);
	assert_int_equal(collector__init(&c, &p, (size_t)PYPROF_DEFAULT_MAX_CACHE_MB << 20), 0);
	memset(&t, 0, sizeof(t));
	t.pid = CHILD;
	assert_int_equal(collector__add_target(&c, &t), 0);
	pp = &p.targets[0];
	mem_stack(&c, 11, 1000, 1, 1 << 20);
	mem_stack(&c, 12, 1001, 2, 2 << 20);
	mem_range(&c, 11, 1000, PY_MEM_MMAP, 0x10000000, 1 << 20, full);
	mem_range(&c, 12, 1001, PY_MEM_MMAP, 0x20000000, 2 << 20, full);
	assert_int_equal(pp->mem.nstacks, 2);
	/* thread 12 unmaps half of thread 11's range with no stack: still 11's release */
	mem_range(&c, 12, 0, PY_MEM_MUNMAP, 0x10000000, 1 << 19, full);
	mem_range(&c, 11, 5555, PY_MEM_MMAP, 0x30000000, 4096, full); /* stack record lost */
	mem_range(&c, 11, 0, PY_MEM_MUNMAP, 0x40000000, 8192, full);  /* mapped before the run */
	mem_range(&c, 11, 0, PY_MEM_MUNMAP, 0x20000000, 4096, full - 1);
	mem_range(&c, 11, 0, 9, 0x20000000, 4096, full);
	assert_int_equal(c.malformed, 2);
	assert_int_equal(pp->mem.ranges_unmatched, 1);
	assert_int_equal(pp->mem.released_unknown, 8192);
	profile_target__mem_retain(pp, 0);
	assert_int_equal(pp->mem.stacks[0].bytes[PROFILE_MEM_RELEASED], 1 << 19);
	assert_int_equal(pp->mem.stacks[0].bytes[PROFILE_MEM_RETAINED], 1 << 19);
	assert_int_equal(pp->mem.stacks[1].bytes[PROFILE_MEM_RELEASED], 0);
	assert_int_equal(pp->mem.stacks[1].bytes[PROFILE_MEM_RETAINED], 2 << 20);
	assert_int_equal(pp->mem.retained_no_stack, 4096);
	collector__free(&c);
	profile__free(&p);
}

/* A --mode wall record of thread tid: a block with one (unresolvable) frame, or an end. */
static void offcpu(struct collector *c, uint32_t tid, uint8_t kind, uint64_t ktime, uint64_t value)
{
	stack_record(c, tid, kind, ktime, value, kind == PY_KIND_OFFCPU_BLOCK);
}

/*
 * An interval whose return the kernel did not report is charged up to the
 * end its record says and counted as inferred; one whose leave it did not
 * report has no stack: counted with its ns, charged to nothing, and not
 * taken for an end whose start was lost.
 */
static void test_offcpu_unseen(void **state)
{
	const uint64_t ms = 1000000;
	struct profile_target *pp;
	struct collector c;
	struct profile p;
	struct target t;

	(void)state;
	profile__init(&p, "wall", 100);
	assert_int_equal(collector__init(&c, &p, (size_t)PYPROF_DEFAULT_MAX_CACHE_MB << 20), 0);
	memset(&t, 0, sizeof(t));
	t.pid = CHILD;
	assert_int_equal(collector__add_target(&c, &t), 0);
	pp = &p.targets[0];
	offcpu(&c, 7, PY_KIND_OFFCPU_BLOCK, 100 * ms, PY_OFFCPU_VALUE(PY_OFFCPU_SLEEP, 35));
	offcpu(&c, 7, PY_KIND_OFFCPU_END, 150 * ms, (50 * ms) | PY_OFFCPU_INFERRED);
	assert_int_equal(pp->samples, 5);
	assert_int_equal(p.offcpu_inferred, 1);
	offcpu(&c, 7, PY_KIND_OFFCPU_END, 400 * ms, (200 * ms) | PY_OFFCPU_UNSEEN_LEAVE);
	assert_int_equal(pp->samples, 5);
	assert_int_equal(p.offcpu_unseen, 1);
	assert_int_equal(p.offcpu_unseen_ns, 200 * ms);
	assert_int_equal(p.offcpu_unmatched, 0);
	/* an end with no interval open is still unmatched */
	offcpu(&c, 7, PY_KIND_OFFCPU_END, 500 * ms, 30 * ms);
	assert_int_equal(p.offcpu_unmatched, 1);
	assert_int_equal(pp->samples, 5);
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
		cmocka_unit_test(test_mem_range_owner),
		cmocka_unit_test(test_offcpu_unseen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
