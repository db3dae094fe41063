/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Source lines for the reports, read inside each process's root directory
 * with its own rights: every file of a process's frames at the first need,
 * in one helper (proc/source.h), the most sampled first, within a time
 * budget per process and for the whole report.
 */
#ifndef PYBPFPROF_REPORT_SOURCE_H
#define PYBPFPROF_REPORT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile/profile.h"

/*
 * Source text, read inside pp's root directory with pp's rights: every file
 * of its frames at the first need, in one helper (source.h); the lines of
 * its frames only. Reads line `line` of file into buf (trimmed, made safe as
 * one field of a line of text by text_clean). 0 or -errno (or -SOURCE_E*:
 * source_strerror says why).
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
/*
 * The source text of a profile frame's line, read inside its process's root,
 * for a table cell: "(source not available)" when it cannot be read, "" for
 * an unresolved frame.
 */
void report_frame_source(const struct profile *p, const struct profile_target *pp, uint32_t frame,
			 char *src, size_t len);

/*
 * pp's sources as read for the reports (read now if they were not yet), for
 * the JSON profile to keep them: NULL when pp has none (nothing may be read).
 */
const struct proc_sources *report_sources(const struct profile *p, const struct profile_target *pp);

#endif
