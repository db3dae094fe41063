// SPDX-License-Identifier: GPL-2.0-only
/*
 * --native's placing of native frames among Python frames on anything a
 * target can make of its inputs: the eval-call marks of its frames
 * (is_entry bytes, shim frames), its shims' addresses and the stack
 * pointers unwound from its stack copy. Checks that each shim marks one
 * frame at most, that the output stays within its room, holds only frames
 * it was given, and keeps every Python frame in order when there is room.
 *
 * Input: a header byte (shims used, entries given, cut), the room, the
 * counts of native and Python frames, then per native frame a kind byte and
 * a stack pointer, a count of shims and their addresses, the entry bits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "session/native_merge.h"

#define MAX_NATIVE 64
#define MAX_PY 48
#define MAX_SHIMS 16
#define PY_ID(i) (i)
#define NATIVE_ID(i) (1000 + (i))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t take64(const uint8_t **p, size_t *left)
{
	uint64_t v = 0;
	size_t n = *left < 8 ? *left : 8;

	memcpy(&v, *p, n);
	*p += n, *left -= n;
	return v;
}

static uint8_t take8(const uint8_t **p, size_t *left)
{
	return (uint8_t)take64(p, left);
}

/* Every Python frame in out, in order, and nothing but what was given. */
static void check_output(const uint32_t *out, uint32_t n, uint32_t npy, uint32_t nnative,
			 uint32_t max)
{
	uint32_t i, next_py = 0;

	if (n > max)
		abort();
	for (i = 0; i < n; i++) {
		if (out[i] >= NATIVE_ID(0)) {
			if (out[i] >= NATIVE_ID(nnative))
				abort();
		} else if (out[i] != PY_ID(next_py++)) {
			abort();
		}
	}
	if (max >= npy && next_py != npy)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t ids[MAX_NATIVE], py[MAX_PY], out[MAX_NATIVE + MAX_PY], n, i, nshims, max;
	uint64_t sps[MAX_NATIVE], shims[MAX_SHIMS], entries[1], stack_end;
	uint8_t kinds[MAX_NATIVE], before[MAX_NATIVE], head;
	enum native_merge_result res;
	struct native_merge_in in = { 0 };
	size_t left = size;

	head = take8(&data, &left);
	max = take8(&data, &left) % (MAX_NATIVE + MAX_PY + 1);
	in.nnative = take8(&data, &left) % (MAX_NATIVE + 1);
	in.npy = take8(&data, &left) % (MAX_PY + 1);
	for (i = 0; i < in.nnative; i++) {
		kinds[i] = take8(&data, &left) % 3;
		sps[i] = take64(&data, &left);
		ids[i] = kinds[i] == NATIVE_PC_OTHER ? NATIVE_ID(i) : UINT32_MAX;
	}
	nshims = take8(&data, &left) % (MAX_SHIMS + 1);
	for (i = 0; i < nshims; i++)
		shims[i] = take64(&data, &left);
	stack_end = take64(&data, &left);
	entries[0] = take64(&data, &left);
	for (i = 0; i < in.npy; i++)
		py[i] = PY_ID(i);

	memcpy(before, kinds, in.nnative);
	if (head & 1)
		native_merge_eval_by_shims(kinds, sps, in.nnative, stack_end, shims, nshims);
	for (i = n = 0; i < in.nnative; i++) {
		if (kinds[i] > NATIVE_PC_EVAL)
			abort();
		/* a frame changes kind only to or from an eval call */
		if (kinds[i] != before[i] && kinds[i] != NATIVE_PC_EVAL &&
		    before[i] != NATIVE_PC_EVAL)
			abort();
		n += kinds[i] == NATIVE_PC_EVAL && before[i] != NATIVE_PC_EVAL;
	}
	if ((head & 1) && n > nshims)
		abort();
	/* an OTHER frame that became an eval call has no frame id of its own */
	for (i = 0; i < in.nnative; i++)
		if (kinds[i] != NATIVE_PC_OTHER)
			ids[i] = UINT32_MAX;

	in.native = ids;
	in.kind = kinds;
	in.py = py;
	in.entries = head & 2 ? NULL : entries;
	in.nentry_bits = 64;
	in.py_cut = head & 4;
	n = native_merge(&in, out, max, &res);
	check_output(out, n, in.npy, in.nnative, max);
	if (res > NATIVE_BELOW || (!in.entries && res != NATIVE_BELOW))
		abort();
	return 0;
}
