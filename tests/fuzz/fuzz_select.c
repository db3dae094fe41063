// SPDX-License-Identifier: GPL-2.0-only
/*
 * --pid, --match, --thread and --merge (profile_select.c, profile_merge.c)
 * over a saved profile anyone may hand in: its command lines and thread
 * names are a target's bytes. The first byte chooses the selection (a
 * pattern of a fixed few: the patterns are the reader's own, and a fuzzed
 * one would only time glibc's regex), the rest is the file; what is
 * selected must still be written by every writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include "report/report.h"
#include "saved/report_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const patterns[] = { NULL, "python", "^$", "^sel-(alpha|beta)$", "." };
#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

/* The selection byte b: bits 0-2 --match, 3-5 --thread (a pattern each), 6 the first pid. */
static void choose(uint8_t b, const struct profile *p, int *pid, struct profile_select *sel)
{
	sel->match = patterns[(b & 7) % NPATTERNS];
	sel->thread = patterns[((b >> 3) & 7) % NPATTERNS];
	if ((b & 0x40) && p->ntargets) {
		*pid = p->targets[0].pid;
		sel->pids = pid;
		sel->npids = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct report_writer *const ws[] = {
		&report_text,	&report_json,  &report_folded, &report_flame, &report_speedscope,
		&report_pstats, &report_pprof, &report_svg,    &report_tree,  &report_dot,
	};
	static FILE *null;
	const struct report_opts o = { .top_functions = 20,
				       .top_lines = 20,
				       .line_report = 5,
				       .tool_version = "fuzz",
				       .threads = true,
				       .prune_pct = 1 };
	struct profile_select sel = {};
	struct profile p = {};
	char why[512];
	size_t i;
	int pid;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (!size || report_load_json_buf((const char *)data + 1, size - 1, "fuzz.json", &p, why,
					  sizeof(why)))
		return 0;
	choose(data[0], &p, &pid, &sel);
	if (!profile__select(&p, &sel, why, sizeof(why)) && (data[0] & 0x80) && !p.wall &&
	    !p.gc_mode && !p.imports_mode && !p.nmerged && profile__merge(&p))
		abort(); /* out of memory on a file the loader bounded */
	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
		ws[i]->write(null, &p, &o);
	profile__free(&p);
	return 0;
}
