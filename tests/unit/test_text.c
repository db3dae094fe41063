/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * text_sanitize() and its kin: what a hostile target could send to the
 * terminal, the journal or a protobuf parser through a qualname, a path, a
 * command line or a source line, and what each output makes of it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/libbpf.h>

#include "report/report_common.h"
#include "util/log.h"
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
	/* bidi controls and separators: escaped as their code points */
	expect_json("a\xe2\x80\xae"
		    "b\xe2\x80\xa8\xd8\x9c",
		    "\"a\\u202eb\\u2028\\u061c\"");
}

/* U+202E and its kin reorder the rest of a line; U+2028/2029 start a new one. */
static void test_bidi_and_separators_replaced(void **state)
{
	static const char *const bad[] = {
		"\xd8\x9c",	/* U+061C arabic letter mark */
		"\xe2\x80\x8e", /* U+200E left-to-right mark */
		"\xe2\x80\x8f", /* U+200F */
		"\xe2\x80\xa8", /* U+2028 line separator */
		"\xe2\x80\xa9", /* U+2029 paragraph separator */
		"\xe2\x80\xaa", /* U+202A left-to-right embedding */
		"\xe2\x80\xae", /* U+202E right-to-left override */
		"\xe2\x81\xa6", /* U+2066 left-to-right isolate */
		"\xe2\x81\xa9", /* U+2069 pop directional isolate */
	};
	/* their neighbours are ordinary text: U+200D (emoji joiner), U+2027, U+202F, U+206A */
	static const char *const good[] = { "\xe2\x80\x8d", "\xe2\x80\xa7", "\xe2\x80\xaf",
					    "\xe2\x81\xaa", "\xd8\x9b" };
	char in[32], out[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(in, sizeof(in), "a%sb", bad[i]);
		expect(in, "a?b", 1);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(in, sizeof(in), "a%sb", good[i]);
		snprintf(out, sizeof(out), "%s", in);
		expect(in, out, 0);
	}
	/* a whole text keeps its own newlines, not the separators */
	strcpy(in, "x\ny\xe2\x80\xa8z");
	assert_int_equal(text_sanitize_lines(in), 1);
	assert_string_equal(in, "x\ny?z");
}

/* text_clean: a copy cut at a character boundary, never in the middle of one. */
static void test_clean_cut(void **state)
{
	char buf[8];

	(void)state;
	assert_string_equal(text_clean(buf, 6, "caf\xc3\xa9!"), "caf\xc3\xa9");
	assert_string_equal(text_clean(buf, 5, "caf\xc3\xa9!"), "caf");
	assert_string_equal(text_clean(buf, 5,
				       "a\nb\x1b"
				       "cdef"),
			    "a?b?");
	assert_string_equal(text_clean(buf, 8, "\tx"), " x");
	assert_string_equal(text_clean(buf, 1, "abc"), "");
	assert_string_equal(text_clean(buf, 8, NULL), "?");
}

static char *put_clean(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	text_put_clean(f, in);
	fclose(f);
	return buf;
}

static void test_put_clean(void **state)
{
	char *s;

	(void)state;
	s = put_clean("pid\n100.0% fake\xe2\x80\xae\xff");
	assert_string_equal(s, "pid?100.0% fake??");
	free(s);
}

/* Protobuf strings: valid UTF-8 whatever came in, U+FFFD for what is not shown. */
static void test_utf8_dup(void **state)
{
	char *s;

	(void)state;
	s = text_utf8_dup("caf\xe9/x.py");
	assert_string_equal(s, "caf\xef\xbf\xbd/x.py");
	free(s);
	s = text_utf8_dup("\x1b[2J\t\xe2\x80\xa8\xc3\xa9\xed\xa0\x80");
	assert_string_equal(s, "\xef\xbf\xbd[2J\t\xef\xbf\xbd\xc3\xa9"
			       "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
}

/* A message on stderr is one line, whatever the names it quotes hold. */
static void test_log_one_line(void **state)
{
	char buf[256];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	(void)state;
	assert_non_null(tmp);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	pr_warn("pid %d (%s): gone\n", 7, "py\npybpfprof: error: forged\xe2\x80\xa8");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	assert_string_equal(buf,
			    "pybpfprof: warning: pid 7 (py?pybpfprof: error: forged?): gone\n");
}

/* libbpf's own messages through the hook (-v): lines kept, each after the first marked. */
static int libbpf_says(libbpf_print_fn_t fn, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fn(LIBBPF_WARN, fmt, ap);
	va_end(ap);
	return n;
}

static void test_log_libbpf_lines(void **state)
{
	char buf[256];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), level = log_get_level();
	libbpf_print_fn_t fn;
	size_t n;

	(void)state;
	log_hook_libbpf();
	fn = libbpf_set_print(NULL);
	libbpf_set_print(fn);
	log_set_level(LOG_INFO);
	assert_non_null(tmp);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	libbpf_says(fn, "libbpf: prog 'x': %s\n",
		    "LOG --\n0: R1=ctx()\npybpfprof: error: forged\x1b");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	log_set_level(level);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	assert_string_equal(buf, "libbpf: prog 'x': LOG --\nlibbpf| 0: R1=ctx()\n"
				 "libbpf| pybpfprof: error: forged?\n");
}

static void test_script_string(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	report_script_string(f, "a\nb\t</script>\xe2\x80\xae\\\"");
	fclose(f);
	assert_string_equal(buf, "\"a?b\\u0009\\u003c/script>?\\\\\\\"\"");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_terminal_controls_replaced),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_json_string),
		cmocka_unit_test(test_bidi_and_separators_replaced),
		cmocka_unit_test(test_clean_cut),
		cmocka_unit_test(test_put_clean),
		cmocka_unit_test(test_utf8_dup),
		cmocka_unit_test(test_log_one_line),
		cmocka_unit_test(test_log_libbpf_lines),
		cmocka_unit_test(test_script_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
