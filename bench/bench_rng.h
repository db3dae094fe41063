/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The benchmarks' random numbers: xorshift64 from a fixed seed, so that
 * every run of a benchmark builds the same data and runs compare.
 */
#ifndef PYBPFPROF_BENCH_RNG_H
#define PYBPFPROF_BENCH_RNG_H

#include <stdint.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* A number below n. */
static inline uint32_t next(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

#endif
