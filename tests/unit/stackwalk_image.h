/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stack-walk fixtures (tests/fixtures/stackwalk/NAME.txt.gz): what
 * tests/capture_stackwalk.c writes and tests/unit/test_stackwalk.c reads.
 * gzip'd text, one item a line:
 *   python VERSION PATH           the interpreter captured
 *   runtime 0xADDR                &_PyRuntime
 *   thread 0xID                   the sleeping thread's thread_id (its fsbase)
 *   off FIELD VALUE               struct py_offsets, field by field
 *   frame 0xCODE INSTR LINE NAME  its Python stack as the interpreter sees it,
 *                                 innermost first
 *   page 0xADDR HEX               one 4 KiB page of its memory, as hex
 * The pages are those the walk read, whole; anything else reads as unmapped.
 */
#ifndef PYBPFPROF_TEST_STACKWALK_IMAGE_H
#define PYBPFPROF_TEST_STACKWALK_IMAGE_H

#include <string.h>
#include "bpf_abi.h"

#define STACKWALK_PAGE 4096

/* Every field of struct py_offsets, by name (X(name) for each). */
// clang-format off
#define STACKWALK_OFFSET_FIELDS(X)						\
	X(runtime_interp_head) X(interp_next) X(interp_threads_head)		\
	X(tstate_next) X(tstate_thread_id) X(tstate_frame)			\
	X(cframe_current_frame) X(frame_code) X(frame_previous) X(frame_instr)	\
	X(frame_owner) X(frame_read_size) X(code_filename) X(code_name)		\
	X(code_qualname) X(code_linetable) X(code_firstlineno)			\
	X(code_id_start) X(code_id_size) X(code_adaptive)			\
	X(str_length) X(str_state) X(str_ascii_data)				\
	X(instr_kind) X(owner_skip_min) X(code_tag_mask)			\
	X(str_state_shift) X(frame_tlbc_index) X(code_tlbc)		\
	X(frame_is_entry)
// clang-format on

/*
 * Fields a fixture captured before they existed lacks: what a build without
 * them has (no thread-local bytecode, no state shift, no is_entry flag).
 */
static inline void stackwalk_offset_defaults(struct py_offsets *off)
{
	off->frame_tlbc_index = PYPROF_NO_OFFSET;
	off->code_tlbc = PYPROF_NO_OFFSET;
	off->frame_is_entry = PYPROF_NO_OFFSET;
}

/* Sets the field named key of off to v; 0, or -1 for an unknown name. */
static inline int stackwalk_offset_set(struct py_offsets *off, const char *key, unsigned v)
{
#define SET_FIELD(f)                                                                               \
	if (!strcmp(key, #f)) {                                                                    \
		off->f = v;                                                                        \
		return 0;                                                                          \
	}
	STACKWALK_OFFSET_FIELDS(SET_FIELD)
#undef SET_FIELD
	return -1;
}

#endif
