/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the unit tests that build a fake interpreter's objects in their own
 * memory and read them back as a target's (process_vm_readv on getpid()).
 */
#ifndef PYBPFPROF_TEST_FAKE_MEMORY_H
#define PYBPFPROF_TEST_FAKE_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Writes v as the 8-byte field at off of the object o. */
static inline void put64(uint8_t *o, size_t off, uint64_t v)
{
	memcpy(o + off, &v, sizeof(v));
}

/* The address a target pointer to p holds. */
static inline uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

#endif
