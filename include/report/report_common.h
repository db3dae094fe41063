/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the report writers share: seconds and percentages of samples, line
 * numbers, frame and process labels, the honest counts, JSON strings. They
 * read only the profile model.
 */
#ifndef PYBPFPROF_REPORT_COMMON_H
#define PYBPFPROF_REPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"

/*
 * The buffer a target's string is cleaned into (text_clean) for one field of
 * a line of a text report; longer strings (only a crafted saved profile has
 * them) are cut.
 */
#define REPORT_FIELD 4096

/*
 * The widest line of the text report's tables, in columns (one per character):
 * names and paths are fitted into what the fixed columns leave.
 */
#define REPORT_TEXT_WIDTH 160
/*
 * The widest line of a text report without --native or --kernel (whose
 * library+0xOFFSET names need REPORT_TEXT_WIDTH), so that its first screen
 * reads in a 100-column terminal: paths are cut from the left, names and
 * source from the right, the line number and +0xOFFSET kept whole.
 */
#define REPORT_SCREEN_WIDTH 100

enum report_fit {
	REPORT_FIT_LEFT,  /* "...tail": a path, whose file name matters most */
	REPORT_FIT_RIGHT, /* "head...": a name, a line of source */
	/* "head...+0x1f2e": a native name keeps its "+0xOFFSET" whole, the only part telling
	 * apart two places in a library without symbols */
	REPORT_FIT_NAME,
};

/* The columns s takes: one per UTF-8 character (s already cleaned). */
int report_cols(const char *s);
/*
 * s cleaned (text_clean's rule) into buf (len bytes), then fitted to at most
 * width columns as how says, "..." marking what was left out. Returns buf.
 */
char *report_fit(char *buf, size_t len, const char *s, int width, enum report_fit how);
/* Prints s (cleaned) and spaces after it up to width columns. */
void report_put_padded(FILE *f, const char *s, int width);

/* Estimated seconds of samples at the profile's frequency (0 without one). */
double report_seconds(const struct profile *p, uint64_t samples);
/* part in percent of whole (0 when whole is 0). */
double report_pct(uint64_t part, uint64_t whole);
/*
 * A line number for a human-readable report: "12", or "?" for an unknown
 * line (-1, or anything below 1): no negative line is ever printed.
 */
const char *report_line_str(int line, char *buf, size_t len);
/* Writes s as a JSON string literal, quotes included. */
void json_string(FILE *f, const char *s);
/* The same, or null for an empty s (a name not known). */
void report_json_opt_string(FILE *f, const char *s);
/*
 * The same for a page's names (the HTML flame graphs), shown as the text
 * report shows them ('?' for a control or bidi character but the tab, or a
 * byte that is not UTF-8), and safe inside <script>: no "</" can end it early.
 */
void report_script_string(FILE *f, const char *s);
/*
 * A frame's label as folded stacks and flame graphs show it, "qualname
 * (file:line)", with ';' and control characters replaced so the label is
 * one field of one line. Returns buf.
 */
char *report_frame_label(const struct profile *p, uint32_t frame, char *buf, size_t len);
/* The same for frame's function, its lines merged (--merge-lines): "qualname (file)". */
char *report_func_label(const struct profile *p, uint32_t frame, char *buf, size_t len);
/*
 * --merge-lines: per frame id, the first frame of its function, so that a
 * function's frames at different lines become one. Free it; NULL without memory.
 */
uint32_t *report_func_frames(const struct profile *p);
/*
 * The frames a table-of-frames format (speedscope, pprof) lists, as its
 * places: per frame id, its place in the table. Without merge_lines every
 * frame is listed, in order (place = id); with it only each function's first
 * frame, its other frames taking that frame's place, so that a function is
 * one frame whatever its lines. A frame is listed where its place is the count
 * of frames listed before it. *n: the table's length. Free it; NULL without memory.
 */
uint32_t *report_frame_places(const struct profile *p, bool merge_lines, size_t *n);
/*
 * The line a listed frame is written with: its own, or with merge_lines its
 * function's first line (< 1: unknown, left out).
 */
int report_frame_line(const struct profile *p, uint32_t frame, bool merge_lines);
/*
 * The honest counts in one line for formats with room for a title or a
 * comment only: "N samples (D dropped, T truncated, U unresolved, P partial)".
 */
char *report_counts(const struct profile *p, char *buf, size_t len);
/*
 * The causes of c's dropped samples that are not 0, into buf: "10 ring
 * buffer full, 2 came too late to be named"; "" when none is known.
 */
char *report_dropped_causes(const struct profile_counts *c, char *buf, size_t len);
/*
 * An HTML page's title bar, which stays on screen: "pybpfprof VERSION: MODE
 * profile at HZ Hz, COUNTS[; middle][; the busiest process and thread]".
 */
char *report_page_title(const struct profile *p, const char *version, const char *middle, char *buf,
			size_t len);

/* Samples and their flaws summed over every process of the profile. */
struct report_totals {
	uint64_t samples, truncated, partial, unresolved;
};

struct report_totals report_totals(const struct profile *p);
/* Whether pp is --merge's one section (pid 0), standing for p->merged_pids. */
bool report_is_merged(const struct profile *p, const struct profile_target *pp);
/*
 * key, then what --pid, --match and --thread left out (p->selection set):
 * {"options": "...", "processes_out": N, "threads_out": N, "samples_out": N,
 * "threads_cut": B}.
 */
void report_json_selection(FILE *f, const char *key, const struct profile *p);
/* key, then --merge's processes as a JSON array of pids. */
void report_json_pids(FILE *f, const char *key, const struct profile *p);
/* The header's processes: "1 process", "3 processes", or with --merge "3 processes merged". */
char *report_nprocs(const struct profile *p, char *buf, size_t len);
/*
 * What a section's samples stand for: "2.00 s of CPU"; with --mode wall or
 * --gil, whose off-CPU intervals are samples too, "23.53 s of thread time:
 * 0.53 s on the CPU, 23.00 s off it".
 */
char *report_samples_time(const struct profile *p, const struct profile_target *pp, char *buf,
			  size_t len);
/* The root label of a process's stacks when several are profiled: "pid N (role)". */
char *report_proc_label(const struct profile_target *pp, char *buf, size_t len);
/*
 * The process with the most samples and its thread with the most, for the
 * formats whose first screen is a title or a comment (the flame graphs,
 * pprof): "busiest: pid N (role), P% of the samples; its thread TID (name),
 * P%", the names cleaned as text_clean does; "" without samples.
 */
#define REPORT_BUSIEST_LEN 256
char *report_busiest(const struct profile *p, char *buf, size_t len);
/*
 * Whether a source file is library code rather than the program's own: the
 * standard library (.../lib/pythonX.Y/, frozen modules) or an installed
 * package (site-packages, dist-packages). The call tree collapses it.
 */
bool report_is_library(const char *file);

/*
 * s escaped for XML text and attributes, at most max characters: '&', '<',
 * '>' and quotes as entities; control characters, bytes that are not UTF-8
 * and U+FFFE/U+FFFF (which XML does not allow even as references) as '?'.
 */
void report_xml_text(FILE *f, const char *s, size_t max);

/*
 * The first index of base[0..n) (elements of size bytes, each led by a
 * uint32_t key, sorted by it) whose key is key or more; n if none.
 */
size_t report_lower_bound(const void *base, size_t n, size_t size, uint32_t key);

/* data[0..len) gzip-compressed (a gzip header and trailer) to f. 0 or -errno. */
int report_gzip(FILE *f, const uint8_t *data, size_t len);

#endif
