/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One leveled logger for diagnostics. Diagnostics go to stderr only; reports
 * go to stdout or -o files and never through here.
 */
#ifndef PYBPFPROF_LOG_H
#define PYBPFPROF_LOG_H

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(int level);
int log_get_level(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libbpf's own messages through log_msg (-v shows info, -vv debug). */
void log_hook_libbpf(void);

#define pr_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
