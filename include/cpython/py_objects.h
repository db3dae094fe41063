/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Live Python objects of a target, read from outside (pybpfprof dump): a
 * bounded text for any object, the local variables of a frame, and every
 * thread's Python stack. Everything comes from the target's memory, so
 * everything is hostile: every length is bounded before use, every value
 * costs a bounded number of reads (PY_RENDER_READS), and an object that does
 * not read as what its type says prints as unreadable.
 */
#ifndef PYBPFPROF_PY_OBJECTS_H
#define PYBPFPROF_PY_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cpython/py_layout.h"
#include "cpython/target.h"

#define PY_RENDER_MAX 512  /* bytes of one value's text, with its NUL */
#define PY_RENDER_STR 80   /* characters of a str or bytes shown */
#define PY_RENDER_ITEMS 5  /* items of a container shown */
#define PY_RENDER_DEPTH 2  /* containers shown inside containers */
#define PY_RENDER_READS 96 /* memory reads for one value at most */
#define PY_RENDER_SCAN 64  /* dict entries and set slots looked at, at most */
#define PY_TYPES_KNOWN 32  /* type objects remembered per reader */

/* Builtin types recognised by name (static types only: a class cannot pose as one). */
enum py_kind {
	PYK_OTHER,
	PYK_NONE,
	PYK_BOOL,
	PYK_INT,
	PYK_FLOAT,
	PYK_STR,
	PYK_BYTES,
	PYK_TUPLE,
	PYK_LIST,
	PYK_DICT,
	PYK_SET,
	PYK_FROZENSET,
	PYK_NDARRAY,
	PYK_CELL,
	PYK_DUMMY,    /* the set's deleted-slot marker */
	PYK_LOCK,     /* _thread.lock (threading.Lock) */
	PYK_RLOCK,    /* _thread.RLock (threading.RLock) */
	PYK_NPSCALAR, /* a numpy scalar: numpy.int8, numpy.float64, numpy.bool_, ... */
};

/* A thread of the target by its pthread_self() (a lock's owner is named by it). */
struct py_thread_id {
	uint64_t ident; /* PyThreadState.thread_id, threading.get_ident() */
	pid_t tid;	/* its task in the target's pid namespace; 0 unknown */
	char name[64];	/* its threading name; "" unknown */
};

/* Reads one process's objects; the type memo makes repeated types cheap. */
struct py_reader {
	pid_t pid;
	const struct py_layout *L;
	struct py_obj_layout O;
	struct {
		uint64_t addr;
		uint8_t kind;
		uint32_t basicsize; /* tp_basicsize, capped at 65535: which layout a lock has */
		char name[48];
	} types[PY_TYPES_KNOWN];
	unsigned ntypes;
	uint64_t asyncio_tasks; /* asyncio.tasks' module dict once found (py_async.c), or 0 */
	/*
	 * CLOCK_MONOTONIC ns (mono_ns) at which the walks of the thread and task
	 * lists stop, however long the target makes them; 0: no end.
	 */
	long long deadline_ns;
	/* The threads a lock's owner is looked up in (the caller's, may be NULL). */
	const struct py_thread_id *threads;
	size_t nthreads;
};

/* 0, or -ENOTSUP for a version without an object layout. */
int py_reader__init(struct py_reader *r, pid_t pid, const struct py_layout *L, uint32_t version);

/*
 * The text of the object at addr (repr-like, bounded) into out (outlen >=
 * 64), NUL-terminated; *type (if not NULL, 48 bytes) gets its type's name.
 * 0, or -EFAULT when the object could not be read: out then says
 * "<unreadable at 0x...>" (a container with an unreadable item says so in
 * place of that item and returns 0).
 */
int py_render(struct py_reader *r, uint64_t addr, char *out, size_t outlen, char *type);

/* What py_render_info says of a lock beside its text. */
struct py_value_info {
	uint8_t lock;	 /* 0 not a lock, 1 _thread.lock, 2 _thread.RLock */
	int8_t locked;	 /* 1, 0, or -1 unknown */
	uint64_t owner;	 /* an RLock's owner's ident (0 none or unknown) */
	uint64_t count;	 /* an RLock's acquisitions by its owner */
	bool empty_cell; /* a closure's variable not bound yet (an empty cell) */
};

/* py_render, and *info (zeroed first) for a lock at the top level. */
int py_render_info(struct py_reader *r, uint64_t addr, char *out, size_t outlen, char *type,
		   struct py_value_info *info);

/*
 * The thread of r->threads whose ident is ident, or NULL. Idents are the
 * target's: a forged one names no thread or the wrong one, never anything else.
 */
const struct py_thread_id *py_thread_by_ident(const struct py_reader *r, uint64_t ident);

/*
 * The str held by the instance attribute attr of the object at obj (its
 * __dict__ or the values CPython keeps in its stead), into out. 0,
 * -ENOENT (no such attribute), or -errno.
 */
int py_object_attr_str(struct py_reader *r, uint64_t obj, const char *attr, char *out,
		       size_t outlen);

/*
 * Lookups for walking the interpreter's own structures (sys.modules, the
 * asyncio task sets), with a larger read budget than a value's: the
 * instance attribute attr of obj, the value of the str key in a dict, the
 * keys of a set (at most max, of a table of at most PY_SET_SLOTS slots:
 * its deleted-slot marker may be among them) and the items of a list (its
 * first max; *total says how many it has). 0 (or the count written), or
 * -errno (-ENOENT: no such key).
 */
#define PY_SET_SLOTS (1u << 16)
int py_object_attr(struct py_reader *r, uint64_t obj, const char *attr, uint64_t *value);
int py_dict_get(struct py_reader *r, uint64_t dict, const char *key, uint64_t *value);
/* The first PY_DICT_ITEMS entries of a combined dict: (key, value) pairs. */
#define PY_DICT_ITEMS 64
int py_dict_items(struct py_reader *r, uint64_t dict, uint64_t *keys, uint64_t *values, size_t max);
int py_set_keys(struct py_reader *r, uint64_t set, uint64_t *out, size_t max, size_t *total);
int py_list_items(struct py_reader *r, uint64_t list, uint64_t *out, size_t max, size_t *total);

/*
 * Whether the type of obj, or one of its first PY_TYPE_BASES bases, has
 * tp_name name: 1, 0, or -EFAULT. Names only: a class may pose as one, so
 * what is read through the answer stays bounded and checked.
 */
#define PY_TYPE_BASES 8
int py_type_is(struct py_reader *r, uint64_t obj, const char *name);

/* Which argument of its function a local is, as inspect.Parameter's kinds. */
enum py_param {
	PY_PARAM_NONE,	  /* not an argument: a local variable */
	PY_PARAM_POSONLY, /* positional-only (before /) */
	PY_PARAM_POS,	  /* positional or keyword */
	PY_PARAM_KWONLY,  /* keyword-only (after * or *args) */
	PY_PARAM_VARARGS, /* *args */
	PY_PARAM_VARKW,	  /* **kwargs */
};

/* One local variable of a frame. */
struct py_local {
	char name[64];
	uint64_t value; /* object address; 0 with !tagged: unbound */
	bool tagged;	/* a 3.14+ tagged int: ival holds it, no object */
	int64_t ival;
	uint8_t param; /* enum py_param */
};

#define PY_LOCALS_MAX 64 /* locals read per frame */

/*
 * The locals of the frame at frame running code: its first max (name,
 * value) pairs into out, the arguments first, each marked with its kind
 * (from co_argcount, co_posonlyargcount, co_kwonlyargcount and co_flags;
 * counts the code's names cannot hold leave every local unmarked). Up to
 * 3.10 an argument that an inner function captures lives in a cell after
 * the locals, its own slot empty: the cell takes the argument's place. Returns how many were written, with *total the
 * number the code object declares (less such cells), or -errno.
 */
int py_frame_locals(struct py_reader *r, uint64_t frame, uint64_t code, struct py_local *out,
		    size_t max, size_t *total);

/* One Python frame of a thread, innermost first. */
struct py_dump_frame {
	uint64_t frame, code;
	int32_t instr; /* as struct py_frame.instr */
	uint32_t fingerprint;
};

#define PY_DUMP_THREADS 256 /* Python threads read per process */
#define PY_DUMP_DEPTH 128   /* frames read per thread */
#define PY_DUMP_TRIES 5	    /* reads of a thread's stack until two agree */

struct py_dump_thread {
	uint64_t tstate, thread_id; /* thread_id: pthread_self(), the thread pointer */
	pid_t tid;		    /* in the process's pid namespace; 0: not found */
	int gil;		    /* 1 holds it, 0 does not, -1 unknown */
	int gc;			    /* 1 collecting (holds the GIL in GC), 0 not, -1 unknown */
	bool moving;		    /* no two reads of its stack agreed */
	bool truncated, read_error;
	size_t nframes;
	struct py_dump_frame frames[PY_DUMP_DEPTH];
	/*
	 * For placing native frames (dump --native), as a sample's (bpf/stackwalk.h):
	 * bit i, frames[i] is the first a C-level call of the eval loop ran; and
	 * (3.12+) the addresses of the shim frames passed, which lie in their
	 * eval call's part of the C stack.
	 */
	uint64_t entry_mask[PY_DUMP_DEPTH / 64];
	uint32_t nshims;
	uint64_t shims[PY_SHIM_MAX];
};

/* What the main interpreter says of its GIL and collector, and how its thread list read. */
struct py_dump_state {
	uint64_t gil;	  /* struct _gil_runtime_state in the target; 0: unknown */
	int locked;	  /* -1 unknown */
	int collecting;	  /* -1 unknown */
	bool loops;	  /* a thread or interpreter list came back to one already read */
	bool out_of_time; /* the reader's deadline came before the lists' end */
};

/*
 * Where t's GIL (struct _gil_runtime_state) is, as the kernel's target entry
 * says it (struct py_target): *off from _PyRuntime (3.8-3.11), or with
 * *via_interp the offset in the main interpreter of its pointer (3.12+; on
 * 3.13+ from the target's _Py_DebugOffsets, checked). 0, or -ENOTSUP (no
 * GIL: a free-threaded build), -ENOENT (not known); *off is then
 * PYPROF_NO_OFFSET.
 */
int py_gil_place(const struct target *t, uint16_t *off, bool *via_interp);

/*
 * Every Python thread of the target, at most max (PY_DUMP_THREADS), each
 * read until two reads agree (PY_DUMP_TRIES), and the GIL's state. A thread
 * state met twice (a list that loops) ends its list: each is read once.
 * Never stops the process. Returns the number of threads, or -errno.
 */
int py_dump_threads(struct py_reader *r, const struct target *t, struct py_dump_thread *out,
		    size_t max, struct py_dump_state *st);

/*
 * The threading names of the target's Python threads, at most max
 * (PY_DUMP_THREADS): out[i] gets a thread's ident, tid and name ("" when
 * not known). A thread threading.Thread started is named by the self of its
 * Thread._bootstrap frame (its code looked up in cc); the main thread by
 * threading._main_thread, in the globals of such a frame: *threading keeps
 * their address from one call to the next (0 at first), so the main thread
 * is named once another threading thread has run. Bounded by r's deadline
 * and read budgets. Returns the number of entries, or -errno.
 */
struct code_cache;
int py_thread_names(struct py_reader *r, const struct target *t, struct code_cache *cc,
		    struct py_thread_id *out, size_t max, uint64_t *threading);

/*
 * One frame read alone (a suspended coroutine's, pybpfprof dump --async):
 * its code, position and fingerprint as the stack walk reads them. 0, or
 * -EFAULT (unreadable), -ENOENT (a shim frame, or no code).
 */
int py_read_frame(pid_t pid, const struct py_offsets *off, uint64_t frame,
		  struct py_dump_frame *out);

/*
 * The kind and name (in r's memo) of the type object at type: one or two
 * reads the first time, none after. 0, or -errno.
 */
int py_type_info(struct py_reader *r, uint64_t type, enum py_kind *kind, const char **name);

/*
 * The names of the first n local variables of the code object at code (its
 * arguments come first), 64 bytes each, "?" for one that cannot be read.
 * 0, -EBADMSG (it declares fewer), or -EFAULT.
 */
int py_code_argnames(struct py_reader *r, uint64_t code, char (*out)[64], size_t n);

/* numpy's name of a dtype type number ("float64"), or NULL for one not known. */
const char *py_numpy_dtype(int32_t type_num);

/*
 * Whether name is among the first 16 co_cellvars of the code object at
 * code (3.8-3.10: an argument an inner function captures lives in a cell
 * after the locals, and its own slot is empty). False on 3.11+.
 */
bool py_code_is_cellvar(struct py_reader *r, uint64_t code, const char *name);

#endif
