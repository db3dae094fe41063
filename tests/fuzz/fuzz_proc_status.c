// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process's credentials from its /proc/PID/status (source_creds__parse):
 * what the agent's uid and user labels and --match-user are made of, and
 * whose rights source files are read with. The text is the kernel's, but
 * its Name: line is the target's comm, of its choosing: any bytes and any
 * length must parse or fail cleanly. Whatever comes in, success means
 * every one of Uid:, Gid:, Groups: and CapEff: was there once, four uids
 * and gids none of them (uid_t)-1, at most SOURCE_GROUPS_MAX groups; and a
 * copy compares equal to the original.
 *
 * Input: the status text.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "proc/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct source_creds c, copy;
	size_t i;

	if (source_creds__parse((const char *)data, size, &c)) {
		if (c.kind != SOURCE_CREDS_UNKNOWN || c.groups)
			abort();
		return 0;
	}
	if (c.kind != SOURCE_CREDS_PROC || c.ngroups > SOURCE_GROUPS_MAX ||
	    (c.ngroups && !c.groups))
		abort();
	for (i = 0; i < 4; i++)
		if (c.uid[i] == (uid_t)-1 || c.gid[i] == (gid_t)-1)
			abort();
	if (source_creds__copy(&copy, &c) == 0) {
		if (!source_creds__equal(&copy, &c))
			abort();
		source_creds__free(&copy);
	}
	source_creds__free(&c);
	return 0;
}
