// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /proc/PID/maps line parser on any text: each line of the input in
 * turn, as find_mapping() and explain_not_cpython() hand them over.
 */
#include <stdlib.h>
#include <string.h>
#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct map_entry e;
	char *text = malloc(size + 1), *line, *nl;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = text; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (!maps_parse_line(line, &e) && strlen(e.path) >= sizeof(e.path))
			abort();
	}
	free(text);
	return 0;
}
