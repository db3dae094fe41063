// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump: one process's budget (dump.h, struct dump_budget), which
 * every step of reading it checks: its deadline, a stop signal, and the
 * bytes of text it may still keep. The first bound reached is the reason
 * given for everything left out after it.
 */
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "util/mono.h"

/*
 * Bytes charged for a frame beside its name and file: what its lines
 * (headings of arguments and locals) or JSON object (its keys, the locals'
 * counts) add.
 */
#define COST_FRAME 160

bool dump_budget_spent(struct dump_process *dp)
{
	const struct dump_budget *b = &dp->budget;

	if (dp->cut.why)
		return true;
	if (b->stop && *b->stop)
		dp->cut.why = DUMP_CUT_SIGNAL;
	else if (b->deadline && mono_ns() >= b->deadline)
		dp->cut.why = b->at_deadline;
	return dp->cut.why != DUMP_CUT_NONE;
}

bool dump_budget_take(struct dump_process *dp, size_t n)
{
	if (dump_budget_spent(dp))
		return false;
	if (n > dp->budget.bytes) {
		dp->cut.why = dp->budget.over_bytes;
		return false;
	}
	dp->budget.bytes -= n;
	return true;
}

static size_t len0(const char *s)
{
	return s ? strlen(s) : 0;
}

bool dump_frame_resolve(struct dump_process *dp, struct code_cache *cc, const struct target *t,
			const struct py_dump_frame *pf, struct dump_frame *df)
{
	const struct code_info *ci;

	if (dump_budget_spent(dp))
		return false;
	ci = code_cache__get(cc, t, pf->code, pf->fingerprint);
	if (!dump_budget_take(dp, COST_FRAME + (ci ? len0(ci->qualname) + len0(ci->filename) : 0)))
		return false;
	df->line = -1;
	if (ci) {
		df->func = strdup(ci->qualname);
		df->file = strdup(ci->filename);
		df->line = code_info__line(ci, &t->layout, pf->instr);
	}
	return true;
}

void dump_frame_free(struct dump_frame *df)
{
	size_t m;

	for (m = 0; m < df->nlocals; m++)
		free(df->locals[m].value);
	free(df->locals);
	free(df->func);
	free(df->file);
	free(df->source);
}
