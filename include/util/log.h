/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One leveled logger for diagnostics. Diagnostics go to stderr only; reports
 * go to stdout or -o files and never through here.
 */
#ifndef PYBPFPROF_LOG_H
#define PYBPFPROF_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(int level);
int log_get_level(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libbpf's own messages through log_msg (-v shows info, -vv debug). */
void log_hook_libbpf(void);

/*
 * While stderr is a terminal in raw mode (whose output processing no longer
 * turns "\n" into "\r\n"), messages end their lines with "\r\n" themselves.
 */
void log_set_crlf(bool on);
/* Text of ours (no target's string in it) for a terminal on stderr, lines ended as above. */
void log_tty(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define pr_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
