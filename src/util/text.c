// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/text.h"

/* Length of the valid multi-byte UTF-8 sequence at p (2-4), or 0 if it is not one. */
static int utf8_seq_len(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	int n, i;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	/* A NUL terminator is not a continuation byte, so this stops at the end. */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

enum text_kind text_next(const unsigned char *p, int *len)
{
	*len = 1;
	if (*p < 0x20 || *p == 0x7F)
		return TEXT_CONTROL;
	if (*p < 0x80)
		return TEXT_PRINTABLE;
	*len = utf8_seq_len(p);
	if (!*len) {
		*len = 1;
		return TEXT_INVALID;
	}
	/* U+0080-U+009F: some terminals obey U+009B like ESC [ */
	return p[0] == 0xC2 && p[1] <= 0x9F ? TEXT_CONTROL : TEXT_PRINTABLE;
}

static size_t sanitize(char *s, bool keep_newlines)
{
	unsigned char *r = (unsigned char *)s, *w = r;
	size_t replaced = 0;
	int n;

	while (*r) {
		if (*r == '\n' && keep_newlines) {
			*w++ = *r++;
		} else if (*r == '\t') {
			*w++ = ' ';
			r++;
		} else if (text_next(r, &n) == TEXT_PRINTABLE) {
			while (n--)
				*w++ = *r++;
		} else {
			*w++ = '?';
			r += n;
			replaced++;
		}
	}
	*w = '\0';
	return replaced;
}

size_t text_sanitize(char *s)
{
	return sanitize(s, false);
}

size_t text_sanitize_lines(char *s)
{
	return sanitize(s, true);
}

void text_put_clean(FILE *f, const char *s)
{
	char *c = strdup(s ? s : "?");

	if (!c)
		return;
	text_sanitize(c);
	fputs(c, f);
	free(c);
}
