// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/PID/stat parser on any text (comm may hold anything: spaces,
 * parentheses, newlines), as proc_stat_read() leaves it: NUL-terminated;
 * and comm itself, cut to its buffer.
 */
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct proc_stat st;
	char comm[16];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!proc_stat_parse(text, &st) &&
	    (!st.state || st.starttime < -1 || st.ppid < -1 || st.session < -1))
		abort();
	proc_stat_comm(text, comm, sizeof(comm));
	if (strnlen(comm, sizeof(comm)) >= sizeof(comm))
		abort();
	free(text);
	return 0;
}
