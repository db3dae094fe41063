// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process's role, for the process table and every label: what the
 * tracker saw (a fork, an exec) and what its command line says it runs (a
 * multiprocessing worker, a module, a script). The command line is the
 * target's own: a process may claim any role, and the claim is only shown.
 */
#include <stdio.h>
#include <string.h>
#include "profile/profile.h"

static const char *const origins[PROFILE_ORIGIN_N] = { "found", "launched", "forked", "execed" };

const char *profile_origin_name(enum profile_origin o)
{
	return (unsigned)o < PROFILE_ORIGIN_N ? origins[o] : "found";
}

int profile_origin_of(const char *name)
{
	int i;

	for (i = 0; i < PROFILE_ORIGIN_N; i++)
		if (!strcmp(name, origins[i]))
			return i;
	return -1;
}

/* The word of s at *at (up to a space): *word and *n; *at moves past it. false: none left. */
static bool next_word(const char *s, size_t *at, const char **word, size_t *n)
{
	while (s[*at] == ' ')
		(*at)++;
	if (!s[*at])
		return false;
	*word = s + *at;
	*n = strcspn(s + *at, " ");
	*at += *n;
	return true;
}

/* What the command line runs: "-m module", "-c code", a script's file name, or "". */
static void command_role(const char *cmdline, char *buf, size_t len)
{
	const char *w, *base;
	size_t at = 0, n, k;

	buf[0] = 0;
	if (!next_word(cmdline, &at, &w, &n)) /* the interpreter */
		return;
	while (next_word(cmdline, &at, &w, &n)) {
		if (n == 2 && (!strncmp(w, "-m", 2) || !strncmp(w, "-c", 2))) {
			while (cmdline[at] == ' ')
				at++;
			snprintf(buf, len, "-%c %.*s", w[1], (int)(len > 4 ? len - 4 : 0),
				 cmdline + at);
			return;
		}
		/* an option of the interpreter's: -u, -O; -X dev and -W error are two words */
		if (n == 2 && (!strncmp(w, "-X", 2) || !strncmp(w, "-W", 2))) {
			if (!next_word(cmdline, &at, &w, &n))
				return;
			continue;
		}
		if (w[0] == '-')
			continue;
		for (base = w, k = 0; k < n; k++)
			if (w[k] == '/')
				base = w + k + 1;
		snprintf(buf, len, "%.*s", (int)(n - (size_t)(base - w)), base);
		return;
	}
}

const char *profile_target__role(const struct profile_target *pp, char *buf, size_t len)
{
	const char *cmd = pp->cmdline ? pp->cmdline : "";
	char what[PROFILE_ROLE];

	/* a fork keeps its parent's command line: a forkserver's workers, a fork pool's */
	if (pp->origin == PROFILE_FORKED)
		snprintf(buf, len, "fork of %d", pp->ppid);
	else if (strstr(cmd, "from multiprocessing.spawn import spawn_main") ||
		 strstr(cmd, " --multiprocessing-fork"))
		snprintf(buf, len, "spawn worker of %d", pp->ppid);
	else if (strstr(cmd, "from multiprocessing.forkserver import main"))
		snprintf(buf, len, "forkserver of %d", pp->ppid);
	else if (strstr(cmd, "from multiprocessing.resource_tracker import main"))
		snprintf(buf, len, "resource tracker of %d", pp->ppid);
	else {
		command_role(cmd, what, sizeof(what));
		if (!what[0])
			snprintf(what, sizeof(what), "%s",
				 pp->comm && pp->comm[0] ? pp->comm : "?");
		if (pp->origin == PROFILE_EXECED)
			snprintf(buf, len, "exec of %d: %s", pp->pid, what);
		else
			snprintf(buf, len, "%s", what);
	}
	return buf;
}
