/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The random blocks of the perf samplers (perf_sampler.h): their draws stay
 * in range, come in pairs that cancel, and spread over the whole range.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "session/perf_sampler.h"

#define MEAN_NS 100000000.0

/* A jitter as perf_sampler__open leaves it, with a fixed seed. */
static void jitter_start(struct jitter *j, uint64_t seed)
{
	memset(j, 0, sizeof(*j));
	j->state = seed;
	j->second = true;
}

/* Steps to the next block; returns its length in ns. */
static long long next_block(struct jitter *j, long long *now)
{
	long long start;

	assert_true(jitter__due(j, *now, MEAN_NS));
	start = *now;
	*now = j->next_ns;
	assert_false(jitter__due(j, *now - 1, MEAN_NS));
	return *now - start;
}

static void test_not_due_before_its_time(void **state)
{
	struct jitter j;

	(void)state;
	jitter_start(&j, 1);
	j.next_ns = 1000;
	assert_false(jitter__due(&j, 999, MEAN_NS));
	assert_true(j.offset == 0.0);
	assert_true(jitter__due(&j, 1000, MEAN_NS));
}

static void test_pairs_cancel(void **state)
{
	struct jitter j;
	long long now = 0;
	int i;

	(void)state;
	jitter_start(&j, 0x1234567);
	for (i = 0; i < 1000; i++) {
		long long len1 = next_block(&j, &now);
		double off1 = j.offset;
		long long len2 = next_block(&j, &now);

		assert_true(off1 >= -1.0 && off1 < 1.0);
		assert_true(j.offset == -off1);
		/* One length for both, within +-50% of the mean. */
		assert_true(len1 == len2);
		assert_true(len1 >= 0.5 * MEAN_NS && len1 < 1.5 * MEAN_NS);
	}
}

/* The first of each pair covers [-1, 1): 10 bins of 1000 draws, each near 100. */
static void test_draws_spread(void **state)
{
	struct jitter j;
	long long now = 0;
	int bins[10] = { 0 }, i;

	(void)state;
	jitter_start(&j, 42);
	for (i = 0; i < 1000; i++) {
		next_block(&j, &now);
		bins[(int)((j.offset + 1) * 5)]++;
		next_block(&j, &now);
	}
	/* 5 sd of a binomial(1000, 0.1) is 47. */
	for (i = 0; i < 10; i++)
		assert_in_range(bins[i], 100 - 47, 100 + 47);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_due_before_its_time),
		cmocka_unit_test(test_pairs_cancel),
		cmocka_unit_test(test_draws_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
