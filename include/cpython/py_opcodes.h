/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The names of CPython's bytecode instructions, per minor version 3.8-3.15,
 * from tables each interpreter's own dis and opcode modules gave
 * (src/cpython/gen_opcode_names.py): the opcode a sample's innermost frame
 * was running (--opcodes) by name, the specialised forms that 3.11+ rewrite
 * their bytecode to included (BINARY_OP_ADD_INT, with BINARY_OP as its
 * unspecialised form).
 */
#ifndef PYBPFPROF_PY_OPCODES_H
#define PYBPFPROF_PY_OPCODES_H

#include <stdint.h>

/*
 * The name of opcode op in the version of hexversion (PY_VERSION_HEX), and
 * in *base (may be NULL) the name of the instruction it specialises, or the
 * same name when it specialises none. NULL (and *base NULL) for a version
 * without a table, or a number no instruction of that version has.
 */
const char *py_opcode_name(uint32_t hexversion, unsigned op, const char **base);

/* The version's EXTENDED_ARG opcode, or -1 for a version without a table. */
int py_opcode_extended_arg(uint32_t hexversion);

#endif
