// SPDX-License-Identifier: GPL-2.0-only
/*
 * The process table that opens the text report: which process is which
 * (pid, parent, role), busiest first, so that the first screen names the
 * busiest process by its role; and which processes get a section of their
 * own: the idle and the tiny (under --min-share) get their row only, and
 * one line counts them.
 */
#include <stdlib.h>
#include "report/report_common.h"
#include "report_procs.h"
#include "util/text.h"

static const struct profile *order_of; /* qsort's context: one sort at a time */

static int cmp_busier(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t sx = order_of->targets[x].samples, sy = order_of->targets[y].samples;

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return x < y ? -1 : x > y;
}

size_t *report_procs_order(const struct profile *p)
{
	size_t *order = malloc((p->ntargets ? p->ntargets : 1) * sizeof(*order)), i;

	if (!order)
		return NULL;
	for (i = 0; i < p->ntargets; i++)
		order[i] = i;
	order_of = p;
	qsort(order, p->ntargets, sizeof(*order), cmp_busier);
	return order;
}

static uint64_t total_samples(const struct profile *p)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < p->ntargets; i++)
		n += p->targets[i].samples;
	return n;
}

bool report_proc_shown(const struct profile *p, const struct profile_target *pp,
		       const struct report_opts *o)
{
	if (p->ntargets <= 1 || report_is_merged(p, pp) || o->min_share <= 0)
		return true;
	return pp->samples && report_pct(pp->samples, total_samples(p)) >= o->min_share;
}

void report_text_procs(FILE *f, const struct profile *p, const size_t *order,
		       const struct report_opts *o)
{
	uint64_t total = total_samples(p), rest = 0, hidden_samples = 0;
	size_t i, nrest = 0, hidden = 0, idle = 0;
	char role[PROFILE_ROLE], clean[PROFILE_ROLE];

	if (p->nmerged || p->ntargets <= 1)
		return;
	fprintf(f, "\nprocesses: %zu, busiest first (pid, parent, samples, share, role)\n",
		p->ntargets);
	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[order[i]];
		bool shown = report_proc_shown(p, pp, o);

		if (!shown) {
			hidden++;
			hidden_samples += pp->samples;
			idle += !pp->samples;
		}
		if (i >= REPORT_PROCS_SHOWN) {
			nrest++;
			rest += pp->samples;
			continue;
		}
		fprintf(f, "  %8d  %8d  %8llu  %5.1f%%  %s%s\n", pp->pid, pp->ppid,
			(unsigned long long)pp->samples, report_pct(pp->samples, total),
			text_clean(clean, sizeof(clean),
				   profile_target__role(pp, role, sizeof(role))),
			pp->exited ? " (exited)" : "");
	}
	if (nrest)
		fprintf(f, "  %zu more processes, with %llu samples in all\n", nrest,
			(unsigned long long)rest);
	if (hidden)
		fprintf(f,
			"  %zu without a section (%zu idle, %zu under %g%%: %llu samples); "
			"--min-share 0 shows them\n",
			hidden, idle, hidden - idle, o->min_share,
			(unsigned long long)hidden_samples);
}
