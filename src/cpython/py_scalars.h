/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * numpy's scalars (numpy.int8, numpy.float64, numpy.bool_, ...) by value,
 * pure: which type names are scalars and how large their value is, and its
 * text as numpy 2 shows it (np.int8(-5), np.float64(2.5), np.True_). The
 * bytes are the target's: any bytes give a text that fits.
 */
#ifndef PYBPFPROF_PY_SCALARS_H
#define PYBPFPROF_PY_SCALARS_H

#include <stddef.h>
#include <stdint.h>

#define PY_NPSCALAR_TEXT 64 /* room for any value's text, with its NUL */

/* Bytes of the value of numpy's scalar type named name (1 to 16), or 0: no such type. */
unsigned py_npscalar_size(const char *name);

/* The text of the value at v (py_npscalar_size(name) bytes) into out, cut to outlen. */
void py_npscalar_text(const char *name, const uint8_t *v, char *out, size_t outlen);

#endif
