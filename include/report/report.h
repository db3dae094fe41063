/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report writers behind one interface: the registry picks a writer by
 * name (-f) or by the output file's extension and writes the report through
 * it, to a file put in place whole or to stdout.
 */
#ifndef PYBPFPROF_REPORT_H
#define PYBPFPROF_REPORT_H

#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

struct outfile;

/* By -f name; NULL if unknown. */
const struct report_writer *report_find(const char *name);
/* By the longest known ending of path (".speedscope.json" over ".json"); NULL if none. */
const struct report_writer *report_for_path(const char *path);
/* Comma-separated names, for messages. */
const char *report_names(void);
/* Comma-separated file endings that select a writer, for messages, in buf. */
char *report_extensions(char *buf, size_t len);

/*
 * Writes to of (opened with outfile__open: a new file renamed into place), or
 * to stdout when of is NULL. 0, or -errno with the reason in why.
 */
int report_write(const struct report_writer *w, struct outfile *of, const struct profile *p,
		 const struct report_opts *o, char *why, size_t whylen);

#endif
