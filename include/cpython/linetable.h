/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython line tables: map a bytecode offset to a source line.
 *
 * Pure functions over (bytes, len): no I/O, no allocation, no trust in the
 * input. The table bytes come from a target process's memory and may be
 * anything; a malformed table yields -1, never an out-of-bounds read.
 *
 * Every decoder takes a byte offset into the code object's bytecode
 * (co_code / co_code_adaptive). A negative offset means "the frame has not
 * started yet" and yields firstlineno.
 *
 * A line is >= 1 or -1 (unknown). Lines below 1 exist only in forged or
 * corrupt code objects: a firstlineno below 1 makes every line unknown (the
 * table's deltas are relative to it), and so does a running line that a
 * table's deltas take below 1 or beyond INT_MAX at the offset asked for.
 */
#ifndef PYBPFPROF_LINETABLE_H
#define PYBPFPROF_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

enum linetable_kind {
	LINETABLE_LNOTAB,    /* 3.8, 3.9: co_lnotab, (addr_incr, line_incr) byte pairs */
	LINETABLE_310,	     /* 3.10: co_linetable, (range_len, line_delta) byte pairs */
	LINETABLE_LOCATIONS, /* 3.11+: co_linetable location entries (Objects/locations.md) */
};

/*
 * Returns the line for byte_offset, or -1 if the offset has no line or is past
 * the table. co_lnotab (3.8, 3.9) does not record where the bytecode ends, so
 * there any offset after the last entry gets the last line, as in CPython.
 */
int linetable_lnotab_line(const uint8_t *tab, size_t len, int firstlineno, long byte_offset);
int linetable_310_line(const uint8_t *tab, size_t len, int firstlineno, long byte_offset);
int linetable_locations_line(const uint8_t *tab, size_t len, int firstlineno, long byte_offset);

/* Dispatches on kind; same contract as the three above. */
int linetable_line(enum linetable_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		   long byte_offset);

/*
 * A decoded table: runs of bytecode offsets with one line each, a run
 * reaching up to the next one's start (the last one to any offset). This is
 * what the code cache keeps of a code object's table, never the table bytes:
 * a hostile 1 MiB table costs its decoded size only, and is refused beyond
 * LINETABLE_RUNS_MAX runs.
 */
struct line_run {
	uint32_t start; /* first byte offset of the run */
	int32_t line;	/* -1: no line */
};

/* Runs kept per code object at most: 128 KiB, far more than any real function has. */
#define LINETABLE_RUNS_MAX 16384

/*
 * Decodes a whole table into runs[0, max), neighbours with the same line
 * merged. For every offset, linetable_runs_line() on the result gives what
 * linetable_line() gives on the table. Returns the number of runs (at least
 * 1), or -E2BIG when more than max would be needed.
 */
long linetable_decode(enum linetable_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		      struct line_run *runs, size_t max);

/*
 * linetable_decode(), but as a sampler charges it: an instruction the table
 * gives no line (3.10's ranges of delta -128, 3.11+'s "no location" entries)
 * gets the running line, the line of the nearest instruction before it that
 * has one (co_firstlineno before the first). That is the line CPython charges
 * a loop's closing jump from 3.12 on (its compiler gives the jump the
 * location of the instruction before it, gh-107901), where 3.10 and 3.11
 * leave it none (frame.f_lineno None, a traceback's line -1, measured on
 * 3.10.13, 3.11.2, 3.11.7), and the line 3.8 and 3.9's co_lnotab give it
 * (their tables cannot say "no line"). Offsets past the table stay -1.
 */
long linetable_decode_carried(enum linetable_kind kind, const uint8_t *tab, size_t len,
			      int firstlineno, struct line_run *runs, size_t max);

/* The line of byte_offset in n runs from linetable_decode(); -1 if none. */
int linetable_runs_line(const struct line_run *runs, size_t n, int firstlineno, long byte_offset);

#endif
