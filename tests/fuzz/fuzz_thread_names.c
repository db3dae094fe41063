// SPDX-License-Identifier: GPL-2.0-only
/*
 * The threading names read while sampling (cpython/py_thread_names.c,
 * py_thread_names) over random memory images: whatever the thread list,
 * the frames, the code objects, the Thread objects and threading's globals
 * say, the read ends, keeps every name NUL-terminated within its buffer,
 * and names only threads of the walk. threading's globals, as a caller
 * keeps them, are carried from one input to the next.
 *
 * Input: as fuzz_dump_threads' (its seeds serve here too): byte 0 picks the
 * version (3.8 + (n % 8)), the rest is the image (fuzz.h), _PyRuntime at
 * the first segment's address.
 */
#include "fuzz.h"
#include "cpython/py_objects.h"

#define THREADS 8
#define NVERSIONS 8

static struct py_layout layouts[NVERSIONS];
static const uint32_t versions[NVERSIONS] = { 0x030812F0, 0x030912F0, 0x030A0DF0, 0x030B00F0,
					      0x030C00F0, 0x030D00F0, 0x030E0AF0, 0x030F02F0 };
static struct py_thread_id ids[THREADS];
static struct cache_budget budget;
static uint64_t threading_globals;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_layouts(versions, NVERSIONS, layouts);
	cache_budget__init(&budget, 1 << 20);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct py_reader r;
	static struct target t;
	struct code_cache *cc;
	int n, i;

	if (!fake_target(data, size, versions, layouts, NVERSIONS, &t, &r))
		return 0;
	if (!(cc = code_cache__new(&budget)))
		abort();
	memset(ids, 0xa5, sizeof(ids));
	n = py_thread_names(&r, &t, cc, ids, THREADS, &threading_globals);
	if (n < 0 || n > THREADS)
		abort();
	for (i = 0; i < n; i++)
		if (strnlen(ids[i].name, sizeof(ids[i].name)) == sizeof(ids[i].name))
			abort();
	code_cache__free(cc);
	return 0;
}
