/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Growable arrays: the profile model, the report writers and the session keep
 * their lists as a pointer, a count and a capacity, grown by vec_grow.
 */
#ifndef PYBPFPROF_VEC_H
#define PYBPFPROF_VEC_H

#include <stddef.h>

/*
 * Makes room for need elements of elem bytes in *arr (capacity *cap),
 * doubling from 16, new slots zeroed. 0, or -ENOMEM with *arr unchanged.
 */
int vec_grow(void **arr, size_t *cap, size_t need, size_t elem);
/*
 * Makes room for exactly need elements (when *cap is less), new slots
 * zeroed: for a count known in advance, without vec_grow's slack. 0, or
 * -ENOMEM with *arr unchanged.
 */
int vec_reserve(void **arr, size_t *cap, size_t need, size_t elem);

#endif
