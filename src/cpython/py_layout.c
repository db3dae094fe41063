// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-version CPython layouts: the only place that knows struct offsets.
 * 3.8-3.12 are tables: each number is the byte offset of the CPython struct
 * field named beside it (x86_64, non-debug, GIL build), checked against DWARF
 * of pyenv builds, the disassembly of Debian's binaries and live reads (see
 * shared/design/cpython-internals.md sections 1-3). 3.13+ publish their own
 * offsets in _Py_DebugOffsets at the start of _PyRuntime; those are read from
 * the target and checked, never hard-coded. Its free_threaded flag selects
 * what a free-threaded build (3.13t+) changes: the object header (32 bytes),
 * 3.14t's str state bits and its thread-local bytecode.
 *
 * PyThreadState.exc_info (the top of the exception stack the sampler reads at
 * each tick) is not in _Py_DebugOffsets: 144 (3.8-3.10), 120 (3.11), 104
 * (3.12), 120 (3.13, 3.14), 144 (3.15). offsetof() against pyenv's headers of
 * 3.8.18-3.13.0 and Debian's 3.11.2, and read live on every interpreter tested
 * (3.8.18 to 3.15.2, 3.13.5t: the one word of the thread state that points
 * to an item holding the exception being handled, in an except block and in
 * a generator's; 3.15.2's is the word after its published current_exception,
 * as in 3.12's header). The opcodes (EXTENDED_ARG) are py_opcodes.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cpython/py_layout.h"
#include "cpython/py_opcodes.h"

const char py_supported_versions[] = "3.8 to 3.15";

/* Fields of PyObject, str and bytes that no version between 3.8 and 3.15 moved. */
// clang-format off
#define OBJECT_COMMON                                                                              \
	.tstate_interp = 16,	/* PyThreadState.interp */                                        \
	.ob_type = 8,		/* PyObject.ob_type */                                            \
	.bytes_size = 16,	/* PyVarObject.ob_size */                                         \
	.bytes_data = 32	/* PyBytesObject.ob_sval */

/* Thread-local bytecode exists only in free-threaded 3.14+ (read from _Py_DebugOffsets). */
#define NO_TLBC                                                                                    \
	.frame_tlbc_index = PYPROF_NO_OFFSET,                                                      \
	.code_tlbc = PYPROF_NO_OFFSET
// clang-format on

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
		.frame_is_entry = PYPROF_NO_OFFSET, /* every frame is its own eval call */
		.tstate_exc_info = 144,		/* PyThreadState.exc_info */
		.exc_item_value = 0,		/* _PyErr_StackItem.exc_type */
		.exc_item_previous = 24,	/* _PyErr_StackItem.previous_item */
		.code_code = 48,		/* PyCodeObject.co_code (bytes) */
		NO_TLBC,
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
		.frame_is_entry = PYPROF_NO_OFFSET, /* every frame is its own eval call */
		.tstate_exc_info = 144,		/* PyThreadState.exc_info */
		.exc_item_value = 0,		/* _PyErr_StackItem.exc_type */
		.exc_item_previous = 24,	/* _PyErr_StackItem.previous_item */
		.code_code = 48,		/* PyCodeObject.co_code (bytes) */
		NO_TLBC,
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
		.frame_is_entry = 68,		/* _PyInterpreterFrame.is_entry (bool) */
		.tstate_exc_info = 120,		/* PyThreadState.exc_info */
		.exc_item_value = 0,		/* _PyErr_StackItem.exc_value */
		.exc_item_previous = 8,		/* _PyErr_StackItem.previous_item */
		.code_code = PYPROF_NO_OFFSET,	/* the bytecode is the code object's own */
		.call_caches = 4,		/* opcode._inline_cache_entries[CALL], 3.11.2, 3.11.7 */
		NO_TLBC,
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
		.frame_is_entry = PYPROF_NO_OFFSET, /* entries are marked by the shims */
		.tstate_exc_info = 104,		/* PyThreadState.exc_info */
		.exc_item_value = 0,		/* _PyErr_StackItem.exc_value */
		.exc_item_previous = 8,		/* _PyErr_StackItem.previous_item */
		.code_code = PYPROF_NO_OFFSET,	/* the bytecode is the code object's own */
		.call_caches = 3,		/* opcode._inline_cache_entries[CALL], 3.12 */
		NO_TLBC,
	},
	OBJECT_COMMON,
	.code_read_size = 192,			/* up to co_code_adaptive */
	.str_compact_data = 56,			/* sizeof(PyCompactUnicodeObject) */
	.str_utf8_length = 40,			/* PyCompactUnicodeObject.utf8_length */
	.str_utf8 = 48,				/* PyCompactUnicodeObject.utf8 */
	.linetable = LINETABLE_LOCATIONS,
	.lasti_unit = 1,
};

/* The built-in table of a version (3.8-3.12), or why there is none. */
static int layout_table(uint32_t hexversion, struct py_layout *out)
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
		return -EAGAIN; /* py_layout__from_debug_offsets() */
	default:
		return -ENOTSUP;
	}
}

/*
 * The tick's reads that every layout has in common (bpf/stackwalk.h): a
 * bytes object's fields and f_lasti's unit as userspace knows them, and
 * the version's EXTENDED_ARG.
 */
static void fill_tick(struct py_layout *L, uint32_t hexversion)
{
	int ext = py_opcode_extended_arg(hexversion);

	L->bpf.bytes_size = L->bytes_size;
	L->bpf.bytes_data = L->bytes_data;
	L->bpf.lasti_unit = L->lasti_unit;
	/* no table: a byte no opcode has, so nothing is stepped over */
	L->bpf.op_extended_arg = ext >= 0 ? ext : 0xff;
}

int py_layout__for_version(uint32_t hexversion, struct py_layout *out)
{
	int err = layout_table(hexversion, out);

	if (!err)
		fill_tick(out, hexversion);
	return err;
}

/*
 * Where each needed value sits inside _Py_DebugOffsets (byte positions of its
 * uint64 fields), per minor version: the struct is stable within a minor
 * version and changes between them. Verified against 3.13.0/.5/.18,
 * 3.14.8/.10 and 3.15.2 (cpython-internals.md section 5). The *_size
 * positions hold the sizeof of the struct the group describes.
 */
struct debug_positions {
	uint16_t runtime_size, interpreters_head;
	uint16_t interp_size, interp_next, interp_threads_head;
	uint16_t tstate_size, tstate_next, tstate_interp, tstate_current_frame, tstate_thread_id;
	uint16_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
	uint16_t code_size, code_filename, code_name, code_qualname, code_linetable;
	uint16_t code_firstlineno, code_adaptive;
	uint16_t ob_type;
	uint16_t bytes_size, bytes_sval;
	uint16_t str_state, str_length, str_ascii_size, str_compact_size; /* 0: not published */
	uint16_t total;
	uint16_t frame_tlbc_index, code_tlbc; /* 0: not published (3.13) */
	/* not a position: PyThreadState.exc_info itself, which the table does not publish */
	uint16_t tstate_exc_info;
};

// clang-format off
static const struct debug_positions debug_313 = {
	24, 40, 48, 64, 72, 152, 168, 176, 184, 192, 224, 232, 240, 248, 264,
	272, 280, 288, 296, 304, 312, 344, 360, 520, 528, 544, 552, 560, 0, 584, 0, 0, 120,
};
static const struct debug_positions debug_314 = {
	24, 40, 48, 64, 72, 176, 192, 200, 208, 216, 248, 256, 264, 272, 288,
	312, 320, 328, 336, 344, 352, 384, 408, 600, 608, 624, 632, 640, 0, 760, 304, 392, 120,
};
static const struct debug_positions debug_315 = {
	24, 40, 48, 64, 72, 176, 192, 200, 208, 240, 312, 320, 328, 336, 352,
	376, 384, 392, 400, 408, 416, 448, 472, 696, 704, 720, 728, 736, 744, 888, 368, 456, 144,
};
// clang-format on

/*
 * sizeof(PyObject): ob_refcnt and ob_type; in a free-threaded build (3.13t+)
 * ob_tid, ob_flags, ob_mutex, ob_gc_bits, ob_ref_local and ob_ref_shared
 * come before ob_type. Every object's own fields follow the header (and
 * ob_size for a PyVarObject), so they all lie 16 bytes further on.
 */
#define OBJECT_HEAD_SIZE 16
#define OBJECT_HEAD_SIZE_FT 32
/* PyObject_VAR_HEAD of a default build: the smallest offset of a code object's own fields. */
#define VAR_HEAD_SIZE (OBJECT_HEAD_SIZE + 8)

/* off + width <= size, whatever off is: no addition that can wrap. */
static bool fits(uint64_t off, uint64_t width, uint64_t size)
{
	return off <= size && width <= size - off;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * Reading one table: its bytes, and the first failed check (why names the
 * field). After a failure the later checks keep quiet, so the first one
 * stays the reason.
 */
struct dbg {
	const uint8_t *buf;
	char *why;
	size_t whylen;
	bool bad;
	uint64_t head; /* sizeof(PyObject) of this build: OBJECT_HEAD_SIZE or _FT */
};

static uint64_t u64_at(const uint8_t *buf, uint16_t pos)
{
	uint64_t v;

	memcpy(&v, buf + pos, sizeof(v));
	return v;
}

static void dbg_fail(struct dbg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void dbg_fail(struct dbg *g, const char *fmt, ...)
{
	va_list ap;

	if (g->bad)
		return;
	g->bad = true;
	va_start(ap, fmt);
	vsnprintf(g->why, g->whylen, fmt, ap);
	va_end(ap);
}

/*
 * The offset at table position pos, named name: a field of width bytes that
 * must lie in bytes [lo, end) of the struct what. end is already the
 * smallest of the struct's declared size, what pybpfprof reads of it and
 * what the field it goes to can hold, so a value that passes fits them all.
 */
static uint64_t dbg_field(struct dbg *g, uint16_t pos, const char *name, unsigned width,
			  uint64_t lo, uint64_t end, const char *what)
{
	uint64_t v = u64_at(g->buf, pos);

	if (v < lo || !fits(v, width, end))
		dbg_fail(g,
			 "%s = 0x%" PRIx64 ": its %u bytes are not within bytes [%" PRIu64
			 ", %" PRIu64 ") of %s",
			 name, v, width, lo, end, what);
	return v;
}

/* A size at table position pos, which must lie in [lo, hi]. */
static uint64_t dbg_size(struct dbg *g, uint16_t pos, const char *name, uint64_t lo, uint64_t hi,
			 const char *what)
{
	uint64_t v = u64_at(g->buf, pos);

	if (v < lo || v > hi)
		dbg_fail(g, "%s = 0x%" PRIx64 ": not %" PRIu64 " to %" PRIu64 " bytes (%s)", name,
			 v, lo, hi, what);
	return v;
}

/* A value every build of its kind (default, free-threaded) has: pybpfprof relies on it. */
static void dbg_fixed(struct dbg *g, uint16_t pos, const char *name, uint64_t want)
{
	uint64_t v = u64_at(g->buf, pos);

	if (v != want)
		dbg_fail(g, "%s = 0x%" PRIx64 ": every supported %s build has %" PRIu64, name, v,
			 g->head == OBJECT_HEAD_SIZE ? "default" : "free-threaded", want);
}

/*
 * The table for this version, whole, with its cookie and version; whether
 * the build is free-threaded (3.13+ builds with --disable-gil).
 */
static int dbg_header(uint32_t hexversion, const uint8_t *buf, size_t len,
		      const struct debug_positions **dp, bool *free_threaded, char *why,
		      size_t whylen)
{
	unsigned minor = (hexversion >> 16) & 0xff;
	const struct debug_positions *d;
	uint64_t version, ft;

	d = minor == 13 ? &debug_313 : minor == 14 ? &debug_314 : minor == 15 ? &debug_315 : NULL;
	if (!d || !buf || len < d->total) {
		snprintf(why, whylen, "no _Py_DebugOffsets layout for Python 3.%u", minor);
		return -ENOTSUP;
	}
	if (memcmp(buf, "xdebugpy", 8)) {
		snprintf(why, whylen, "_Py_DebugOffsets cookie missing at the start of _PyRuntime");
		return -EPROTO;
	}
	version = u64_at(buf, 8);
	if ((version >> 16) != (hexversion >> 16)) {
		snprintf(why, whylen,
			 "_Py_DebugOffsets says version 0x%" PRIx64 ", the binary 0x%x", version,
			 hexversion);
		return -EPROTO;
	}
	ft = u64_at(buf, 16);
	if (ft > 1) {
		snprintf(why, whylen, "_Py_DebugOffsets.free_threaded = 0x%" PRIx64 ": not 0 or 1",
			 ft);
		return -EBADMSG;
	}
	*free_threaded = ft;
	*dp = d;
	return 0;
}

/*
 * Structs pybpfprof only reads single words of, in the target (by BPF and
 * by the live check): their offsets must lie in the declared size and fit a
 * 16-bit field, below PYPROF_NO_OFFSET.
 */
static void dbg_states(struct dbg *g, const struct debug_positions *d, struct py_layout *L)
{
	const char *runtime = "_PyRuntimeState (its declared size, 16 bits at most)";
	const char *interp = "PyInterpreterState (its declared size, 16 bits at most)";
	const char *tstate = "PyThreadState (its declared size, 16 bits at most)";
	uint64_t rsize, isize, tsize;
	struct py_offsets *o = &L->bpf;

	rsize = min_u64(u64_at(g->buf, d->runtime_size), PYPROF_NO_OFFSET);
	isize = min_u64(u64_at(g->buf, d->interp_size), PYPROF_NO_OFFSET);
	tsize = min_u64(u64_at(g->buf, d->tstate_size), PYPROF_NO_OFFSET);
	o->runtime_interp_head = dbg_field(g, d->interpreters_head,
					   "runtime_state.interpreters_head", 8, 0, rsize, runtime);
	o->interp_next = dbg_field(g, d->interp_next, "interpreter_state.next", 8, 0, isize,
				   interp);
	o->interp_threads_head = dbg_field(g, d->interp_threads_head,
					   "interpreter_state.threads_head", 8, 0, isize, interp);
	o->tstate_next = dbg_field(g, d->tstate_next, "thread_state.next", 8, 0, tsize, tstate);
	L->tstate_interp = dbg_field(g, d->tstate_interp, "thread_state.interp", 8, 0, tsize,
				     tstate);
	o->tstate_frame = dbg_field(g, d->tstate_current_frame, "thread_state.current_frame", 8, 0,
				    tsize, tstate);
	o->tstate_thread_id = dbg_field(g, d->tstate_thread_id, "thread_state.thread_id", 8, 0,
					tsize, tstate);
	/* known, not published: a thread state smaller than that is not this version's */
	o->tstate_exc_info = PYPROF_NO_OFFSET;
	if (fits(d->tstate_exc_info, 8, tsize))
		o->tstate_exc_info = d->tstate_exc_info;
	o->exc_item_value = 0;	  /* _PyErr_StackItem.exc_value */
	o->exc_item_previous = 8; /* _PyErr_StackItem.previous_item */
	o->code_code = PYPROF_NO_OFFSET;
}

/* A frame is read whole, PYPROF_FRAME_READ bytes at most, by BPF and by the live check. */
static void dbg_frame(struct dbg *g, const struct debug_positions *d, struct py_offsets *o)
{
	uint64_t fsize;

	fsize = dbg_size(g, d->frame_size, "interpreter_frame.size", 8, PYPROF_FRAME_READ,
			 "what pybpfprof reads of a frame");
	fsize = min_u64(fsize, PYPROF_FRAME_READ);
	o->frame_previous = dbg_field(g, d->frame_previous, "interpreter_frame.previous", 8, 0,
				      fsize, "_PyInterpreterFrame");
	o->frame_code = dbg_field(g, d->frame_executable, "interpreter_frame.executable", 8, 0,
				  fsize, "_PyInterpreterFrame");
	o->frame_instr = dbg_field(g, d->frame_instr_ptr, "interpreter_frame.instr_ptr", 8, 0,
				   fsize, "_PyInterpreterFrame");
	o->frame_owner = dbg_field(g, d->frame_owner, "interpreter_frame.owner", 1, 0, fsize,
				   "_PyInterpreterFrame");
	o->frame_read_size = fsize;
}

/* The code object's fields as the table gives them, checked. */
struct code_fields {
	uint64_t adaptive; /* co_code_adaptive: the head userspace reads ends there */
	uint64_t first;	   /* co_firstlineno: BPF's identity prefix starts there */
	uint64_t id_end;   /* ... and ends after the last of the four pointers */
	uint64_t ptrs[4];  /* co_filename, co_name, co_qualname, co_linetable */
};

/*
 * The code object: userspace reads its head up to co_code_adaptive (at most
 * PY_CODE_HEAD_READ bytes), and BPF its identity prefix, from
 * co_firstlineno, at most PY_CODE_ID_READ bytes. Every field lies after the
 * object header and before the bytecode; the four pointers inside the
 * prefix. BPF reads co_firstlineno (an int) as a word.
 */
static void dbg_code(struct dbg *g, const struct debug_positions *d, struct code_fields *c)
{
	const char *code_id = "PyCodeObject's identity fields";
	uint64_t csize, id_lim, var_head = g->head + 8;
	size_t i;

	csize = dbg_size(g, d->code_size, "code_object.size", var_head + 8, PY_CODE_HEAD_READ,
			 "what pybpfprof reads of a code object");
	csize = min_u64(csize, PY_CODE_HEAD_READ);
	c->adaptive = dbg_size(g, d->code_adaptive, "code_object.co_code_adaptive", var_head + 8,
			       csize, "the code object's fields before its bytecode");
	c->adaptive = min_u64(c->adaptive, csize);
	c->first = dbg_field(g, d->code_firstlineno, "code_object.firstlineno", 8, var_head,
			     c->adaptive, "PyCodeObject before co_code_adaptive");
	c->first = min_u64(c->first, c->adaptive);
	id_lim = min_u64(c->adaptive, c->first + PY_CODE_ID_READ);
	c->ptrs[0] = dbg_field(g, d->code_filename, "code_object.filename", 8, c->first, id_lim,
			       code_id);
	c->ptrs[1] = dbg_field(g, d->code_name, "code_object.name", 8, c->first, id_lim, code_id);
	c->ptrs[2] = dbg_field(g, d->code_qualname, "code_object.qualname", 8, c->first, id_lim,
			       code_id);
	c->ptrs[3] = dbg_field(g, d->code_linetable, "code_object.linetable", 8, c->first, id_lim,
			       code_id);
	c->id_end = c->first + 8;
	for (i = 0; i < 4; i++)
		if (!g->bad && c->ptrs[i] + 8 > c->id_end) /* ptrs[i] < id_lim <= 2^9 here */
			c->id_end = c->ptrs[i] + 8;
}

/*
 * Objects pybpfprof decodes the same way in every version, behind the object
 * header of the build (g->head): ob_type is its last word; bytes' ob_size
 * and str's length follow it; then bytes' text, and str's hash and state.
 * The sizes of str heads.
 */
static void dbg_objects(struct dbg *g, const struct debug_positions *d, uint64_t *ascii,
			uint64_t *compact)
{
	uint64_t h = g->head;

	dbg_fixed(g, d->ob_type, "pyobject.ob_type", h - 8);
	dbg_fixed(g, d->bytes_size, "bytes_object.ob_size", h);
	dbg_fixed(g, d->bytes_sval, "bytes_object.ob_sval", h + 16);
	dbg_fixed(g, d->str_length, "unicode_object.length", h);
	dbg_fixed(g, d->str_state, "unicode_object.state", h + 16);
	/* ASCII text starts after the 32-bit state, and PY_NAME_TEXT of it fit in PY_STR_READ. */
	*ascii = dbg_size(g, d->str_ascii_size, "unicode_object.asciiobject_size", h + 16 + 4,
			  h + PY_STR_READ - PY_NAME_TEXT, "a PyASCIIObject, as pybpfprof reads it");
	/* PyCompactUnicodeObject when the table does not say: utf8_length and utf8 added */
	*compact = *ascii + 16;
	if (d->str_compact_size)
		*compact = dbg_size(g, d->str_compact_size,
				    "unicode_object.compactunicodeobject_size", *ascii,
				    PY_STR_HEAD_READ, "what pybpfprof reads of a str");
}

/*
 * 3.14t thread-local bytecode (the walker's bytecode_base, bpf/stackwalk.h):
 * the frame's tlbc_index, an int inside the frame read, and the code
 * object's co_tlbc, a pointer before its bytecode. Published only by
 * free-threaded builds; 0 elsewhere, where the fields do not exist.
 */
static void dbg_tlbc(struct dbg *g, const struct debug_positions *d, bool free_threaded,
		     const struct code_fields *c, struct py_offsets *o)
{
	o->frame_tlbc_index = PYPROF_NO_OFFSET;
	o->code_tlbc = PYPROF_NO_OFFSET;
	if (!free_threaded || !d->frame_tlbc_index)
		return;
	o->frame_tlbc_index = dbg_field(g, d->frame_tlbc_index, "interpreter_frame.tlbc_index", 4,
					0, o->frame_read_size, "_PyInterpreterFrame");
	o->code_tlbc = dbg_field(g, d->code_tlbc, "code_object.co_tlbc", 8, g->head + 8,
				 c->adaptive, "PyCodeObject before co_code_adaptive");
}

/* The rest of the layout, once every value read is in range: the narrowing keeps it whole. */
static void dbg_fill(struct py_layout *L, unsigned minor, const struct code_fields *c,
		     uint64_t ascii, uint64_t compact, uint64_t head)
{
	struct py_offsets *o = &L->bpf;

	o->cframe_current_frame = PYPROF_NO_OFFSET;
	o->code_filename = c->ptrs[0];
	o->code_name = c->ptrs[1];
	o->code_qualname = c->ptrs[2];
	o->code_linetable = c->ptrs[3];
	o->code_firstlineno = c->first;
	o->code_adaptive = c->adaptive;
	o->code_id_start = c->first;
	o->code_id_size = c->id_end - c->first;
	o->str_length = head;
	o->str_state = head + 16;
	o->str_ascii_data = ascii;
	/* 3.14t: unsigned char interned, then the kind, compact and ascii bits */
	o->str_state_shift = L->free_threaded && minor >= 14 ? 8 : 0;
	o->instr_kind = PY_INSTR_PTR;
	/* 3.13: FRAME_OWNED_BY_CSTACK = 3; 3.14+: FRAME_OWNED_BY_INTERPRETER = 3 (and above). */
	o->owner_skip_min = 3;
	o->frame_is_entry = PYPROF_NO_OFFSET; /* entries are marked by the shims */
	/* 3.14+ f_executable is a _PyStackRef: the low two bits are tags. */
	o->code_tag_mask = minor >= 14 ? 3 : 0;
	L->ob_type = head - 8;
	L->bytes_size = head;
	L->bytes_data = head + 16;
	L->code_read_size = c->adaptive;
	L->str_compact_data = compact;
	L->str_utf8_length = ascii; /* PyCompactUnicodeObject.utf8_length (3.12+) */
	L->str_utf8 = ascii + 8;    /* PyCompactUnicodeObject.utf8 (3.12+) */
	L->linetable = LINETABLE_LOCATIONS;
	L->lasti_unit = 1;
}

int py_layout__from_debug_offsets(uint32_t hexversion, const uint8_t *buf, size_t len,
				  struct py_layout *out, char *why, size_t whylen)
{
	const struct debug_positions *d = NULL;
	struct dbg g = { buf, why, whylen, false, OBJECT_HEAD_SIZE };
	struct code_fields c = { 0 };
	uint64_t ascii = 0, compact = 0;
	struct py_layout L = {};
	char check[160];
	int err;

	err = dbg_header(hexversion, buf, len, &d, &L.free_threaded, why, whylen);
	if (err)
		return err;
	if (L.free_threaded)
		g.head = OBJECT_HEAD_SIZE_FT;
	dbg_states(&g, d, &L);
	dbg_frame(&g, d, &L.bpf);
	dbg_code(&g, d, &c);
	dbg_tlbc(&g, d, L.free_threaded, &c, &L.bpf);
	dbg_objects(&g, d, &ascii, &compact);
	if (g.bad)
		return -EBADMSG;
	dbg_fill(&L, (hexversion >> 16) & 0xff, &c, ascii, compact, g.head);
	fill_tick(&L, hexversion);
	/* The checks above imply the invariant; a slip in them must not reach BPF. */
	if (py_layout__check(&L, check, sizeof(check))) {
		snprintf(why, whylen, "the layout from _Py_DebugOffsets fails a check: %s", check);
		return -EBADMSG;
	}
	*out = L;
	return 0;
}

/* Names the first field of a layout that fails its bound. */
struct lcheck {
	char *why;
	size_t whylen;
	bool bad;
};

/* Field name = off, width bytes wide, must lie in bytes [lo, end) of a buffer. */
static void lc_in(struct lcheck *c, const char *name, uint64_t off, unsigned width, uint64_t lo,
		  uint64_t end, const char *buffer)
{
	if (c->bad || (off >= lo && fits(off, width, end)))
		return;
	c->bad = true;
	snprintf(c->why, c->whylen,
		 "%s = %" PRIu64 ": its %u bytes are not within bytes [%" PRIu64 ", %" PRIu64
		 ") of %s",
		 name, off, width, lo, end, buffer);
}

int py_layout__check(const struct py_layout *L, char *why, size_t whylen)
{
	const struct py_offsets *o = &L->bpf;
	struct lcheck c = { why, whylen, false };
	uint64_t id_end = (uint64_t)o->code_id_start + o->code_id_size;

	/* The frame buffer, read by BPF (walk_step) and userspace (first_code). */
	lc_in(&c, "frame_read_size", o->frame_read_size, 0, 8, PYPROF_FRAME_READ, "a frame read");
	lc_in(&c, "frame_code", o->frame_code, 8, 0, o->frame_read_size, "a frame read");
	lc_in(&c, "frame_previous", o->frame_previous, 8, 0, o->frame_read_size, "a frame read");
	lc_in(&c, "frame_instr", o->frame_instr, 8, 0, o->frame_read_size, "a frame read");
	if (o->frame_owner != PYPROF_NO_OFFSET)
		lc_in(&c, "frame_owner", o->frame_owner, 1, 0, o->frame_read_size, "a frame read");
	if (o->frame_is_entry != PYPROF_NO_OFFSET)
		lc_in(&c, "frame_is_entry", o->frame_is_entry, 1, 0, o->frame_read_size,
		      "a frame read");
	if (o->frame_tlbc_index != PYPROF_NO_OFFSET)
		lc_in(&c, "frame_tlbc_index", o->frame_tlbc_index, 4, 0, o->frame_read_size,
		      "a frame read");
	/* The code object's head (read_code) and identity prefix (BPF and code_identity). */
	lc_in(&c, "code_read_size", L->code_read_size, 0, VAR_HEAD_SIZE, PY_CODE_HEAD_READ,
	      "a code object read");
	lc_in(&c, "ob_type", L->ob_type, 8, 0, L->code_read_size, "a code object read");
	if (o->code_tlbc != PYPROF_NO_OFFSET)
		lc_in(&c, "code_tlbc", o->code_tlbc, 8, 0, L->code_read_size, "a code object read");
	lc_in(&c, "code_id_size", o->code_id_size, 0, 8, PY_CODE_ID_READ, "an identity read");
	lc_in(&c, "code_id_start", o->code_id_start, 0, 0,
	      L->code_read_size - min_u64(o->code_id_size, L->code_read_size),
	      "a code object read");
	lc_in(&c, "code_firstlineno", o->code_firstlineno, 8, o->code_id_start, id_end,
	      "the identity prefix");
	lc_in(&c, "code_filename", o->code_filename, 8, o->code_id_start, id_end,
	      "the identity prefix");
	lc_in(&c, "code_name", o->code_name, 8, o->code_id_start, id_end, "the identity prefix");
	lc_in(&c, "code_qualname", o->code_qualname, 8, o->code_id_start, id_end,
	      "the identity prefix");
	lc_in(&c, "code_linetable", o->code_linetable, 8, o->code_id_start, id_end,
	      "the identity prefix");
	/* A str: PY_STR_READ bytes from its length (code_identity), its head (remote_read_str). */
	lc_in(&c, "str_compact_data", L->str_compact_data, 0, 0, PY_STR_HEAD_READ, "a str read");
	lc_in(&c, "str_length", o->str_length, 8, 0, L->str_compact_data, "a str head read");
	lc_in(&c, "str_state", o->str_state, 4, o->str_length,
	      min_u64(L->str_compact_data, (uint64_t)o->str_length + PY_STR_READ), "a str read");
	lc_in(&c, "str_ascii_data", o->str_ascii_data, PY_NAME_TEXT, o->str_length,
	      (uint64_t)o->str_length + PY_STR_READ, "a str read");
	/* An exception stack item, read whole (stackwalk_exc): 16 or 32 bytes. */
	if (o->tstate_exc_info != PYPROF_NO_OFFSET) {
		lc_in(&c, "exc_item_value", o->exc_item_value, 8, 0,
		      o->exc_item_previous < 16 ? 16 : 32, "an exception stack item read");
		lc_in(&c, "exc_item_previous", o->exc_item_previous, 8, 0, 32,
		      "an exception stack item read");
	}
	if (!c.bad && (o->instr_kind > PY_INSTR_PTR || L->linetable > LINETABLE_LOCATIONS ||
		       L->lasti_unit < 1 || L->lasti_unit > 2 ||
		       (o->str_state_shift != 0 && o->str_state_shift != 8))) {
		c.bad = true;
		snprintf(why, whylen,
			 "instr_kind %u, linetable kind %d, lasti_unit %d or str_state_shift %u "
			 "unknown",
			 o->instr_kind, (int)L->linetable, L->lasti_unit, o->str_state_shift);
	}
	return c.bad ? -EBADMSG : 0;
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

int py_layout__objects(uint32_t hexversion, struct py_obj_layout *out)
{
	unsigned minor = (hexversion >> 16) & 0xff;
	struct py_obj_layout o = {
		.frame_localsplus = 72,		   /* _PyInterpreterFrame.localsplus, 3.11-3.13 */
		.code_names = 96,		   /* PyCodeObject.co_localsplusnames, 3.11+ */
		.code_nlocals = PYPROF_NO_OFFSET,  /* the names tuple's size says it */
		.code_cellvars = PYPROF_NO_OFFSET, /* 3.11+: in co_localsplusnames */
		.code_freevars = PYPROF_NO_OFFSET,
		/* co_argcount, co_flags: 3.12+ (live 3.12.1-3.15.2; 3.11: below) */
		.code_argcount = 52,
		.code_flags = 48,
		.tstate_native_id = 160, /* PyThreadState.native_thread_id */
		.runtime_gil = PYPROF_NO_OFFSET,
		.interp_gil_ptr = PYPROF_NO_OFFSET,
		.runtime_gc_collecting = PYPROF_NO_OFFSET,
		.interp_gc_collecting = PYPROF_NO_OFFSET,
		.tuple_items = minor >= 14 ? 32 : 24,
		/* DWARF 3.11.7, 3.12.1, 3.13.0; live 3.14.8, 3.15.2 (PyTypeObject grew by 8) */
		.heap_cached_keys = minor == 11 ? 872 :
				    minor == 15 ? 888 :
						  880,
		.managed_dict = minor <= 10 ? 0 :
				minor == 11 ? 1 :
				minor == 12 ? 2 :
					      3,
		.long_tagged = minor >= 12,
		.dict_keys_311 = minor >= 11,
		.stackref_locals = minor >= 14,
	};

	if (hexversion >> 24 != 3 || minor < 8 || minor > 15)
		return -ENOTSUP;
	if (minor <= 10) {
		o.frame_localsplus = minor == 10 ? 352 : 360; /* PyFrameObject.f_localsplus */
		o.code_names = 72;			      /* PyCodeObject.co_varnames */
		o.code_nlocals = 28;			      /* PyCodeObject.co_nlocals */
		o.code_cellvars = 88;			      /* PyCodeObject.co_cellvars */
		o.code_freevars = 80;			      /* PyCodeObject.co_freevars */
		o.code_argcount = 16;			      /* PyCodeObject.co_argcount */
		o.code_flags = 36;			      /* PyCodeObject.co_flags */
		o.tstate_native_id = PYPROF_NO_OFFSET;
		/* _PyRuntime.ceval.gil, just before gilstate; gc.collecting (DWARF) */
		o.runtime_gil = minor == 8 ? 1152 : 352;
		if (minor == 8)
			o.runtime_gc_collecting = 544;
		else
			o.interp_gc_collecting = 816;
	} else if (minor == 11) {
		o.code_argcount = 56; /* after co_flags and two shorts (co_warmup) */
		o.runtime_gil = 360;
		o.interp_gc_collecting = 848;
	} else if (minor == 12) {
		o.tstate_native_id = 144;
		o.interp_gil_ptr = 384;	      /* PyInterpreterState.ceval.gil */
		o.interp_gc_collecting = 312; /* PyInterpreterState.gc.collecting */
	} else if (minor >= 14) {
		o.frame_localsplus = 80;
		o.tstate_native_id = minor == 15 ? 184 : 160;
	}
	*out = o;
	return 0;
}

/*
 * TaskObj and coroutine offsets: read live with ctypes from a task suspended
 * in a coroutine awaiting another (Debian 3.11.2, pyenv 3.11.7, 3.12.1,
 * 3.13.0, trixie 3.13.5, forky 3.14.8, sid 3.14.10 and 3.15.2); 3.14 and 3.15
 * agree with their AsyncioDebug sections (task_coro 128, task_name 136,
 * task_node 152, the thread state's asyncio_running_loop 864 / 1024,
 * asyncio_running_task 872 / 1032 and asyncio_tasks_head 880 / 1048, the
 * interpreter's 10880 / 10856). 3.13's running loop (304) was found live as
 * the one word of the thread state that is the running loop.
 */
int py_layout__async(uint32_t hexversion, struct py_async_layout *out)
{
	unsigned minor = (hexversion >> 16) & 0xff;
	struct py_async_layout a = {
		.fut_state = 88,
		.task_fut_waiter = 128,
		.task_coro = 136,
		.task_name = 144,
		.task_node = PYPROF_NO_OFFSET,
		.task_size = 176,
		.gen_iframe = 72,
		.frame_stack = 64,
		.interp_modules = minor == 11 ? 888 : 944,
		.tstate_tasks = PYPROF_NO_OFFSET,
		.interp_tasks = PYPROF_NO_OFFSET,
		.tstate_running_loop = PYPROF_NO_OFFSET,
		.tstate_running_task = PYPROF_NO_OFFSET,
		.await_depth = 1,
	};

	if (hexversion >> 24 != 3 || minor < 11 || minor > 15)
		return -ENOTSUP;
	if (minor == 11)
		a.gen_iframe = 80;
	if (minor == 13) {
		a.fut_state = 96;
		a.task_fut_waiter = 112;
		a.task_coro = 120;
		a.task_name = 128;
		a.task_size = 144;
		a.interp_modules = 7656;
		a.tstate_running_loop = 304;
	} else if (minor >= 14) {
		a.fut_state = 104;
		a.task_fut_waiter = 120;
		a.task_coro = 128;
		a.task_name = 136;
		a.task_node = 152;
		a.task_size = 168;
		a.interp_modules = PYPROF_NO_OFFSET;
		a.tstate_tasks = minor == 14 ? 880 : 1048;
		a.interp_tasks = minor == 14 ? 10880 : 10856;
		a.tstate_running_loop = minor == 14 ? 864 : 1024;
		a.tstate_running_task = minor == 14 ? 872 : 1032;
		a.stack_pointer = 1;
		a.await_depth = minor == 14 ? 1 : 2;
	}
	*out = a;
	return 0;
}
