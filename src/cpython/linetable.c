/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython line-table decoders: map a byte offset into a code object's bytecode to a
 * source line, for the three formats CPython has used (co_lnotab in 3.8/3.9, the
 * 3.10 co_linetable, and the 3.11+ location table). The code cache calls these with
 * table bytes copied out of the profiled process, so the bytes are hostile: every read
 * is bounded by len, running values are kept in 64 bits and range-checked, and a table
 * that stops making sense yields -1 rather than a guess. The formats are described in
 * section 4 of the design notes (cpython-internals.md) and in CPython's
 * Objects/lnotab_notes.txt and Objects/locations.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include "cpython/linetable.h"

/*
 * Source lines start at 1. A result below that (a negative or zero
 * co_firstlineno, deltas that run below it) or beyond int can only come from a
 * forged or corrupt code object: it is "unknown", -1, the one negative value a
 * caller ever sees, so no line below 1 is printed or used as an index.
 */
static int line_result(int64_t line)
{
	if (line < 1 || line > INT_MAX)
		return -1;
	return (int)line;
}

int linetable_lnotab_line(const uint8_t *tab, size_t len, int firstlineno, long byte_offset)
{
	uint64_t addr = 0;
	int64_t line = firstlineno;
	size_t i;

	/* every line is relative to the first: none is known without it */
	if (firstlineno < 1)
		return -1;
	if (byte_offset < 0)
		return firstlineno;
	if (!tab)
		len = 0;

	/*
	 * Each pair first moves the address, then the line. A pair whose address lands
	 * past the target starts a later line, so the line in force is the one before
	 * it. An odd trailing byte is half a pair, and CPython ignores it too. The
	 * table does not record where the bytecode ends, so any offset past the last
	 * pair gets the last line: this decoder cannot say "past the table".
	 */
	for (i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > (uint64_t)byte_offset)
			break;
		/* Line increments are signed since 3.6 (negative for loops). */
		line += (int8_t)tab[i + 1];
	}
	return line_result(line);
}

int linetable_310_line(const uint8_t *tab, size_t len, int firstlineno, long byte_offset)
{
	uint64_t end = 0;
	int64_t line = firstlineno;
	size_t i;

	/* every line is relative to the first: none is known without it */
	if (firstlineno < 1)
		return -1;
	if (byte_offset < 0)
		return firstlineno;
	if (!tab)
		len = 0;

	/*
	 * Pairs are (range length, line delta) and the ranges are contiguous from
	 * offset 0. A delta of -128 marks a range with no line and leaves the running
	 * line alone. Zero-length ranges exist only to carry deltas beyond +-127 (or
	 * lengths beyond 254 split over several pairs): their delta applies, but they
	 * can never contain the target, because the target is always >= their start
	 * once the earlier ranges did not contain it.
	 */
	for (i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)tab[i + 1];

		end += tab[i];
		if (delta != -128)
			line += delta;
		if ((uint64_t)byte_offset < end)
			return delta == -128 ? -1 : line_result(line);
	}
	return -1;
}

/*
 * Location-table entries (3.11+). The first byte of an entry has bit 7 set, with the
 * code in bits 3-6 and the length minus one, in 2-byte code units, in bits 0-2. The
 * bytes after it, up to the next byte with bit 7 set, have bit 7 clear. CPython finds
 * the next entry by that bit alone, and so do we; only the fields that move the line
 * are parsed, so a damaged column field cannot change a line.
 */
#define LOC_ENTRY_START 0x80
#define LOC_CODE(b) (((b) >> 3) & 0x0f)
#define LOC_UNITS(b) (((b)&0x07) + 1)

enum loc_code {
	LOC_ONE_LINE0 = 10, /* 10, 11, 12: line += code - 10, then two column bytes */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13, /* svarint line delta */
	LOC_LONG = 14,	     /* svarint line delta, then end line and columns */
	LOC_NONE = 15,	     /* no location; the running line is kept */
};

/*
 * CPython writes a varint from an unsigned int, so six 6-bit groups are the most a
 * genuine table holds. Refusing a seventh bounds the shift and the loop.
 */
#define LOC_VARINT_MAX_GROUPS 6

/*
 * Reads a varint from tab[*pos, end): 6-bit groups, least significant first, bit 6
 * set when another group follows. Fails if the varint runs into the next entry or
 * the end of the table, or has too many groups.
 */
static bool loc_varint(const uint8_t *tab, size_t end, size_t *pos, uint64_t *val)
{
	uint64_t v = 0;
	int groups;

	for (groups = 0; groups < LOC_VARINT_MAX_GROUPS && *pos < end; groups++) {
		uint8_t b = tab[(*pos)++];

		v |= (uint64_t)(b & 0x3f) << (6 * groups);
		if (!(b & 0x40)) {
			*val = v;
			return true;
		}
	}
	return false;
}

/* A signed varint keeps the sign in bit 0 and the magnitude above it. */
static bool loc_svarint(const uint8_t *tab, size_t end, size_t *pos, int64_t *val)
{
	uint64_t v;

	if (!loc_varint(tab, end, pos, &v))
		return false;
	*val = (v & 1) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
	return true;
}

/*
 * Returns how far the entry whose first byte is tab[start] moves the running line,
 * in *delta. tab[start + 1, end) are the entry's other bytes. Fails only if a field
 * the line depends on is cut short.
 */
static bool loc_line_delta(const uint8_t *tab, size_t start, size_t end, int64_t *delta)
{
	unsigned int code = LOC_CODE(tab[start]);
	size_t pos = start + 1;

	*delta = 0;
	if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2)
		*delta = code - LOC_ONE_LINE0;
	else if (code == LOC_NO_COLUMNS || code == LOC_LONG)
		return loc_svarint(tab, end, &pos, delta);
	return true;
}

int linetable_locations_line(const uint8_t *tab, size_t len, int firstlineno, long byte_offset)
{
	uint64_t entry_end = 0;
	int64_t line = firstlineno;
	size_t p = 0;

	/* every line is relative to the first: none is known without it */
	if (firstlineno < 1)
		return -1;
	if (byte_offset < 0)
		return firstlineno;
	if (!tab)
		len = 0;

	while (p < len) {
		size_t start = p;
		int64_t delta;

		/* Only an entry's first byte may sit here; anything else is not a table. */
		if (!(tab[start] & LOC_ENTRY_START))
			return -1;
		for (p = start + 1; p < len && !(tab[p] & LOC_ENTRY_START); p++)
			;
		/* A line we cannot read leaves every later line unknown as well. */
		if (!loc_line_delta(tab, start, p, &delta))
			return -1;
		line += delta;
		if (line < INT_MIN || line > INT_MAX)
			return -1;

		/* Lengths count 2-byte code units; offsets are bytes. */
		entry_end += 2 * LOC_UNITS(tab[start]);
		if ((uint64_t)byte_offset < entry_end)
			return LOC_CODE(tab[start]) == LOC_NONE ? -1 : line_result(line);
	}
	return -1;
}

int linetable_line(enum linetable_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		   long byte_offset)
{
	switch (kind) {
	case LINETABLE_LNOTAB:
		return linetable_lnotab_line(tab, len, firstlineno, byte_offset);
	case LINETABLE_310:
		return linetable_310_line(tab, len, firstlineno, byte_offset);
	case LINETABLE_LOCATIONS:
		return linetable_locations_line(tab, len, firstlineno, byte_offset);
	}
	return -1;
}

/*
 * Runs being written by linetable_decode(); full once one more did not fit.
 * carry: an instruction the table gives no line gets the running line (the
 * line before it), linetable_decode_carried().
 */
struct runs_out {
	struct line_run *r;
	size_t n, max;
	bool full, carry;
};

/*
 * The line of a range or entry the table says has none: -1, or (carry) the
 * line of the instruction before it, before_line.
 */
static int no_line(const struct runs_out *o, int64_t before_line)
{
	return o->carry ? line_result(before_line) : -1;
}

/*
 * Starts a run at start (never before the last one). A run starting where
 * the last one starts replaces it, as a later entry at the same offset wins
 * in the decoders above; a run with the line of the one before adds nothing.
 */
static void emit(struct runs_out *o, uint64_t start, int line)
{
	if (o->n && o->r[o->n - 1].start == start)
		o->n--;
	if (o->n && o->r[o->n - 1].line == line)
		return;
	if (start > UINT32_MAX || o->n == o->max) {
		o->full = true;
		return;
	}
	o->r[o->n].start = start;
	o->r[o->n].line = line;
	o->n++;
}

/* The same walks as the decoders above, written out as runs instead of stopping at an offset. */
static void decode_lnotab(struct runs_out *o, const uint8_t *tab, size_t len, int firstlineno)
{
	uint64_t addr = 0;
	int64_t line = firstlineno;
	size_t i;

	emit(o, 0, line_result(line));
	for (i = 0; i + 1 < len && !o->full; i += 2) {
		addr += tab[i];
		line += (int8_t)tab[i + 1];
		emit(o, addr, line_result(line));
	}
}

static void decode_310(struct runs_out *o, const uint8_t *tab, size_t len, int firstlineno)
{
	uint64_t end = 0;
	/* shown: the line of the last range with instructions and a line */
	int64_t line = firstlineno, shown = firstlineno;
	size_t i;

	for (i = 0; i + 1 < len && !o->full; i += 2) {
		int8_t delta = (int8_t)tab[i + 1];
		uint64_t start = end;

		end += tab[i];
		if (delta != -128)
			line += delta;
		if (end == start)
			continue; /* a delta alone: no instruction has its line */
		if (delta != -128)
			shown = line;
		emit(o, start, delta == -128 ? no_line(o, shown) : line_result(line));
	}
	emit(o, end, -1);
}

static void decode_locations(struct runs_out *o, const uint8_t *tab, size_t len, int firstlineno)
{
	uint64_t entry_end = 0;
	int64_t line = firstlineno;
	size_t p = 0;

	while (p < len && !o->full) {
		size_t start = p;
		uint64_t begin = entry_end;
		int64_t delta;

		/* Where linetable_locations_line() gives up, every later offset has no line. */
		if (!(tab[start] & LOC_ENTRY_START))
			break;
		for (p = start + 1; p < len && !(tab[p] & LOC_ENTRY_START); p++)
			;
		if (!loc_line_delta(tab, start, p, &delta))
			break;
		line += delta;
		if (line < INT_MIN || line > INT_MAX)
			break;
		entry_end += 2 * LOC_UNITS(tab[start]);
		emit(o, begin,
		     LOC_CODE(tab[start]) == LOC_NONE ? no_line(o, line) : line_result(line));
	}
	emit(o, entry_end, -1);
}

static long decode(enum linetable_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		   struct line_run *runs, size_t max, bool carry)
{
	struct runs_out o = { .r = runs, .max = max, .carry = carry };

	if (!tab)
		len = 0;
	/* every line is relative to the first: none is known without it */
	if (firstlineno < 1) {
		emit(&o, 0, -1);
		return 1;
	}
	switch (kind) {
	case LINETABLE_LNOTAB:
		decode_lnotab(&o, tab, len, firstlineno);
		break;
	case LINETABLE_310:
		decode_310(&o, tab, len, firstlineno);
		break;
	case LINETABLE_LOCATIONS:
		decode_locations(&o, tab, len, firstlineno);
		break;
	default:
		emit(&o, 0, -1);
		break;
	}
	return o.full ? -E2BIG : (long)o.n;
}

long linetable_decode(enum linetable_kind kind, const uint8_t *tab, size_t len, int firstlineno,
		      struct line_run *runs, size_t max)
{
	return decode(kind, tab, len, firstlineno, runs, max, false);
}

long linetable_decode_carried(enum linetable_kind kind, const uint8_t *tab, size_t len,
			      int firstlineno, struct line_run *runs, size_t max)
{
	return decode(kind, tab, len, firstlineno, runs, max, true);
}

int linetable_runs_line(const struct line_run *runs, size_t n, int firstlineno, long byte_offset)
{
	size_t lo = 0, hi = n;

	if (firstlineno < 1)
		return -1;
	if (byte_offset < 0)
		return firstlineno;
	/* the last run starting at or before byte_offset */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uint64_t)runs[mid].start <= (uint64_t)byte_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? runs[lo - 1].line : -1;
}
