// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/PID/maps parser on any text, the way pybpfprof reads it: whole
 * lines of any length from the file (maps_next, over an in-memory FILE
 * here), each parsed by maps_parse_line; and each line of the input given to
 * maps_parse_line directly. A path is either all there or, too long for
 * path[], absent with long_path set: never cut.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entry(const struct map_entry *e)
{
	if (strlen(e->path) >= sizeof(e->path) || (e->long_path && e->path[0]) || e->end < e->start)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct map_entry e;
	char *text = malloc(size + 1), *line, *nl, *buf = NULL;
	size_t cap = 0;
	FILE *f;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	f = fmemopen(text, size ? size : 1, "r");
	if (f) {
		while (maps_next(f, &buf, &cap, &e))
			check_entry(&e);
		fclose(f);
	}
	free(buf);
	for (line = text; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (!maps_parse_line(line, &e))
			check_entry(&e);
	}
	free(text);
	return 0;
}
