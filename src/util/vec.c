// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

int vec_reserve(void **arr, size_t *cap, size_t ncap, size_t elem)
{
	void *n;

	if (ncap <= *cap)
		return 0;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = n;
	*cap = ncap;
	return 0;
}

int vec_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	return vec_reserve(arr, cap, ncap, elem);
}
