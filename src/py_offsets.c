// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-version CPython layouts. Each number is the byte offset of the CPython
 * struct field named beside it (x86_64, non-debug, GIL build), checked
 * against DWARF of pyenv builds and the disassembly of Debian's binaries
 * (see shared/design/cpython-internals.md sections 1-3 for the sources).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "py_offsets.h"

const char py_supported_versions[] = "3.11";

static const struct py_layout layout_311 = {
	.bpf = {
		.runtime_interp_head = 40,	/* _PyRuntimeState.interpreters.head */
		.interp_next = 0,		/* PyInterpreterState.next */
		.interp_threads_head = 16,	/* PyInterpreterState.threads.head */
		.tstate_next = 8,		/* PyThreadState.next */
		.tstate_thread_id = 152,	/* PyThreadState.thread_id */
		.tstate_frame = 56,		/* PyThreadState.cframe */
		.cframe_current_frame = 8,	/* _PyCFrame.current_frame */
		.frame_code = 32,		/* _PyInterpreterFrame.f_code */
		.frame_previous = 48,		/* _PyInterpreterFrame.previous */
		.frame_instr = 56,		/* _PyInterpreterFrame.prev_instr */
		/* 3.11 has no C-stack shim frames: owner is 0-2 only, nothing to skip */
		.frame_owner = PYPROF_NO_OFFSET,
		.code_filename = 112,		/* PyCodeObject.co_filename */
		.code_name = 120,		/* PyCodeObject.co_name */
		.code_qualname = 128,		/* PyCodeObject.co_qualname */
		.code_linetable = 136,		/* PyCodeObject.co_linetable */
		.code_firstlineno = 72,		/* PyCodeObject.co_firstlineno */
		.code_id_start = 72,		/* co_firstlineno ... */
		.code_id_size = 72,		/* ... through co_linetable */
		.code_adaptive = 184,		/* PyCodeObject.co_code_adaptive */
		.str_length = 16,		/* PyASCIIObject.length */
		.str_state = 32,		/* PyASCIIObject.state */
		.str_ascii_data = 48,		/* sizeof(PyASCIIObject) (with wstr) */
		.instr_kind = PY_INSTR_PTR,
		.owner_skip_min = 0xff,
		.code_tag_mask = 0,
		.frame_read_size = 72,		/* sizeof(_PyInterpreterFrame) up to localsplus */
	},
	.tstate_interp = 16,			/* PyThreadState.interp */
	.ob_type = 8,				/* PyObject.ob_type */
	.code_read_size = 184,			/* up to co_code_adaptive */
	.str_compact_data = 72,			/* sizeof(PyCompactUnicodeObject) */
	.str_utf8_length = 48,			/* PyCompactUnicodeObject.utf8_length */
	.str_utf8 = 56,				/* PyCompactUnicodeObject.utf8 */
	.bytes_size = 16,			/* PyVarObject.ob_size */
	.bytes_data = 32,			/* PyBytesObject.ob_sval */
	.linetable = LINETABLE_LOCATIONS,
	.lasti_unit = 1,
};

int py_layout_for_version(uint32_t hexversion, struct py_layout *out)
{
	unsigned major = hexversion >> 24, minor = (hexversion >> 16) & 0xff;

	if (major == 3 && minor == 11) {
		*out = layout_311;
		return 0;
	}
	return -ENOTSUP;
}

void py_version_str(uint32_t hexversion, char *buf, size_t len)
{
	static const char *levels[16] = { [0xa] = "a", [0xb] = "b", [0xc] = "rc" };
	unsigned level = (hexversion >> 4) & 0xf, serial = hexversion & 0xf;

	if (level == 0xf || !levels[level])
		snprintf(buf, len, "%u.%u.%u", hexversion >> 24, (hexversion >> 16) & 0xff,
			 (hexversion >> 8) & 0xff);
	else
		snprintf(buf, len, "%u.%u.%u%s%u", hexversion >> 24, (hexversion >> 16) & 0xff,
			 (hexversion >> 8) & 0xff, levels[level], serial);
}
