// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/text.h"

int text_utf8_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	int n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (avail < (size_t)n)
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

uint32_t text_codepoint(const unsigned char *p, int len)
{
	static const unsigned char lead_mask[] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t cp = p[0] & lead_mask[len < 1 || len > 4 ? 1 : len];
	int i;

	for (i = 1; i < len; i++)
		cp = cp << 6 | (p[i] & 0x3F);
	return cp;
}

/*
 * Characters a terminal or a viewer obeys rather than shows although they are
 * printable UTF-8: the bidi controls reorder the rest of the line (a name can
 * then read as another, "Trojan Source"), the separators start a new line.
 */
static bool formatting(uint32_t cp)
{
	return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

enum text_kind text_next(const unsigned char *p, int *len)
{
	*len = 1;
	if (*p < 0x20 || *p == 0x7F)
		return TEXT_CONTROL;
	if (*p < 0x80)
		return TEXT_PRINTABLE;
	/* up to 4: a NUL terminator is not a continuation byte, so this stops at the end */
	*len = text_utf8_len(p, 4);
	if (!*len) {
		*len = 1;
		return TEXT_INVALID;
	}
	/* U+0080-U+009F: some terminals obey U+009B like ESC [ */
	if (p[0] == 0xC2 && p[1] <= 0x9F)
		return TEXT_CONTROL;
	return formatting(text_codepoint(p, *len)) ? TEXT_CONTROL : TEXT_PRINTABLE;
}

/*
 * Cleans s into w, which may be s itself (the result is never longer), at
 * most cap bytes before the NUL, cut at a character boundary.
 */
static size_t sanitize(const char *s, char *w0, size_t cap, bool keep_newlines)
{
	const unsigned char *r = (const unsigned char *)s;
	unsigned char *w = (unsigned char *)w0, *end = w + cap;
	size_t replaced = 0;
	int n;

	while (*r) {
		bool keep = (*r == '\n' && keep_newlines) || *r == '\t';
		enum text_kind k = keep ? TEXT_PRINTABLE : text_next(r, &n);

		if (keep)
			n = 1;
		if (k == TEXT_PRINTABLE) {
			if (end - w < n)
				break;
			memmove(w, r, n);
			if (*r == '\t')
				*w = ' ';
			w += n;
		} else {
			if (w == end)
				break;
			*w++ = '?';
			replaced++;
		}
		r += n;
	}
	*w = '\0';
	return replaced;
}

size_t text_sanitize(char *s)
{
	return sanitize(s, s, strlen(s), false);
}

size_t text_sanitize_lines(char *s)
{
	return sanitize(s, s, strlen(s), true);
}

char *text_clean(char *buf, size_t len, const char *s)
{
	sanitize(s ? s : "?", buf, len - 1, false);
	return buf;
}

void text_put_clean(FILE *f, const char *s)
{
	const unsigned char *c = (const unsigned char *)(s ? s : "?");
	int n;

	for (; *c; c += n) {
		if (*c == '\t') {
			n = 1;
			fputc(' ', f);
		} else if (text_next(c, &n) == TEXT_PRINTABLE) {
			fwrite(c, 1, n, f);
		} else {
			fputc('?', f);
		}
	}
}

char *text_utf8_dup(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t len = strlen(s);
	char *out = malloc(3 * len + 1), *w = out; /* U+FFFD is 3 bytes: at most 3 per byte */
	int n;

	if (!out)
		return NULL;
	for (; *c; c += n) {
		if (text_next(c, &n) == TEXT_PRINTABLE || *c == '\t') {
			memcpy(w, c, n);
			w += n;
		} else {
			memcpy(w, "\xEF\xBF\xBD", 3);
			w += 3;
		}
	}
	*w = '\0';
	return out;
}
