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
#include "cpython/linetable.h"

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
 * co_code_adaptive: src/cpython/code_cache.c) and from a str object (up to its
 * non-ASCII data: src/cpython/remote_mem.c). Every offset of a layout lies inside
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

/*
 * What reading live objects (pybpfprof dump, src/cpython/py_objects.c) needs
 * beyond struct py_layout: where a frame's local variables and their names
 * are, which thread a thread state is, and how ints and dicts are laid out.
 * Fixed per minor version for the default (GIL) builds 3.8-3.15
 * (cpython-internals.md sections 1-3; checked live by the dump tests).
 */
struct py_obj_layout {
	uint16_t frame_localsplus; /* f_localsplus (<=3.10) / _PyInterpreterFrame.localsplus */
	uint16_t code_names;	   /* co_varnames (<=3.10) / co_localsplusnames (tuple) */
	uint16_t code_nlocals;	   /* co_nlocals (<=3.10, int), or PYPROF_NO_OFFSET */
	uint16_t code_cellvars;	   /* co_cellvars (<=3.10; their cells follow the locals) */
	uint16_t code_freevars;	   /* co_freevars (<=3.10; after the cells) */
	uint16_t
		code_argcount; /* co_argcount (int); co_posonlyargcount, co_kwonlyargcount follow */
	uint16_t code_flags;   /* co_flags (int): CO_VARARGS 4, CO_VARKEYWORDS 8 */
	uint16_t tstate_native_id; /* native_thread_id (3.11+), or PYPROF_NO_OFFSET */
	/*
	 * The GIL (struct _gil_runtime_state): in _PyRuntime.ceval.gil (<=3.11),
	 * or pointed to by PyInterpreterState.ceval.gil (3.12; 3.13+ read it from
	 * _Py_DebugOffsets); and the collector's "collecting" flag, in _PyRuntime
	 * (3.8) or in the interpreter (3.9-3.12; 3.13+ from the debug offsets,
	 * src/cpython/py_threads.c).
	 */
	uint16_t runtime_gil;		/* or PYPROF_NO_OFFSET */
	uint16_t interp_gil_ptr;	/* or PYPROF_NO_OFFSET */
	uint16_t runtime_gc_collecting; /* or PYPROF_NO_OFFSET */
	uint16_t interp_gc_collecting;	/* or PYPROF_NO_OFFSET */
	uint16_t tuple_items;		/* PyTupleObject.ob_item (3.14 added ob_hash before it) */
	uint16_t heap_cached_keys;	/* PyHeapTypeObject.ht_cached_keys (3.11+) */
	uint8_t managed_dict;		/* 0 tp_dictoffset (<=3.10), 1 3.11, 2 3.12, 3 3.13+ */
	uint8_t stackref_locals;	/* locals are tagged _PyStackRef (3.14+) */
	uint8_t long_tagged;		/* int size in lv_tag (3.12+), not in ob_size */
	uint8_t dict_keys_311;		/* PyDictKeysObject with log2 sizes and dk_kind (3.11+) */
};

/* struct _gil_runtime_state, the same in 3.8-3.15 (DWARF of pyenv 3.8.18-3.13.0). */
#define PY_GIL_INTERVAL 0    /* unsigned long, microseconds */
#define PY_GIL_LAST_HOLDER 8 /* PyThreadState * */
#define PY_GIL_LOCKED 16     /* int: 0 or 1 */
#define PY_GIL_SIZE 208	     /* the cond, mutex, switch_cond and switch_mutex from 32 on */
#define PY_GC_COLLECTING 200 /* struct _gc_runtime_state.collecting (3.8-3.13) */

/* Fills *out for a PY_VERSION_HEX; 0, or -ENOTSUP. */
int py_layout__objects(uint32_t hexversion, struct py_obj_layout *out);

/*
 * asyncio's C task (_asyncio.Task, TaskObj: FutureObj's fields, then the
 * task's) and coroutine objects, and where the tasks are found: through
 * sys.modules (PyInterpreterState.modules, 3.11; .imports.modules,
 * 3.12-3.13) and asyncio.tasks' task sets, or (3.14+) in each thread
 * state's list of its tasks (_PyThreadStateImpl.asyncio_tasks_head, linked
 * through TaskObj.task_node), as the _asyncio module's AsyncioDebug section
 * publishes them. Fixed per minor version (src/cpython/py_layout.c names the
 * builds each was read from).
 */
struct py_async_layout {
	uint16_t fut_state;	  /* FutureObj.fut_state (int: 0 pending, 1 cancelled, 2 done) */
	uint16_t task_fut_waiter; /* TaskObj.task_fut_waiter: the future it awaits */
	uint16_t task_coro;	  /* TaskObj.task_coro */
	uint16_t task_name;	  /* TaskObj.task_name: a str, or an int N for "Task-N" */
	uint16_t task_node;	  /* TaskObj.task_node (3.14+), or PYPROF_NO_OFFSET */
	uint16_t task_size;	  /* bytes of a TaskObj read */
	uint16_t gen_iframe;	  /* PyGenObject.gi_iframe: the coroutine's own frame */
	uint16_t frame_stack;	  /* _PyInterpreterFrame.stacktop (int, slots past localsplus,
				   * <= 3.13) or .stackpointer (a pointer, 3.14+) */
	uint16_t interp_modules;  /* sys.modules in the interpreter (<= 3.13), or NO_OFFSET */
	uint16_t tstate_tasks;	  /* asyncio_tasks_head in the thread state (3.14+), or NO_OFFSET */
	uint32_t interp_tasks;	  /* the interpreter's (tasks of exited threads), or NO_OFFSET */
	uint16_t tstate_running_loop; /* asyncio_running_loop (3.13+), or NO_OFFSET */
	uint16_t tstate_running_task; /* asyncio_running_task (3.14+), or NO_OFFSET */
	uint8_t stack_pointer;	      /* frame_stack is a pointer (3.14+) */
	/*
	 * The awaited object sits this many slots below the stack's top: 1, or
	 * 2 in 3.15, whose suspended SEND keeps a null reference above it.
	 */
	uint8_t await_depth;
};

/* Fills *out for a PY_VERSION_HEX; 0, or -ENOTSUP (before 3.11, or a free-threaded build). */
int py_layout__async(uint32_t hexversion, struct py_async_layout *out);

#endif
