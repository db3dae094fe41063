/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the code cache's memory budget. The "target" is this process:
 * fake 3.11 code objects, strings and bytes objects laid out in our own
 * memory are read back through process_vm_readv like a real target's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cpython/code_cache.h"
#include "cpython/py_layout.h"

#define OBJ_SIZE 512

struct fake_code {
	uint8_t code[OBJ_SIZE];
	uint8_t qualname[OBJ_SIZE];
	uint8_t filename[OBJ_SIZE];
	uint8_t *table; /* a bytes object: header, then the table */
};

static struct target target;

static void put_u64(uint8_t *obj, size_t off, uint64_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

/* A compact ASCII str object holding text. */
static void make_str(uint8_t *obj, const char *text)
{
	const struct py_offsets *off = &target.layout.bpf;
	uint32_t state = 0x60; /* compact, ascii */

	memset(obj, 0, OBJ_SIZE);
	put_u64(obj, off->str_length, strlen(text));
	memcpy(obj + off->str_state, &state, sizeof(state));
	memcpy(obj + off->str_ascii_data, text, strlen(text) + 1);
}

/* A bytes object of claimed size `size` holding len bytes of tab. */
static uint8_t *make_bytes(const uint8_t *tab, size_t len, int64_t size)
{
	uint8_t *obj = calloc(1, target.layout.bytes_data + len + 1);

	assert_non_null(obj);
	memcpy(obj + target.layout.bytes_size, &size, sizeof(size));
	memcpy(obj + target.layout.bytes_data, tab, len);
	return obj;
}

static void make_code(struct fake_code *fc, const char *name, uint8_t *table, int firstline)
{
	const struct py_offsets *off = &target.layout.bpf;
	int32_t fl = firstline;

	memset(fc->code, 0, sizeof(fc->code));
	make_str(fc->qualname, name);
	make_str(fc->filename, "/src/fake.py");
	fc->table = table;
	put_u64(fc->code, off->code_qualname, (uintptr_t)fc->qualname);
	put_u64(fc->code, off->code_name, (uintptr_t)fc->qualname);
	put_u64(fc->code, off->code_filename, (uintptr_t)fc->filename);
	put_u64(fc->code, off->code_linetable, (uintptr_t)table);
	memcpy(fc->code + off->code_firstlineno, &fl, sizeof(fl));
}

/* The fingerprint BPF would have sent for fc as it is now. */
static uint32_t fp_of(const struct fake_code *fc)
{
	const struct py_offsets *off = &target.layout.bpf;

	return code_identity(off, fc->code + off->code_id_start, fc->qualname + off->str_length);
}

/* A 3.11 location table: n entries of one code unit, lines going up by one each. */
static uint8_t *rising_table(size_t n)
{
	uint8_t *tab = malloc(3 * n + 1);
	uint8_t *obj;
	size_t i;

	assert_non_null(tab);
	for (i = 0; i < n; i++) {
		tab[3 * i] = 0xd8; /* one-line form, line + 1, one code unit */
		tab[3 * i + 1] = 0;
		tab[3 * i + 2] = 0;
	}
	obj = make_bytes(tab, 3 * n, 3 * n);
	free(tab);
	return obj;
}

static int setup(void **state)
{
	(void)state;
	memset(&target, 0, sizeof(target));
	target.pid = getpid();
	assert_int_equal(py_layout__for_version(0x030B02F0, &target.layout), 0);
	assert_true(target.layout.code_read_size <= OBJ_SIZE);
	return 0;
}

/*
 * Many code objects through a small budget: it holds after every lookup, the
 * least recently used go first, and an evicted one is read again, named
 * right.
 */
static void test_budget_holds_and_evicts_lru(void **state)
{
	enum { N = 200 };
	static struct fake_code fc[N];
	uint8_t *table = rising_table(500); /* 501 runs: 4 KiB decoded */
	struct cache_budget b;
	struct code_cache *cc;
	const struct code_info *ci;
	char name[32];
	uint64_t reads;
	size_t i;

	(void)state;
	cache_budget__init(&b, 64 << 10);
	cc = code_cache__new(&b);
	assert_non_null(cc);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		make_code(&fc[i], name, table, 10);
		ci = code_cache__get(cc, &target, (uintptr_t)fc[i].code, fp_of(&fc[i]));
		assert_non_null(ci);
		assert_string_equal(ci->qualname, name);
		assert_int_equal(ci->nruns, 501);
		assert_int_equal(code_info__line(ci, &target.layout, 4), 13);
		assert_true(b.used <= b.limit);
		/* f0 stays the most recently used: never evicted */
		assert_non_null(code_cache__get(cc, &target, (uintptr_t)fc[0].code, fp_of(&fc[0])));
	}
	assert_true(b.evicted > 0);
	assert_true(b.peak <= b.limit);
	assert_int_equal(b.refused, 0);
	/* the table was decoded once, found in the memo for every other object */
	assert_int_equal(b.memo_hits, N - 1);
	reads = cc->reads;
	ci = code_cache__get(cc, &target, (uintptr_t)fc[0].code, fp_of(&fc[0]));
	assert_string_equal(ci->qualname, "f0");
	assert_int_equal(cc->reads, reads);
	ci = code_cache__get(cc, &target, (uintptr_t)fc[1].code, fp_of(&fc[1]));
	assert_string_equal(ci->qualname, "f1");
	assert_int_equal(cc->reads, reads + 1);
	code_cache__free(cc);
	assert_int_equal(b.used, 0);
	cache_budget__free(&b);
	free(table);
}

/*
 * An evicted code object whose address now holds another object is not
 * named after the newcomer: the fingerprint from the sample no longer
 * matches, so the frame is unresolved.
 */
static void test_evicted_then_replaced_is_unresolved(void **state)
{
	static struct fake_code a, filler[40];
	uint8_t *table = rising_table(500);
	struct cache_budget b;
	struct code_cache *cc;
	uint32_t fp;
	size_t i;

	(void)state;
	cache_budget__init(&b, 32 << 10);
	cc = code_cache__new(&b);
	make_code(&a, "victim", table, 1);
	fp = fp_of(&a);
	assert_non_null(code_cache__get(cc, &target, (uintptr_t)a.code, fp));
	for (i = 0; i < 40; i++) {
		make_code(&filler[i], "filler", table, 1);
		assert_non_null(code_cache__get(cc, &target, (uintptr_t)filler[i].code,
						fp_of(&filler[i])));
	}
	assert_null(hashmap__find(&cc->by_addr, (uintptr_t)a.code));
	make_str(a.qualname, "impostor");
	assert_null(code_cache__get(cc, &target, (uintptr_t)a.code, fp));
	code_cache__free(cc);
	cache_budget__free(&b);
	free(table);
}

/* Tables too large to keep lose their lines, never their function's name. */
static void test_refused_tables_keep_the_name(void **state)
{
	static struct fake_code many, huge;
	uint8_t *table = rising_table(LINETABLE_RUNS_MAX + 10);
	uint8_t *claims = make_bytes((const uint8_t *)"\x80", 1, (1 << 20) + 1);
	struct cache_budget b;
	struct code_cache *cc;
	const struct code_info *ci;

	(void)state;
	cache_budget__init(&b, 64 << 20);
	cc = code_cache__new(&b);
	make_code(&many, "many_lines", table, 100);
	ci = code_cache__get(cc, &target, (uintptr_t)many.code, fp_of(&many));
	assert_non_null(ci);
	assert_string_equal(ci->qualname, "many_lines");
	assert_null(ci->runs);
	assert_int_equal(code_info__line(ci, &target.layout, 4), -1);
	assert_int_equal(code_info__line(ci, &target.layout, -1), 100);
	make_code(&huge, "huge_table", claims, 100);
	ci = code_cache__get(cc, &target, (uintptr_t)huge.code, fp_of(&huge));
	assert_non_null(ci);
	assert_string_equal(ci->qualname, "huge_table");
	assert_null(ci->runs);
	assert_int_equal(b.refused, 2);
	/* a refused entry costs its names and bookkeeping only (beside the map's slots) */
	assert_true(b.used - hashmap__bytes(&cc->by_addr) < 2 * 256);
	code_cache__free(cc);
	cache_budget__free(&b);
	free(table);
	free(claims);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_holds_and_evicts_lru),
		cmocka_unit_test(test_evicted_then_replaced_is_unresolved),
		cmocka_unit_test(test_refused_tables_keep_the_name),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
