// SPDX-License-Identifier: GPL-2.0-only
/*
 * dump's walk of the thread states (cpython/py_threads.c, py_dump_threads)
 * over random memory images: whatever the lists say (a thread list that
 * loops back to its head or into its middle, an interpreter list that loops,
 * frames that point anywhere), the walk ends, reads each thread state once
 * and keeps every count within its bound.
 *
 * Input: as fuzz_async's (its seeds serve here too): byte 0 picks the
 * version (3.11 + (n % 5)), the rest is the image (fuzz.h), _PyRuntime at
 * the first segment's address.
 */
#include "fuzz.h"
#include "cpython/py_objects.h"

#define THREADS 8

static struct py_layout layouts[5];
static const uint32_t versions[5] = { 0x030B00F0, 0x030C00F0, 0x030D00F0, 0x030E0AF0, 0x030F02F0 };
static struct py_dump_thread threads[THREADS];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_layouts(versions, 5, layouts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct py_reader r;
	static struct target t;
	struct py_dump_state st;
	int n, i, j;

	if (!fake_target(data, size, versions, layouts, 5, &t, &r))
		return 0;
	n = py_dump_threads(&r, &t, threads, THREADS, &st);
	if (n < 0 || n > THREADS)
		abort();
	for (i = 0; i < n; i++) {
		if (threads[i].nframes > PY_DUMP_DEPTH)
			abort();
		for (j = 0; j < i; j++)
			if (threads[j].tstate == threads[i].tstate)
				abort(); /* a thread state read twice: the list looped */
	}
	return 0;
}
