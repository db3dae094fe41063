// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Python / native / system split per function and per line: each
 * stack's known samples are charged to its innermost Python frame (native
 * and kernel frames below it are what ran, not where in the program).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"

static void split_add(uint64_t *into, const uint64_t *add)
{
	int w;

	for (w = 0; w < PROFILE_WHERE_N; w++)
		into[w] += add[w];
}

int profile_target__where_stats(const struct profile *p, const struct profile_target *pp,
				profile_where_split **by_func, profile_where_split **by_frame,
				profile_where_split total)
{
	profile_where_split *fn = NULL, *fr = NULL, sum = { 0 };
	size_t i;

	for (i = 0; i < pp->nstacks; i++)
		split_add(sum, pp->stacks[i].where);
	if (total)
		memcpy(total, sum, sizeof(sum));
	if (by_func)
		*by_func = NULL;
	if (by_frame)
		*by_frame = NULL;
	if (!sum[0] && !sum[1] && !sum[2])
		return 0;
	if ((by_func && !(fn = calloc(p->nfuncs + 1, sizeof(*fn)))) ||
	    (by_frame && !(fr = calloc(p->nframes + 1, sizeof(*fr))))) {
		free(fn);
		return -ENOMEM;
	}
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		uint32_t k = profile__innermost_line(p, s);

		if (k == s->nframes)
			continue;
		if (fn)
			split_add(fn[p->frames[s->frames[k]].func], s->where);
		if (fr)
			split_add(fr[s->frames[k]], s->where);
	}
	if (by_func)
		*by_func = fn;
	if (by_frame)
		*by_frame = fr;
	return 0;
}
