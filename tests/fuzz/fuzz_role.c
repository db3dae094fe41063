// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process's role from its command line (profile/profile_role.c,
 * profile_target__role) over any bytes: the command line is the target's.
 * Whatever it holds, the role ends within its buffer, NUL-terminated, and
 * is never empty.
 *
 * Input: byte 0 picks the origin (n % PROFILE_ORIGIN_N), bytes 1-4 the
 * parent pid, the rest (to a NUL) the command line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile_target pp;
	char *cmdline, buf[PROFILE_ROLE], small[8];
	int32_t ppid;

	if (size < 5)
		return 0;
	memset(&pp, 0, sizeof(pp));
	pp.origin = (enum profile_origin)(data[0] % PROFILE_ORIGIN_N);
	memcpy(&ppid, data + 1, 4);
	pp.ppid = ppid;
	pp.pid = 300;
	cmdline = strndup((const char *)data + 5, size - 5);
	if (!cmdline)
		return 0;
	pp.cmdline = cmdline;
	pp.comm = (char *)"python3";
	memset(buf, 0xa5, sizeof(buf));
	if (profile_target__role(&pp, buf, sizeof(buf)) != buf ||
	    strnlen(buf, sizeof(buf)) == sizeof(buf) || !buf[0])
		abort();
	/* a buffer smaller than any role: cut, still terminated */
	if (strnlen(profile_target__role(&pp, small, sizeof(small)), sizeof(small)) ==
	    sizeof(small))
		abort();
	free(cmdline);
	return 0;
}
