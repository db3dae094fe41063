/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the line-table decoders. Golden vectors were produced by real CPython
 * 3.8-3.15 interpreters (tests/gen_linetable_vectors.py): every expected line is the
 * interpreter's own answer for that offset. The hand-written cases below cover what
 * real compilers never emit but a hostile or half-copied table can contain.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cpython/linetable.h"
#include "linetable_vectors_38.h"
#include "linetable_vectors_39.h"
#include "linetable_vectors_310.h"
#include "linetable_vectors_311.h"
#include "linetable_vectors_312.h"
#include "linetable_vectors_313.h"
#include "linetable_vectors_314.h"
#include "linetable_vectors_315.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Checks every pair of every vector, both through the dispatcher and the direct
 * decoder, and reports all mismatches before failing so one run shows the pattern.
 */
static void check_vectors(const struct lt_vector *vecs, size_t n, enum linetable_kind kind,
			  int (*decode)(const uint8_t *, size_t, int, long))
{
	static struct line_run runs[LINETABLE_RUNS_MAX];
	size_t i, j, checked = 0, bad = 0;

	for (i = 0; i < n; i++) {
		const struct lt_vector *v = &vecs[i];
		long nruns = linetable_decode(kind, v->tab, v->len, v->firstlineno, runs,
					      LINETABLE_RUNS_MAX);

		assert_true(nruns > 0);
		for (j = 0; j < v->npairs; j++) {
			const struct lt_pair *p = &v->pairs[j];
			int got = linetable_line(kind, v->tab, v->len, v->firstlineno,
						 p->byte_offset);
			int direct = decode(v->tab, v->len, v->firstlineno, p->byte_offset);
			int decoded = linetable_runs_line(runs, nruns, v->firstlineno,
							  p->byte_offset);
			/*
			 * CPython 3.11+ says line 0 for a module's RESUME (before its
			 * first line), where the decoders say unknown: no line below 1.
			 */
			int want = p->line < 1 ? -1 : p->line;

			checked++;
			if (got == want && direct == want && decoded == want)
				continue;
			if (bad++ < 20)
				print_error("%s (firstlineno %d): offset %ld: got %d/%d/%d, want "
					    "%d\n",
					    v->name, v->firstlineno, p->byte_offset, got, direct,
					    decoded, want);
		}
	}
	assert_true(checked > 0);
	assert_int_equal(bad, 0);
}

/*
 * The runs a sampler charges, on the same vectors: the line CPython gives,
 * and for an instruction it gives none (-1 in a vector, before the last
 * pair, which is the offset past the bytecode in 3.10+), the line of the
 * instruction before it (the vectors hold every line change: that is the
 * pair before). Returns how many instructions without a line were checked.
 */
static size_t check_carried(const struct lt_vector *vecs, size_t n, enum linetable_kind kind)
{
	static struct line_run runs[LINETABLE_RUNS_MAX];
	size_t i, j, unlined = 0, bad = 0;

	for (i = 0; i < n; i++) {
		const struct lt_vector *v = &vecs[i];
		long nruns = linetable_decode_carried(kind, v->tab, v->len, v->firstlineno, runs,
						      LINETABLE_RUNS_MAX);
		int last = v->firstlineno, want, got;

		assert_true(nruns > 0);
		for (j = 0; j < v->npairs; j++) {
			const struct lt_pair *p = &v->pairs[j];
			bool past_end = kind != LINETABLE_LNOTAB && j + 1 == v->npairs;

			if (p->line == -1 && !past_end && p->byte_offset >= 0) {
				want = last < 1 ? -1 : last;
				unlined++;
			} else {
				want = p->line < 1 ? -1 : p->line;
				if (p->byte_offset >= 0)
					last = p->line;
			}
			got = linetable_runs_line(runs, nruns, v->firstlineno, p->byte_offset);
			if (got != want && bad++ < 20)
				print_error(
					"%s (firstlineno %d): offset %ld: carried %d, want %d\n",
					v->name, v->firstlineno, p->byte_offset, got, want);
		}
	}
	assert_int_equal(bad, 0);
	return unlined;
}

static void test_vectors_carried(void **state)
{
	(void)state;
	assert_int_equal(check_carried(lt38_vectors, ARRAY_SIZE(lt38_vectors), LINETABLE_LNOTAB),
			 0);
	assert_int_equal(check_carried(lt39_vectors, ARRAY_SIZE(lt39_vectors), LINETABLE_LNOTAB),
			 0);
	/* 3.10's JUMP_ABSOLUTE and 3.11's JUMP_BACKWARD closing a loop, exception cleanup */
	assert_true(check_carried(lt310_vectors, ARRAY_SIZE(lt310_vectors), LINETABLE_310) > 0);
	assert_true(check_carried(lt311_vectors, ARRAY_SIZE(lt311_vectors), LINETABLE_LOCATIONS) >
		    0);
	check_carried(lt312_vectors, ARRAY_SIZE(lt312_vectors), LINETABLE_LOCATIONS);
	check_carried(lt313_vectors, ARRAY_SIZE(lt313_vectors), LINETABLE_LOCATIONS);
	check_carried(lt314_vectors, ARRAY_SIZE(lt314_vectors), LINETABLE_LOCATIONS);
	check_carried(lt315_vectors, ARRAY_SIZE(lt315_vectors), LINETABLE_LOCATIONS);
}

/* A hand-made 3.11 table: a loop's closing jump (no location) between two lines. */
static void test_carried_jump(void **state)
{
#define LOC1(code, units) ((uint8_t)(0x80 | ((code) << 3) | ((units)-1)))
	static const uint8_t tab[] = {
		LOC1(15, 1),		/* unit 0: MAKE_CELL, no location: co_firstlineno */
		LOC1(11, 2), 4,	     8, /* units 1-2: line 11 */
		LOC1(11, 3), 4,	     8, /* units 3-5: line 12 */
		LOC1(15, 1),		/* unit 6: JUMP_BACKWARD, no location: line 12 */
		LOC1(13, 1), 2 << 1,	/* unit 7: line 14 */
	};
	static struct line_run runs[8];
	long n;

	(void)state;
	n = linetable_decode_carried(LINETABLE_LOCATIONS, tab, sizeof(tab), 10, runs, 8);
	assert_true(n > 0);
	assert_int_equal(linetable_runs_line(runs, n, 10, 0), 10);
	assert_int_equal(linetable_runs_line(runs, n, 10, 2), 11);
	assert_int_equal(linetable_runs_line(runs, n, 10, 12), 12);
	assert_int_equal(linetable_runs_line(runs, n, 10, 14), 14);
	/* past the bytecode: still nothing */
	assert_int_equal(linetable_runs_line(runs, n, 10, 16), -1);
	/* the table's own answer is unchanged */
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 10, 12), -1);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 10, 0), -1);
#undef LOC1
}

static void test_vectors_38(void **state)
{
	(void)state;
	check_vectors(lt38_vectors, ARRAY_SIZE(lt38_vectors), LINETABLE_LNOTAB,
		      linetable_lnotab_line);
}

static void test_vectors_39(void **state)
{
	(void)state;
	check_vectors(lt39_vectors, ARRAY_SIZE(lt39_vectors), LINETABLE_LNOTAB,
		      linetable_lnotab_line);
}

static void test_vectors_310(void **state)
{
	(void)state;
	check_vectors(lt310_vectors, ARRAY_SIZE(lt310_vectors), LINETABLE_310, linetable_310_line);
}

static void test_vectors_311(void **state)
{
	(void)state;
	check_vectors(lt311_vectors, ARRAY_SIZE(lt311_vectors), LINETABLE_LOCATIONS,
		      linetable_locations_line);
}

/* 3.12 and 3.13 kept the 3.11 location-table format. */
static void test_vectors_312(void **state)
{
	(void)state;
	check_vectors(lt312_vectors, ARRAY_SIZE(lt312_vectors), LINETABLE_LOCATIONS,
		      linetable_locations_line);
}

static void test_vectors_313(void **state)
{
	(void)state;
	check_vectors(lt313_vectors, ARRAY_SIZE(lt313_vectors), LINETABLE_LOCATIONS,
		      linetable_locations_line);
}

static void test_vectors_314(void **state)
{
	(void)state;
	check_vectors(lt314_vectors, ARRAY_SIZE(lt314_vectors), LINETABLE_LOCATIONS,
		      linetable_locations_line);
}

static void test_vectors_315(void **state)
{
	(void)state;
	check_vectors(lt315_vectors, ARRAY_SIZE(lt315_vectors), LINETABLE_LOCATIONS,
		      linetable_locations_line);
}

static const enum linetable_kind all_kinds[] = {
	LINETABLE_LNOTAB,
	LINETABLE_310,
	LINETABLE_LOCATIONS,
};

/*
 * An empty lnotab means all the code is on firstlineno (CPython answers so); the
 * newer formats cover offsets explicitly, so an empty table covers nothing.
 */
static void test_empty_table(void **state)
{
	static const uint8_t empty[1];

	(void)state;
	assert_int_equal(linetable_lnotab_line(empty, 0, 7, 0), 7);
	assert_int_equal(linetable_lnotab_line(empty, 0, 7, 100), 7);
	assert_int_equal(linetable_310_line(empty, 0, 7, 0), -1);
	assert_int_equal(linetable_locations_line(empty, 0, 7, 0), -1);
}

static void test_null_table(void **state)
{
	size_t k;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(all_kinds); k++) {
		assert_int_equal(linetable_line(all_kinds[k], NULL, 0, 12, -2), 12);
		assert_int_equal(linetable_line(all_kinds[k], NULL, 0, 12, -1), 12);
		assert_int_equal(linetable_line(all_kinds[k], NULL, 0, 12, LONG_MIN), 12);
	}
	assert_int_equal(linetable_lnotab_line(NULL, 0, 12, 4), 12);
	assert_int_equal(linetable_310_line(NULL, 0, 12, 4), -1);
	assert_int_equal(linetable_locations_line(NULL, 0, 12, 4), -1);
}

static void test_unknown_kind(void **state)
{
	// clang-format off
	static const uint8_t tab[] = { 2, 1 };

	(void)state;
	assert_int_equal(linetable_line((enum linetable_kind)42, tab, sizeof(tab), 1, 0), -1);
}

/* Pairs move the address first, so a (0, n) pair changes the line of offset 0. */
static void test_lnotab_basics(void **state)
{
	static const uint8_t tab[] = {
		0, 2,		/* offset 0 is on line 12 */
		6, 1,		/* 6: 13 */
		255, 0, 45, 3,	/* a 300-byte line, split as CPython does: 306: 16 */
		4, 0x82,	/* 310: 16 - 126 = -110, invalid */
		2, 0x7f,	/* 312: -110 + 127 = 17 */
		9,		/* half a pair: ignored */
	};
	// clang-format on

	(void)state;
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, -2), 10);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 0), 12);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 5), 12);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 6), 13);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 260), 13);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 305), 13);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 306), 16);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 310), -1);
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 312), 17);
	/* The odd byte must not be read as an address increment. */
	assert_int_equal(linetable_lnotab_line(tab, sizeof(tab), 10, 400), 17);
}

/*
 * Far past the end: the 3.10+ formats know where the code ends; co_lnotab does not, so
 * like PyCode_Addr2Line it keeps the last line.
 */
static void test_offset_far_past_end(void **state)
{
	static const uint8_t lnotab[] = { 4, 1, 4, 1 };
	static const uint8_t t310[] = { 4, 1, 4, 1 };
	static const uint8_t loc[] = { 0x81, 0x00, 0xd9, 0x01, 0x02 };

	(void)state;
	assert_int_equal(linetable_lnotab_line(lnotab, sizeof(lnotab), 1, LONG_MAX), 3);
	assert_int_equal(linetable_310_line(t310, sizeof(t310), 1, 7), 3);
	assert_int_equal(linetable_310_line(t310, sizeof(t310), 1, 8), -1);
	assert_int_equal(linetable_310_line(t310, sizeof(t310), 1, LONG_MAX), -1);
	assert_int_equal(linetable_locations_line(loc, sizeof(loc), 1, 7), 2);
	assert_int_equal(linetable_locations_line(loc, sizeof(loc), 1, 8), -1);
	assert_int_equal(linetable_locations_line(loc, sizeof(loc), 1, LONG_MAX), -1);
}

/*
 * 3.10 splits line jumps beyond +-127 into zero-length ranges. Their deltas apply even
 * when the range that follows has no line, and they never match an offset themselves.
 */
static void test_310_zero_length_jumps(void **state)
{
	// clang-format off
	static const uint8_t tab[] = {
		2, 0,			/* [0, 2): 10 */
		0, 127, 0, 127,		/* +254, no range */
		6, 46,			/* [2, 8): 310 */
		4, 0x80,		/* [8, 12): no line, running line stays 310 */
		0, 0x80,		/* empty and lineless: ignored */
		0, 0x81, 0, 0x81,	/* -254, no range */
		2, 0xce,		/* [12, 14): 310 - 254 - 50 = 6 */
		254, 0, 46, 0,		/* [14, 314): a 300-byte range split in two, still 6 */
		0, 100,			/* trailing zero-length range: covers nothing */
	};
	// clang-format on

	(void)state;
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, -2), 10);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 0), 10);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 1), 10);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 2), 310);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 7), 310);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 8), -1);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 11), -1);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 12), 6);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 200), 6);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 313), 6);
	assert_int_equal(linetable_310_line(tab, sizeof(tab), 10, 314), -1);
}

/* Entry headers: 0x80 | code << 3 | (code units - 1). */
#define LOC(code, units) ((uint8_t)(0x80 | ((code) << 3) | ((units)-1)))

static void test_loc_no_location_keeps_line(void **state)
{
	// clang-format off
	static const uint8_t tab[] = {
		LOC(11, 2), 4, 8,	/* units 0-1: fl + 1 = 21 */
		LOC(15, 3),		/* units 2-4: no location */
		LOC(10, 1), 0, 1,	/* unit 5: still 21; code 15 did not move it */
		LOC(12, 8), 0, 1,	/* units 6-13: 23 */
		LOC(15, 1),		/* unit 14: no location */
		LOC(3, 1), 0x12,	/* unit 15: short form, 23 */
	};
	// clang-format on

	(void)state;
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 0), 21);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 3), 21);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 4), -1);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 9), -1);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 10), 21);
	/* Odd byte offsets fall in the unit that holds them. */
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 11), 21);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 12), 23);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 27), 23);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 28), -1);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 30), 23);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 20, 32), -1);
}

static void test_loc_long_form(void **state)
{
	// clang-format off
	static const uint8_t tab[] = {
		/* delta -3 (svarint 7), end-line +2, col+1 = 5, end-col+1 = 100 (two groups) */
		LOC(14, 4), 0x07, 0x02, 0x05, 0x64, 0x01,
		/* delta +5000 = svarint 10000 in three groups; column fields unknown (0) */
		LOC(14, 1), 0x50, 0x5c, 0x02, 0x00, 0x00, 0x00,
		/* code 13 (no columns): delta -4999 = svarint 9999 */
		LOC(13, 2), 0x4f, 0x5c, 0x02,
	};
	// clang-format on

	(void)state;
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 100, 0), 97);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 100, 7), 97);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 100, 8), 5097);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 100, 10), 98);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 100, 13), 98);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 100, 14), -1);
}

/*
 * A varint cut off by the end of the table, or running into the next entry, leaves its
 * entry's line and every later line unknown. Entries before it still decode.
 */
static void test_loc_truncated_varint(void **state)
{
	static const uint8_t at_end[] = { LOC(0, 1), 0x00, LOC(13, 1), 0x42 };
	static const uint8_t into_next[] = {
		LOC(0, 1), 0x00, LOC(13, 1), 0x42, LOC(0, 1), 0x00,
	};
	static const uint8_t empty_long[] = { LOC(0, 1), 0x00, LOC(14, 1) };

	(void)state;
	assert_int_equal(linetable_locations_line(at_end, sizeof(at_end), 5, 0), 5);
	assert_int_equal(linetable_locations_line(at_end, sizeof(at_end), 5, 2), -1);
	assert_int_equal(linetable_locations_line(at_end, sizeof(at_end), 5, 4), -1);
	assert_int_equal(linetable_locations_line(into_next, sizeof(into_next), 5, 0), 5);
	assert_int_equal(linetable_locations_line(into_next, sizeof(into_next), 5, 2), -1);
	assert_int_equal(linetable_locations_line(into_next, sizeof(into_next), 5, 4), -1);
	assert_int_equal(linetable_locations_line(empty_long, sizeof(empty_long), 5, 2), -1);
	/* A short form whose column byte is missing still has a known line. */
	assert_int_equal(linetable_locations_line(empty_long, 1, 5, 0), 5);
}

/* No entry start at all: nothing to decode, and the scan must stop at len. */
static void test_loc_only_continuation_bytes(void **state)
{
	// clang-format off
	static const uint8_t tab[] = { 0x00, 0x7f, 0x40, 0x41, 0x3f, 0x7f, 0x7f };

	(void)state;
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 3, 0), -1);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 3, 100), -1);
	assert_int_equal(linetable_locations_line(tab, sizeof(tab), 3, -2), 3);
}

/*
 * CPython never writes more than six groups; longer runs are rejected rather than
 * shifted past 64 bits. Six groups that push the line out of int range are rejected
 * too, while the largest in-range jump still decodes.
 */
static void test_loc_huge_varints(void **state)
{
	uint8_t huge[64];
	size_t i;
	/* svarint 2^31 (six groups) = +2^30 */
	static const uint8_t big_ok[] = { LOC(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x02 };
	/* svarint 2^33 = +2^32: fits the varint, not a line */
	static const uint8_t too_big[] = { LOC(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x08 };
	/* seven groups, even though the value is small */
	static const uint8_t seven[] = { LOC(13, 1), 0x42, 0x40, 0x40, 0x40, 0x40, 0x40, 0x00 };

	(void)state;
	huge[0] = LOC(0, 1);
	huge[1] = 0;
	huge[2] = LOC(13, 1);
	for (i = 3; i < sizeof(huge) - 1; i++)
		huge[i] = 0x7f;
	huge[sizeof(huge) - 1] = 0x3f;

	assert_int_equal(linetable_locations_line(huge, sizeof(huge), 1, 0), 1);
	assert_int_equal(linetable_locations_line(huge, sizeof(huge), 1, 2), -1);
	assert_int_equal(linetable_locations_line(big_ok, sizeof(big_ok), 1, 0), (1 << 30) + 1);
	assert_int_equal(linetable_locations_line(too_big, sizeof(too_big), 1, 0), -1);
	assert_int_equal(linetable_locations_line(seven, sizeof(seven), 1, 0), -1);
}

/* Running lines that leave int range, or end up below 1, are malformed, not lines. */
static void test_line_out_of_range(void **state)
{
	static const uint8_t lnotab_neg[] = { 0, 0x80 };
	static const uint8_t t310_up[] = { 0, 127, 2, 127 };
	static const uint8_t loc_down[] = { LOC(13, 1), 0x4b, 0x01 };	/* -37 */

	(void)state;
	assert_int_equal(linetable_lnotab_line(lnotab_neg, sizeof(lnotab_neg), 100, 0), -1);
	assert_int_equal(linetable_310_line(t310_up, sizeof(t310_up), INT_MAX - 200, 0), -1);
	assert_int_equal(linetable_310_line(t310_up, sizeof(t310_up), INT_MAX - 254, 0),
			 INT_MAX);
	assert_int_equal(linetable_locations_line(loc_down, sizeof(loc_down), 30, 0), -1);
	assert_int_equal(linetable_locations_line(loc_down, sizeof(loc_down), 37, 0), -1);
	assert_int_equal(linetable_locations_line(loc_down, sizeof(loc_down), 38, 0), 1);
}

/*
 * A forged co_firstlineno: every line is relative to it, so below 1 none is
 * known, whatever the table says and whatever the offset (the negative offset
 * of a frame not started yet returned firstlineno itself, as the line).
 */
static void test_hostile_firstlineno(void **state)
{
	static const uint8_t lnotab_up[] = { 0, 10, 4, 10 };		/* +10, +10 */
	static const uint8_t t310_up[] = { 2, 10, 2, 10 };		/* +10, +10 */
	static const uint8_t loc_up[] = { LOC(13, 1), 0x14, LOC(13, 1), 0x14 };	/* +10, +10 */
	static const int firsts[] = { 0, -1, -5, -15, INT_MIN };
	static const long offsets[] = { -1, -2, LONG_MIN, 0, 2, 4, 100 };
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(firsts); i++)
		for (j = 0; j < ARRAY_SIZE(offsets); j++) {
			int fl = firsts[i];
			long off = offsets[j];

			assert_int_equal(linetable_lnotab_line(lnotab_up, 4, fl, off), -1);
			assert_int_equal(linetable_310_line(t310_up, 4, fl, off), -1);
			assert_int_equal(linetable_locations_line(loc_up, 4, fl, off), -1);
			assert_int_equal(linetable_line(LINETABLE_LNOTAB, NULL, 0, fl, off), -1);
			assert_int_equal(linetable_line(LINETABLE_310, NULL, 0, fl, off), -1);
			assert_int_equal(linetable_line(LINETABLE_LOCATIONS, NULL, 0, fl, off), -1);
		}
	/* the same tables with a genuine first line */
	assert_int_equal(linetable_lnotab_line(lnotab_up, 4, 1, -1), 1);
	assert_int_equal(linetable_lnotab_line(lnotab_up, 4, 1, 4), 21);
	assert_int_equal(linetable_310_line(t310_up, 4, 1, 0), 11);
	assert_int_equal(linetable_locations_line(loc_up, 4, 1, 2), 21);
	assert_int_equal(linetable_locations_line(loc_up, 4, 1, LONG_MIN), 1);
}

/*
 * Deltas that take the running line below 1 and back: only the line at the
 * offset asked for counts, and it is never below 1 (0 and negatives are -1).
 */
static void test_hostile_deltas(void **state)
{
	/* lnotab: -128 at 0, +127 at 2: lines 1-128 = -127, then 0 */
	static const uint8_t lnotab_dip[] = { 0, 0x80, 2, 0x7f, 2, 1 };
	/* 3.10: -127 over [0,2), +127 over [2,4), +1 over [4,6) */
	static const uint8_t t310_dip[] = { 2, 0x81, 2, 0x7f, 2, 1 };
	/* 3.11+: -3 (svarint 7) for one unit, +3, +1 */
	static const uint8_t loc_dip[] = { LOC(13, 1), 0x07, LOC(13, 1), 0x06, LOC(11, 1), 0, 0 };

	(void)state;
	assert_int_equal(linetable_lnotab_line(lnotab_dip, sizeof(lnotab_dip), 1, 0), -1);
	assert_int_equal(linetable_lnotab_line(lnotab_dip, sizeof(lnotab_dip), 1, 2), -1);
	assert_int_equal(linetable_lnotab_line(lnotab_dip, sizeof(lnotab_dip), 1, 4), 1);
	assert_int_equal(linetable_310_line(t310_dip, sizeof(t310_dip), 1, 0), -1);
	assert_int_equal(linetable_310_line(t310_dip, sizeof(t310_dip), 1, 2), 1);
	assert_int_equal(linetable_310_line(t310_dip, sizeof(t310_dip), 1, 4), 2);
	assert_int_equal(linetable_locations_line(loc_dip, sizeof(loc_dip), 1, 0), -1);
	assert_int_equal(linetable_locations_line(loc_dip, sizeof(loc_dip), 1, 2), 1);
	assert_int_equal(linetable_locations_line(loc_dip, sizeof(loc_dip), 1, 4), 2);
	/* cut short: no entry, half a pair */
	assert_int_equal(linetable_locations_line(loc_dip, 0, 1, 0), -1);
	assert_int_equal(linetable_310_line(t310_dip, 1, 1, 0), -1);
}

/*
 * Decoded runs answer exactly as the decoders do, for every offset of random
 * tables of each format: bytes of any value (hostile tables), and tables
 * made of well-formed entries (long runs of real lines).
 */
static void test_runs_match_decoders(void **state)
{
	static struct line_run runs[LINETABLE_RUNS_MAX];
	uint8_t tab[512];
	size_t k, round, bad = 0;

	(void)state;
	srand(11);
	for (k = 0; k < ARRAY_SIZE(all_kinds); k++) {
		for (round = 0; round < 400; round++) {
			size_t len = rand() % sizeof(tab), i;
			int first = round % 7 == 0 ? -(rand() % 50) : rand() % 3000;
			long n, off;

			for (i = 0; i < len; i++) {
				tab[i] = rand();
				/* half the rounds: entry starts where a location table wants them */
				if (round % 2 && all_kinds[k] == LINETABLE_LOCATIONS)
					tab[i] = i % 3 ? tab[i] & 0x3f : tab[i] | 0x80;
			}
			n = linetable_decode(all_kinds[k], tab, len, first, runs,
					     LINETABLE_RUNS_MAX);
			assert_true(n > 0);
			for (off = -3; off < (long)len * 16 + 64; off++) {
				int want = linetable_line(all_kinds[k], tab, len, first, off);
				int got = linetable_runs_line(runs, n, first, off);

				if (want != got && bad++ < 20)
					print_error("kind %d round %zu len %zu offset %ld: runs %d, "
						    "decoder %d\n", all_kinds[k], round, len, off,
						    got, want);
			}
		}
	}
	assert_int_equal(bad, 0);
}

/* A table needing more runs than allowed is refused whole, never cut short silently. */
static void test_runs_cap(void **state)
{
	static uint8_t alternating[4096];
	struct line_run runs[64];
	size_t i;

	(void)state;
	/* 3.10 pairs: two bytes, line +1 then -1, one range each */
	for (i = 0; i < sizeof(alternating); i += 4) {
		alternating[i] = 2;
		alternating[i + 1] = 1;
		alternating[i + 2] = 2;
		alternating[i + 3] = (uint8_t)-1;
	}
	assert_int_equal(linetable_decode(LINETABLE_310, alternating, 4 * 31, 5, runs, 64), 63);
	assert_int_equal(linetable_runs_line(runs, 63, 5, 0), 6);
	assert_int_equal(linetable_runs_line(runs, 63, 5, 2), 5);
	assert_int_equal(linetable_runs_line(runs, 63, 5, 4 * 31), -1);
	assert_int_equal(linetable_decode(LINETABLE_310, alternating, 4 * 32, 5, runs, 64),
			 -E2BIG);
	assert_int_equal(linetable_decode(LINETABLE_310, alternating, sizeof(alternating), 5,
					  runs, 64), -E2BIG);
	/* nothing to decode is still one run: no line anywhere */
	assert_int_equal(linetable_decode(LINETABLE_LOCATIONS, NULL, 0, 5, runs, 64), 1);
	assert_int_equal(linetable_runs_line(runs, 1, 5, 0), -1);
	assert_int_equal(linetable_runs_line(runs, 1, 5, -1), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_38),
		cmocka_unit_test(test_vectors_39),
		cmocka_unit_test(test_vectors_310),
		cmocka_unit_test(test_vectors_311),
		cmocka_unit_test(test_vectors_312),
		cmocka_unit_test(test_vectors_313),
		cmocka_unit_test(test_vectors_314),
		cmocka_unit_test(test_vectors_315),
		cmocka_unit_test(test_empty_table),
		cmocka_unit_test(test_null_table),
		cmocka_unit_test(test_unknown_kind),
		cmocka_unit_test(test_lnotab_basics),
		cmocka_unit_test(test_offset_far_past_end),
		cmocka_unit_test(test_310_zero_length_jumps),
		cmocka_unit_test(test_loc_no_location_keeps_line),
		cmocka_unit_test(test_loc_long_form),
		cmocka_unit_test(test_loc_truncated_varint),
		cmocka_unit_test(test_loc_only_continuation_bytes),
		cmocka_unit_test(test_loc_huge_varints),
		cmocka_unit_test(test_line_out_of_range),
		cmocka_unit_test(test_runs_match_decoders),
		cmocka_unit_test(test_vectors_carried),
		cmocka_unit_test(test_carried_jump),
		cmocka_unit_test(test_runs_cap),
		cmocka_unit_test(test_hostile_firstlineno),
		cmocka_unit_test(test_hostile_deltas),
	};
	// clang-format on

	return cmocka_run_group_tests(tests, NULL, NULL);
}
