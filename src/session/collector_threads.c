// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads' names, off the samples' path: a thread first seen by a record is
 * only noted (collector__unnamed); after each poll of the ring buffers, and
 * at the end, collector__name_threads reads each noted thread's comm from
 * /proc while it still runs. A thread gone by then keeps no name (shown "?").
 * At the end collector__rename_threads reads them all again: a thread that
 * names itself as it starts (threading's workers with prctl or comm) may
 * have been sampled before.
 */
#include <string.h>
#include "session/collector.h"
#include "proc/procfs.h"
#include "util/vec.h"
#include "collector_parts.h"

void collector__unnamed(struct collector *c, size_t section, uint32_t tid)
{
	size_t i;

	/* a thread's few first records come together: it is often the last one noted */
	for (i = c->nunnamed; i-- > 0 && i + 8 >= c->nunnamed;)
		if (c->unnamed[i].tid == tid && c->unnamed[i].section == section)
			return;
	if (c->nunnamed >= COLLECTOR_UNNAMED_MAX ||
	    vec_grow((void **)&c->unnamed, &c->cap_unnamed, c->nunnamed + 1, sizeof(*c->unnamed))) {
		c->unnamed_overflow = true;
		return;
	}
	c->unnamed[c->nunnamed++] = (struct collector_unnamed){ section, tid };
}

/* Names thread tid of section i from /proc, if it has no name yet. */
static void name_thread(struct collector *c, size_t i, uint32_t tid)
{
	struct profile_target *pp = &c->prof->targets[i];
	struct profile_thread *th = profile_target__thread(pp, tid);

	if (th && !th->name[0])
		proc_thread_name(pp->pid, tid, th->name, sizeof(th->name));
}

void collector__name_threads(struct collector *c)
{
	size_t i, k;

	for (i = 0; i < c->nunnamed; i++)
		if (c->unnamed[i].section < c->prof->ntargets)
			name_thread(c, c->unnamed[i].section, c->unnamed[i].tid);
	c->nunnamed = 0;
	if (!c->unnamed_overflow)
		return;
	c->unnamed_overflow = false;
	for (i = 0; i < c->prof->ntargets; i++)
		for (k = 0; k < c->prof->targets[i].nthreads; k++)
			name_thread(c, i, c->prof->targets[i].threads[k].tid);
}

void collector__rename_threads(struct collector *c)
{
	char name[sizeof(((struct profile_thread *)0)->name)];
	size_t i, k;

	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];
		struct profile_target *pp = &c->prof->targets[ts->target_index];

		/*
		 * a process gone is left as it is: its pid may be another's now
		 * (and without a pidfd that cannot be told)
		 */
		if (ts->exited || ts->pidfd < 0 || proc_pidfd_exited(ts->pidfd))
			continue;
		for (k = 0; k < pp->nthreads; k++) {
			name[0] = '\0';
			proc_thread_name(pp->pid, (pid_t)pp->threads[k].tid, name, sizeof(name));
			if (name[0])
				memcpy(pp->threads[k].name, name, sizeof(name));
		}
	}
}
