// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open addressing with linear probing; the table doubles at 50% load so
 * probes stay short. The profile only grows during a run; the code cache
 * deletes (backward shift, so no tombstones lengthen the probes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/hashmap.h"

uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return hash_u64(h);
}

void hashmap__init(struct hashmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hashmap__free(struct hashmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static size_t slot_of(const struct hashmap *m, uint64_t key)
{
	size_t i = hash_u64(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t *hashmap__find(const struct hashmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot_of(m, key);
	return m->used[i] ? &m->vals[i] : NULL;
}

static int grow_to(struct hashmap *m, size_t cap)
{
	struct hashmap bigger;
	size_t i;

	bigger.cap = cap;
	bigger.len = 0;
	bigger.keys = calloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = calloc(bigger.cap, sizeof(*bigger.vals));
	bigger.used = calloc(bigger.cap, 1);
	if (!bigger.keys || !bigger.vals || !bigger.used) {
		hashmap__free(&bigger);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = slot_of(&bigger, m->keys[i]);
		bigger.used[j] = 1;
		bigger.keys[j] = m->keys[i];
		bigger.vals[j] = m->vals[i];
		bigger.len++;
	}
	hashmap__free(m);
	*m = bigger;
	return 0;
}

static int grow(struct hashmap *m)
{
	return grow_to(m, m->cap ? m->cap * 2 : 64);
}

int hashmap__reserve(struct hashmap *m, size_t n)
{
	size_t cap = 64;

	while (cap < 2 * n) /* hashmap__set grows past half full */
		cap *= 2;
	return cap > m->cap ? grow_to(m, cap) : 0;
}

int hashmap__set(struct hashmap *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	i = slot_of(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
	return 0;
}

void hashmap__del(struct hashmap *m, uint64_t key)
{
	size_t hole, i, home;

	if (!m->cap)
		return;
	hole = slot_of(m, key);
	if (!m->used[hole])
		return;
	m->used[hole] = 0;
	m->len--;
	/*
	 * Entries after the hole in its probe run move back into it when their
	 * home slot does not lie (cyclically) between the hole and themselves.
	 */
	for (i = (hole + 1) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		home = hash_u64(m->keys[i]) & (m->cap - 1);
		if (((i - home) & (m->cap - 1)) < ((i - hole) & (m->cap - 1)))
			continue;
		m->keys[hole] = m->keys[i];
		m->vals[hole] = m->vals[i];
		m->used[hole] = 1;
		m->used[i] = 0;
		hole = i;
	}
}
