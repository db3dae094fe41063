/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Strings that come from a target (names, paths, command lines, source lines)
 * are hostile input: they end up on a terminal, in a report read later with
 * cat, and in line-based formats. The profile keeps them as they are (JSON
 * and the binary formats escape them), except qualnames, cleaned when read;
 * what is printed as plain text goes through text_sanitize() on its way out:
 * the text and folded reports, the live view and diagnostics.
 */
#ifndef PYBPFPROF_TEXT_H
#define PYBPFPROF_TEXT_H

#include <stddef.h>
#include <stdio.h>

/*
 * In place: tabs become spaces; other C0 control characters, DEL, C1 control
 * characters (U+0080-U+009F, which some terminals obey like ESC [) and bytes
 * that are not valid UTF-8 become '?'. Valid UTF-8 otherwise stays as it is.
 * The result is never longer. Returns the number of characters replaced.
 */
size_t text_sanitize(char *s);
/* The same for a whole text of several lines: newlines are kept. */
size_t text_sanitize_lines(char *s);
/* Prints s sanitized as above (a copy is cleaned; "?" for NULL); nothing if out of memory. */
void text_put_clean(FILE *f, const char *s);

enum text_kind {
	TEXT_PRINTABLE, /* ASCII from space to '~', or valid UTF-8 above U+009F */
	TEXT_CONTROL,	/* C0 (tab and newline included), DEL, or C1: U+0080-U+009F */
	TEXT_INVALID,	/* a byte that begins no valid UTF-8 sequence */
};

/*
 * The character at p (not the terminating NUL) and its length in bytes (*len):
 * the one rule text_sanitize and the JSON writer both apply. Valid UTF-8 has no
 * overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629).
 */
enum text_kind text_next(const unsigned char *p, int *len);

#endif
