/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Strings that come from a target (names, paths, command lines, source lines)
 * are hostile input: they end up on a terminal, in a report read later with
 * cat, and in line-based formats. text_sanitize() makes one safe to print.
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

#endif
