/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small open-addressing hash map from 64-bit keys to 64-bit values, used by
 * the profile model and the code-object cache. Keys are caller-hashed when
 * they stand for something larger (a stack, a string).
 */
#ifndef PYBPFPROF_HASHMAP_H
#define PYBPFPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* power of two */
	size_t len;
};

void hashmap__init(struct hashmap *m);
void hashmap__free(struct hashmap *m);
/* Returns a pointer to the value slot for key, or NULL if absent. */
uint64_t *hashmap__find(const struct hashmap *m, uint64_t key);
/* Inserts or overwrites. Returns 0, or -ENOMEM. */
int hashmap__set(struct hashmap *m, uint64_t key, uint64_t val);
/* Room for n entries in all without growing again (a count known in advance). 0 or -ENOMEM. */
int hashmap__reserve(struct hashmap *m, size_t n);
/* Removes key if present (the code cache evicts). */
void hashmap__del(struct hashmap *m, uint64_t key);
/* Bytes the table takes, for memory budgets. */
static inline size_t hashmap__bytes(const struct hashmap *m)
{
	return m->cap * (sizeof(*m->keys) + sizeof(*m->vals) + sizeof(*m->used));
}

/* 64-bit mixing of a byte string and of one word (FNV-1a seeded, then finalized). */
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t hash_u64(uint64_t x);

#endif
