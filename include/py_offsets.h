/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Everything version-specific that pybpfprof knows about a CPython build's
 * memory layout, selected by version in exactly one place
 * (py_layout_for_version). The BPF part (struct py_offsets) goes to the
 * kernel; the rest is used by userspace to read code objects and strings.
 */
#ifndef PYBPFPROF_PY_OFFSETS_H
#define PYBPFPROF_PY_OFFSETS_H

#include <stddef.h>
#include <stdint.h>
#include "bpf_abi.h"
#include "linetable.h"

struct py_layout {
	struct py_offsets bpf;
	uint16_t tstate_interp;		/* PyThreadState.interp */
	uint16_t ob_type;		/* PyObject.ob_type */
	uint16_t code_read_size;	/* bytes of the code object that cover every field used */
	uint16_t str_compact_data;	/* sizeof(PyCompactUnicodeObject): other compact strings */
	uint16_t str_utf8_length;	/* PyCompactUnicodeObject.utf8_length */
	uint16_t str_utf8;		/* PyCompactUnicodeObject.utf8 */
	uint16_t bytes_size;		/* PyVarObject.ob_size of bytes */
	uint16_t bytes_data;		/* PyBytesObject.ob_sval */
	enum linetable_kind linetable;
	int lasti_unit;			/* bytes per f_lasti unit (PY_INSTR_LASTI only) */
};

/* Supported minor versions, for messages: "3.11". */
extern const char py_supported_versions[];

/*
 * Fills *out for a PY_VERSION_HEX. 0, or -ENOTSUP for a version without a
 * table (the caller names py_supported_versions).
 */
int py_layout_for_version(uint32_t hexversion, struct py_layout *out);

/* "3.11.2", "3.13.0rc1" from a PY_VERSION_HEX. */
void py_version_str(uint32_t hexversion, char *buf, size_t len);

#endif
