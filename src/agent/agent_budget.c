// SPDX-License-Identifier: GPL-2.0-only
/* The agent's overhead budget (see agent_budget.h). */
#include <math.h>
#include "agent_budget.h"

void agent_budget__init(struct agent_budget *b, double pct, unsigned max_hz, uint64_t bpf_ns,
			uint64_t cpu_ns, long long wall_ns)
{
	*b = (struct agent_budget){ .pct = pct,
				    .max_hz = max_hz ? max_hz : 1,
				    .hz = max_hz ? max_hz : 1,
				    .bpf_ns = bpf_ns,
				    .cpu_ns = cpu_ns,
				    .wall_ns = wall_ns,
				    .state = pct > 0 ? AGENT_BUDGET_FULL : AGENT_BUDGET_OFF };
}

/* The factor of the next rate, from the ratio budget / cost. */
static double step_factor(double ratio)
{
	/*
	 * At twice the budget or more: cut at once, the budget is a limit. Near it:
	 * half the way (in ratio) each step, so a noisy interval moves the rate
	 * less; the fixed part of the cost (the cut of every interval) does not
	 * scale with the rate, and the steps converge on it all the same.
	 */
	if (ratio <= 0.5)
		return ratio;
	ratio = sqrt(ratio);
	return ratio > 2 ? 2 : ratio;
}

unsigned agent_budget__step(struct agent_budget *b, uint64_t bpf_ns, uint64_t cpu_ns,
			    long long wall_ns)
{
	long long wall = wall_ns - b->wall_ns;
	/* a counter that went back (reset): no cost from it this time */
	uint64_t bpf = bpf_ns >= b->bpf_ns ? bpf_ns - b->bpf_ns : 0;
	uint64_t cpu = cpu_ns >= b->cpu_ns ? cpu_ns - b->cpu_ns : 0;
	double next;

	b->bpf_ns = bpf_ns;
	b->cpu_ns = cpu_ns;
	if (wall <= 0)
		return b->hz;
	b->wall_ns = wall_ns;
	b->cost_pct = 100.0 * (double)(bpf + cpu) / (double)wall;
	if (b->pct <= 0)
		return b->hz = b->max_hz;
	next = b->cost_pct > 0 ? b->hz * step_factor(b->pct / b->cost_pct) : 2.0 * b->hz;
	next = floor(next + 0.5);
	/* over the budget the rate goes down, under it up, if only by 1 Hz */
	if (b->cost_pct > b->pct && next >= b->hz)
		next = b->hz - 1.0;
	else if (b->cost_pct < b->pct && next <= b->hz)
		next = b->hz + 1.0;
	next = next < 1 ? 1 : next > b->max_hz ? b->max_hz : next;
	b->lowered += next < b->hz;
	b->raised += next > b->hz;
	b->hz = (unsigned)next;
	if (b->hz == 1 && b->cost_pct > b->pct)
		b->state = AGENT_BUDGET_OVER;
	else
		b->state = b->hz < b->max_hz ? AGENT_BUDGET_LIMITED : AGENT_BUDGET_FULL;
	return b->hz;
}

const char *agent_budget_state_name(enum agent_budget_state s)
{
	static const char *const names[] = { "off", "full", "limited", "over" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "off";
}
