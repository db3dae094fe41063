// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved-profile loader (report_load.c) on any bytes: a profile file is
 * anyone's (`pybpfprof report FILE` reads what a user hands it). What it
 * accepts must be a profile every writer can write: each loaded profile is
 * written in every format, the timeline's (Perfetto, trace JSON) too, so an
 * index or count the loader let through that a writer trusts (a timeline's
 * stack, string or process id) shows up here as a sanitizer report.
 */
#include <stdio.h>
#include <stdlib.h>
#include "report/report.h"
#include "saved/report_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct report_writer *const ws[] = {
		&report_text,	    &report_json,	&report_folded,	 &report_flame,
		&report_speedscope, &report_pstats,	&report_pprof,	 &report_svg,
		&report_tree,	    &report_dot,	&report_mem_svg, &report_mem_folded,
		&report_perfetto,   &report_trace_json, &report_heatmap,
	};
	static FILE *null;
	const struct report_opts o = {
		.top_functions = 20,
		.top_lines = 20,
		.line_report = 5,
		.tool_version = "fuzz",
		.threads = true,
		.prune_pct = 1,
		/* --merge-lines on for half the inputs: folded, flame graphs, speedscope, pprof */
		.merge_lines = size & 1
	};
	struct profile p = {};
	char why[512];
	size_t i;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (report_load_json_buf((const char *)data, size, "fuzz.json", &p, why, sizeof(why)))
		return 0;
	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
		if (p.mem || (ws[i] != &report_mem_svg && ws[i] != &report_mem_folded))
			ws[i]->write(null, &p, &o);
	profile__free(&p);
	return 0;
}
