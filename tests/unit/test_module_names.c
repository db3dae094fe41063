/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the module bodies' names BPF reads at their first sample
 * (session/module_names.h): a record's file is kept up to its first NUL and
 * its length, found again by (code, fingerprint), and what a target may send
 * beyond is refused and counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "session/module_names.h"

static struct py_module_record rec(uint64_t code, uint32_t fp, const char *text, size_t len)
{
	struct py_module_record r;

	memset(&r, 0, sizeof(r));
	r.kind = PY_KIND_MODULE;
	r.code = code;
	r.fingerprint = fp;
	r.firstlineno = 1;
	r.value = len;
	memcpy(r.text, text, len < sizeof(r.text) ? len : sizeof(r.text));
	return r;
}

static void test_kept_and_found(void **state)
{
	struct module_names m;
	struct py_module_record r = rec(0x7f0010, 42, "/srv/app/models.py", 18);
	const struct module_name *n;

	(void)state;
	module_names__init(&m);
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), 0);
	n = module_names__find(&m, 0x7f0010, 42);
	assert_non_null(n);
	assert_string_equal(n->file, "/srv/app/models.py");
	assert_int_equal(n->firstlineno, 1);
	/* another fingerprint at the same address: another object */
	assert_null(module_names__find(&m, 0x7f0010, 43));
	/* the same again is kept once */
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), 0);
	assert_int_equal(m.n, 1);
	module_names__free(&m);
}

static void test_text_bounded(void **state)
{
	struct module_names m;
	struct py_module_record r = rec(1, 1, "a.py\0/etc/shadow", 16);
	const struct module_name *n;

	(void)state;
	module_names__init(&m);
	/* up to the first NUL */
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), 0);
	n = module_names__find(&m, 1, 1);
	assert_non_null(n);
	assert_string_equal(n->file, "a.py");
	/* a length past the text's room is cut to it, NUL-terminated */
	r = rec(2, 2, "", 0);
	memset(r.text, 'x', sizeof(r.text));
	r.value = UINT64_MAX;
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), 0);
	n = module_names__find(&m, 2, 2);
	assert_non_null(n);
	assert_int_equal(strlen(n->file), PY_MODULE_PATH - 1);
	module_names__free(&m);
}

static void test_refused(void **state)
{
	struct module_names m;
	struct py_module_record r = rec(1, 1, "x.py", 4);
	uint64_t i;

	(void)state;
	module_names__init(&m);
	/* too short, or not a module record */
	assert_int_equal(module_names__add(&m, &r, sizeof(r) - 1), -EINVAL);
	r.kind = PY_KIND_CPU;
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), -EINVAL);
	/* no text: nothing to name by */
	r = rec(1, 1, "", 0);
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), -ENODATA);
	assert_int_equal(m.refused, 1);
	/* full: counted, the first ones kept */
	for (i = 0; i < MODULE_NAMES_MAX; i++) {
		r = rec(0x1000 + i, 7, "m.py", 4);
		assert_int_equal(module_names__add(&m, &r, sizeof(r)), 0);
	}
	r = rec(0x999999, 7, "n.py", 4);
	assert_int_equal(module_names__add(&m, &r, sizeof(r)), -ENOSPC);
	assert_int_equal(m.refused, 2);
	assert_non_null(module_names__find(&m, 0x1000, 7));
	assert_null(module_names__find(&m, 0x999999, 7));
	assert_true(module_names__bytes(&m) >= MODULE_NAMES_MAX * sizeof(struct module_name));
	module_names__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_and_found),
		cmocka_unit_test(test_text_bounded),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
