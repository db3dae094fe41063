/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Report writers behind one interface. A writer reads only the profile model
 * and writes to the FILE it is given; the registry picks one by name (-f) or
 * by the output file's extension.
 */
#ifndef PYBPFPROF_REPORT_H
#define PYBPFPROF_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "profile/profile.h"

struct outfile;

struct report_opts {
	unsigned top_functions;	/* rows in the functions table */
	unsigned top_lines;	/* rows in the hottest-lines table */
	unsigned line_report;	/* functions shown line by line */
	const char *tool_version;
	bool threads;		/* --threads: each thread's functions too */
};

struct report_writer {
	const char *name;
	const char *exts[3];	/* file name endings that select it, with the dot */
	int (*write)(FILE *f, const struct profile *p, const struct report_opts *o);
	bool plain_text;	/* read on a terminal: written through text_sanitize_lines */
};

extern const struct report_writer report_text;
extern const struct report_writer report_json;
extern const struct report_writer report_folded;
extern const struct report_writer report_flame;
extern const struct report_writer report_speedscope;
extern const struct report_writer report_pstats;
extern const struct report_writer report_pprof;
/* --mem-timeline's SVG; written beside the report, not chosen by -f. */
extern const struct report_writer report_mem_svg;
/* --mem-folded: folded stacks weighted by bytes touched, for flame graphs. */
extern const struct report_writer report_mem_folded;

/* By -f name; NULL if unknown. */
const struct report_writer *report_find(const char *name);
/* By the longest known ending of path (".speedscope.json" over ".json"); NULL if none. */
const struct report_writer *report_for_path(const char *path);
/* Comma-separated names, for messages. */
const char *report_names(void);

/*
 * Writes to of (opened with outfile__open: a new file renamed into place), or
 * to stdout when of is NULL. 0, or -errno with the reason in why.
 */
int report_write(const struct report_writer *w, struct outfile *of, const struct profile *p,
		 const struct report_opts *o, char *why, size_t whylen);

/* Shared helpers for writers. */
double report_seconds(const struct profile *p, uint64_t samples);
double report_pct(uint64_t part, uint64_t whole);
/*
 * A line number for a human-readable report: "12", or "?" for an unknown
 * line (-1, or anything below 1): no negative line is ever printed.
 */
const char *report_line_str(int line, char *buf, size_t len);
/*
 * Source text, read inside pp's root directory with pp's rights: every file
 * of its frames at the first need, in one helper (source.h); the lines of
 * its frames only. Reads line `line` of file into buf (trimmed). 0 or -errno
 * (or -SOURCE_E*: source_strerror says why).
 */
int report_source_line(const struct profile *p, const struct profile_target *pp, const char *file,
		       int line, char *buf, size_t len);
/*
 * The same for several lines: texts holds n buffers of width bytes, "" for a
 * line the file does not have; found[i] (optional) says which exist. The
 * number of lines found, or -errno if the file cannot be read.
 */
int report_source_lines(const struct profile *p, const struct profile_target *pp, const char *file,
			const int *lines, size_t n, char *texts, size_t width, bool *found);
/*
 * Whether file, as the process sees it, was modified after the process
 * started (pp->start_time; 0 means unknown), by more than a second: 1 if
 * so, 0 if not or unknown, -errno if it cannot be read.
 */
int report_source_changed(const struct profile *p, const struct profile_target *pp,
			  const char *file);
/* The --mem sections of a process (src/report_mem.c); written only when p->mem. */
void report_mem_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		     const struct report_opts *o);
void report_mem_json(FILE *f, const struct profile *p, const struct profile_target *pp);
/*
 * The source text of a profile frame's line, read inside its process's root,
 * for a table cell: "(source not available)" when it cannot be read, "" for
 * an unresolved frame.
 */
void report_frame_source(const struct profile *p, const struct profile_target *pp, uint32_t frame,
			 char *src, size_t len);
/* Writes s as a JSON string literal, quotes included. */
void json_string(FILE *f, const char *s);
/*
 * A frame's label as folded stacks and flame graphs show it, "qualname
 * (file:line)", with ';' and control characters replaced so the label is
 * one field of one line. Returns buf.
 */
char *report_frame_label(const struct profile *p, uint32_t frame, char *buf, size_t len);
/*
 * The honest counts in one line for formats with room for a title or a
 * comment only: "N samples (D dropped, T truncated, U unresolved, P partial)".
 */
char *report_counts(const struct profile *p, char *buf, size_t len);

/* Samples and their flaws summed over every process of the profile. */
struct report_totals {
	uint64_t samples, truncated, partial, unresolved;
};

struct report_totals report_totals(const struct profile *p);
/* The root label of a process's stacks when several are profiled: "pid N (comm)". */
char *report_proc_label(const struct profile_target *pp, char *buf, size_t len);

/* --threads sections (report_threads.c): text blocks; a JSON "thread_functions" member. */
void report_text_threads(FILE *f, const struct profile *p, const struct profile_target *pp,
			 const struct report_opts *o);
void report_json_threads(FILE *f, const struct profile *p, const struct profile_target *pp);
/* USDT sections (src/report_usdt.c); each writes nothing unless its mode was on. */
void report_usdt_text_counts(FILE *f, const struct profile *p);
void report_usdt_text_proc(FILE *f, const struct profile *p, const struct profile_target *pp,
			   const struct report_opts *o);
void report_usdt_json_counts(FILE *f, const struct profile *p);
void report_usdt_json_proc(FILE *f, const struct profile *p, const struct profile_target *pp);
/* --calls fields of a functions[] entry (t from profile_target__call_totals). */
void report_usdt_json_func(FILE *f, const struct profile *p, const struct profile_call_total *t,
			   uint32_t func);
/* functions[] entries for functions with calls but no samples (not in listed). */
void report_usdt_json_extra_funcs(FILE *f, const struct profile *p,
				  const struct profile_target *pp,
				  const struct profile_call_total *t, const bool *listed,
				  bool first);

#endif
