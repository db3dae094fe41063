// SPDX-License-Identifier: GPL-2.0-only
/*
 * The manifest --max-disk keeps in --output-dir (agent_manifest_parse): a
 * file in a directory other users may write, so text of any bytes and
 * length. Whatever comes in, every entry it gives is a name the agent makes
 * (agent_file_ours, no '/', NUL-terminated in its buffer) with a change time
 * whose nanoseconds are below a second, never more than AGENT_MANIFEST_MAX
 * of them; and the entries written again (agent_manifest_write) parse back
 * to exactly the same ones.
 *
 * Input: the manifest's bytes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_file *files, *again;
	size_t n, m, i, len = 0;
	char *text = NULL;
	FILE *f;
	int bad;

	bad = agent_manifest_parse((const char *)data, size, &files, &n);
	if (bad < 0) {
		if (files || n)
			abort();
		return 0;
	}
	if (n > AGENT_MANIFEST_MAX)
		abort();
	for (i = 0; i < n; i++) {
		size_t l = strnlen(files[i].name, sizeof(files[i].name));

		if (l == sizeof(files[i].name) || strchr(files[i].name, '/') ||
		    !agent_file_ours(files[i].name) || files[i].ctime_ns < 0 ||
		    files[i].ctime_ns >= 1000000000L || files[i].ctime_s < 0)
			abort();
	}
	f = open_memstream(&text, &len);
	if (!f || agent_manifest_write(f, files, n) || fclose(f))
		abort();
	if (agent_manifest_parse(text, len, &again, &m) != 0 || m != n ||
	    (n && memcmp(files, again, n * sizeof(*files))))
		abort();
	free(again);
	free(text);
	free(files);
	return 0;
}
