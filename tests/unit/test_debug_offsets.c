/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 3.13+ layout reader against _Py_DebugOffsets captured from real
 * binaries (tests/capture_debug_offsets.sh), and against damaged copies of
 * them: a wrong cookie, another version, a free-threaded flag, an offset
 * outside its struct. Expected values are the ones verified live in
 * shared/design/cpython-internals.md section 5.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "py_offsets.h"

static size_t load(const char *name, uint8_t *buf)
{
	char path[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "tests/fixtures/debug_offsets/%s.bin", name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("missing fixture %s (run the tests from the repository root)", path);
	n = fread(buf, 1, PY_DEBUG_OFFSETS_READ, f);
	fclose(f);
	assert_int_equal(n, PY_DEBUG_OFFSETS_READ);
	return n;
}

struct expect {
	const char *fixture;
	uint32_t version;
	uint16_t interp_head, threads_head, interp_next, thread_id, frame_read, owner, adaptive;
	uint16_t ascii_data, compact_data;
	uint8_t tag_mask;
};

static const struct expect cases[] = {
	{ "3.13.0-pyenv", 0x030D00F0, 632, 7344, 7264, 152, 80, 70, 200, 40, 56, 0 },
	{ "3.13.5-trixie", 0x030D05F0, 632, 7344, 7264, 152, 80, 70, 200, 40, 56, 0 },
	{ "3.14.8-forky", 0x030E08F0, 808, 7344, 7272, 152, 88, 74, 208, 40, 56, 3 },
	{ "3.14.10-sid", 0x030E0AF0, 808, 7344, 7272, 152, 88, 74, 208, 40, 56, 3 },
	{ "3.15.2-sid", 0x030F02F0, 936, 7336, 7264, 176, 88, 74, 208, 40, 56, 3 },
};

static void test_real_binaries(void **state)
{
	uint8_t buf[PY_DEBUG_OFFSETS_READ];
	struct py_layout L;
	char why[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct expect *e = &cases[i];
		size_t n = load(e->fixture, buf);

		if (py_layout_from_debug_offsets(e->version, buf, n, &L, why, sizeof(why)))
			fail_msg("%s: %s", e->fixture, why);
		assert_int_equal(L.bpf.runtime_interp_head, e->interp_head);
		assert_int_equal(L.bpf.interp_threads_head, e->threads_head);
		assert_int_equal(L.bpf.interp_next, e->interp_next);
		assert_int_equal(L.bpf.tstate_thread_id, e->thread_id);
		assert_int_equal(L.bpf.tstate_frame, 72);	/* current_frame */
		assert_int_equal(L.bpf.tstate_next, 8);
		assert_int_equal(L.tstate_interp, 16);
		assert_int_equal(L.bpf.cframe_current_frame, PYPROF_NO_OFFSET);
		assert_int_equal(L.bpf.frame_code, 0);
		assert_int_equal(L.bpf.frame_previous, 8);
		assert_int_equal(L.bpf.frame_instr, 56);
		assert_int_equal(L.bpf.frame_owner, e->owner);
		assert_int_equal(L.bpf.frame_read_size, e->frame_read);
		assert_int_equal(L.bpf.code_filename, 112);
		assert_int_equal(L.bpf.code_name, 120);
		assert_int_equal(L.bpf.code_qualname, 128);
		assert_int_equal(L.bpf.code_linetable, 136);
		assert_int_equal(L.bpf.code_firstlineno, 68);
		assert_int_equal(L.bpf.code_adaptive, e->adaptive);
		assert_int_equal(L.bpf.code_id_start, 68);
		assert_int_equal(L.bpf.code_id_size, 76);
		assert_int_equal(L.bpf.str_ascii_data, e->ascii_data);
		assert_int_equal(L.str_compact_data, e->compact_data);
		assert_int_equal(L.bpf.code_tag_mask, e->tag_mask);
		assert_int_equal(L.bpf.owner_skip_min, 3);
		assert_int_equal(L.linetable, LINETABLE_LOCATIONS);
	}
}

static void expect_refusal(const uint8_t *buf, uint32_t version, int err, const char *needle)
{
	struct py_layout L;
	char why[160] = "";

	assert_int_equal(py_layout_from_debug_offsets(version, buf, PY_DEBUG_OFFSETS_READ, &L, why,
						      sizeof(why)), err);
	if (!strstr(why, needle))
		fail_msg("'%s' does not mention '%s'", why, needle);
}

static void test_damaged(void **state)
{
	uint8_t good[PY_DEBUG_OFFSETS_READ], bad[PY_DEBUG_OFFSETS_READ];
	uint64_t v;

	(void)state;
	load("3.14.10-sid", good);

	memcpy(bad, good, sizeof(bad));
	bad[0] = 'X';
	expect_refusal(bad, 0x030E0AF0, -EPROTO, "cookie");
	/* the binary says 3.13: the struct of a 3.14 must not be read with 3.13 positions */
	expect_refusal(good, 0x030D05F0, -EPROTO, "version");
	expect_refusal(good, 0x030C00F0, -ENOTSUP, "3.12");

	memcpy(bad, good, sizeof(bad));
	v = 1;
	memcpy(bad + 16, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -ENOTSUP, "free-threaded");

	/* thread_state.thread_id (position 216 in 3.14) far outside PyThreadState */
	memcpy(bad, good, sizeof(bad));
	v = 1 << 20;
	memcpy(bad + 216, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EPROTO, "implausible");

	/* interpreter_frame.owner (288) past the end of the frame */
	memcpy(bad, good, sizeof(bad));
	v = 4096;
	memcpy(bad + 288, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EPROTO, "implausible");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_binaries),
		cmocka_unit_test(test_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
