/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for --signatures' namer (cpython/py_signature.c): the offsets BPF
 * gets per build, and the text and key of signature records over
 * hand-built objects in this process (read back through process_vm_readv
 * as a target's), laid out as CPython 3.11 lays them out; then records
 * that lie: counts past the bound, an array without its dimensions, a type
 * pointer to nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cpython/py_signature.h"
#include "fake_memory.h"

#define NOBJ 16
#define OBJ 512

static uint8_t objs[NOBJ][OBJ] __attribute__((aligned(64)));
static unsigned nobj;
static struct py_layout layout;
static struct py_reader reader;

static uint8_t *new_obj(void)
{
	assert_true(nobj < NOBJ);
	memset(objs[nobj], 0, OBJ);
	return objs[nobj++];
}

/* A static type object named name. */
static uint8_t *new_type(const char *name)
{
	uint8_t *t = new_obj();

	snprintf((char *)t + 256, 64, "%s", name);
	put64(t, 24, addr(t + 256));
	return t;
}

/* A compact ASCII str (3.11). */
static uint8_t *new_name(const uint8_t *tstr, const char *text)
{
	uint8_t *o = new_obj();
	uint32_t state = 0x60 | (1 << 2);

	put64(o, 8, addr(tstr));
	put64(o, layout.bpf.str_length, strlen(text));
	memcpy(o + layout.bpf.str_state, &state, sizeof(state));
	memcpy(o + layout.bpf.str_ascii_data, text, strlen(text));
	return o;
}

/* A code object whose co_localsplusnames names its first locals. */
static uint8_t *new_code(const uint8_t *tstr, const char *const *names, unsigned n)
{
	uint8_t *code = new_obj(), *tuple = new_obj();
	unsigned i;

	put64(code, reader.O.code_names, addr(tuple));
	put64(tuple, 16, n);
	for (i = 0; i < n; i++)
		put64(tuple, reader.O.tuple_items + 8 * i, addr(new_name(tstr, names[i])));
	return code;
}

static void setup_311(void)
{
	nobj = 0;
	assert_int_equal(py_layout__for_version(0x030B02F0, &layout), 0);
	assert_int_equal(py_reader__init(&reader, getpid(), &layout, 0x030B02F0), 0);
}

static void test_offsets(void **state)
{
	struct py_sig_offsets so;

	(void)state;
	assert_int_equal(py_sig_offsets__for(0x030812F0, false, &so), 0);
	assert_int_equal(so.code_counts + so.argcount, 16); /* co_argcount, 3.8 */
	assert_int_equal(so.code_counts + so.flags, 36);    /* co_flags */
	assert_int_equal(so.frame_localsplus, 360);
	assert_int_equal(py_sig_offsets__for(0x030B07F0, false, &so), 0);
	assert_int_equal(so.code_counts + so.argcount, 56);
	assert_int_equal(so.code_counts + so.flags, 48);
	assert_int_equal(py_sig_offsets__for(0x030F02F0, false, &so), 0);
	assert_int_equal(so.code_counts + so.argcount, 52);
	assert_int_equal(so.stackref, 1);
	assert_int_equal(so.frame_localsplus, 80);
	/* every window lies inside what BPF reads of a code object */
	assert_true(so.argcount + 12 <= PY_SIG_CODE_READ && so.flags + 4 <= PY_SIG_CODE_READ);
	assert_int_equal(py_sig_offsets__for(0x030D00F0, true, &so), -ENOTSUP);
	assert_int_equal(py_sig_offsets__for(0x030700F0, false, &so), -ENOTSUP);
}

static void test_text(void **state)
{
	static const char *const names[] = { "x", "a", "t", "u" };
	struct py_sig_frame f = { .nargs = 4, .nread = 4 };
	uint8_t *tstr, *tint, *tarr, *descr;
	char out[PY_SIG_TEXT];
	uint64_t k1, k2;

	(void)state;
	setup_311();
	tstr = new_type("str");
	tint = new_type("int");
	tarr = new_type("numpy.ndarray");
	descr = new_obj();
	put64(descr, 24, (uint64_t)12 << 32); /* type_num 12 at 28: float64 */
	f.code = addr(new_code(tstr, names, 4));
	f.args[0].type = addr(tint);
	f.args[1] = (struct py_sig_arg){ .type = addr(tarr),
					 .descr = addr(descr),
					 .dims = { 500, 400 },
					 .nd = 2,
					 .flags = PY_SIG_DIMS };
	f.args[2].flags = PY_SIG_TAGGED_INT;
	f.args[3].flags = PY_SIG_UNBOUND;
	assert_int_equal(py_signature_text(&reader, &f, out, sizeof(out)), 0);
	assert_string_equal(out, "(x: int, a: ndarray[float64, (500, 400)], t: int, u: <unbound>)");

	/* the key follows the shape of an array, not the bytes of other objects */
	k1 = py_signature_key(&reader, &f);
	f.args[0].dims[0] = 7; /* an int's words: not part of it */
	assert_true(py_signature_key(&reader, &f) == k1);
	f.args[1].dims[1] = 401;
	k2 = py_signature_key(&reader, &f);
	assert_true(k2 != k1);
	assert_int_equal(py_signature_text(&reader, &f, out, sizeof(out)), 0);
	assert_string_equal(out, "(x: int, a: ndarray[float64, (500, 401)], t: int, u: <unbound>)");
}

static void test_lies(void **state)
{
	static const char *const names[] = { "x", "y" };
	struct py_sig_frame f = { .nargs = 60000, .nread = 200 };
	uint8_t *tstr, *tarr;
	char out[64];

	(void)state;
	setup_311();
	tstr = new_type("str");
	tarr = new_type("numpy.ndarray");
	f.code = addr(new_code(tstr, names, 2));
	/* an array whose dimensions could not be read, and a type pointer to nothing */
	f.args[0] = (struct py_sig_arg){ .type = addr(tarr), .descr = 8, .nd = 7 };
	f.args[1].type = 16;
	/* more arguments than read, more read than the record holds, than names */
	assert_int_equal(py_signature_text(&reader, &f, out, sizeof(out)), -EBADMSG);
	assert_true(strlen(out) < sizeof(out));
	assert_string_equal(out + strlen(out) - 4, "...)");
	f.nread = 2;
	f.nargs = 3;
	assert_int_equal(py_signature_text(&reader, &f, out, sizeof(out)), 0);
	assert_string_equal(out, "(x: ndarray[?, (7 dims)], y: <unreadable>, ...)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
