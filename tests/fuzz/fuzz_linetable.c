// SPDX-License-Identifier: GPL-2.0-only
/*
 * The three line-table decoders (co_lnotab, 3.10's co_linetable, 3.11+
 * location entries) on any bytes, at the asked offset and at every code-unit
 * offset up to past the end of the table.
 *
 * Input: byte 0 the format (mod 3: enum linetable_kind), bytes 1-4
 * co_firstlineno, bytes 5-8 a byte offset (both little-endian int32), then
 * the table. Besides the sanitizers' findings, a line outside linetable.h's
 * contract (-1, or >= 1) aborts, and so does a difference between the direct
 * decoders and the runs the code cache keeps (linetable_decode, then
 * linetable_runs_line): linetable.h says they agree at every offset. The
 * runs a sampler charges (linetable_decode_carried) must give the same line
 * wherever the table gives one, and need at most one run more.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cpython/linetable.h"

/* linetable.h's contract: a line is >= 1, or -1 for unknown. Anything else is a finding. */
static void check_line(int line)
{
	if (line < 1 && line != -1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct line_run runs[LINETABLE_RUNS_MAX], carried[LINETABLE_RUNS_MAX];

/* The line at offset o both ways; they must agree (nruns < 0: the table was refused). */
static void check_both(enum linetable_kind kind, const uint8_t *tab, size_t len, int first,
		       long nruns, long o)
{
	int line = linetable_line(kind, tab, len, first, o);

	check_line(line);
	if (nruns >= 0 && linetable_runs_line(runs, nruns, first, o) != line)
		abort();
}

/* The carried runs at offset o: the table's line where it has one (ncarried >= 0). */
static void check_carried(enum linetable_kind kind, const uint8_t *tab, size_t len, int first,
			  long ncarried, long o)
{
	int line = linetable_line(kind, tab, len, first, o), got;

	if (ncarried < 0)
		return;
	got = linetable_runs_line(carried, ncarried, first, o);
	check_line(got);
	if (line >= 1 && got != line)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum linetable_kind kind;
	int32_t first, off;
	const uint8_t *tab;
	size_t len;
	long o, end, step, nruns, ncarried;

	if (size < 9)
		return 0;
	kind = (enum linetable_kind)(data[0] % 3);
	memcpy(&first, data + 1, 4);
	memcpy(&off, data + 5, 4);
	tab = data + 9;
	len = size - 9;
	/* libFuzzer's buffer ends where the table does: ASan sees any read past it */
	/* a small cap too, so that refusing (-E2BIG) is exercised */
	linetable_decode(kind, tab, len, first, runs, 1 + data[0] / 3 % 8);
	nruns = linetable_decode(kind, tab, len, first, runs, LINETABLE_RUNS_MAX);
	if (nruns == 0 || (nruns < 0 && nruns != -E2BIG))
		abort();
	ncarried = linetable_decode_carried(kind, tab, len, first, carried, LINETABLE_RUNS_MAX);
	/*
	 * a line carried over instructions with none merges runs, but for the
	 * offsets past the table, which a trailing run without a line reached
	 */
	if (ncarried == 0 || (nruns >= 0 && (ncarried < 0 || ncarried > nruns + 1)))
		abort();
	check_both(kind, tab, len, first, nruns, off);
	check_both(kind, tab, len, first, nruns, -(long)off);
	/* about 64 offsets, every code unit for short tables: each lookup walks the table */
	end = 4 * (long)len + 8;
	step = end / 64 > 2 ? (end / 64) & ~1L : 2;
	for (o = -2; o < end; o += step) {
		check_both(kind, tab, len, first, nruns, o);
		check_carried(kind, tab, len, first, ncarried, o);
	}
	return 0;
}
