/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The opcode names per version (cpython/py_opcodes.c, from the tables
 * src/cpython/gen_opcode_names.py generated from each interpreter's own dis
 * and opcode modules): specialised names with their base, numbers no
 * instruction has, versions without a table, EXTENDED_ARG per version.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cpython/py_opcodes.h"

static void test_names(void **state)
{
	const char *base;

	(void)state;
	/* 3.11 specialises BINARY_OP: the specialised name, with its base */
	assert_string_equal(py_opcode_name(0x030B02F0, 122, &base), "BINARY_OP");
	assert_string_equal(base, "BINARY_OP");
	assert_string_equal(py_opcode_name(0x030B02F0, 5, &base), "BINARY_OP_ADD_INT");
	assert_string_equal(base, "BINARY_OP");
	/* before 3.11 a name is its own base */
	assert_string_equal(py_opcode_name(0x030812F0, 23, &base), "BINARY_ADD");
	assert_string_equal(base, "BINARY_ADD");
	/* a number the version has no instruction for, a version without a table */
	assert_null(py_opcode_name(0x030812F0, 0, &base));
	assert_null(base);
	assert_null(py_opcode_name(0x030812F0, 256, &base));
	assert_null(py_opcode_name(0x030700F0, 23, &base));
	assert_null(py_opcode_name(0x031000F0, 23, NULL));
	assert_int_equal(py_opcode_extended_arg(0x030812F0), 144);
	assert_int_equal(py_opcode_extended_arg(0x030D00F0), 71);
	assert_int_equal(py_opcode_extended_arg(0x030700F0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
