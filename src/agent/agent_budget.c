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

/* The weight of each interval in the estimates: about the last 5 intervals count. */
#define ALPHA (1.0 / 3)
/* Far over: at this many times the budget the rate is cut at once. */
#define FAR 2.0

/*
 * The next rate by the estimates: the cost per Hz from the BPF programs' run
 * time (it scales with the rate), the agent's own CPU taken as fixed (most of
 * it is the cut of every profile, whatever the rate). Half the way to the rate
 * the budget allows by them, at most twice or half the rate now: what the
 * agent spends per sample of its own is in the fixed part, so the whole way
 * would overshoot by as much.
 */
static double model_rate(struct agent_budget *b, double bpf_pct, double cpu_pct)
{
	double per_hz = bpf_pct / b->hz, target, next;

	if (!b->estimated) {
		b->per_hz_pct = per_hz;
		b->fixed_pct = cpu_pct;
		b->estimated = true;
	} else {
		b->per_hz_pct += ALPHA * (per_hz - b->per_hz_pct);
		b->fixed_pct += ALPHA * (cpu_pct - b->fixed_pct);
	}
	target = b->per_hz_pct > 0 ? (b->pct - b->fixed_pct) / b->per_hz_pct : INFINITY;
	next = b->hz + 0.5 * (target - b->hz);
	next = fmin(fmax(next, 0.5 * b->hz), 2.0 * b->hz);
	/* the budget is a limit: an interval over it never raises the rate, one under never lowers */
	if (b->cost_pct > b->pct)
		next = fmin(next, b->hz);
	else if (b->cost_pct < b->pct)
		next = fmax(next, b->hz);
	return next;
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
	if (b->cost_pct >= FAR * b->pct) {
		/* a cut at once, and the estimates start again after it: what cost so much
		 * (new processes read, a burst) says little of the intervals to come */
		next = b->hz * b->pct / b->cost_pct;
		b->estimated = false;
	} else {
		next = model_rate(b, 100.0 * (double)bpf / (double)wall,
				  100.0 * (double)cpu / (double)wall);
	}
	next = floor(next + 0.5);
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
