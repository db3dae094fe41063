/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --kernel's symbol table: /proc/kallsyms text parsed (text symbols only,
 * module names dropped, hidden addresses refused) and addresses looked up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "session/ksyms.h"

static void read_text(struct ksyms *k, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	memset(k, 0, sizeof(*k));
	assert_int_equal(ksyms__read(k, f), 0);
	fclose(f);
}

static void test_lookup(void **state)
{
	struct ksyms k;

	(void)state;
	read_text(&k, "ffffffff81200000 T vfs_read\n"
		      "ffffffff81100000 t ksys_read\n"
		      "ffffffff81150000 D some_data\n"
		      "ffffffff81300000 W weak_fn\n"
		      "ffffffffc0001000 t mod_fn\t[nf_tables]\n"
		      "not a line\n"
		      "ffffffff81400000 T\n");
	assert_int_equal(k.n, 4);
	assert_null(ksyms__find(&k, 0xffffffff810fffffULL));
	assert_string_equal(ksyms__find(&k, 0xffffffff81100000ULL), "ksys_read");
	/* the data symbol between them is not text: ksys_read still holds it */
	assert_string_equal(ksyms__find(&k, 0xffffffff81150010ULL), "ksys_read");
	assert_string_equal(ksyms__find(&k, 0xffffffff811fffffULL), "ksys_read");
	assert_string_equal(ksyms__find(&k, 0xffffffff81200000ULL), "vfs_read");
	assert_string_equal(ksyms__find(&k, 0xffffffff81300001ULL), "weak_fn");
	assert_string_equal(ksyms__find(&k, 0xffffffffc0001234ULL), "mod_fn");
	ksyms__free(&k);
}

/* kptr_restrict: every address reads 0, nothing is kept, every lookup fails */
static void test_hidden(void **state)
{
	struct ksyms k;

	(void)state;
	read_text(&k, "0000000000000000 T vfs_read\n0000000000000000 t ksys_read\n");
	assert_int_equal(k.n, 0);
	assert_null(ksyms__find(&k, 0xffffffff81200000ULL));
	ksyms__free(&k);
}

/* a name longer than 127 bytes is cut, not overflowed */
static void test_long_name(void **state)
{
	char text[512], name[300];
	struct ksyms k;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text), "ffffffff81000000 T %s\n", name);
	read_text(&k, text);
	assert_int_equal(k.n, 1);
	assert_int_equal(strlen(ksyms__find(&k, 0xffffffff81000001ULL)), 127);
	ksyms__free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_long_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
