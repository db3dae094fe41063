/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the hash map's deletion (the code cache evicts): after any mix of
 * inserts and deletes, every key present is found with its value and every
 * key removed is gone, including keys whose probe runs crossed a hole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/hashmap.h"

#define KEYS 3000

static void test_delete_keeps_the_rest(void **state)
{
	static uint64_t val[KEYS];
	static _Bool present[KEYS];
	struct hashmap m;
	size_t i, round, n = 0;

	(void)state;
	hashmap__init(&m);
	srand(7);
	for (round = 0; round < 40000; round++) {
		/* few distinct keys, small values: long probe runs and many collisions */
		size_t k = rand() % KEYS;

		if (rand() % 3) {
			val[k] = rand();
			assert_int_equal(hashmap__set(&m, k * 64, val[k]), 0);
			n += !present[k];
			present[k] = 1;
		} else {
			hashmap__del(&m, k * 64);
			n -= present[k];
			present[k] = 0;
		}
		if (round % 997)
			continue;
		for (i = 0; i < KEYS; i++) {
			uint64_t *slot = hashmap__find(&m, i * 64);

			assert_int_equal(slot != NULL, present[i]);
			if (slot)
				assert_int_equal(*slot, val[i]);
		}
	}
	assert_int_equal(m.len, n);
	for (i = 0; i < KEYS; i++)
		hashmap__del(&m, i * 64);
	assert_int_equal(m.len, 0);
	for (i = 0; i < m.cap; i++)
		assert_int_equal(m.used[i], 0);
	hashmap__del(&m, 5);
	assert_true(hashmap__bytes(&m) > 0);
	hashmap__free(&m);
	hashmap__del(&m, 5);
	assert_int_equal(hashmap__bytes(&m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_keeps_the_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
