// SPDX-License-Identifier: GPL-2.0-only
/* --native: Python and native frames as one stack (see session/native_merge.h). */
#include <string.h>
#include "session/native_merge.h"

bool native_merge_is_eval(const char *name)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";

	return !strncmp(name, eval, sizeof(eval) - 1) &&
	       (name[sizeof(eval) - 1] == '\0' || name[sizeof(eval) - 1] == '.');
}

static bool is_entry(const struct native_merge_in *in, uint32_t i)
{
	return in->entries && i < in->nentry_bits && (in->entries[i / 64] >> (i % 64) & 1);
}

/*
 * The native frames below the innermost Python frame (up to the first of
 * the interpreter's), then every Python frame: what is sure without
 * placing anything between them.
 */
static uint32_t below_only(const struct native_merge_in *in, uint32_t *out, uint32_t max)
{
	uint32_t npy = in->npy < max ? in->npy : max, o = 0, i;

	for (i = 0; i < in->nnative && in->kind[i] == NATIVE_PC_OTHER && o < max - npy; i++)
		out[o++] = in->native[i];
	memcpy(out + o, in->py, npy * sizeof(*out));
	return o + npy;
}

/*
 * Walks the native frames innermost first, each eval call taking its run of
 * Python frames. Returns false when the stacks disagree or out is full;
 * *evals counts the eval calls seen, *pi the Python frames taken.
 */
static bool interleave(const struct native_merge_in *in, uint32_t *out, uint32_t max, uint32_t *o,
		       uint32_t *pi, uint32_t *evals)
{
	uint32_t i;

	for (i = 0; i < in->nnative; i++) {
		if (in->kind[i] == NATIVE_PC_EVAL) {
			++*evals;
			/* an eval call beyond the outermost Python frame, unless the stack was cut */
			if (*pi == in->npy)
				return in->py_cut;
			do {
				if (*o == max)
					return false;
				out[(*o)++] = in->py[*pi];
			} while (!is_entry(in, (*pi)++) && *pi < in->npy);
		} else if (in->kind[i] == NATIVE_PC_OTHER && *pi < in->npy) {
			if (*o == max)
				return false;
			out[(*o)++] = in->native[i];
		}
	}
	return true;
}

void native_merge_eval_by_shims(uint8_t *kinds, const uint64_t *sps, uint32_t n, uint64_t stack_end,
				const uint64_t *shims, uint32_t nshims)
{
	uint32_t i, k;
	uint64_t hi;

	for (i = 0; i < n; i++)
		if (kinds[i] == NATIVE_PC_EVAL)
			kinds[i] = NATIVE_PC_INTERP;
	for (k = 0; k < nshims; k++)
		for (i = 0; i < n; i++) {
			hi = i + 1 < n ? sps[i + 1] : stack_end;
			if (sps[i] && shims[k] >= sps[i] && shims[k] < hi) {
				kinds[i] = NATIVE_PC_EVAL;
				break;
			}
		}
}

uint32_t native_merge(const struct native_merge_in *in, uint32_t *out, uint32_t max,
		      enum native_merge_result *res)
{
	uint32_t o = 0, pi = 0, evals = 0, rest;

	*res = in->entries ? NATIVE_UNPLACED : NATIVE_BELOW;
	if (!in->entries)
		return below_only(in, out, max);
	if (!interleave(in, out, max, &o, &pi, &evals))
		return below_only(in, out, max);
	/* the unwind ended before any eval call: nothing to place between */
	if (!evals) {
		*res = NATIVE_PARTIAL;
		return below_only(in, out, max);
	}
	rest = in->npy - pi;
	if (rest > max - o)
		return below_only(in, out, max);
	memcpy(out + o, in->py + pi, rest * sizeof(*out));
	*res = rest ? NATIVE_PARTIAL : NATIVE_MERGED;
	return o + rest;
}
