/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json_doc: the JSON reader of files users hand in. What it must accept
 * (RFC 8259, values read back exactly), what it must refuse and where it
 * says the problem is, and the memory it takes: 16 bytes a value, known
 * (and refused past a limit) before any is taken.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "util/json_doc.h"

static struct jdoc doc;

static const struct jval *parse(const char *text)
{
	struct jdoc_error err;
	int rc = jdoc_parse(&doc, text, strlen(text), SIZE_MAX, &err);

	if (rc)
		fail_msg("%s: refused (%d): %s at %zu:%zu", text, rc, err.text, err.line,
			 err.column);
	return jdoc_root(&doc);
}

static void refused(const char *text, size_t len, const char *what, size_t line, size_t column)
{
	struct jdoc_error err;

	assert_int_equal(jdoc_parse(&doc, text, len, SIZE_MAX, &err), -EINVAL);
	assert_string_equal(err.text, what);
	assert_int_equal(err.line, line);
	assert_int_equal(err.column, column);
	assert_null(doc.vals);
}

static void test_values(void **state)
{
	const struct jval *r, *a, *o;

	(void)state;
	r = parse(" {\"a\": [1, -2, 3.5, -0.25e2, true, false, null, \"x\"], \"b\": {}, "
		  "\"c\": [[], [[7]]], \"\": 0}\n");
	assert_true(jv_is_object(r));
	assert_int_equal(jv_size(r), 4);
	a = jv_get(r, "a");
	assert_int_equal(jv_size(a), 8);
	assert_int_equal(jv_int(jv_at(a, 0)), 1);
	assert_int_equal(jv_int(jv_at(a, 1)), -2);
	assert_false(jv_is_integer(jv_at(a, 2)));
	assert_true(jv_is_number(jv_at(a, 2)) && jv_number(jv_at(a, 2)) == 3.5);
	assert_true(jv_number(jv_at(a, 3)) == -25.0);
	assert_true(jv_is_true(jv_at(a, 4)) && jv_is_boolean(jv_at(a, 5)) &&
		    !jv_is_true(jv_at(a, 5)));
	assert_true(jv_is_null(jv_at(a, 6)));
	assert_string_equal(jv_str(jv_at(a, 7)), "x");
	assert_null(jv_at(a, 8));
	o = jv_get(r, "b");
	assert_true(jv_is_object(o) && jv_size(o) == 0 && !jv_get(o, "a"));
	a = jv_get(r, "c");
	assert_int_equal(jv_int(jv_at(jv_at(jv_at(a, 1), 0), 0)), 7);
	assert_int_equal(jv_int(jv_get(r, "")), 0);
	/* NULL stands for what is missing, everywhere */
	assert_null(jv_get(r, "nope"));
	assert_null(jv_at(jv_get(r, "nope"), 0));
	assert_false(jv_is_array(NULL) || jv_is_string(NULL) || jv_is_null(NULL));
	assert_int_equal(jv_size(NULL), 0);
	assert_null(jv_str(jv_get(r, "a")));
	jdoc_free(&doc);
}

static void test_numbers(void **state)
{
	const struct jval *r;

	(void)state;
	r = parse("[9223372036854775807, -9223372036854775808, 0, -0, 1e308, 2.5E-3, 1E+2]");
	assert_true(jv_int(jv_at(r, 0)) == LLONG_MAX);
	assert_true(jv_int(jv_at(r, 1)) == LLONG_MIN);
	assert_true(jv_is_integer(jv_at(r, 3)) && jv_int(jv_at(r, 3)) == 0);
	assert_true(jv_number(jv_at(r, 4)) == 1e308);
	assert_true(jv_number(jv_at(r, 5)) == 2.5e-3);
	assert_true(jv_number(jv_at(r, 6)) == 100.0);
	jdoc_free(&doc);
}

static void test_strings(void **state)
{
	const struct jval *r;

	(void)state;
	r = parse("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\\ud835\\udf0b\", "
		  "\"caf\xc3\xa9 \xf0\x9d\x9c\x8b\", \"nul\\u0000here\", \"\\u202e\"]");
	assert_string_equal(jv_str(jv_at(r, 0)), "a\"b\\c/d\b\f\n\r\t");
	assert_string_equal(jv_str(jv_at(r, 1)), "\xc3\xa9\xe2\x82\xac\xf0\x9d\x9c\x8b");
	assert_string_equal(jv_str(jv_at(r, 2)), "caf\xc3\xa9 \xf0\x9d\x9c\x8b");
	/* a NUL of its own: the length says so, the loader refuses it */
	assert_int_equal(jv_strlen(jv_at(r, 3)), 8);
	assert_int_equal(strlen(jv_str(jv_at(r, 3))), 3);
	assert_string_equal(jv_str(jv_at(r, 4)), "\xe2\x80\xae");
	jdoc_free(&doc);
}

static void test_refusals(void **state)
{
	char deep[2 * JDOC_MAX_DEPTH + 3];

	(void)state;
	refused("", 0, "a value expected", 1, 1);
	refused("[1,]", 4, "a value expected", 1, 4);
	refused("[1 2]", 5, "',' or ']' expected", 1, 4);
	refused("{\"a\" 1}", 7, "':' expected", 1, 6);
	refused("{1: 2}", 6, "a string (a member's name) expected", 1, 2);
	refused("[01]", 4, "',' or ']' expected", 1, 3);
	refused("[1.]", 4, "a digit expected after '.'", 1, 4);
	refused("[1e]", 4, "a digit expected in an exponent", 1, 4);
	refused("[-]", 3, "a value expected", 1, 2);
	refused("[tru]", 5, "a value expected", 1, 2);
	refused("[1] [2]", 7, "the end expected after the value", 1, 5);
	refused("\n\n  [\"ab", 8, "a string not closed", 3, 4);
	refused("[\"a\tb\"]", 7, "a control character in a string (it must be escaped)", 1, 4);
	refused("[\"\\x\"]", 6, "an invalid escape in a string", 1, 3);
	refused("[\"\\u12g4\"]", 10, "an invalid \\u escape in a string", 1, 3);
	refused("[\"\\udc00\"]", 10, "a lone UTF-16 surrogate in a \\u escape", 1, 3);
	refused("[\"\\ud800x\"]", 11, "a lone UTF-16 surrogate in a \\u escape", 1, 3);
	refused("[\"caf\xe9\"]", 8, "a byte that is not UTF-8 in a string", 1, 6);
	refused("[\"\xed\xa0\x80\"]", 7, "a byte that is not UTF-8 in a string", 1, 3);
	refused("[\"a\0b\"]", 7, "a control character in a string (it must be escaped)", 1, 4);
	refused("[9223372036854775808]", 21, "an integer out of range (64 bits)", 1, 2);
	refused("[-9223372036854775809]", 22, "an integer out of range (64 bits)", 1, 2);
	refused("[1e999]", 7, "a number out of range", 1, 2);
	refused("{\"a\": 1, \"b\": 2, \"a\": 3}", 24, "a member named \"a\" twice in one object", 1,
		24);
	memset(deep, '[', JDOC_MAX_DEPTH + 1);
	memset(deep + JDOC_MAX_DEPTH + 1, ']', JDOC_MAX_DEPTH + 1);
	refused(deep, 2 * JDOC_MAX_DEPTH + 2, "nested deeper than 128 levels", 1,
		JDOC_MAX_DEPTH + 1);
	/* the same one level less is fine */
	assert_int_equal(jdoc_parse(&doc, deep + 1, 2 * JDOC_MAX_DEPTH, SIZE_MAX,
				    &(struct jdoc_error){}),
			 0);
	jdoc_free(&doc);
}

/* Past 16 members, duplicates are found by sorting: the same answer. */
static void test_duplicates_in_a_large_object(void **state)
{
	char text[1024];
	size_t n = 0;
	int i;

	(void)state;
	n += snprintf(text + n, sizeof(text) - n, "{");
	for (i = 0; i < 40; i++)
		n += snprintf(text + n, sizeof(text) - n, "%s\"k%d\": %d", i ? ", " : "", i, i);
	snprintf(text + n, sizeof(text) - n, "}");
	assert_int_equal(jv_int(jv_get(parse(text), "k39")), 39);
	jdoc_free(&doc);
	text[n] = '\0';
	snprintf(text + n, sizeof(text) - n, ", \"k7\": 0}");
	refused(text, strlen(text), "a member named \"k7\" twice in one object", 1, strlen(text));
}

/*
 * The memory: 16 bytes a value and the strings' bytes, known before any is
 * taken; at most 8 bytes a byte of text whatever the text.
 */
static void test_memory(void **state)
{
	static const char *const dense[] = { "[0,0,0,0,0,0,0,0]", "[[],[],[],[],[],[],[],[]]",
					     "[{},{},{},{},{},{}]", "[\"\",\"\",\"\",\"\"]",
					     "{\"a\":0,\"b\":0,\"c\":0}" };
	/* values x 16, and each string's bytes and NUL */
	static const size_t bytes[] = { 9 * 16, 9 * 16, 7 * 16, 5 * 16 + 4, 7 * 16 + 6 };
	struct jdoc_error err;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(dense) / sizeof(dense[0]); i++) {
		len = strlen(dense[i]);
		assert_int_equal(jdoc_parse(&doc, dense[i], len, SIZE_MAX, &err), 0);
		assert_int_equal(doc.bytes, bytes[i]);
		assert_true(doc.nvals * sizeof(struct jval) <= 8 * (len + 1));
		assert_true(doc.bytes <= 9 * (len + 1));
		jdoc_free(&doc);
	}
	assert_int_equal(sizeof(struct jval), 16);
	len = strlen(dense[0]);
	assert_int_equal(jdoc_parse(&doc, dense[0], len, 9 * 16 - 1, &err), -EFBIG);
	assert_string_equal(err.text, "it would take 1 MiB of memory to read, more than 0 MiB");
	assert_null(doc.vals);
	assert_int_equal(jdoc_parse(&doc, dense[0], len, 9 * 16, &err), 0);
	assert_int_equal(doc.bytes, 9 * 16);
	jdoc_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_duplicates_in_a_large_object),
		cmocka_unit_test(test_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
