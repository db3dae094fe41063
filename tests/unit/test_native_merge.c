/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for placing native frames among Python frames (session/native_merge.h):
 * each eval call takes the Python frames up to its entry, the interpreter's
 * own frames and what lies outside the outermost Python frame are dropped,
 * and stacks that cannot both be right keep the native frames below the
 * innermost Python frame only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "session/native_merge.h"

/* Native frame ids are 100+, Python ones 1-9; an interpreter frame's id is never used. */
enum { O = NATIVE_PC_OTHER, I = NATIVE_PC_INTERP, E = NATIVE_PC_EVAL, NONE = 0xdead };

#define N(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static uint32_t merge(const uint32_t *nat, const uint8_t *kind, uint32_t nn, const uint32_t *py,
		      uint32_t npy, uint64_t entries, bool cut, uint32_t *out, uint32_t max,
		      enum native_merge_result *res)
{
	struct native_merge_in in = { nat, kind, nn, py, npy, &entries, 64, cut };

	return native_merge(&in, out, max, res);
}

static void assert_stack(const uint32_t *got, uint32_t n, const uint32_t *want, uint32_t nwant)
{
	uint32_t i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

/*
 * 3.11+: libc's qsort called through ctypes calls back into compare: the
 * callback's eval call runs compare alone (its entry), the caller's eval
 * call runs sort and <module>. The frames of qsort and libffi go between
 * sort and compare; the interpreter's and main's go nowhere.
 */
static void test_native_between_python_frames(void **state)
{
	/* innermost first: compare's eval, ffi closure, qsort, ffi_call, ctypes' call, eval, main */
	const uint32_t nat[] = { NONE, 101, 102, 103, NONE, 104, NONE, NONE, 105 };
	const uint8_t kind[] = { E, O, O, O, I, O, I, E, O };
	const uint32_t py[] = { 1 /* compare */, 2 /* sort */, 3 /* <module> */ };
	const uint32_t want[] = { 1, 101, 102, 103, 104, 2, 3 };
	enum native_merge_result res;
	uint32_t out[32], n;

	(void)state;
	n = merge(nat, kind, N(nat), py, N(py), 1 << 0 | 1 << 2, false, out, 32, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_MERGED);
}

/* A tick in native code: its frames below the innermost Python frame, as before. */
static void test_native_below_innermost(void **state)
{
	const uint32_t nat[] = { 101, 102, NONE, NONE, 103 };
	const uint8_t kind[] = { O, O, I, E, O };
	const uint32_t py[] = { 1, 2 };
	const uint32_t want[] = { 101, 102, 1, 2 };
	enum native_merge_result res;
	uint32_t out[32], n;

	(void)state;
	n = merge(nat, kind, N(nat), py, N(py), 1 << 1, false, out, 32, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_MERGED);
}

/* Up to 3.10 every frame is its own eval call: each eval takes one. */
static void test_every_frame_its_own_call(void **state)
{
	const uint32_t nat[] = { NONE, 101, NONE, NONE };
	const uint8_t kind[] = { E, O, E, E };
	const uint32_t py[] = { 1, 2, 3 };
	const uint32_t want[] = { 1, 101, 2, 3 };
	enum native_merge_result res;
	uint32_t out[32], n;

	(void)state;
	n = merge(nat, kind, N(nat), py, N(py), 7, false, out, 32, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_MERGED);
}

/* More eval calls than entries: nothing is placed between; below the innermost only. */
static void test_disagreement_keeps_below_only(void **state)
{
	const uint32_t nat[] = { 101, NONE, 102, NONE, NONE };
	const uint8_t kind[] = { O, E, O, E, E };
	const uint32_t py[] = { 1, 2 };
	const uint32_t want[] = { 101, 1, 2 };
	enum native_merge_result res;
	uint32_t out[32], n;

	(void)state;
	n = merge(nat, kind, N(nat), py, N(py), 1 << 0 | 1 << 1, false, out, 32, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_UNPLACED);
	/* the same with the Python stack cut short: its outer frames were not read */
	n = merge(nat, kind, N(nat), py, N(py), 1 << 0 | 1 << 1, true, out, 32, &res);
	assert_int_equal(res, NATIVE_MERGED);
	assert_int_equal(n, 4);
	assert_int_equal(out[2], 102);
}

/* The unwind ends early: the outer Python frames go on top unplaced among natives. */
static void test_partial_unwind(void **state)
{
	const uint32_t nat[] = { NONE, 101 };
	const uint8_t kind[] = { E, O };
	const uint32_t py[] = { 1, 2, 3 };
	const uint32_t want[] = { 1, 101, 2, 3 };
	enum native_merge_result res;
	uint32_t out[32], n;

	(void)state;
	n = merge(nat, kind, N(nat), py, N(py), 1 << 0 | 1 << 2, false, out, 32, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_PARTIAL);
	/* not even one eval call reached: below the innermost, as far as it went */
	n = merge(nat + 1, kind + 1, 1, py, N(py), 1, false, out, 32, &res);
	assert_int_equal(res, NATIVE_PARTIAL);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 101);
}

/* --async rewrote the Python frames (no entries): below the innermost only. */
static void test_no_entries(void **state)
{
	const uint32_t nat[] = { 101, NONE, 102, NONE };
	const uint8_t kind[] = { O, E, O, E };
	const uint32_t py[] = { 1, 2 };
	struct native_merge_in in = { nat, kind, N(nat), py, N(py), NULL, 0, false };
	const uint32_t want[] = { 101, 1, 2 };
	enum native_merge_result res;
	uint32_t out[32], n;

	(void)state;
	n = native_merge(&in, out, 32, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_BELOW);
}

/* The output is bounded, and the Python frames keep their room in it. */
static void test_bounded(void **state)
{
	const uint32_t nat[] = { 101, 102, 103, NONE, 104, 105, NONE };
	const uint8_t kind[] = { O, O, O, E, O, O, E };
	const uint32_t py[] = { 1, 2 };
	const uint32_t want[] = { 101, 102, 1, 2 };
	enum native_merge_result res;
	uint32_t out[4], n;

	(void)state;
	n = merge(nat, kind, N(nat), py, N(py), 3, false, out, 4, &res);
	assert_stack(out, n, want, N(want));
	assert_int_equal(res, NATIVE_UNPLACED);
	n = merge(nat, kind, N(nat), py, N(py), 3, false, out, 1, &res);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_between_python_frames),
		cmocka_unit_test(test_native_below_innermost),
		cmocka_unit_test(test_every_frame_its_own_call),
		cmocka_unit_test(test_disagreement_keeps_below_only),
		cmocka_unit_test(test_partial_unwind),
		cmocka_unit_test(test_no_entries),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
