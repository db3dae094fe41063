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
	LINETABLE_LNOTAB,	/* 3.8, 3.9: co_lnotab, (addr_incr, line_incr) byte pairs */
	LINETABLE_310,		/* 3.10: co_linetable, (range_len, line_delta) byte pairs */
	LINETABLE_LOCATIONS,	/* 3.11+: co_linetable location entries (Objects/locations.md) */
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

#endif
