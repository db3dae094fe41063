// SPDX-License-Identifier: GPL-2.0-only
/*
 * The string sanitizers (util/text.c) and the escapers built on them
 * (report_common.c, the logger) on any bytes: a target's names, paths and
 * command lines and a saved file's strings reach them (issue 28, points 8
 * and 9). Each output is read back by a strict UTF-8 decoder of this file's
 * own, not by text_next, and aborts unless it is valid UTF-8 holding no
 * forbidden code point (C0 but what the output keeps, DEL, C1, the bidi
 * controls, U+2028, U+2029); a cut is at a character boundary; text that
 * needed nothing is left as it was; JSON and the flame graphs' strings
 * read back (util/json_doc.c) as what was written.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "report/report_common.h"
#include "util/json_doc.h"
#include "util/log.h"
#include "util/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_text: %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The code point at s (n bytes left) into *cp: its length, or 0 if not UTF-8 (RFC 3629). */
static size_t decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	len = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
	if (!len || len > n)
		return 0;
	*cp = s[0] & (0xFF >> (len + 1));
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3F);
	}
	if (*cp < min[len] || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
		return 0;
	return len;
}

static bool forbidden(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
	       cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* s (n bytes) is valid UTF-8 whose forbidden code points are all in allowed. */
static void check_clean(const char *s, size_t n, const char *allowed)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t k;

	for (; n; p += k, n -= k) {
		k = decode(p, n, &cp);
		CHECK(k);
		CHECK(!forbidden(cp) || (cp && strchr(allowed, (int)cp)));
	}
}

/* Whether s is valid UTF-8 with nothing forbidden but tabs (text that needs no change). */
static bool plain(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), k;
	uint32_t cp;

	for (; n; p += k, n -= k) {
		k = decode(p, n, &cp);
		if (!k || (forbidden(cp) && cp != '\t'))
			return false;
	}
	return true;
}

static char *printed(void (*put)(FILE *, const char *), const char *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	CHECK(f);
	put(f, s);
	CHECK(!fclose(f));
	return buf;
}

/* ["<what put wrote>"] read back as JSON: the one string it holds. */
static void json_back(const char *json, size_t len, char *out, size_t outlen)
{
	char *text = malloc(len + 3);
	const struct jval *v;
	struct jdoc_error err;
	struct jdoc d;

	CHECK(text);
	text[0] = '[';
	memcpy(text + 1, json, len);
	text[len + 1] = ']';
	CHECK(!jdoc_parse(&d, text, len + 2, SIZE_MAX, &err));
	v = jv_at(jdoc_root(&d), 0);
	CHECK(jv_is_string(v) && jv_strlen(v) < outlen);
	memcpy(out, jv_str(v), jv_strlen(v) + 1);
	jdoc_free(&d);
	free(text);
}

static void xml_all(FILE *f, const char *s)
{
	report_xml_text(f, s, SIZE_MAX);
}

/* The text outputs: one field of one line, cut where asked at a character boundary. */
static void fuzz_text(const char *s, size_t n, size_t cut)
{
	char *a = strdup(s), *b = strdup(s), *c = malloc(n + 1), *put;
	size_t len;

	CHECK(a && b && c);
	text_sanitize(a);
	CHECK(strlen(a) <= n);
	check_clean(a, strlen(a), "");
	if (plain(s)) /* nothing to change but the tabs */
		CHECK(!strcmp(a, s) || strchr(s, '\t'));
	text_sanitize_lines(b);
	check_clean(b, strlen(b), "\n");
	text_clean(c, n + 1, s);
	CHECK(!strcmp(c, a));
	put = printed(text_put_clean, s, &len);
	CHECK(len == strlen(a) && !memcmp(put, a, len));
	free(put);
	text_clean(c, cut + 1, s);
	CHECK(strlen(c) <= cut && !strncmp(c, a, strlen(c)));
	check_clean(c, strlen(c), "");
	/* cut at a boundary: the next character of the whole did not fit */
	CHECK(!a[strlen(c)] || strlen(c) == cut ||
	      strlen(c) + decode((const unsigned char *)a + strlen(c), strlen(a) - strlen(c),
				 &(uint32_t){ 0 }) >
		      cut);
	free(a);
	free(b);
	free(c);
}

/* Protobuf, JSON, the flame graphs' script, XML. */
static void fuzz_formats(const char *s, size_t n)
{
	char *u = text_utf8_dup(s), *out, *back = malloc(3 * n + 1);
	size_t len;

	CHECK(u && back);
	check_clean(u, strlen(u), "\t");
	if (plain(s))
		CHECK(!strcmp(u, s));
	out = printed(json_string, s, &len);
	check_clean(out, len, "");
	json_back(out, len, back, 3 * n + 1);
	if (plain(s)) /* JSON keeps every character */
		CHECK(!strcmp(back, s));
	free(out);
	out = printed(report_script_string, s, &len);
	check_clean(out, len, "");
	CHECK(!memmem(out, len, "</", 2));
	json_back(out, len, back, 3 * n + 1);
	check_clean(back, strlen(back), "\t");
	free(out);
	out = printed(xml_all, s, &len);
	check_clean(out, len, "");
	CHECK(!memchr(out, '<', len) && !memchr(out, '>', len));
	free(out);
	free(u);
	free(back);
}

/* A message on stderr quoting s: one line, whatever s holds. */
static void fuzz_log(const char *s)
{
	static int mem = -1;
	char buf[4096 * 4 + 128];
	int saved;
	ssize_t got;

	if (mem < 0)
		mem = memfd_create("fuzz_text", 0);
	CHECK(mem >= 0 && !ftruncate(mem, 0) && lseek(mem, 0, SEEK_SET) == 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0 && dup2(mem, STDERR_FILENO) >= 0);
	pr_err("pid 1 (%s): gone\n", s);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	got = pread(mem, buf, sizeof(buf), 0);
	CHECK(got > 0 && (size_t)got < sizeof(buf) && buf[got - 1] == '\n');
	check_clean(buf, got - 1, "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	size_t n;

	if (!size || size > 4096)
		return 0;
	/* the first byte says where text_clean cuts; the rest is the string, to its first NUL */
	s = strndup((const char *)data + 1, size - 1);
	if (!s)
		return 0;
	n = strlen(s);
	fuzz_text(s, n, data[0] % (n + 1));
	fuzz_formats(s, n);
	fuzz_log(s);
	free(s);
	return 0;
}
