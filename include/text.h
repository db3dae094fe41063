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

/*
 * In place: tabs become spaces; other C0 control characters, DEL, C1 control
 * characters (U+0080-U+009F, which some terminals obey like ESC [) and bytes
 * that are not valid UTF-8 become '?'. Valid UTF-8 otherwise stays as it is.
 * The result is never longer. Returns the number of characters replaced.
 */
size_t text_sanitize(char *s);
/* The same for a whole text of several lines: newlines are kept. */
size_t text_sanitize_lines(char *s);

/*
 * Length of the valid multi-byte UTF-8 sequence at p (2-4), or 0 if it is not
 * one: no overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629).
 * Stops at a NUL terminator.
 */
int text_utf8_seq_len(const unsigned char *p);

#endif
