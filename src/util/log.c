// SPDX-License-Identifier: GPL-2.0-only
/*
 * Leveled stderr logger. Errors are printed as "pybpfprof: <sentence>", the
 * form every user-facing error takes; -v and -vv raise the level.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "util/log.h"
#include "util/text.h"

static int log_level = LOG_WARN;

/* stderr is a terminal in raw mode (a launched command's relay): lines end in "\r\n" */
static atomic_bool crlf;

void log_set_crlf(bool on)
{
	atomic_store(&crlf, on);
}

/* Writes text to stderr, each newline as "\r\n" while the terminal does not add the "\r". */
static int put_lines(const char *prefix, const char *text)
{
	const char *nl;
	int n = fputs(prefix, stderr);

	while (n >= 0 && atomic_load(&crlf) && (nl = strchr(text, '\n'))) {
		if (fwrite(text, 1, nl - text, stderr) != (size_t)(nl - text) ||
		    fputs("\r\n", stderr) < 0)
			return -1;
		text = nl + 1;
	}
	return n < 0 ? n : fputs(text, stderr);
}

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

/* Prints a message made safe for the terminal: messages quote the targets' names. */
static int put_sanitized(const char *prefix, const char *fmt, va_list ap)
{
	char *msg;
	int n;

	/* vasprintf, not a fixed buffer: libbpf's verifier log comes as one message. */
	if (vasprintf(&msg, fmt, ap) < 0)
		return -1;
	text_sanitize_lines(msg);
	n = put_lines(prefix, msg);
	free(msg);
	return n;
}

void log_tty(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	put_lines("", msg);
	free(msg);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	put_sanitized(level == LOG_WARN ? "pybpfprof: warning: " : "pybpfprof: ", fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int mine = level == LIBBPF_WARN ? LOG_INFO : level == LIBBPF_INFO ? LOG_INFO : LOG_DEBUG;

	/* libbpf warns about things we handle ourselves (probing); show them with -v. */
	if (mine > log_level)
		return 0;
	return put_sanitized("", fmt, ap);
}

void log_hook_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
