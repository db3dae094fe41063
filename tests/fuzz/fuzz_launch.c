// SPDX-License-Identifier: GPL-2.0-only
/*
 * What launch mode reads of the processes a command left running, on any
 * bytes: a children list (/proc/self/task/TID/children) into pids, a stat
 * line into its session and comm (which the process named itself: any
 * bytes but NUL), and the warning that names them, cut to its buffer.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "cli/launch.h"
#include "proc/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct launch_leftover lo[4];
	char *text = malloc(size + 1), names[64];
	struct proc_stat st;
	pid_t pids[8];
	size_t n, i, len;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	n = launch_children_parse(text, pids, 8);
	for (i = 0; i < n; i++)
		if (pids[i] <= 0)
			abort();
	if (!proc_stat_parse(text, &st) && (st.session < -1 || st.ppid < -1))
		abort();
	for (i = 0; i < 4; i++) {
		lo[i].pid = n ? pids[i % n] : (pid_t)i;
		proc_stat_comm(text + i, lo[i].comm, sizeof(lo[i].comm) - i * 7);
		if (strlen(lo[i].comm) >= sizeof(lo[i].comm) - i * 7)
			abort();
		if (!text[i])
			break;
	}
	/* a size from the input: 1 to sizeof(names) */
	len = size ? 1 + data[0] % sizeof(names) : sizeof(names);
	launch_leftovers_describe(lo, i < 4 ? i : 4, n + 4, n ? pids[0] : 0, names, len);
	if (strnlen(names, len) >= len)
		abort();
	free(text);
	return 0;
}
