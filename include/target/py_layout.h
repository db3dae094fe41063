/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Everything version-specific that pybpfprof knows about a CPython build's
 * memory layout, selected by version in exactly one place
 * (py_layout__for_version). The BPF part (struct py_offsets) goes to the
 * kernel; the rest is used by userspace to read code objects and strings.
 */
#ifndef PYBPFPROF_PY_LAYOUT_H
#define PYBPFPROF_PY_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf_abi.h"
#include "target/linetable.h"

struct py_layout {
	struct py_offsets bpf;
	uint16_t tstate_interp;	   /* PyThreadState.interp */
	uint16_t ob_type;	   /* PyObject.ob_type */
	uint16_t code_read_size;   /* bytes of the code object that cover every field used */
	uint16_t str_compact_data; /* sizeof(PyCompactUnicodeObject): other compact strings */
	uint16_t str_utf8_length;  /* PyCompactUnicodeObject.utf8_length */
	uint16_t str_utf8;	   /* PyCompactUnicodeObject.utf8 */
	uint16_t bytes_size;	   /* PyVarObject.ob_size of bytes */
	uint16_t bytes_data;	   /* PyBytesObject.ob_sval */
	enum linetable_kind linetable;
	int lasti_unit;	    /* bytes per f_lasti unit (PY_INSTR_LASTI only) */
	bool free_threaded; /* _Py_DebugOffsets.free_threaded: no GIL (3.13t, 3.14t) */
};

/* Supported versions, for messages: "3.8 to 3.15". */
extern const char py_supported_versions[];

/* Bytes of _Py_DebugOffsets to read from the start of _PyRuntime (3.13+). */
#define PY_DEBUG_OFFSETS_READ 1024

/*
 * Bytes userspace reads at once from a code object (its head, up to
 * co_code_adaptive: src/target/code_cache.c) and from a str object (up to its
 * non-ASCII data: src/target/remote_mem.c). Every offset of a layout lies inside
 * what is read for its struct (py_layout__check).
 */
#define PY_CODE_HEAD_READ 256
#define PY_STR_HEAD_READ 96

/*
 * Fills *out from the built-in table for a PY_VERSION_HEX. 0; -EAGAIN for a
 * version that publishes its own offsets (3.13+: use
 * py_layout__from_debug_offsets); -ENOTSUP for a version not supported (the
 * caller names py_supported_versions).
 */
int py_layout__for_version(uint32_t hexversion, struct py_layout *out);

/*
 * Pure: fills *out from the len bytes of _Py_DebugOffsets found at the start
 * of _PyRuntime. The bytes are the target's, so hostile: the cookie, the
 * version (it must match hexversion, the binary's Py_Version) and the
 * free-threaded flag (0 or 1; a free-threaded build's objects have a larger
 * header, and 3.14t's thread-local bytecode) are checked, then every offset
 * and size used, as read
 * (64 bits), before it is narrowed: each field must lie inside the size its
 * struct declares in the table, inside the bytes pybpfprof reads of that
 * struct, and inside its prefix (the code object's identity fields), and fit
 * its field in *out. *out is written only on success.
 *
 * 0; -ENOTSUP (no layout for this version); -EPROTO
 * (no cookie, another version: not this binary's table); -EBADMSG (a value
 * out of range: why names the field and its value, e.g.
 * "code_object.qualname = 0xfffffffffffffff8: ...").
 */
int py_layout__from_debug_offsets(uint32_t hexversion, const uint8_t *buf, size_t len,
				  struct py_layout *out, char *why, size_t whylen);

/*
 * Pure: whether every offset of L lets userspace and BPF read inside their
 * buffers (PYPROF_FRAME_READ, PY_CODE_HEAD_READ, PY_CODE_ID_READ, PY_STR_READ,
 * PY_STR_HEAD_READ): the invariant py_layout__from_debug_offsets guarantees
 * and the built-in tables keep. 0, or -EBADMSG naming the field in why.
 */
int py_layout__check(const struct py_layout *L, char *why, size_t whylen);

/* "3.11.2", "3.13.0rc1" from a PY_VERSION_HEX. */
void py_version_str(uint32_t hexversion, char *buf, size_t len);

#endif
