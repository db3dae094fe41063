/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's overhead budget (src/agent/agent_budget.h): the cost of an
 * interval from the totals, the next rate within 1 Hz and -F, cut at once
 * when far over, and a rate that settles on the budget when the cost has a
 * part that scales with it and a part that does not; a simulated host with
 * noise whose every window of 5 intervals holds the budget within 10 %.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <cmocka.h>

#include "agent/agent_budget.h"

#define S 1000000000LL

/* One interval of wall seconds costing bpf and cpu ns more. */
static unsigned step(struct agent_budget *b, uint64_t bpf, uint64_t cpu, double wall_s)
{
	return agent_budget__step(b, b->bpf_ns + bpf, b->cpu_ns + cpu,
				  b->wall_ns + (long long)(wall_s * S));
}

static void test_off(void **state)
{
	struct agent_budget b;

	(void)state;
	agent_budget__init(&b, 0, 999, 0, 0, 0);
	assert_int_equal(b.state, AGENT_BUDGET_OFF);
	/* 30 % of a CPU in BPF and 10 % in the agent over 2 s: measured, the rate kept */
	assert_int_equal(step(&b, 600000000, 200000000, 2), 999);
	assert_true(fabs(b.cost_pct - 40) < 1e-9);
	assert_string_equal(agent_budget_state_name(b.state), "off");
}

static void test_cut_at_once(void **state)
{
	struct agent_budget b;

	(void)state;
	agent_budget__init(&b, 1, 999, 5, 7, 100);
	/* 3 % for a 1 % budget: a third of the rate, in one step */
	assert_int_equal(step(&b, 20000000, 10000000, 1), 333);
	assert_int_equal(b.state, AGENT_BUDGET_LIMITED);
	assert_int_equal(b.lowered, 1);
	assert_false(b.estimated);
	/*
	 * 1.21 % for 1 %, all of it BPF's: 0.0036 % per Hz, no fixed part; the
	 * budget allows 275 Hz by that, and the rate goes half the way
	 */
	assert_int_equal(step(&b, 12100000, 0, 1), 304);
	assert_true(b.estimated && fabs(b.per_hz_pct - 1.21 / 333) < 1e-9 && b.fixed_pct == 0);
	/* 0.9 %: under the budget, never lowered, whatever the model says (292 Hz) */
	assert_int_equal(step(&b, 6000000, 3000000, 1), 304);
	assert_true(fabs(b.fixed_pct - 0.1) < 1e-9);
}

static void test_over_never_raises(void **state)
{
	struct agent_budget b;

	(void)state;
	agent_budget__init(&b, 1, 999, 0, 0, 0);
	b.hz = 100;
	/* 0.3 %: the model allows 450 Hz; twice the rate at most */
	assert_int_equal(step(&b, 2000000, 1000000, 1), 200);
	/* 1.1 %: the model still allows 328 Hz, but this interval was over: held */
	assert_int_equal(step(&b, 6000000, 5000000, 1), 200);
	assert_true(fabs(b.cost_pct - 1.1) < 1e-9);
	/* 0.6 %: up again, half the way */
	assert_int_equal(step(&b, 1000000, 5000000, 1), 297);
	assert_int_equal(b.raised, 2);
	assert_int_equal(b.lowered, 0);
}

static void test_bounds(void **state)
{
	struct agent_budget b;
	int i;

	(void)state;
	agent_budget__init(&b, 1, 99, 0, 0, 0);
	/* idle: raised twice a step at most, never above -F */
	b.hz = 10;
	assert_int_equal(step(&b, 0, 0, 1), 20);
	assert_int_equal(step(&b, 0, 0, 1), 40);
	assert_int_equal(step(&b, 0, 0, 1), 80);
	assert_int_equal(step(&b, 0, 0, 1), 99);
	assert_int_equal(b.state, AGENT_BUDGET_FULL);
	assert_int_equal(b.raised, 4);
	/* a fixed cost over the budget: down to 1 Hz, and said so */
	for (i = 0; i < 20; i++)
		step(&b, 0, 50000000, 1);
	assert_int_equal(b.hz, 1);
	assert_string_equal(agent_budget_state_name(b.state), "over");
	/* no time passed: nothing measured, nothing changed */
	assert_int_equal(agent_budget__step(&b, b.bpf_ns + S, b.cpu_ns, b.wall_ns), 1);
	assert_true(fabs(b.cost_pct - 5) < 1e-9);
	/* a counter that went back: no cost from it */
	assert_int_equal(agent_budget__step(&b, 0, 0, b.wall_ns + S), 2);
}

/* A host whose cost is 0.2 % fixed plus 3 % at 999 Hz: settles within 5 % of 1 %. */
static void test_settles(void **state)
{
	struct agent_budget b;
	double cost = 0;
	int i;

	(void)state;
	agent_budget__init(&b, 1, 999, 0, 0, 0);
	for (i = 0; i < 30; i++) {
		cost = 0.2 + 3.0 * b.hz / 999;
		step(&b, (uint64_t)(cost / 100 * 2 * S * 0.8), (uint64_t)(cost / 100 * 2 * S * 0.2),
		     2);
		if (i == 0)
			assert_true(b.hz < 999 * 0.4);
	}
	assert_true(fabs(cost - 1) < 0.05);
	assert_int_equal(b.state, AGENT_BUDGET_LIMITED);
	assert_true(b.hz < 999);
}

/* A fixed-seed generator: the same noise every run. */
static double uniform(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*seed >> 11) / (double)(1ULL << 53);
}

/*
 * A host like bench/agent_budget.py's on this project's 2-CPU machine: the
 * BPF programs 0.00257 % of a CPU per Hz, the agent 0.8 % fixed (the cut of
 * 50 profiles) and 0.00114 % per Hz, its CPU +- 15 % each interval, BPF's
 * +- 5 %, and its first 6 intervals 1 % more (50 new processes read). From
 * the 15th interval on (30 s), the mean of every 5 intervals in a row within
 * 10 % of the budget (the old step on each interval's cost alone, by the
 * square root of budget / cost, missed it with 8 of these 10 seeds).
 */
static void test_windows(void **state)
{
	enum { N = 100, SETTLE = 15, W = 5 };
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 10; seed++) {
		struct agent_budget b;
		double cost[N], mean;
		uint64_t rnd = seed;
		int i, j;

		agent_budget__init(&b, 1, 999, 0, 0, 0);
		for (i = 0; i < N; i++) {
			double cpu = (0.8 + 0.00114 * b.hz + (i < 6 ? 1.0 : 0)) *
				     (1 + 0.3 * (uniform(&rnd) - 0.5));
			double bpf = 0.00257 * b.hz * (1 + 0.1 * (uniform(&rnd) - 0.5));

			cost[i] = cpu + bpf;
			step(&b, (uint64_t)(bpf / 100 * 2 * S), (uint64_t)(cpu / 100 * 2 * S), 2);
		}
		for (i = SETTLE; i + W <= N; i++) {
			for (mean = 0, j = 0; j < W; j++)
				mean += cost[i + j] / W;
			if (fabs(mean - 1) > 0.1)
				fail_msg("seed %llu: intervals %d-%d cost %.3f %% on average",
					 (unsigned long long)seed, i, i + W - 1, mean);
		}
		assert_int_equal(b.state, AGENT_BUDGET_LIMITED);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_cut_at_once),
		cmocka_unit_test(test_over_never_raises),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_settles),
		cmocka_unit_test(test_windows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
