/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's overhead budget (--max-overhead): at each interval's end the
 * agent's whole cost over the interval (its BPF programs' run time, by the
 * kernel's statistics, plus its own CPU) against the budget, and the
 * sampling rate of the next interval. Pure, private to the agent;
 * unit-tested (tests/unit/test_agent_budget.c).
 */
#ifndef PYBPFPROF_AGENT_BUDGET_H
#define PYBPFPROF_AGENT_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* Where the rate stands against the budget. */
enum agent_budget_state {
	AGENT_BUDGET_OFF,     /* no --max-overhead */
	AGENT_BUDGET_FULL,    /* at the rate asked (-F), within the budget */
	AGENT_BUDGET_LIMITED, /* held under the rate asked by the budget */
	AGENT_BUDGET_OVER,    /* at 1 Hz and still over it: the agent's fixed cost is more */
};

struct agent_budget {
	double pct;	 /* of one CPU; 0: off */
	unsigned max_hz; /* the rate asked: never above */
	unsigned hz;	 /* the rate now */
	/* the totals at the last step: BPF run time, the agent's CPU, the clock (ns) */
	uint64_t bpf_ns, cpu_ns;
	long long wall_ns;
	double cost_pct; /* the last interval's cost, % of one CPU */
	/*
	 * The cost model, cost = fixed + per Hz * rate, as weighted averages of
	 * the last intervals (about 5) since the last cut at once: the BPF
	 * programs' % per Hz, and the agent's own CPU %, taken as fixed.
	 */
	double per_hz_pct, fixed_pct;
	bool estimated;
	enum agent_budget_state state;
	uint64_t lowered, raised; /* rate changes */
};

/* Starts at max_hz with the totals of now. */
void agent_budget__init(struct agent_budget *b, double pct, unsigned max_hz, uint64_t bpf_ns,
			uint64_t cpu_ns, long long wall_ns);
/*
 * The interval that ends now: its cost from the totals, and the rate of the
 * next one (returned, also in b->hz). At twice the budget or more: lowered
 * at once to the budget's share, and the model starts again. Else half the
 * way to the rate the model allows (so a window of several intervals holds
 * the budget, not each noisy interval alone), within half and twice the rate
 * now; never up after an interval over the budget, never down after one
 * under it; from 1 Hz to max_hz. With the budget off, max_hz.
 */
unsigned agent_budget__step(struct agent_budget *b, uint64_t bpf_ns, uint64_t cpu_ns,
			    long long wall_ns);
/* The state's name, for labels and metrics: off, full, limited, over. */
const char *agent_budget_state_name(enum agent_budget_state s);

#endif
