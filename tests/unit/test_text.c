/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text_sanitize(): what a hostile target could send to the terminal through
 * a qualname, a path, a command line or a source line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "report/report_common.h"
#include "util/text.h"

static void expect(const char *in, const char *out, size_t replaced)
{
	char buf[256];

	strcpy(buf, in);
	assert_int_equal(text_sanitize(buf), replaced);
	assert_string_equal(buf, out);
}

static void test_plain_text_unchanged(void **state)
{
	(void)state;
	expect("", "", 0);
	expect("Worker.run.<locals>.step", "Worker.run.<locals>.step", 0);
	expect("/srv/app/views.py", "/srv/app/views.py", 0);
	/* Two-, three- and four-byte UTF-8: é, €, 𝜋 */
	expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x9c\x8b",
	       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x9c\x8b", 0);
	/* The last code point before the C1 range and the first after it. */
	expect("\x7e\xc2\xa0", "\x7e\xc2\xa0", 0);
}

static void test_terminal_controls_replaced(void **state)
{
	(void)state;
	/* Clear screen, set the title, a bell, a carriage return over the line. */
	expect("f\x1b[2Jx", "f?[2Jx", 1);
	expect("\x1b]0;owned\x07", "?]0;owned?", 2);
	expect("ok\rEVIL", "ok?EVIL", 1);
	expect("a\nb", "a?b", 1);
	expect("del\x7f", "del?", 1);
	/* CSI as the C1 code point U+009B, and U+0085 (next line). */
	expect("x\xc2\x9b"
	       "31mred",
	       "x?31mred", 1);
	expect("\xc2\x85", "?", 1);
	/* Tabs keep the text readable. */
	expect("\tif i in haystack:", " if i in haystack:", 0);
}

static void test_invalid_utf8_replaced(void **state)
{
	(void)state;
	expect("\x9b"
	       "1m",
	       "?1m", 1);		       /* a lone 8-bit CSI */
	expect("\xc3", "?", 1);		       /* cut short by the end */
	expect("\xc3(", "?(", 1);	       /* not followed by a continuation byte */
	expect("\xc0\xaf", "??", 2);	       /* overlong '/' */
	expect("\xe0\x80\xaf", "???", 3);      /* overlong, three bytes */
	expect("\xed\xa0\x80", "???", 3);      /* a UTF-16 surrogate */
	expect("\xf4\x90\x80\x80", "????", 4); /* above U+10FFFF */
	expect("\xff\xfe", "??", 2);
}

/* JSON keeps every character but escapes the controls and stays valid UTF-8. */
static void expect_json(const char *in, const char *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	json_string(f, in);
	fclose(f);
	assert_string_equal(buf, out);
	free(buf);
}

static void test_json_string(void **state)
{
	(void)state;
	expect_json("caf\xc3\xa9 \xf0\x9d\x9c\x8b", "\"caf\xc3\xa9 \xf0\x9d\x9c\x8b\"");
	expect_json("a\"b\\c\td\ne", "\"a\\\"b\\\\c\\td\\ne\"");
	expect_json("\x1b[2J\x7f", "\"\\u001b[2J\\u007f\"");
	expect_json("\xc2\x9b"
		    "1m\xc2\xa0",
		    "\"\\u009b1m\xc2\xa0\"");
	expect_json("\xff\xed\xa0\x80!", "\"\\ufffd\\ufffd\\ufffd\\ufffd!\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_terminal_controls_replaced),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_json_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
