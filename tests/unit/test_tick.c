/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a CPU sample's tick says beyond its stack: the reads BPF makes
 * (bpf/stackwalk.h's stackwalk_exc and stackwalk_opcode, compiled here as
 * host C over a small memory image), and the profile's sums of them
 * (profile_tick.c) that the reports print.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpython/py_layout.h"
#include "profile/profile.h"
#include "../../bpf/stackwalk.h"
#include "fake_memory.h"

__u32 max_depth = PYPROF_DEFAULT_DEPTH;
static uint8_t image[4096] __attribute__((aligned(16)));
static struct scratch scratch;

/* Reads inside image only, all or nothing, as bpf_probe_read_user. */
long stackwalk_read(void *dst, __u32 size, __u64 at)
{
	const uint8_t *src;

	if (at < addr(image) || at + size > addr(image) + sizeof(image) || at + size < at)
		return -EFAULT;
	src = image + (at - addr(image));

	/* out of gcc's sight: it cannot tell that the checks above bound the copy */
	__asm__("" : "+r"(src));
	memcpy(dst, src, size);
	return 0;
}

int stackwalk_module_sent(__u64 key)
{
	(void)key;
	return 0;
}

static void layout(uint32_t version, struct py_layout *L)
{
	assert_int_equal(py_layout__for_version(version, L), 0);
}

/* 3.11: the instruction at the pointer; EXTENDED_ARG prefixes stepped over; odd or past: none. */
static void test_opcode_ptr(void **state)
{
	struct py_layout L;
	uint64_t v;

	(void)state;
	layout(0x030B02F0, &L);
	memset(image, 0, sizeof(image));
	image[100] = 144; /* EXTENDED_ARG */
	image[102] = 144;
	image[104] = 5; /* BINARY_OP_ADD_INT */
	image[106] = 122;
	v = stackwalk_opcode(&L.bpf, &scratch, 0, 100, addr(image));
	assert_true(v & PY_CPU_HAS_OPCODE);
	assert_int_equal(PY_CPU_OPCODE(v), 5);
	v = stackwalk_opcode(&L.bpf, &scratch, 0, 106, addr(image));
	assert_int_equal(PY_CPU_OPCODE(v), 122);
	assert_int_equal(stackwalk_opcode(&L.bpf, &scratch, 0, 105, addr(image)), 0);
	assert_int_equal(stackwalk_opcode(&L.bpf, &scratch, 0, -2, addr(image)), 0);
	/* four prefixes and no instruction within them: not read */
	memset(image + 200, 144, 8);
	image[201] = image[203] = image[205] = image[207] = 1;
	image[200] = image[202] = image[204] = image[206] = 144;
	v = stackwalk_opcode(&L.bpf, &scratch, 0, 200, addr(image));
	assert_int_equal(v & (PY_CPU_HAS_OPCODE | 0xff), 0);
	/* on a CALL's last cache unit: the unit 4 before it sent beside (3.11) */
	image[300] = 171;
	image[308] = 1;
	v = stackwalk_opcode(&L.bpf, &scratch, 0, 308, addr(image));
	assert_int_equal(v, PY_CPU_HAS_OPCODE | 1 | PY_CPU_HAS_PREV | 171ULL << 16);
	/* the last unit before the image's end is read alone */
	image[sizeof(image) - 2] = 83;
	v = stackwalk_opcode(&L.bpf, &scratch, 0, sizeof(image) - 2, addr(image));
	assert_int_equal(v & ~(PY_CPU_HAS_PREV | 0xff0000ULL), PY_CPU_HAS_OPCODE | 83);
}

/* 3.8: co_code[f_lasti], bounded by the bytes object's size. */
static void test_opcode_lasti(void **state)
{
	struct py_layout L;
	uint8_t *code = image, *bytes = image + 512;
	uint64_t v;

	(void)state;
	layout(0x030812F0, &L);
	memset(image, 0, sizeof(image));
	put64(code, L.bpf.code_code, addr(bytes));
	put64(bytes, L.bpf.bytes_size, 8);
	bytes[L.bpf.bytes_data + 4] = 144;
	bytes[L.bpf.bytes_data + 6] = 23;
	v = stackwalk_opcode(&L.bpf, &scratch, addr(code), 4, 0);
	assert_int_equal(v, PY_CPU_HAS_OPCODE | 23);
	/* past co_code's size, and a prefix whose instruction is past it */
	assert_int_equal(stackwalk_opcode(&L.bpf, &scratch, addr(code), 8, 0), 0);
	put64(bytes, L.bpf.bytes_size, 6);
	assert_int_equal(stackwalk_opcode(&L.bpf, &scratch, addr(code), 4, 0), 0);
}

/* The exception stack: the first item holding something but None says. */
static void test_exc(void **state)
{
	struct py_layout L;
	uint8_t *ts = image, *gen = image + 256, *outer = image + 320, *none = image + 384;
	uint8_t *exc = image + 448;

	(void)state;
	layout(0x030B02F0, &L);
	memset(image, 0, sizeof(image));
	put64(ts, L.bpf.tstate_exc_info, addr(gen));
	put64(gen, L.bpf.exc_item_previous, addr(outer));
	put64(outer, L.bpf.exc_item_value, addr(none));
	/* a generator's item holds nothing, the thread's holds None: not handling */
	assert_int_equal(stackwalk_exc(&L.bpf, &scratch, addr(ts), addr(none)), PY_CPU_EXC_KNOWN);
	put64(outer, L.bpf.exc_item_value, addr(exc));
	assert_int_equal(stackwalk_exc(&L.bpf, &scratch, addr(ts), addr(none)),
			 PY_CPU_EXC | PY_CPU_EXC_KNOWN);
	/* None not known, an item that loops: not read */
	assert_int_equal(stackwalk_exc(&L.bpf, &scratch, addr(ts), 0), 0);
	put64(outer, L.bpf.exc_item_value, 0);
	put64(outer, L.bpf.exc_item_previous, addr(gen));
	assert_int_equal(stackwalk_exc(&L.bpf, &scratch, addr(ts), addr(none)), 0);
}

/* Names interned with their base; counts summed per line, most first; exceptions by function. */
static void test_profile_sums(void **state)
{
	struct profile p;
	struct profile_target *pp;
	struct op_stat *st;
	struct exc_stat *ex;
	uint32_t f, g, fr, gr, stack[3], add, mul;
	uint64_t exc, unknown;
	size_t n;

	(void)state;
	profile__init(&p, "cpu", 99);
	f = profile__func(&p, "f", "/w.py", 1, false);
	g = profile__func(&p, "g", "/w.py", 9, false);
	fr = profile__frame(&p, f, 3);
	gr = profile__frame(&p, g, 10);
	add = profile__opname(&p, "BINARY_OP_ADD_INT", "BINARY_OP");
	mul = profile__opname(&p, "BINARY_OP", NULL);
	assert_int_equal(p.nopnames, 2);
	assert_int_equal(p.opnames[add].base, mul);
	assert_int_equal(p.opnames[mul].base, mul);
	assert_int_equal(profile__opname(&p, "BINARY_OP_ADD_INT", "BINARY_OP"), add);
	pp = profile__add_target(&p, 1, "/usr/bin/python3.11", "python3 w.py", "python3", "3.11.2");
	assert_non_null(pp);
	/* f recursing under g: f's exception samples count once in its total */
	stack[0] = fr;
	stack[1] = fr;
	stack[2] = gr;
	assert_int_equal(profile_target__add_stack(pp, 1, stack, 3, 4), 0);
	assert_int_equal(profile_target__add_op(pp, add, 3), 0);
	profile_target__add_exc(pp, PROFILE_EXC_HANDLING);
	profile_target__add_exc(pp, PROFILE_EXC_UNKNOWN);
	assert_int_equal(profile_target__add_stack(pp, 1, stack, 1, 2), 0);
	assert_int_equal(profile_target__add_op(pp, mul, 1), 0);
	assert_int_equal(profile_target__add_op(pp, add, 1), 0);
	assert_int_equal(profile_target__add_stack(pp, 1, &gr, 1, 1), 0);
	assert_int_equal(profile_target__add_op(pp, mul, 1), 0);

	assert_int_equal(profile_target__op_stats(&p, pp, &st, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(st[0].frame, fr);
	assert_int_equal(st[0].op, add);
	assert_int_equal(st[0].samples, 4);
	assert_int_equal(st[1].op, mul);
	assert_int_equal(st[1].samples, 1);
	assert_int_equal(st[2].frame, gr);
	free(st);

	assert_int_equal(profile_target__exc_stats(&p, pp, &ex, &exc, &unknown), 0);
	assert_int_equal(exc, 1);
	assert_int_equal(unknown, 1);
	assert_int_equal(ex[f].self, 1);
	assert_int_equal(ex[f].total, 1);
	assert_int_equal(ex[g].self, 0);
	assert_int_equal(ex[g].total, 1);
	free(ex);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_ptr),
		cmocka_unit_test(test_opcode_lasti),
		cmocka_unit_test(test_exc),
		cmocka_unit_test(test_profile_sums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
