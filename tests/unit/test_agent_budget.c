/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's overhead budget (src/agent/agent_budget.h): the cost of an
 * interval from the totals, the next rate within 1 Hz and -F, cut at once
 * when far over, and a rate that settles on the budget when the cost has a
 * part that scales with it and a part that does not.
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
	/* 1.21 % for 1 %: the square root of the ratio (333 / 1.1 = 302.7) */
	assert_int_equal(step(&b, 12100000, 0, 1), 303);
	/* just over, or just under: 1 Hz at least, either way */
	assert_int_equal(step(&b, 10001000, 0, 1), 302);
	assert_int_equal(step(&b, 9999000, 0, 1), 303);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_cut_at_once),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_settles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
