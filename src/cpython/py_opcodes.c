// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opcode names per minor version, from the generated tables of
 * py_opcode_names.h. Opcode numbers change between minor versions, never
 * within one (the bytecode's magic number would change with them): the
 * generator checks that every interpreter of one minor version it was run
 * on agrees, the free-threaded 3.13t with the default 3.13 included.
 */
#include <stddef.h>
#include "cpython/py_opcodes.h"
#include "py_opcode_names.h"

struct opcode_table {
	const char *const *names;
	const uint8_t *base; /* NULL: no specialised instructions (before 3.11) */
};

/* Indexed by minor - 8. */
static const struct opcode_table tables[] = {
	{ py_opnames_38, NULL },	   { py_opnames_39, NULL },
	{ py_opnames_310, NULL },	   { py_opnames_311, py_opbase_311 },
	{ py_opnames_312, py_opbase_312 }, { py_opnames_313, py_opbase_313 },
	{ py_opnames_314, py_opbase_314 }, { py_opnames_315, py_opbase_315 },
};

_Static_assert(sizeof(tables) / sizeof(tables[0]) ==
		       sizeof(py_op_extended_arg) / sizeof(py_op_extended_arg[0]),
	       "one EXTENDED_ARG per table");

static const struct opcode_table *table_of(uint32_t hexversion)
{
	unsigned minor = (hexversion >> 16) & 0xff;

	if (hexversion >> 24 != 3 || minor < 8 || minor - 8 >= sizeof(tables) / sizeof(tables[0]))
		return NULL;
	return &tables[minor - 8];
}

const char *py_opcode_name(uint32_t hexversion, unsigned op, const char **base)
{
	const struct opcode_table *t = table_of(hexversion);
	const char *name = t && op < 256 ? t->names[op] : NULL;

	if (base)
		*base = name && t->base && t->base[op] ? t->names[t->base[op]] : name;
	return name;
}

int py_opcode_extended_arg(uint32_t hexversion)
{
	const struct opcode_table *t = table_of(hexversion);

	return t ? py_op_extended_arg[t - tables] : -1;
}
