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

/* Merges into 32 frames of room and checks the stack and how it went. */
#define EXPECT_MERGE(nat, kind, py, entries, cut, want, result)                                    \
	do {                                                                                       \
		enum native_merge_result res_;                                                     \
		uint32_t out_[32], n_;                                                             \
                                                                                                   \
		n_ = merge(nat, kind, N(nat), py, N(py), entries, cut, out_, 32, &res_);           \
		assert_stack(out_, n_, want, N(want));                                             \
		assert_int_equal(res_, result);                                                    \
	} while (0)

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

	(void)state;
	EXPECT_MERGE(nat, kind, py, 1 << 0 | 1 << 2, false, want, NATIVE_MERGED);
}

/* A tick in native code: its frames below the innermost Python frame, as before. */
static void test_native_below_innermost(void **state)
{
	const uint32_t nat[] = { 101, 102, NONE, NONE, 103 };
	const uint8_t kind[] = { O, O, I, E, O };
	const uint32_t py[] = { 1, 2 };
	const uint32_t want[] = { 101, 102, 1, 2 };

	(void)state;
	EXPECT_MERGE(nat, kind, py, 1 << 1, false, want, NATIVE_MERGED);
}

/* Up to 3.10 every frame is its own eval call: each eval takes one. */
static void test_every_frame_its_own_call(void **state)
{
	const uint32_t nat[] = { NONE, 101, NONE, NONE };
	const uint8_t kind[] = { E, O, E, E };
	const uint32_t py[] = { 1, 2, 3 };
	const uint32_t want[] = { 1, 101, 2, 3 };

	(void)state;
	EXPECT_MERGE(nat, kind, py, 7, false, want, NATIVE_MERGED);
}

/* More eval calls than entries: nothing is placed between; below the innermost only. */
static void test_disagreement_keeps_below_only(void **state)
{
	const uint32_t nat[] = { 101, NONE, 102, NONE, NONE };
	const uint8_t kind[] = { O, E, O, E, E };
	const uint32_t py[] = { 1, 2 };
	const uint32_t below[] = { 101, 1, 2 }, merged[] = { 101, 1, 102, 2 };

	(void)state;
	EXPECT_MERGE(nat, kind, py, 1 << 0 | 1 << 1, false, below, NATIVE_UNPLACED);
	/* the same with the Python stack cut short: its outer frames were not read */
	EXPECT_MERGE(nat, kind, py, 1 << 0 | 1 << 1, true, merged, NATIVE_MERGED);
}

/* The unwind ends early: the outer Python frames go on top unplaced among natives. */
static void test_partial_unwind(void **state)
{
	const uint32_t nat[] = { NONE, 101 }, early[] = { 101 };
	const uint8_t kind[] = { E, O }, early_kind[] = { O };
	const uint32_t py[] = { 1, 2, 3 };
	const uint32_t want[] = { 1, 101, 2, 3 }, below[] = { 101, 1, 2, 3 };

	(void)state;
	EXPECT_MERGE(nat, kind, py, 1 << 0 | 1 << 2, false, want, NATIVE_PARTIAL);
	/* not even one eval call reached: below the innermost, as far as it went */
	EXPECT_MERGE(early, early_kind, py, 1, false, below, NATIVE_PARTIAL);
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

/*
 * 3.12+: the frame whose part of the stack holds a shim is the eval call;
 * a named _PyEval_EvalFrameDefault that holds none (a wrapper) is not.
 */
static void test_eval_by_shims(void **state)
{
	/* a leaf, the unnamed loop holding a shim, the named wrapper, another loop, main */
	const uint64_t sps[] = { 0x1000, 0x1100, 0x1400, 0x1500, 0x1900 };
	const uint64_t shims[] = { 0x1200, 0x1780 };
	uint8_t kind[] = { O, I, E, I, O };
	const uint8_t want[] = { O, E, I, E, O };

	(void)state;
	native_merge_eval_by_shims(kind, sps, 5, 0x2000, shims, 2);
	assert_memory_equal(kind, want, sizeof(want));
}

/*
 * Shim addresses and stack pointers come from the target: shims outside
 * the stack, below or above every frame, on a frame of unknown stack
 * pointer, many on one frame, stack pointers out of order. Each shim marks
 * one frame at most, and only one whose part holds it.
 */
static void test_eval_by_shims_hostile(void **state)
{
	const uint64_t sps[] = { 0x1000, 0, 0x1400, 0x1300, UINT64_MAX };
	const uint64_t shims[] = {
		0, 0x10, 0x1050, 0x1050, 0x1050, 0x1350, 0x7fff0000, UINT64_MAX
	};
	uint8_t kind[] = { O, O, O, O, O };
	/* frame 0's part ends at an unknown 0, frame 2's is empty: only frame 3's holds shims */
	const uint8_t want[] = { O, O, O, E, O };

	(void)state;
	native_merge_eval_by_shims(kind, sps, 5, 0x2000, shims, N(shims));
	assert_memory_equal(kind, want, sizeof(want));
	/* and nothing at all with no frame */
	native_merge_eval_by_shims(kind, sps, 0, 0x2000, shims, N(shims));
	assert_memory_equal(kind, want, sizeof(want));
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
		cmocka_unit_test(test_eval_by_shims),
		cmocka_unit_test(test_eval_by_shims_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
