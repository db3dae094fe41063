/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Report writers behind one interface. A writer reads only the profile model
 * and writes to the FILE it is given; the registry picks one by name (-f) or
 * by the output file's extension.
 */
#ifndef PYBPFPROF_REPORT_H
#define PYBPFPROF_REPORT_H

#include <stdio.h>
#include "profile.h"

struct report_opts {
	unsigned top_functions;	/* rows in the functions table */
	unsigned top_lines;	/* rows in the hottest-lines table */
	const char *tool_version;
};

struct report_writer {
	const char *name;
	const char *ext;	/* file extension that selects it, with the dot */
	int (*write)(FILE *f, const struct profile *p, const struct report_opts *o);
};

extern const struct report_writer report_text;
extern const struct report_writer report_json;

/* By -f name; NULL if unknown. */
const struct report_writer *report_find(const char *name);
/* By the extension of path; NULL if none matches. */
const struct report_writer *report_for_path(const char *path);
/* Comma-separated names, for messages. */
const char *report_names(void);

/* Fails (-errno, reason in why) if path could not be written; creates nothing. */
int report_check_writable(const char *path, char *why, size_t whylen);
/* Writes to path, or stdout when path is NULL or "-". 0 or -errno. */
int report_write(const struct report_writer *w, const char *path, const struct profile *p,
		 const struct report_opts *o);

/* Shared helpers for writers. */
double report_seconds(const struct profile *p, uint64_t samples);
double report_pct(uint64_t part, uint64_t whole);
/*
 * Reads line `line` of file into buf (trimmed). The file is opened inside
 * root_fd (a process's root directory, links may not lead out of it), or as a
 * host path when root_fd is -1. 0 or -errno.
 */
int report_source_line(int root_fd, const char *file, int line, char *buf, size_t len);
/* Writes s as a JSON string literal, quotes included. */
void json_string(FILE *f, const char *s);

#endif
