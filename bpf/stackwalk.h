/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Python stack walk: from _PyRuntime to the current thread's
 * PyThreadState, then along its frames, recording (code object, bytecode
 * position, fingerprint) innermost first. Versions differ only by the numbers
 * in struct py_offsets, which userspace fills (src/cpython/py_layout.c).
 *
 * This header compiles both as BPF and as host C, so that the same walk runs
 * in the unit tests over memory images captured from real interpreters
 * (tests/unit/test_stackwalk.c, tests/capture_stackwalk.sh). The two
 * differences are gathered here: a read of target memory is
 * bpf_probe_read_user in BPF and the test's stackwalk_read() on the host;
 * a bounded loop is bpf_loop in BPF and a plain loop on the host. Every read
 * may fail and every loop is bounded, so a damaged image (a frame pointing to
 * itself, a cycle, a wild pointer) gives a truncated or partial stack.
 */
#ifndef PYBPFPROF_STACKWALK_H
#define PYBPFPROF_STACKWALK_H

#include "bpf_abi.h"

#ifdef __bpf__
/* The loader sets it before load (shared.bpf.c); rodata is frozen, so the verifier sees a constant. */
extern const volatile __u32 max_depth;

#define stackwalk_read(dst, size, addr) bpf_probe_read_user(dst, size, (const void *)(addr))
#define stackwalk_loop(n, fn, ctx) bpf_loop(n, fn, ctx, 0)
#define stackwalk_now() bpf_ktime_get_ns()
#define stackwalk_load64(p) (*(const __u64 *)(p))
/* Only some of the files that include this header walk stacks. */
#define STACKWALK_CALLBACK static __attribute__((unused)) long
/* Whether the module body of seen_code's key was sent already (shared.h). */
static __always_inline int stackwalk_module_sent(__u64 key);
#else
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
/* The host side (the unit tests) provides the depth limit and the reader: 0, or < 0 on failure. */
extern __u32 max_depth;
long stackwalk_read(void *dst, __u32 size, __u64 addr);
int stackwalk_module_sent(__u64 key);

/* bpf_loop's contract: call fn(i, ctx) for i < n until it returns 1; the calls made. */
static inline long stackwalk_loop(__u32 n, long (*fn)(__u32, void *), void *ctx)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (fn(i, ctx))
			return i + 1;
	return n;
}

/* A word of a read buffer: the host's sanitizers would reject an unaligned dereference. */
static inline __u64 stackwalk_load64(const __u8 *p)
{
	__u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

#define STACKWALK_CALLBACK static long
/* The host has no use for the time a read took. */
#define stackwalk_now() 0
#endif

/* The sample being built and the objects being decoded: too big for the 512-byte BPF stack. */
/* A module body on the stack: seen_code's key, its code object, fingerprint, co_filename and co_firstlineno. */
struct stackwalk_module {
	__u64 key, code, file;
	__u32 fp;
	__s32 first;
};

#define STACKWALK_MODULES 4 /* a power of two */

struct scratch {
	struct py_sample sample;
	__u8 frame[PYPROF_FRAME_READ];
	__u8 code[PY_CODE_ID_READ];
	__u8 str[PY_STR_READ];
	/*
	 * The address of each frame recorded (--signatures reads the first
	 * ones' arguments). Stored without a branch, and in map memory, where
	 * the verifier tracks no values: the walk's verification costs the same.
	 */
	__u64 frame_addr[PYPROF_MAX_DEPTH];
	/*
	 * The frames a C-level call of the eval loop started (py_ustack's
	 * entry_mask), and how many: --native asks for the user stack of a
	 * tick in the interpreter only when there are two or more, since only
	 * then can native code sit between Python frames.
	 */
	__u64 entry_mask[PY_ENTRY_WORDS];
	__u32 nentries;
	__u32 nshims; /* 3.12+: the shim frames passed (the first PY_SHIM_MAX), and where */
	__u64 shim_addr[PY_SHIM_MAX];
	/*
	 * The module bodies on the stack not sent yet, innermost first (the
	 * first STACKWALK_MODULES). A module body runs while it is imported and
	 * its code object is freed right after: its first sight wakes
	 * userspace, and BPF names it (send_module), since userspace may read
	 * too late. A body that only imports is never the innermost frame.
	 */
	struct stackwalk_module modules[STACKWALK_MODULES];
	__u32 nmodules;
	/* the record naming one (send_sample), built here: too big for the BPF stack */
	struct py_module_record module_rec;
};

/* Reads a pointer-sized word of the target; 0 on failure (never a valid object). */
static __always_inline __u64 read_word(__u64 addr)
{
	__u64 v = 0;

	if (stackwalk_read(&v, sizeof(v), addr))
		return 0;
	return v;
}

/*
 * Fields at offsets that come from a map: mask to the (power-of-two) buffer
 * size, then bounds-check, so the verifier can prove the access.
 */
static __always_inline __u64 load_u64(const __u8 *buf, __u32 off, __u32 size)
{
	off &= size - 1;
	if (off > size - sizeof(__u64))
		return 0;
	return stackwalk_load64(buf + off);
}

static __always_inline __u8 frame_u8(const __u8 *buf, __u32 off)
{
	off &= PYPROF_FRAME_READ - 1;
	return buf[off];
}

/*
 * Fingerprint of the code object at code (see py_code_fingerprint): one read
 * for its pointers and first line, one for its qualname's text. Mirrors
 * code_identity() in src/cpython/code_cache.c. Returns -1 if the code object cannot be read.
 */
/* "<module>", a module body's (qu)alname, as the 8 bytes of its text read at once */
#define PY_MODULE_TEXT 0x3e656c75646f6d3cULL

static __always_inline int code_fingerprint(const struct py_offsets *off, struct scratch *s,
					    __u64 code, __u32 *fp, bool *module)
{
	__u64 ptrs[4], text[PY_NAME_TEXT / 8] = {}, len;
	__u32 size = off->code_id_size, start = off->code_id_start, text_len = 0, state;
	/* co_firstlineno is an int: the low half of the little-endian word there */
	__u32 firstline_at = off->code_firstlineno - start;

	if (size > PY_CODE_ID_READ)
		size = PY_CODE_ID_READ;
	if (stackwalk_read(s->code, size, code + start))
		return -1;
	ptrs[0] = load_u64(s->code, off->code_filename - start, PY_CODE_ID_READ);
	ptrs[1] = load_u64(s->code, off->code_name - start, PY_CODE_ID_READ);
	ptrs[2] = load_u64(s->code, off->code_qualname - start, PY_CODE_ID_READ);
	ptrs[3] = load_u64(s->code, off->code_linetable - start, PY_CODE_ID_READ);
	if (!stackwalk_read(s->str, PY_STR_READ, ptrs[2] + off->str_length)) {
		len = load_u64(s->str, 0, PY_STR_READ);
		state = (__u32)load_u64(s->str, off->str_state - off->str_length, PY_STR_READ);
		/* 3.14t: the state's interned flag is a byte, the other bits follow it */
		state >>= off->str_state_shift & 31;
		/* only compact ASCII text sits at a fixed place (bits: ascii 6, compact 5) */
		if ((state & 0x60) == 0x60) {
			__u32 t = off->str_ascii_data - off->str_length;

			text[0] = load_u64(s->str, t, PY_STR_READ);
			text[1] = load_u64(s->str, t + 8, PY_STR_READ);
			text[2] = load_u64(s->str, t + 16, PY_STR_READ);
			text[3] = load_u64(s->str, t + 24, PY_STR_READ);
			text_len = len < PY_NAME_TEXT ? len : PY_NAME_TEXT;
		}
	}
	*fp = py_code_fingerprint(ptrs, (__s32)load_u64(s->code, firstline_at, PY_CODE_ID_READ),
				  text, text_len);
	*module = text_len == 8 && text[0] == PY_MODULE_TEXT;
	return 0;
}

/* State of one thread-list scan, carried across loop iterations. */
struct scan_ctx {
	__u64 interp, t, fsbase, found;
	const struct py_offsets *off;
};

STACKWALK_CALLBACK scan_step(__u32 i, void *data)
{
	struct scan_ctx *c = data;
	const struct py_offsets *off = c->off;

	if (!c->interp)
		return 1;
	if (!c->t) {
		/* end of this interpreter's threads: on to the next interpreter */
		c->interp = read_word(c->interp + off->interp_next);
		c->t = c->interp ? read_word(c->interp + off->interp_threads_head) : 0;
		return 0;
	}
	if (read_word(c->t + off->tstate_thread_id) == c->fsbase) {
		c->found = c->t;
		return 1;
	}
	c->t = read_word(c->t + off->tstate_next);
	return 0;
}

/*
 * The PyThreadState whose thread_id equals fsbase (pthread_self() on glibc
 * and musl, x86_64), walking every interpreter's thread list; 0 if none.
 * Works the same on every CPython version and needs no libc internals.
 */
static __always_inline __u64 stackwalk_find_tstate(const struct py_target *proc, __u64 fsbase)
{
	const struct py_offsets *off = &proc->off;
	struct scan_ctx c = { .fsbase = fsbase, .off = off };

	c.interp = read_word(proc->runtime_addr + off->runtime_interp_head);
	c.t = c.interp ? read_word(c.interp + off->interp_threads_head) : 0;
	stackwalk_loop(PYPROF_MAX_THREADS + PYPROF_MAX_INTERPS, scan_step, &c);
	return c.found;
}

/* The innermost frame of a thread state, or 0 when no Python code is running. */
static __always_inline __u64 current_frame(const struct py_offsets *off, __u64 tstate)
{
	__u64 f = read_word(tstate + off->tstate_frame);

	if (f && off->cframe_current_frame != PYPROF_NO_OFFSET)
		f = read_word(f + off->cframe_current_frame);
	return f;
}

/* Thread-local bytecode copies a 3.14t code object may have: one per thread index. */
#define PY_TLBC_MAX 65536
/* A position past any bytecode (the largest py_frame.instr): no line is found for it. */
#define PY_INSTR_UNKNOWN 0x7fffffff
/* _PyInterpreterFrame.owner of a generator's or coroutine's frame, 3.11 to 3.15 */
#define PY_FRAME_OWNED_BY_GENERATOR 1

/*
 * Where the bytecode that the frame's instr_ptr points into starts: the code
 * object's own co_code_adaptive, or in 3.14t, for a frame with a tlbc_index
 * other than 0, the thread's copy co_tlbc->entries[tlbc_index]. -1 when
 * that copy cannot be found: the position is then unknown, never one
 * computed from the wrong start.
 */
static __always_inline int bytecode_base(const struct py_offsets *off, const __u8 *frame,
					 __u64 code, __u64 *base)
{
	__u64 tlbc, n;
	__s32 idx;

	*base = code + off->code_adaptive;
	if (off->frame_tlbc_index == PYPROF_NO_OFFSET)
		return 0;
	idx = (__s32)load_u64(frame, off->frame_tlbc_index, PYPROF_FRAME_READ);
	if (idx == 0)
		return 0;
	if (idx < 0 || idx >= PY_TLBC_MAX)
		return -1;
	tlbc = read_word(code + off->code_tlbc);
	n = tlbc ? read_word(tlbc) : 0; /* _PyCodeArray.size */
	if ((__u64)idx >= n)
		return -1;
	*base = read_word(tlbc + 8 + 8 * (__u64)idx);
	return *base ? 0 : -1;
}

/* Marks recorded frame i as the first one run by a call of the eval loop. */
static __always_inline void mark_entry(struct scratch *s, __u32 i)
{
	__u64 bit = 1ULL << (i & 63), *word = &s->entry_mask[(i >> 6) & (PY_ENTRY_WORDS - 1)];

	if (*word & bit)
		return;
	*word |= bit;
	s->nentries++;
}

/* State of one frame walk, carried across loop iterations. */
struct walk_ctx {
	const struct py_offsets *off;
	struct scratch *s;
	__u64 f; /* next frame to read */
	__u32 n; /* frames recorded */
	__u32 read_size;
	/* --opcodes: the innermost frame's instruction goes into s->sample.value */
	bool opcodes;
	__u64 op_ns; /* and the time its read took (BPF only: the benchmark's figure) */
};

/*
 * The opcode of the instruction whose first code unit is at addr, with
 * avail bytes of bytecode from there: EXTENDED_ARG prefixes (at most
 * PY_OP_UNITS - 1) are stepped over, since the instruction they extend is
 * the one running. PY_CPU_HAS_OPCODE | the opcode, or 0 when it cannot be
 * read. Read into s->str, which the frame's fingerprint is done with.
 */
static __always_inline __u64 opcode_at(const struct py_offsets *off, struct scratch *s, __u64 addr,
				       __u64 avail)
{
	__u32 i;

	if (stackwalk_read(s->str, 2 * PY_OP_UNITS, addr)) {
		/* the last instruction right before an unmapped page: that unit alone */
		if (stackwalk_read(s->str, 2, addr))
			return 0;
		avail = avail < 2 ? avail : 2;
	}
	for (i = 0; i < PY_OP_UNITS; i++) {
		if (avail < 2 * (__u64)i + 2)
			return 0;
		if (s->str[(2 * i) & (PY_STR_READ - 1)] != off->op_extended_arg)
			return PY_CPU_HAS_OPCODE | s->str[(2 * i) & (PY_STR_READ - 1)];
	}
	return 0;
}

/*
 * The instruction a frame of code object code is running, from its position
 * as the walk computed it: 3.11+ a byte offset from base (the bytecode the
 * instruction pointer points into, the interpreter's own, specialised
 * opcodes and all); up to 3.10 f_lasti, in units of off->lasti_unit bytes
 * into co_code (a bytes object, whose size bounds it). 0 when unknown (a
 * frame that has not started: 3.11's prev_instr is then one unit before
 * the bytecode).
 */
static __always_inline __u64 stackwalk_opcode(const struct py_offsets *off, struct scratch *s,
					      __u64 code, __s64 pos, __u64 base)
{
	__u64 bytes, size, at;

	if (pos < 0 || pos >= PY_INSTR_UNKNOWN)
		return 0;
	if (off->instr_kind == PY_INSTR_PTR) {
		if (pos & 1)
			return 0;
		at = opcode_at(off, s, base + pos, 2 * PY_OP_UNITS);
		/* a call being set up or returning: the CALL whose last cache unit this is */
		if (off->call_caches && pos >= 2 * off->call_caches &&
		    !stackwalk_read(s->str, 2, base + pos - 2 * off->call_caches))
			at |= PY_CPU_HAS_PREV | (__u64)s->str[0] << 16;
		return at;
	}
	if (off->code_code == PYPROF_NO_OFFSET)
		return 0;
	bytes = read_word(code + off->code_code);
	size = bytes ? read_word(bytes + off->bytes_size) : 0;
	at = (__u64)pos * off->lasti_unit;
	if (at >= size)
		return 0;
	return opcode_at(off, s, bytes + off->bytes_data + at, size - at);
}

/*
 * Whether the thread whose state is tstate is handling an exception, as
 * sys.exc_info() would say: from the top of its exception stack
 * (tstate->exc_info), the first item that holds an exception other than
 * None; a running generator's item holds none of its own and passes to the
 * one below. PY_CPU_EXC_KNOWN, with PY_CPU_EXC when it is; 0 when it cannot
 * be read (no offset or no None known for the build, an unreadable item,
 * or a stack deeper than PY_EXC_CHAIN_MAX items). Reads into s->str.
 */
static __always_inline __u64 stackwalk_exc(const struct py_offsets *off, struct scratch *s,
					   __u64 tstate, __u64 none)
{
	__u64 item, v;
	__u32 i;
	long err;

	if (off->tstate_exc_info == PYPROF_NO_OFFSET || !none)
		return 0;
	item = read_word(tstate + off->tstate_exc_info);
	if (!item) /* "never NULL" in every version: not a thread state as believed */
		return 0;
	for (i = 0; i < PY_EXC_CHAIN_MAX; i++) {
		/* an item is 16 bytes from 3.11 (exc_value, previous_item), 32 before */
		if (off->exc_item_previous < 16)
			err = stackwalk_read(s->str, 16, item);
		else
			err = stackwalk_read(s->str, 32, item);
		if (err)
			return 0;
		v = load_u64(s->str, off->exc_item_value, PY_STR_READ);
		if (v && v != none)
			return PY_CPU_EXC | PY_CPU_EXC_KNOWN;
		item = load_u64(s->str, off->exc_item_previous, PY_STR_READ);
		if (!item)
			return PY_CPU_EXC_KNOWN;
	}
	return 0;
}

/* --opcodes: the innermost frame's instruction into the sample's value, timed. */
static __always_inline void walk_opcode(struct walk_ctx *w, __u64 code, __s64 pos, __u64 base)
{
	__u64 t0 = stackwalk_now();

	w->s->sample.value |= stackwalk_opcode(w->off, w->s, code, pos, base);
	w->op_ns = stackwalk_now() - t0;
}

/* A module body being imported, not named yet: kept to be named (emit_stack.h send_module). */
static __always_inline void walk_module(const struct py_offsets *off, struct scratch *s, __u64 code,
					__u32 fp)
{
	struct stackwalk_module *m;

	if (s->nmodules >= STACKWALK_MODULES || stackwalk_module_sent(code ^ ((__u64)fp << 47)))
		return;
	m = &s->modules[s->nmodules & (STACKWALK_MODULES - 1)];
	m->key = code ^ ((__u64)fp << 47);
	m->code = code;
	m->fp = fp;
	/* code_fingerprint left the code object's identity fields in s->code */
	m->file = load_u64(s->code, off->code_filename - off->code_id_start, PY_CODE_ID_READ);
	m->first = (__s32)load_u64(s->code, off->code_firstlineno - off->code_id_start,
				   PY_CODE_ID_READ);
	s->nmodules++;
}

/*
 * One frame: record (code, position, fingerprint) and move to the caller.
 * bpf_loop verifies this body once, whatever the depth limit.
 */
STACKWALK_CALLBACK walk_step(__u32 i, void *data)
{
	struct walk_ctx *w = data;
	const struct py_offsets *off = w->off;
	struct scratch *s = w->s;
	struct py_frame *out;
	__u32 size, fp;
	__u64 code, base = 0, at = w->f;
	bool module;
	__s64 pos;

	if (!at)
		return 1;
	if (w->n >= max_depth || w->n >= PYPROF_MAX_DEPTH) {
		s->sample.flags |= PY_SAMPLE_TRUNCATED;
		return 1;
	}
	size = w->read_size;
	if (size > PYPROF_FRAME_READ)
		size = PYPROF_FRAME_READ;
	if (stackwalk_read(s->frame, size, w->f)) {
		s->sample.flags |= PY_SAMPLE_READ_ERROR;
		return 1;
	}
	code = load_u64(s->frame, off->frame_code, PYPROF_FRAME_READ) & ~(__u64)off->code_tag_mask;
	w->f = load_u64(s->frame, off->frame_previous, PYPROF_FRAME_READ);
	/*
	 * C-stack entry frames (3.12+) carry no Python code of their own; the
	 * frame recorded just before one is the first its eval call ran (3.15's
	 * sentinel at the bottom of the chain marks the same frame again).
	 */
	if (off->frame_owner != PYPROF_NO_OFFSET &&
	    frame_u8(s->frame, off->frame_owner) >= off->owner_skip_min) {
		if (w->n)
			mark_entry(s, w->n - 1);
		if (s->nshims < PY_SHIM_MAX)
			s->shim_addr[s->nshims++ & (PY_SHIM_MAX - 1)] = at;
		return 0;
	}
	if (!code)
		return 0;
	if (off->instr_kind == PY_INSTR_PTR)
		pos = bytecode_base(off, s->frame, code, &base) ?
			      PY_INSTR_UNKNOWN :
			      (__s64)(load_u64(s->frame, off->frame_instr, PYPROF_FRAME_READ) -
				      base);
	else
		pos = (__s32)load_u64(s->frame, off->frame_instr, PYPROF_FRAME_READ);
	if (code_fingerprint(off, s, code, &fp, &module)) {
		s->sample.flags |= PY_SAMPLE_READ_ERROR;
		return 1;
	}
	/* --opcodes: what the innermost frame runs, read now, while it runs it */
	if (w->opcodes && !w->n)
		walk_opcode(w, code, pos, base);
	if (module)
		walk_module(off, s, code, fp);
	out = &s->sample.frames[w->n & (PYPROF_MAX_DEPTH - 1)];
	out->code = code;
	out->instr = pos < -0x7fffffff ? -0x7fffffff : pos > 0x7fffffff ? 0x7fffffff : pos;
	out->fingerprint = fp;
	s->frame_addr[w->n & (PYPROF_MAX_DEPTH - 1)] = at;
	/* up to 3.10 each frame is its own eval call; 3.11 flags the first of each */
	if (off->frame_owner == PYPROF_NO_OFFSET &&
	    (off->frame_is_entry == PYPROF_NO_OFFSET || frame_u8(s->frame, off->frame_is_entry)))
		mark_entry(s, w->n);
	w->n++;
	return 0;
}

/*
 * Whether a thread's walk ended at a generator's frame (the last one read,
 * still in the frame buffer). A running generator always has a caller: a
 * thread's chain that ends at one was caught while 3.12+ unlinks it at a
 * yield (the thread's current frame and the generator's link to its caller
 * are two plain stores, which the compiler may order either way), and its
 * callers are lost. A suspended coroutine's frame (an asyncio task's, read
 * alone) has no caller by rights: this is for thread walks only.
 */
static __always_inline bool stackwalk_cut_at_generator(const struct walk_ctx *w)
{
	return !w->f && w->n && w->off->frame_owner != PYPROF_NO_OFFSET &&
	       frame_u8(w->s->frame, w->off->frame_owner) == PY_FRAME_OWNED_BY_GENERATOR;
}

/*
 * Walks a thread's frames from w->f (w->off, w->s and w->read_size set) into
 * w->s->sample: frames[0..w->n), and the TRUNCATED and READ_ERROR flags
 * (READ_ERROR also for a chain cut at a generator);
 * and w->s's entry_mask, nentries, nshims and shim_addr.
 */
static __always_inline void stackwalk_frames(struct walk_ctx *w)
{
	__builtin_memset(w->s->entry_mask, 0, sizeof(w->s->entry_mask));
	w->s->nmodules = 0;
	w->s->nentries = 0;
	w->s->nshims = 0;
	/* Room for shim frames on top of the depth limit; running out also means truncated. */
	stackwalk_loop(PYPROF_MAX_DEPTH + 64, walk_step, w);
	if (w->f && !(w->s->sample.flags & (PY_SAMPLE_TRUNCATED | PY_SAMPLE_READ_ERROR)))
		w->s->sample.flags |= PY_SAMPLE_TRUNCATED;
	if (stackwalk_cut_at_generator(w))
		w->s->sample.flags |= PY_SAMPLE_READ_ERROR;
}

#endif /* PYBPFPROF_STACKWALK_H */
