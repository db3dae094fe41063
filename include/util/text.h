/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Strings that come from a target (names, paths, command lines, source lines)
 * and from a file a user hands in are hostile input: they end up on a
 * terminal, in the journal, in a report read later with cat, in line-based
 * formats and in protobuf messages whose parsers refuse a string that is not
 * UTF-8. The profile keeps them as they are (JSON escapes them), except
 * qualnames, cleaned when read; each output makes them safe its own way, by
 * the one rule below (text_next):
 * - a line of text (the text, tree and folded reports, `diff`, `dump`, `top`,
 *   every message on stderr): text_clean, text_put_clean and text_sanitize
 *   make each string one field of one line: no line break, no control or
 *   bidi character, only valid UTF-8 ('?' instead);
 * - protobuf (pprof, OTLP): text_utf8_dup, valid UTF-8 (U+FFFD instead);
 * - JSON and HTML escape them (json_string, report_common.h).
 */
#ifndef PYBPFPROF_TEXT_H
#define PYBPFPROF_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum text_kind {
	TEXT_PRINTABLE, /* ASCII from space to '~', or valid UTF-8 above U+009F but ... */
	/*
	 * ... C0 (tab and newline included), DEL, C1 (U+0080-U+009F, which some
	 * terminals obey like ESC [), the bidi controls (U+061C, U+200E, U+200F,
	 * U+202A-U+202E, U+2066-U+2069: they reorder what follows on the line)
	 * and the line and paragraph separators U+2028, U+2029 (a new line to
	 * some viewers and to JavaScript before ES2019)
	 */
	TEXT_CONTROL,
	TEXT_INVALID, /* a byte that begins no valid UTF-8 sequence */
};

/*
 * The character at p (not the terminating NUL) and its length in bytes (*len):
 * the one rule every output applies. Valid UTF-8 has no overlong forms, no
 * surrogates, nothing above U+10FFFF (RFC 3629).
 */
enum text_kind text_next(const unsigned char *p, int *len);
/*
 * Length of the valid UTF-8 sequence at p (1 to 4 bytes; 1 for ASCII), within
 * the avail bytes there; 0 if none begins at p.
 */
int text_utf8_len(const unsigned char *p, size_t avail);
/* The code point of the valid sequence of len bytes at p (as text_next measured it). */
uint32_t text_codepoint(const unsigned char *p, int len);

/*
 * In place, as one field of one line: tabs become spaces; every other
 * character that is not TEXT_PRINTABLE becomes '?', one '?' per character
 * (per byte for invalid UTF-8). The result is never longer. Returns the
 * number of characters replaced.
 */
size_t text_sanitize(char *s);
/* The same for a whole text of several lines: newlines are kept. */
size_t text_sanitize_lines(char *s);
/*
 * s made safe as text_sanitize does, into buf (len bytes, len > 0), cut at
 * a character boundary if it does not fit; "?" for NULL. Returns buf, for
 * printf's arguments.
 */
char *text_clean(char *buf, size_t len, const char *s);
/* Prints s made safe as text_sanitize does, whole ("?" for NULL). */
void text_put_clean(FILE *f, const char *s);
/*
 * For protobuf strings: a copy of s that is valid UTF-8 and shows as it
 * is: each invalid byte and each TEXT_CONTROL character but the tab becomes
 * U+FFFD. Free it; NULL if out of memory.
 */
char *text_utf8_dup(const char *s);

#endif
