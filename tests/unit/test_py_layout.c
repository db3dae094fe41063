/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 3.13+ layout reader against _Py_DebugOffsets captured from real
 * binaries (tests/capture_debug_offsets.sh), and against damaged copies of
 * them: a wrong cookie, another version, a free-threaded flag, an offset
 * outside its struct. Expected values are the ones verified live in
 * shared/design/cpython-internals.md section 5.
 *
 * A hostile process writes its own table: every value the reader uses is
 * set to values that wrap 64-bit sums, lie past the declared size or past
 * what pybpfprof reads, lie before a prefix, or equal a good value in their
 * low 16 bits; each must be refused naming the field. Whatever is accepted
 * is used the way pybpfprof uses it, on buffers exactly as large as those
 * it reads, so ASan sees any read outside them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <stdlib.h>

#include "cpython/code_cache.h"
#include "fixture_file.h"
#include "cpython/py_async.h"
#include "cpython/py_layout.h"

static size_t load(const char *name, uint8_t *buf)
{
	char path[256];
	size_t n;

	snprintf(path, sizeof(path), "tests/fixtures/debug_offsets/%s.bin", name);
	n = fixture_read(path, buf, PY_DEBUG_OFFSETS_READ);
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

		if (py_layout__from_debug_offsets(e->version, buf, n, &L, why, sizeof(why)))
			fail_msg("%s: %s", e->fixture, why);
		assert_int_equal(L.bpf.runtime_interp_head, e->interp_head);
		assert_int_equal(L.bpf.interp_threads_head, e->threads_head);
		assert_int_equal(L.bpf.interp_next, e->interp_next);
		assert_int_equal(L.bpf.tstate_thread_id, e->thread_id);
		assert_int_equal(L.bpf.tstate_frame, 72); /* current_frame */
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

/*
 * Free-threaded builds (tests/build-pythons.sh): the 32-byte object header
 * moves every object field 16 bytes on; the thread, interpreter and frame
 * structs are not objects and do not move. Verified on the live
 * interpreters by tests/fixtures/stackwalk/trixie-3.13t (test_stackwalk).
 */
static void use_layout(const struct py_layout *L);

static void test_free_threaded_binaries(void **state)
{
	uint8_t buf[PY_DEBUG_OFFSETS_READ];
	struct py_layout L;
	char why[160];

	(void)state;
	load("3.13.5t-trixie", buf);
	if (py_layout__from_debug_offsets(0x030D05F0, buf, sizeof(buf), &L, why, sizeof(why)))
		fail_msg("3.13.5t-trixie: %s", why);
	assert_true(L.free_threaded);
	assert_int_equal(L.bpf.runtime_interp_head, 632);
	assert_int_equal(L.bpf.interp_threads_head, 7344);
	assert_int_equal(L.bpf.tstate_thread_id, 152);
	assert_int_equal(L.bpf.tstate_frame, 72);
	assert_int_equal(L.bpf.frame_code, 0);
	assert_int_equal(L.bpf.frame_owner, 70);
	assert_int_equal(L.bpf.frame_read_size, 80);
	assert_int_equal(L.ob_type, 24);
	assert_int_equal(L.bpf.code_filename, 128);
	assert_int_equal(L.bpf.code_name, 136);
	assert_int_equal(L.bpf.code_qualname, 144);
	assert_int_equal(L.bpf.code_linetable, 152);
	assert_int_equal(L.bpf.code_firstlineno, 84);
	assert_int_equal(L.bpf.code_id_start, 84);
	assert_int_equal(L.bpf.code_id_size, 76);
	assert_int_equal(L.bpf.code_adaptive, 216);
	assert_int_equal(L.code_read_size, 216);
	assert_int_equal(L.bytes_size, 32);
	assert_int_equal(L.bytes_data, 48);
	assert_int_equal(L.bpf.str_length, 32);
	assert_int_equal(L.bpf.str_state, 48);
	assert_int_equal(L.bpf.str_ascii_data, 56);
	assert_int_equal(L.str_compact_data, 72);
	assert_int_equal(L.str_utf8_length, 56);
	assert_int_equal(L.str_utf8, 64);
	/* 3.13t keeps interned as a 2-bit field and has no thread-local bytecode */
	assert_int_equal(L.bpf.str_state_shift, 0);
	assert_int_equal(L.bpf.frame_tlbc_index, PYPROF_NO_OFFSET);
	assert_int_equal(L.bpf.code_tlbc, PYPROF_NO_OFFSET);
	assert_int_equal(L.bpf.code_tag_mask, 0);
	use_layout(&L);
}

/*
 * A 3.14t table, made from Debian's 3.14.10 one with the values a
 * free-threaded 3.14 build publishes, as derived from CPython 3.14's
 * headers (the 32-byte object header; PyCodeObject's co_tlbc before
 * co_code_adaptive, 208 + 16 + 8; _PyInterpreterFrame's int32 tlbc_index
 * after stackpointer, which moves owner to 78). No 3.14t binary was
 * available to capture: the values are the sources', not a build's.
 */
static void make_314t(uint8_t *buf)
{
	static const uint16_t pos[] = { 16,  408, 600, 608, 624, 632, 640, 312, 320,
					328, 336, 344, 352, 384, 392, 248, 288, 304 };
	static const uint64_t val[] = { 1,   24,  32,  48, 48,	32,  56, 240, 128,
					136, 144, 152, 84, 232, 224, 88, 78,  72 };
	size_t i;

	load("3.14.10-sid", buf);
	for (i = 0; i < sizeof(pos) / sizeof(pos[0]); i++)
		memcpy(buf + pos[i], &val[i], 8);
}

static void expect_refusal(const uint8_t *buf, uint32_t version, int err, const char *needle);

/* 3.14t: the str state shift and the thread-local bytecode fields are taken. */
static void test_free_threaded_314_from_sources(void **state)
{
	uint8_t buf[PY_DEBUG_OFFSETS_READ], bad[PY_DEBUG_OFFSETS_READ];
	struct py_layout L;
	char why[160];
	uint64_t v;

	(void)state;
	make_314t(buf);
	if (py_layout__from_debug_offsets(0x030E0AF0, buf, sizeof(buf), &L, why, sizeof(why)))
		fail_msg("3.14t: %s", why);
	assert_true(L.free_threaded);
	assert_int_equal(L.bpf.str_state_shift, 8);
	assert_int_equal(L.bpf.frame_tlbc_index, 72);
	assert_int_equal(L.bpf.code_tlbc, 224);
	assert_int_equal(L.bpf.code_adaptive, 232);
	assert_int_equal(L.code_read_size, 232);
	assert_int_equal(L.bpf.frame_owner, 78);
	assert_int_equal(L.bpf.frame_read_size, 88);
	assert_int_equal(L.bpf.code_tag_mask, 3);
	assert_int_equal(L.ob_type, 24);
	assert_int_equal(L.bpf.str_ascii_data, 56);
	assert_int_equal(L.str_compact_data, 72);
	use_layout(&L);
	/* tlbc_index past the frame read, co_tlbc inside the bytecode: refused */
	memcpy(bad, buf, sizeof(bad));
	v = 86;
	memcpy(bad + 304, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EBADMSG, "interpreter_frame.tlbc_index = 0x56");
	memcpy(bad, buf, sizeof(bad));
	v = 232;
	memcpy(bad + 392, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EBADMSG, "code_object.co_tlbc = 0xe8");
	/* inside the object header */
	v = 16;
	memcpy(bad + 392, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EBADMSG, "code_object.co_tlbc = 0x10");
}

static void expect_refusal(const uint8_t *buf, uint32_t version, int err, const char *needle)
{
	struct py_layout L;
	char why[160] = "";

	assert_int_equal(py_layout__from_debug_offsets(version, buf, PY_DEBUG_OFFSETS_READ, &L, why,
						       sizeof(why)),
			 err);
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

	/*
	 * A default build's table claiming to be free-threaded: it has no
	 * thread-local bytecode (co_tlbc 0, inside the object header).
	 */
	memcpy(bad, good, sizeof(bad));
	v = 1;
	memcpy(bad + 16, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EBADMSG, "code_object.co_tlbc = 0x0");
	/* and a free-threaded one claiming the default build: its 32-byte header tells */
	load("3.13.5t-trixie", bad);
	v = 0;
	memcpy(bad + 16, &v, 8);
	expect_refusal(bad, 0x030D05F0, -EBADMSG,
		       "pyobject.ob_type = 0x18: every supported default build has 8");
	v = 1;
	/* nor do 3.13's: there its 16-byte object header tells */
	load("3.13.5-trixie", bad);
	memcpy(bad + 16, &v, 8);
	expect_refusal(bad, 0x030D05F0, -EBADMSG,
		       "pyobject.ob_type = 0x8: every supported free-threaded build has 24");
	v = 2;
	memcpy(bad + 16, &v, 8);
	expect_refusal(bad, 0x030D05F0, -EBADMSG, "free_threaded = 0x2");

	/* thread_state.thread_id (position 216 in 3.14) far outside PyThreadState */
	memcpy(bad, good, sizeof(bad));
	v = 1 << 20;
	memcpy(bad + 216, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EBADMSG, "thread_state.thread_id = 0x100000");

	/* interpreter_frame.owner (288) past the end of the frame */
	memcpy(bad, good, sizeof(bad));
	v = 4096;
	memcpy(bad + 288, &v, 8);
	expect_refusal(bad, 0x030E0AF0, -EBADMSG, "interpreter_frame.owner = 0x1000");
}

/* A field the reader uses: its position in each version's table and its width. */
struct used_field {
	const char *name;
	uint16_t pos[3]; /* 3.13, 3.14, 3.15 */
};

static const struct used_field used[] = {
	{ "runtime_state.size", { 24, 24, 24 } },
	{ "runtime_state.interpreters_head", { 40, 40, 40 } },
	{ "interpreter_state.size", { 48, 48, 48 } },
	{ "interpreter_state.next", { 64, 64, 64 } },
	{ "interpreter_state.threads_head", { 72, 72, 72 } },
	{ "thread_state.size", { 152, 176, 176 } },
	{ "thread_state.next", { 168, 192, 192 } },
	{ "thread_state.interp", { 176, 200, 200 } },
	{ "thread_state.current_frame", { 184, 208, 208 } },
	{ "thread_state.thread_id", { 192, 216, 240 } },
	{ "interpreter_frame.size", { 224, 248, 312 } },
	{ "interpreter_frame.previous", { 232, 256, 320 } },
	{ "interpreter_frame.executable", { 240, 264, 328 } },
	{ "interpreter_frame.instr_ptr", { 248, 272, 336 } },
	{ "interpreter_frame.owner", { 264, 288, 352 } },
	{ "code_object.size", { 272, 312, 376 } },
	{ "code_object.filename", { 280, 320, 384 } },
	{ "code_object.name", { 288, 328, 392 } },
	{ "code_object.qualname", { 296, 336, 400 } },
	{ "code_object.linetable", { 304, 344, 408 } },
	{ "code_object.firstlineno", { 312, 352, 416 } },
	{ "code_object.co_code_adaptive", { 344, 384, 448 } },
	{ "pyobject.ob_type", { 360, 408, 472 } },
	{ "bytes_object.ob_size", { 520, 600, 696 } },
	{ "bytes_object.ob_sval", { 528, 608, 704 } },
	{ "unicode_object.state", { 544, 624, 720 } },
	{ "unicode_object.length", { 552, 632, 728 } },
	{ "unicode_object.asciiobject_size", { 560, 640, 736 } },
	{ "unicode_object.compactunicodeobject_size", { 0, 0, 744 } },
	/* used by free-threaded builds only: a default build's are ignored */
	{ "interpreter_frame.tlbc_index", { 0, 304, 368 } },
	{ "code_object.co_tlbc", { 0, 392, 456 } },
};

static const struct {
	const char *fixture;
	uint32_t version;
	int col;
	bool free_threaded;
} tables[] = {
	{ "3.13.0-pyenv", 0x030D00F0, 0, false },
	{ "3.14.10-sid", 0x030E0AF0, 1, false },
	{ "3.15.2-sid", 0x030F02F0, 2, false },
	{ "3.13.5t-trixie", 0x030D05F0, 0, true },
};

static uint64_t get64(const uint8_t *buf, uint16_t pos)
{
	uint64_t v;

	memcpy(&v, buf + pos, 8);
	return v;
}

static void put64(uint8_t *buf, uint16_t pos, uint64_t v)
{
	memcpy(buf + pos, &v, 8);
}

/* why starts with a field of name's group ("code_object.", "unicode_object."). */
static bool same_group(const char *why, const char *name)
{
	size_t n = strchr(name, '.') - name + 1;

	return !strncmp(why, name, n);
}

/*
 * Uses an accepted layout as pybpfprof does, each buffer exactly as large
 * as what it reads (malloc'd, so ASan bounds it): the frame (first_code and
 * BPF's walk_step), the code object's head (read_code), its identity prefix
 * and the qualname's bytes (code_identity), a str's head (remote_read_str).
 */
static void use_layout(const struct py_layout *L)
{
	const struct py_offsets *o = &L->bpf;
	uint8_t *frame = malloc(o->frame_read_size), *head = malloc(L->code_read_size);
	uint8_t *str = malloc(PY_STR_READ), *shead = malloc(L->str_compact_data);
	struct code_head h;
	char why[256];
	uint64_t w;
	uint32_t st;

	assert_non_null(frame);
	assert_non_null(head);
	assert_non_null(str);
	assert_non_null(shead);
	if (py_layout__check(L, why, sizeof(why)))
		fail_msg("accepted layout fails its invariant: %s", why);
	memset(frame, 0x5a, o->frame_read_size);
	memset(head, 0x5a, L->code_read_size);
	memset(str, 0x60, PY_STR_READ);
	memset(shead, 0x60, L->str_compact_data);
	/* first_code() in src/cpython/target.c */
	memcpy(&w, frame + o->frame_code, 8);
	memcpy(&w, frame + o->frame_previous, 8);
	memcpy(&w, frame + o->frame_instr, 8);
	if (o->frame_owner != PYPROF_NO_OFFSET)
		assert_int_equal(frame[o->frame_owner], 0x5a);
	/* bytecode_base() in bpf/stackwalk.h (3.14t) */
	if (o->frame_tlbc_index != PYPROF_NO_OFFSET)
		memcpy(&st, frame + o->frame_tlbc_index, 4);
	if (o->code_tlbc != PYPROF_NO_OFFSET)
		memcpy(&w, head + o->code_tlbc, 8);
	/* read_code() in src/cpython/code_cache.c */
	assert_int_equal(code_head__parse(L, head, L->code_read_size, &h), 0);
	(void)code_identity(o, h.code_id, str);
	(void)code_identity(o, h.code_id, NULL);
	/* remote_read_str() in src/cpython/remote_mem.c */
	memcpy(&w, shead + o->str_length, 8);
	memcpy(&st, shead + o->str_state, 4);
	free(frame);
	free(head);
	free(str);
	free(shead);
}

/* Every used field set to every hostile value: refused naming it, or safe to use. */
static void test_hostile_values(void **state)
{
	uint8_t good[PY_DEBUG_OFFSETS_READ], bad[PY_DEBUG_OFFSETS_READ];
	size_t t, f, k, refused = 0, accepted = 0;

	(void)state;
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		load(tables[t].fixture, good);
		for (f = 0; f < sizeof(used) / sizeof(used[0]); f++) {
			uint16_t pos = used[f].pos[tables[t].col];
			uint64_t g, vals[16];

			if (!pos)
				continue;
			g = get64(good, pos);
			vals[0] = 0xFFFFFFFFFFFFFFF8ULL;   /* + 8 wraps to 0 */
			vals[1] = 0xFFFFFFFFFFFFFFFFULL;   /* + 1 wraps to 0; -1 */
			vals[2] = 0x8000000000000000ULL;   /* negative as int64 */
			vals[3] = (uint64_t) - (int64_t)g; /* -good */
			vals[4] = g + 0x10000;		   /* the good value in its low 16 bits */
			vals[5] = g + 0x100000000ULL;	   /* the good value in its low 32 bits */
			vals[6] = g | 0xFFFF000000000000ULL;
			vals[7] = 0xFFFF; /* PYPROF_NO_OFFSET */
			vals[8] = 0xFFF8;
			vals[9] = 0;
			vals[10] = g + 1;
			vals[11] = g - 1;
			vals[12] = 257; /* past PY_CODE_HEAD_READ */
			vals[13] = 129; /* past PYPROF_FRAME_READ */
			vals[14] = 4096;
			vals[15] = 1ULL << 32;
			for (k = 0; k < 16; k++) {
				struct py_layout L;
				char why[256] = "";
				int err;

				memcpy(bad, good, sizeof(bad));
				put64(bad, pos, vals[k]);
				memset(&L, 0xee, sizeof(L));
				err = py_layout__from_debug_offsets(tables[t].version, bad,
								    sizeof(bad), &L, why,
								    sizeof(why));
				if (err) {
					assert_int_equal(err, -EBADMSG);
					/* a size (or the end of the fields) names what no longer fits */
					if (!strstr(why, used[f].name) &&
					    !(same_group(why, used[f].name) &&
					      (strstr(used[f].name, "size") ||
					       strstr(used[f].name, "firstlineno") ||
					       strstr(used[f].name, "co_code_adaptive"))))
						fail_msg("%s %s = 0x%llx: '%s' names another field",
							 tables[t].fixture, used[f].name,
							 (unsigned long long)vals[k], why);
					refused++;
					continue;
				}
				accepted++;
				use_layout(&L);
			}
			/*
			 * Values whose low bits are the good one must never be taken for
			 * it. (The sizes of the runtime, interpreter and thread states
			 * are not stored, and a larger one is no error.)
			 */
			for (k = 4; k <= 6 && !strstr(used[f].name, "state.size") &&
				    (tables[t].free_threaded || !strstr(used[f].name, "tlbc"));
			     k++) {
				struct py_layout L;
				char why[256];

				memcpy(bad, good, sizeof(bad));
				put64(bad, pos, vals[k]);
				if (!py_layout__from_debug_offsets(tables[t].version, bad,
								   sizeof(bad), &L, why,
								   sizeof(why)))
					fail_msg("%s %s = 0x%llx accepted", tables[t].fixture,
						 used[f].name, (unsigned long long)vals[k]);
			}
		}
	}
	print_message("hostile values: %zu refused, %zu accepted and used safely\n", refused,
		      accepted);
	assert_true(refused > 0 && accepted > 0);
}

/* The cases of issue 11, each with the sentence it must produce. */
static void test_hostile_named(void **state)
{
	uint8_t good[PY_DEBUG_OFFSETS_READ], bad[PY_DEBUG_OFFSETS_READ];

	(void)state;
	load("3.13.0-pyenv", good);

	/* code_object.qualname near 2^64: qualname + 8 wraps to 0 */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 296, 0xFFFFFFFFFFFFFFF8ULL);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "code_object.qualname = 0xfffffffffffffff8");
	/* code_object.linetable past the declared size (208) */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 304, 208);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "code_object.linetable = 0xd0");
	/* inside the declared size, but past co_code_adaptive (200), the end of the head read */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 304, 200);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "code_object.linetable = 0xc8");
	/* code_object.filename below co_firstlineno (68), the identity prefix's start */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 280, 60);
	expect_refusal(bad, 0x030D00F0, -EBADMSG,
		       "code_object.filename = 0x3c: its 8 bytes are not within bytes [68, 196)");
	/* code_object.name more than PY_CODE_ID_READ past co_firstlineno */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 312, 24);
	put64(bad, 288, 24 + PY_CODE_ID_READ);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "code_object.name = 0x98");
	/* a code object larger than pybpfprof reads */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 272, PY_CODE_HEAD_READ + 8);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "code_object.size = 0x108");
	/* a frame larger than pybpfprof reads, with its fields placed past the read */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 224, PYPROF_FRAME_READ + 64);
	put64(bad, 232, PYPROF_FRAME_READ + 8);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "interpreter_frame.size = 0xc0");
	/* interpreter_frame.executable near 2^64 */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 240, 0xFFFFFFFFFFFFFFFCULL);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "interpreter_frame.executable");
	/* runtime_state.interpreters_head that only its low 16 bits make plausible */
	memcpy(bad, good, sizeof(bad));
	put64(bad, 40, 0x10000 + 632);
	expect_refusal(bad, 0x030D00F0, -EBADMSG, "runtime_state.interpreters_head = 0x10278");
	/* a str head larger than pybpfprof reads (3.15 publishes it) */
	load("3.15.2-sid", good);
	memcpy(bad, good, sizeof(bad));
	put64(bad, 744, PY_STR_HEAD_READ + 8);
	expect_refusal(bad, 0x030F02F0, -EBADMSG, "unicode_object.compactunicodeobject_size");
}

/* The built-in tables keep the invariant the reader guarantees. */
static void test_builtin_tables(void **state)
{
	static const uint32_t versions[] = { 0x030812F0, 0x030912F0, 0x030A0DF0, 0x030B02F0,
					     0x030C00F0 };
	struct py_layout L;
	char why[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		assert_int_equal(py_layout__for_version(versions[i], &L), 0);
		if (py_layout__check(&L, why, sizeof(why)))
			fail_msg("3.%u: %s", (versions[i] >> 16) & 0xff, why);
		use_layout(&L);
	}
	/* and the check sees a slip */
	assert_int_equal(py_layout__for_version(0x030C00F0, &L), 0);
	L.bpf.code_qualname = L.bpf.code_id_start - 8;
	assert_int_equal(py_layout__check(&L, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "code_qualname"));
	assert_int_equal(py_layout__for_version(0x030C00F0, &L), 0);
	L.bpf.frame_owner = PYPROF_FRAME_READ;
	assert_int_equal(py_layout__check(&L, why, sizeof(why)), -EBADMSG);
}

/* code_identity and code_head__parse never read outside their bytes, whatever the layout. */
static void test_code_readers_bounded(void **state)
{
	struct py_layout L;
	struct code_head h;
	uint8_t *head, *id, *str;
	size_t i;

	(void)state;
	assert_int_equal(py_layout__for_version(0x030C00F0, &L), 0);
	head = malloc(L.code_read_size);
	id = malloc(L.bpf.code_id_size);
	str = malloc(PY_STR_READ);
	assert_non_null(head);
	assert_non_null(id);
	assert_non_null(str);
	memset(head, 1, L.code_read_size);
	memset(id, 1, L.bpf.code_id_size);
	memset(str, 0x60, PY_STR_READ);
	for (i = 0; i < 6; i++) {
		struct py_layout H = L;
		uint16_t *fld[] = { &H.bpf.code_qualname,    &H.bpf.code_filename,
				    &H.bpf.code_name,	     &H.bpf.code_linetable,
				    &H.bpf.code_firstlineno, &H.bpf.str_ascii_data };

		*fld[i] = 0xfff8;
		if (i != 2 && i != 5) /* read_code reads neither co_name nor str */
			assert_int_equal(code_head__parse(&H, head, H.code_read_size, &h), -EINVAL);
		(void)code_identity(&H.bpf, id, str);
		*fld[i] = H.bpf.code_id_start > 0 ? H.bpf.code_id_start - 1 : 0;
		(void)code_identity(&H.bpf, id, str);
	}
	/* a line below 1 in the object is unknown */
	memset(head, 0, L.code_read_size);
	memcpy(head + L.bpf.code_firstlineno, &(int32_t){ -7 }, 4);
	assert_int_equal(code_head__parse(&L, head, L.code_read_size, &h), 0);
	assert_int_equal(h.firstlineno, -1);
	memcpy(head + L.bpf.code_firstlineno, &(int32_t){ 0 }, 4);
	assert_int_equal(code_head__parse(&L, head, L.code_read_size, &h), 0);
	assert_int_equal(h.firstlineno, -1);
	memcpy(head + L.bpf.code_firstlineno, &(int32_t){ 12 }, 4);
	assert_int_equal(code_head__parse(&L, head, L.code_read_size, &h), 0);
	assert_int_equal(h.firstlineno, 12);
	/* a head shorter than the layout needs */
	assert_int_equal(code_head__parse(&L, head, L.bpf.code_linetable + 7, &h), -EINVAL);
	free(head);
	free(id);
	free(str);
}

/*
 * The asyncio task layouts: every field inside the TaskObj read, 3.14 and
 * 3.15 as their _asyncio AsyncioDebug sections say (read from sid's
 * _asyncio.cpython-314 and python3.15 binaries), none before 3.11.
 */
static void test_async_layouts(void **state)
{
	static const struct {
		uint32_t hex;
		uint16_t node, head, running_task;
		uint32_t interp;
	} debug[] = { { 0x030E0AF0, 152, 880, 872, 10880 },
		      { 0x030F02F0, 152, 1048, 1032, 10856 } };
	struct py_async_layout A;
	unsigned minor, i;

	(void)state;
	assert_int_equal(py_layout__async(0x030A0DF0, &A), -ENOTSUP);
	assert_int_equal(py_layout__async(0x031000A0, &A), -ENOTSUP);
	for (minor = 11; minor <= 15; minor++) {
		assert_int_equal(py_layout__async(0x03000000 | minor << 16, &A), 0);
		assert_true(A.fut_state + 4 <= A.task_size && A.task_fut_waiter + 8 <= A.task_size);
		assert_true(A.task_coro + 8 <= A.task_size && A.task_name + 8 <= A.task_size);
		assert_true(A.task_size <= 256); /* what add_task reads at once */
		assert_true((A.interp_modules == PYPROF_NO_OFFSET) ==
			    (A.tstate_tasks != PYPROF_NO_OFFSET));
		assert_int_equal(A.task_coro, minor == 13 ? 120 : minor >= 14 ? 128 : 136);
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(py_layout__async(debug[i].hex, &A), 0);
		assert_int_equal(A.task_name, 136);
		assert_int_equal(A.task_node, debug[i].node);
		assert_int_equal(A.tstate_tasks, debug[i].head);
		assert_int_equal(A.tstate_running_task, debug[i].running_task);
		assert_int_equal(A.interp_tasks, debug[i].interp);
		assert_true(A.task_node + 16 <= A.task_size);
	}
}

/* The awaited slot: past the locals, within the stack, or none. */
static void test_async_await_slot(void **state)
{
	struct py_async_layout A;
	const uint64_t f = 0x7f0000001000;

	(void)state;
	/* 3.12: stacktop counts slots from localsplus (72); 3 locals, one item on the stack */
	assert_int_equal(py_layout__async(0x030C01F0, &A), 0);
	assert_int_equal(py_async_await_slot(&A, 72, f, 4, 3), f + 72 + 3 * 8);
	assert_int_equal(py_async_await_slot(&A, 72, f, 3, 3), 0); /* empty stack */
	assert_int_equal(py_async_await_slot(&A, 72, f, 0xffffffff, 3), 0);
	assert_int_equal(py_async_await_slot(&A, 72, f, 3 + 513, 3), 0);
	/* 3.14: stackpointer; 3.15: one null reference above the awaited object */
	assert_int_equal(py_layout__async(0x030E0AF0, &A), 0);
	assert_int_equal(py_async_await_slot(&A, 80, f, f + 80 + 4 * 8, 3), f + 80 + 3 * 8);
	assert_int_equal(py_async_await_slot(&A, 80, f, f + 80 + 3 * 8, 3), 0);
	assert_int_equal(py_async_await_slot(&A, 80, f, f + 80 + 4 * 8 + 1, 3), 0);
	assert_int_equal(py_layout__async(0x030F02F0, &A), 0);
	assert_int_equal(py_async_await_slot(&A, 80, f, f + 80 + 5 * 8, 3), f + 80 + 3 * 8);
	assert_int_equal(py_async_await_slot(&A, 80, f, f + 80 + 4 * 8, 3), 0);
	/* a frame at the top of the address space, huge counts: none, no wrap */
	assert_int_equal(py_async_await_slot(&A, 80, UINT64_MAX - 100, UINT64_MAX, 0), 0);
	assert_int_equal(py_async_await_slot(&A, 80, f, f + 80, 1u << 20), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_async_layouts),
		cmocka_unit_test(test_async_await_slot),
		cmocka_unit_test(test_real_binaries),
		cmocka_unit_test(test_free_threaded_binaries),
		cmocka_unit_test(test_free_threaded_314_from_sources),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_hostile_values),
		cmocka_unit_test(test_hostile_named),
		cmocka_unit_test(test_builtin_tables),
		cmocka_unit_test(test_code_readers_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
