/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --signatures: what the BPF sampler needs to read a frame's arguments
 * (struct py_sig_offsets), and the text of a sampled frame's signature,
 * "(x: ndarray[float64, (500, 400)], factor: float)", from the record it
 * sent (struct py_sig_frame). The record's words are the target's, so
 * hostile: counts, dimensions and type numbers are bounded before use, and
 * types are named through py_reader's bounded, memoised reads.
 */
#ifndef PYBPFPROF_PY_SIGNATURE_H
#define PYBPFPROF_PY_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>
#include "bpf_abi.h"
#include "cpython/py_objects.h"

/* Bytes of one signature's text, with its NUL. */
#define PY_SIG_TEXT 384

/*
 * *out for a build. 0; -ENOTSUP for a free-threaded build (its objects'
 * larger header is not read; the caller says so) or a version without a
 * table.
 */
int py_sig_offsets__for(uint32_t hexversion, bool free_threaded, struct py_sig_offsets *out);

/*
 * A key that is the same for two records of the same code whose text would
 * be the same (types by address; arrays by dtype pointer and shape): lets
 * the caller keep one text per key. May read a type object (memoised in r).
 */
uint64_t py_signature_key(struct py_reader *r, const struct py_sig_frame *f);

/*
 * The signature's text, "(name: type, ...)", into out (outlen >= 64),
 * always NUL-terminated. 0, or -errno when the argument names could not be
 * read (out then has "?" for them).
 */
int py_signature_text(struct py_reader *r, const struct py_sig_frame *f, char *out, size_t outlen);

#endif
