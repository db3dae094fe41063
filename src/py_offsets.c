// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-version CPython layouts: the only place that knows struct offsets.
 * 3.8-3.12 are tables: each number is the byte offset of the CPython struct
 * field named beside it (x86_64, non-debug, GIL build), checked against DWARF
 * of pyenv builds, the disassembly of Debian's binaries and live reads (see
 * shared/design/cpython-internals.md sections 1-3). 3.13+ publish their own
 * offsets in _Py_DebugOffsets at the start of _PyRuntime; those are read from
 * the target and checked, never hard-coded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "py_offsets.h"

const char py_supported_versions[] = "3.8 to 3.15";

/* Fields of PyObject, str and bytes that no version between 3.8 and 3.15 moved. */
#define OBJECT_COMMON                                                                              \
	.tstate_interp = 16,	/* PyThreadState.interp */                                        \
	.ob_type = 8,		/* PyObject.ob_type */                                            \
	.bytes_size = 16,	/* PyVarObject.ob_size */                                         \
	.bytes_data = 32	/* PyBytesObject.ob_sval */

/* 3.8 and 3.9: PyFrameObject chain from tstate->frame, byte-based f_lasti, co_lnotab. */
static const struct py_layout layout_38 = {
	.bpf = {
		.runtime_interp_head = 32,	/* _PyRuntimeState.interpreters.head */
		.interp_next = 0,		/* PyInterpreterState.next */
		.interp_threads_head = 8,	/* PyInterpreterState.tstate_head */
		.tstate_next = 8,		/* PyThreadState.next */
		.tstate_thread_id = 176,	/* PyThreadState.thread_id */
		.tstate_frame = 24,		/* PyThreadState.frame */
		.cframe_current_frame = PYPROF_NO_OFFSET,
		.frame_code = 32,		/* PyFrameObject.f_code */
		.frame_previous = 24,		/* PyFrameObject.f_back */
		.frame_instr = 104,		/* PyFrameObject.f_lasti (int, bytes) */
		.frame_owner = PYPROF_NO_OFFSET,
		.frame_read_size = 112,		/* through f_lasti and f_lineno */
		.code_filename = 104,		/* PyCodeObject.co_filename */
		.code_name = 112,		/* PyCodeObject.co_name */
		.code_qualname = 112,		/* no co_qualname before 3.11: co_name */
		.code_linetable = 120,		/* PyCodeObject.co_lnotab */
		.code_firstlineno = 40,		/* PyCodeObject.co_firstlineno */
		.code_id_start = 40,
		.code_id_size = 88,		/* co_firstlineno .. co_lnotab */
		.code_adaptive = 0,
		.str_length = 16,		/* PyASCIIObject.length */
		.str_state = 32,		/* PyASCIIObject.state */
		.str_ascii_data = 48,		/* sizeof(PyASCIIObject) (with wstr) */
		.instr_kind = PY_INSTR_LASTI,
		.owner_skip_min = 0xff,
	},
	OBJECT_COMMON,
	.code_read_size = 128,
	.str_compact_data = 72,		/* sizeof(PyCompactUnicodeObject) */
	.str_utf8_length = 48,		/* PyCompactUnicodeObject.utf8_length */
	.str_utf8 = 56,			/* PyCompactUnicodeObject.utf8 */
	.linetable = LINETABLE_LNOTAB,
	.lasti_unit = 1,
};

/* 3.10: as 3.9 but f_lasti moved and counts 2-byte code units; co_linetable ranges. */
static const struct py_layout layout_310 = {
	.bpf = {
		.runtime_interp_head = 32,	/* _PyRuntimeState.interpreters.head */
		.interp_next = 0,		/* PyInterpreterState.next */
		.interp_threads_head = 8,	/* PyInterpreterState.tstate_head */
		.tstate_next = 8,		/* PyThreadState.next */
		.tstate_thread_id = 176,	/* PyThreadState.thread_id */
		.tstate_frame = 24,		/* PyThreadState.frame */
		.cframe_current_frame = PYPROF_NO_OFFSET,
		.frame_code = 32,		/* PyFrameObject.f_code */
		.frame_previous = 24,		/* PyFrameObject.f_back */
		.frame_instr = 96,		/* PyFrameObject.f_lasti (int, code units) */
		.frame_owner = PYPROF_NO_OFFSET,
		.frame_read_size = 104,		/* through f_lasti and f_lineno */
		.code_filename = 104,		/* PyCodeObject.co_filename */
		.code_name = 112,		/* PyCodeObject.co_name */
		.code_qualname = 112,		/* no co_qualname before 3.11: co_name */
		.code_linetable = 120,		/* PyCodeObject.co_linetable */
		.code_firstlineno = 40,		/* PyCodeObject.co_firstlineno */
		.code_id_start = 40,
		.code_id_size = 88,		/* co_firstlineno .. co_linetable */
		.code_adaptive = 0,
		.str_length = 16,		/* PyASCIIObject.length */
		.str_state = 32,		/* PyASCIIObject.state */
		.str_ascii_data = 48,		/* sizeof(PyASCIIObject) (with wstr) */
		.instr_kind = PY_INSTR_LASTI,
		.owner_skip_min = 0xff,
	},
	OBJECT_COMMON,
	.code_read_size = 128,
	.str_compact_data = 72,		/* sizeof(PyCompactUnicodeObject) */
	.str_utf8_length = 48,		/* PyCompactUnicodeObject.utf8_length */
	.str_utf8 = 56,			/* PyCompactUnicodeObject.utf8 */
	.linetable = LINETABLE_310,
	.lasti_unit = 2,
};

/* 3.11: _PyInterpreterFrame on the thread's data stack, reached through tstate->cframe. */
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
		.frame_read_size = 72,		/* sizeof(_PyInterpreterFrame) up to localsplus */
		.code_filename = 112,		/* PyCodeObject.co_filename */
		.code_name = 120,		/* PyCodeObject.co_name */
		.code_qualname = 128,		/* PyCodeObject.co_qualname */
		.code_linetable = 136,		/* PyCodeObject.co_linetable */
		.code_firstlineno = 72,		/* PyCodeObject.co_firstlineno */
		.code_id_start = 72,
		.code_id_size = 72,		/* co_firstlineno .. co_linetable */
		.code_adaptive = 184,		/* PyCodeObject.co_code_adaptive */
		.str_length = 16,		/* PyASCIIObject.length */
		.str_state = 32,		/* PyASCIIObject.state */
		.str_ascii_data = 48,		/* sizeof(PyASCIIObject) (with wstr) */
		.instr_kind = PY_INSTR_PTR,
		.owner_skip_min = 0xff,
	},
	OBJECT_COMMON,
	.code_read_size = 184,			/* up to co_code_adaptive */
	.str_compact_data = 72,			/* sizeof(PyCompactUnicodeObject) */
	.str_utf8_length = 48,			/* PyCompactUnicodeObject.utf8_length */
	.str_utf8 = 56,				/* PyCompactUnicodeObject.utf8 */
	.linetable = LINETABLE_LOCATIONS,
	.lasti_unit = 1,
};

/* 3.12: C-stack entry frames (owner 3) appear in the chain; str lost wstr (PEP 623). */
static const struct py_layout layout_312 = {
	.bpf = {
		.runtime_interp_head = 40,	/* _PyRuntimeState.interpreters.head */
		.interp_next = 0,		/* PyInterpreterState.next */
		.interp_threads_head = 72,	/* PyInterpreterState.threads.head */
		.tstate_next = 8,		/* PyThreadState.next */
		.tstate_thread_id = 136,	/* PyThreadState.thread_id */
		.tstate_frame = 56,		/* PyThreadState.cframe */
		.cframe_current_frame = 0,	/* _PyCFrame.current_frame */
		.frame_code = 0,		/* _PyInterpreterFrame.f_code */
		.frame_previous = 8,		/* _PyInterpreterFrame.previous */
		.frame_instr = 56,		/* _PyInterpreterFrame.prev_instr */
		.frame_owner = 70,		/* _PyInterpreterFrame.owner */
		.frame_read_size = 72,
		.code_filename = 112,		/* PyCodeObject.co_filename */
		.code_name = 120,		/* PyCodeObject.co_name */
		.code_qualname = 128,		/* PyCodeObject.co_qualname */
		.code_linetable = 136,		/* PyCodeObject.co_linetable */
		.code_firstlineno = 68,		/* PyCodeObject.co_firstlineno */
		.code_id_start = 68,
		.code_id_size = 76,		/* co_firstlineno .. co_linetable */
		.code_adaptive = 192,		/* PyCodeObject.co_code_adaptive */
		.str_length = 16,		/* PyASCIIObject.length */
		.str_state = 32,		/* PyASCIIObject.state */
		.str_ascii_data = 40,		/* sizeof(PyASCIIObject) */
		.instr_kind = PY_INSTR_PTR,
		.owner_skip_min = 3,		/* FRAME_OWNED_BY_CSTACK */
	},
	OBJECT_COMMON,
	.code_read_size = 192,			/* up to co_code_adaptive */
	.str_compact_data = 56,			/* sizeof(PyCompactUnicodeObject) */
	.str_utf8_length = 40,			/* PyCompactUnicodeObject.utf8_length */
	.str_utf8 = 48,				/* PyCompactUnicodeObject.utf8 */
	.linetable = LINETABLE_LOCATIONS,
	.lasti_unit = 1,
};

int py_layout_for_version(uint32_t hexversion, struct py_layout *out)
{
	unsigned major = hexversion >> 24, minor = (hexversion >> 16) & 0xff;

	if (major != 3)
		return -ENOTSUP;
	switch (minor) {
	case 8:
	case 9:
		*out = layout_38;
		return 0;
	case 10:
		*out = layout_310;
		return 0;
	case 11:
		*out = layout_311;
		return 0;
	case 12:
		*out = layout_312;
		return 0;
	case 13:
	case 14:
	case 15:
		return -EAGAIN;	/* py_layout_from_debug_offsets() */
	default:
		return -ENOTSUP;
	}
}

/*
 * Where each needed value sits inside _Py_DebugOffsets (byte positions of its
 * uint64 fields), per minor version: the struct is stable within a minor
 * version and changes between them. Verified against 3.13.0/.5/.18,
 * 3.14.8/.10 and 3.15.2 (cpython-internals.md section 5).
 */
struct debug_positions {
	uint16_t interpreters_head;
	uint16_t interp_next, interp_threads_head;
	uint16_t tstate_size, tstate_next, tstate_interp, tstate_current_frame, tstate_thread_id;
	uint16_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
	uint16_t code_size, code_filename, code_name, code_qualname, code_linetable;
	uint16_t code_firstlineno, code_adaptive;
	uint16_t ob_type;
	uint16_t bytes_size, bytes_sval;
	uint16_t str_state, str_length, str_ascii_size, str_compact_size; /* 0: not published */
	uint16_t total;
};

static const struct debug_positions debug_313 = {
	40, 64, 72, 152, 168, 176, 184, 192, 224, 232, 240, 248, 264,
	272, 280, 288, 296, 304, 312, 344, 360, 520, 528, 544, 552, 560, 0, 584,
};
static const struct debug_positions debug_314 = {
	40, 64, 72, 176, 192, 200, 208, 216, 248, 256, 264, 272, 288,
	312, 320, 328, 336, 344, 352, 384, 408, 600, 608, 624, 632, 640, 0, 760,
};
static const struct debug_positions debug_315 = {
	40, 64, 72, 176, 192, 200, 208, 240, 312, 320, 328, 336, 352,
	376, 384, 392, 400, 408, 416, 448, 472, 696, 704, 720, 728, 736, 744, 888,
};

static uint64_t u64_at(const uint8_t *buf, uint16_t pos)
{
	uint64_t v;

	memcpy(&v, buf + pos, sizeof(v));
	return v;
}

int py_layout_from_debug_offsets(uint32_t hexversion, const uint8_t *buf, size_t len,
				 struct py_layout *out, char *why, size_t whylen)
{
	unsigned minor = (hexversion >> 16) & 0xff;
	const struct debug_positions *d;
	uint64_t version, tsize, fsize, csize, v[32];
	struct py_offsets *o = &out->bpf;
	size_t i;

	d = minor == 13 ? &debug_313 : minor == 14 ? &debug_314 : minor == 15 ? &debug_315 : NULL;
	if (!d || len < d->total) {
		snprintf(why, whylen, "no _Py_DebugOffsets layout for Python 3.%u", minor);
		return -ENOTSUP;
	}
	if (memcmp(buf, "xdebugpy", 8)) {
		snprintf(why, whylen, "_Py_DebugOffsets cookie missing at the start of _PyRuntime");
		return -EPROTO;
	}
	version = u64_at(buf, 8);
	if ((version >> 16) != (hexversion >> 16)) {
		snprintf(why, whylen, "_Py_DebugOffsets says version 0x%llx, the binary 0x%x",
			 (unsigned long long)version, hexversion);
		return -EPROTO;
	}
	if (u64_at(buf, 16)) {
		snprintf(why, whylen, "free-threaded builds are not supported");
		return -ENOTSUP;
	}
	tsize = u64_at(buf, d->tstate_size);
	fsize = u64_at(buf, d->frame_size);
	csize = u64_at(buf, d->code_size);
	/* Every offset must lie inside its struct, and the fixed object layout must hold. */
	v[0] = u64_at(buf, d->tstate_next);
	v[1] = u64_at(buf, d->tstate_interp);
	v[2] = u64_at(buf, d->tstate_current_frame);
	v[3] = u64_at(buf, d->tstate_thread_id);
	for (i = 0; i < 4; i++)
		if (v[i] + 8 > tsize || tsize > 0x10000)
			goto implausible;
	if (u64_at(buf, d->frame_previous) + 8 > fsize || u64_at(buf, d->frame_owner) >= fsize ||
	    u64_at(buf, d->frame_instr_ptr) + 8 > fsize || fsize > PYPROF_FRAME_READ ||
	    u64_at(buf, d->frame_executable) + 8 > fsize)
		goto implausible;
	if (u64_at(buf, d->code_adaptive) > csize || csize > 256 ||
	    u64_at(buf, d->code_linetable) + 8 > csize || u64_at(buf, d->ob_type) != 8 ||
	    u64_at(buf, d->bytes_size) != 16 || u64_at(buf, d->bytes_sval) != 32 ||
	    u64_at(buf, d->str_length) != 16 || u64_at(buf, d->str_state) != 32 ||
	    u64_at(buf, d->interpreters_head) > 0x100000 || u64_at(buf, d->interp_next) > 0x100000 ||
	    u64_at(buf, d->interp_threads_head) > 0x100000)
		goto implausible;

	memset(out, 0, sizeof(*out));
	o->runtime_interp_head = u64_at(buf, d->interpreters_head);
	o->interp_next = u64_at(buf, d->interp_next);
	o->interp_threads_head = u64_at(buf, d->interp_threads_head);
	o->tstate_next = v[0];
	o->tstate_thread_id = v[3];
	o->tstate_frame = v[2];
	o->cframe_current_frame = PYPROF_NO_OFFSET;
	o->frame_code = u64_at(buf, d->frame_executable);
	o->frame_previous = u64_at(buf, d->frame_previous);
	o->frame_instr = u64_at(buf, d->frame_instr_ptr);
	o->frame_owner = u64_at(buf, d->frame_owner);
	o->frame_read_size = fsize;
	o->code_filename = u64_at(buf, d->code_filename);
	o->code_name = u64_at(buf, d->code_name);
	o->code_qualname = u64_at(buf, d->code_qualname);
	o->code_linetable = u64_at(buf, d->code_linetable);
	o->code_firstlineno = u64_at(buf, d->code_firstlineno);
	o->code_adaptive = u64_at(buf, d->code_adaptive);
	o->str_length = 16;
	o->str_state = 32;
	o->str_ascii_data = u64_at(buf, d->str_ascii_size);
	o->instr_kind = PY_INSTR_PTR;
	/* 3.13: FRAME_OWNED_BY_CSTACK = 3; 3.14+: FRAME_OWNED_BY_INTERPRETER = 3 (and above). */
	o->owner_skip_min = 3;
	/* 3.14+ f_executable is a _PyStackRef: the low two bits are tags. */
	o->code_tag_mask = minor >= 14 ? 3 : 0;
	/* The identity fields run from co_firstlineno to the last of the four pointers. */
	o->code_id_start = o->code_firstlineno;
	o->code_id_size = o->code_linetable + 8 - o->code_firstlineno;
	if (o->code_filename < o->code_id_start || o->code_qualname < o->code_id_start ||
	    o->code_name < o->code_id_start || o->code_id_size > PY_CODE_ID_READ ||
	    o->str_ascii_data < 24 || o->str_ascii_data > 48)
		goto implausible;
	out->tstate_interp = v[1];
	out->ob_type = 8;
	out->bytes_size = 16;
	out->bytes_data = 32;
	out->code_read_size = o->code_adaptive;
	out->str_compact_data = d->str_compact_size ? u64_at(buf, d->str_compact_size) : 56;
	out->str_utf8_length = 40;	/* PyCompactUnicodeObject.utf8_length (3.12+) */
	out->str_utf8 = 48;		/* PyCompactUnicodeObject.utf8 (3.12+) */
	out->linetable = LINETABLE_LOCATIONS;
	out->lasti_unit = 1;
	return 0;
implausible:
	snprintf(why, whylen, "_Py_DebugOffsets of Python 3.%u hold implausible values", minor);
	return -EPROTO;
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
