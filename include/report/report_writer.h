/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a report writer is: one format, chosen by name (-f) or by the output
 * file's ending, that reads only the profile model and writes to the FILE it
 * is given. Each writer file defines one of the writers below; the registry
 * (report.h) lists them.
 */
#ifndef PYBPFPROF_REPORT_WRITER_H
#define PYBPFPROF_REPORT_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include "profile/profile.h"

/* The JSON schema version this pybpfprof writes and `report` reads (doc/json-schema.md). */
#define REPORT_SCHEMA 1

struct report_opts {
	unsigned top_functions; /* rows in the functions table */
	unsigned top_lines;	/* rows in the hottest-lines table */
	unsigned line_report;	/* functions shown line by line */
	const char *tool_version;
	bool threads;	  /* --threads: each thread's functions too */
	double prune_pct; /* --prune: tree and dot leave out functions under this share */
	bool merge_lines; /* --merge-lines: folded, flame graphs, speedscope, pprof by function */
	double min_share; /* --min-share: the text's sections of processes with this share or more */
	bool color;	  /* ANSI colours: set by report_write for a terminal that takes them */
	/*
	 * The agent's labels: pprof puts them on every sample (beside each
	 * thread's name, always there), otlp makes them the resource's attributes.
	 */
	const char *const (*sample_labels)[2];
	size_t nsample_labels;
	/*
	 * pprof, the agent's flight recorder: a number label of this key on
	 * each Sample, stack_nums[target][stack] (each of its samples at its
	 * own time), and one more comment line (what the capture holds).
	 */
	const char *stack_num_label;
	const uint64_t *const *stack_nums;
	const char *comment;
};

struct report_writer {
	const char *name;
	const char *exts[3]; /* file name endings that select it, with the dot */
	int (*write)(FILE *f, const struct profile *p, const struct report_opts *o);
	bool plain_text; /* read on a terminal: written through text_sanitize_lines */
	bool timeline;	 /* draws the timeline: a run asked for it keeps one (--timeline) */
};

extern const struct report_writer report_text;
extern const struct report_writer report_json;
extern const struct report_writer report_folded;
extern const struct report_writer report_flame;
extern const struct report_writer report_speedscope;
extern const struct report_writer report_pstats;
extern const struct report_writer report_pprof;
extern const struct report_writer report_svg;
extern const struct report_writer report_tree;
extern const struct report_writer report_dot;
/* The timeline (profile/timeline.h): Perfetto's protobuf trace, Chrome's trace event JSON. */
extern const struct report_writer report_perfetto;
extern const struct report_writer report_trace_json;
/* The source heatmap: every sampled line of every file, shaded by its samples (HTML). */
extern const struct report_writer report_heatmap;
/* --mem-timeline's SVG; written beside the report, not chosen by -f. */
extern const struct report_writer report_mem_svg;
/* --mem-folded: folded stacks weighted by bytes touched, for flame graphs. */
extern const struct report_writer report_mem_folded;
/* --mem-retained-folded: the same weighted by bytes retained at the end. */
extern const struct report_writer report_mem_retained_folded;
/* --mem-pprof: the memory stacks as pprof (touched, mapped, released, inuse_space). */
extern const struct report_writer report_mem_pprof;
/* OTLP profiles (an ExportProfilesServiceRequest): the agent's --otlp; not a run format. */
extern const struct report_writer report_otlp;
/* The agent's --mem --otlp: one Profile per memory kind, as --mem-pprof's sample types. */
extern const struct report_writer report_otlp_mem;

#endif
