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

/* Supported versions, for messages: "3.8 to 3.15". */
extern const char py_supported_versions[];

/* Bytes of _Py_DebugOffsets to read from the start of _PyRuntime (3.13+). */
#define PY_DEBUG_OFFSETS_READ 1024

/*
 * Fills *out from the built-in table for a PY_VERSION_HEX. 0; -EAGAIN for a
 * version that publishes its own offsets (3.13+: use
 * py_layout_from_debug_offsets); -ENOTSUP for a version not supported (the
 * caller names py_supported_versions).
 */
int py_layout_for_version(uint32_t hexversion, struct py_layout *out);

/*
 * Pure: fills *out from the _Py_DebugOffsets bytes found at the start of
 * _PyRuntime, after checking the cookie, that its version matches hexversion
 * (the binary's Py_Version), that the build is not free-threaded, and that
 * every offset is plausible. 0, or -ENOTSUP / -EPROTO with a reason in why.
 */
int py_layout_from_debug_offsets(uint32_t hexversion, const uint8_t *buf, size_t len,
				 struct py_layout *out, char *why, size_t whylen);

/* "3.11.2", "3.13.0rc1" from a PY_VERSION_HEX. */
void py_version_str(uint32_t hexversion, char *buf, size_t len);

#endif
