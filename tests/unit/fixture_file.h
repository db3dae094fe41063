/* SPDX-License-Identifier: GPL-2.0-only */
/* Reads a file the unit tests keep in the repository (run from its root). */
#ifndef PYBPFPROF_TEST_FIXTURE_FILE_H
#define PYBPFPROF_TEST_FIXTURE_FILE_H

#include <stdint.h>
#include <stdio.h>

/* Up to cap bytes of path into buf; the test fails if the file is missing. */
static inline size_t fixture_read(const char *path, uint8_t *buf, size_t cap)
{
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		fail_msg("missing %s (run the tests from the repository root)", path);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

#endif
