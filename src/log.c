// SPDX-License-Identifier: GPL-2.0-only
/*
 * Leveled stderr logger. Errors are printed as "pybpfprof: <sentence>", the
 * form every user-facing error takes; -v and -vv raise the level.
 */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

static int log_level = LOG_WARN;

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	fputs(level == LOG_WARN ? "pybpfprof: warning: " : "pybpfprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int mine = level == LIBBPF_WARN ? LOG_INFO : level == LIBBPF_INFO ? LOG_INFO : LOG_DEBUG;

	/* libbpf warns about things we handle ourselves (probing); show them with -v. */
	if (mine > log_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void log_hook_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
