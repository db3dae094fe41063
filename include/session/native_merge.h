/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --native: one stack from a sample's Python frames and its unwound native
 * frames. Each C-level call of the eval loop on the native stack
 * (_PyEval_EvalFrameDefault) ran a run of Python frames, up to and
 * including one the stack walk marked as its entry (bpf/stackwalk.h); so,
 * innermost first, every native frame that is not the interpreter's own code
 * goes where it was called from: below the innermost Python frame, or
 * between two of them (a C function calling back into Python: ctypes, a
 * sort's key, a C extension's callback). The interpreter's own frames are
 * folded away, and so is what lies outside the outermost Python frame
 * (main, the thread's start).
 *
 * When the two stacks cannot both be right (the unwind found an eval call
 * with no Python frame left for it), or the merged stack would not fit in
 * the room given, the native frames are placed below the
 * innermost Python frame only, as up to the first of the interpreter's, and
 * the sample is counted unplaced. Python frames left when the unwind ends
 * (the end of the stack copy, a frame without call frame information: libdw
 * does not tell that from the thread's first frame) go on top as they are,
 * and the sample is counted partial.
 */
#ifndef PYBPFPROF_NATIVE_MERGE_H
#define PYBPFPROF_NATIVE_MERGE_H

#include <stdbool.h>
#include <stdint.h>

enum native_pc_kind {
	NATIVE_PC_OTHER = 0,  /* code of any other file: a frame of its own */
	NATIVE_PC_INTERP = 1, /* the interpreter's own code: folded away */
	NATIVE_PC_EVAL = 2,   /* the eval loop itself: stands for Python frames */
};

struct native_merge_in {
	const uint32_t *native; /* frame ids, innermost first (those of OTHER pcs) */
	const uint8_t *kind;	/* enum native_pc_kind of each */
	uint32_t nnative;
	const uint32_t *py; /* the Python frame ids, innermost first */
	uint32_t npy;
	const uint64_t *entries; /* bit i: py[i] is the first its eval call ran; NULL: unknown */
	uint32_t nentry_bits;	 /* bits in entries */
	bool py_cut;		 /* the Python stack is cut short (truncated or unreadable) */
};

enum native_merge_result {
	NATIVE_MERGED,	 /* every Python frame placed among the native ones */
	NATIVE_PARTIAL,	 /* the unwind stopped before the outermost Python frames */
	NATIVE_UNPLACED, /* the stacks disagreed: native frames below the innermost only */
	NATIVE_BELOW,	 /* no entries given (--async rewrote the stack): below the innermost */
};

/* Whether a function named name is the eval loop (or a split-off part of it, such as .cold). */
bool native_merge_is_eval(const char *name);

/*
 * 3.12+: which of n native frames (stack pointers sps, innermost first; 0
 * where unknown; the stack copy ends at stack_end) are eval calls: those
 * whose part of the stack, [sps[i], sps[i + 1]), holds one of the shim
 * frames' addresses shims[0..nshims). A shim is a local of the eval call it
 * marks, so this finds the loop named or not; the names are set aside, since
 * the function named _PyEval_EvalFrameDefault may only wrap the loop. Every
 * value may come from the target: each shim marks one frame at most.
 */
void native_merge_eval_by_shims(uint8_t *kinds, const uint64_t *sps, uint32_t n, uint64_t stack_end,
				const uint64_t *shims, uint32_t nshims);

/*
 * The merged stack into out (at most max frame ids; the Python frames keep
 * their room first), innermost first; its length. *res says how it went.
 */
uint32_t native_merge(const struct native_merge_in *in, uint32_t *out, uint32_t max,
		      enum native_merge_result *res);

#endif
