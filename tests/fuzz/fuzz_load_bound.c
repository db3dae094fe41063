// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved-profile loader's memory bound (issue 28, point 6): jansson's
 * tree of values took 80 times a crafted file's size before any check. On
 * any bytes, report_load_json_buf must hold at most REPORT_LOAD_PEAK(size)
 * at once: every allocation and free it makes is counted through the
 * sanitizer's allocator hooks (sizes as asked for), and a peak above the
 * bound aborts, with the figures, as a crash the fuzzer keeps.
 */
#include <sanitizer/allocator_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include "saved/report_load.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int counting;
static long long live, peak;

static void on_malloc(const volatile void *ptr, size_t size)
{
	(void)ptr;
	if (!counting)
		return;
	live += (long long)size;
	if (live > peak)
		peak = live;
}

/* Called before the block goes: its size is still known. */
static void on_free(const volatile void *ptr)
{
	if (counting && ptr)
		live -= (long long)__sanitizer_get_allocated_size(ptr);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char why[512];
	int err;

	live = peak = 0;
	counting = 1;
	err = report_load_json_buf((const char *)data, size, "fuzz.json", &p, why, sizeof(why));
	counting = 0;
	if (getenv("FUZZ_LOAD_BOUND_SHOW")) /* the figures of each input, for a look at the margin */
		fprintf(stderr, "%zu bytes: peak %lld (%.1f per byte)%s\n", size, peak,
			size ? (double)peak / size : 0.0, err ? "" : ", loaded");
	if (peak > 0 && (size_t)peak > REPORT_LOAD_PEAK(size)) {
		fprintf(stderr,
			"loader held %lld bytes at once for %zu bytes of input (bound %zu): %s\n",
			peak, size, REPORT_LOAD_PEAK(size), err ? why : "loaded");
		abort();
	}
	if (!err)
		profile__free(&p);
	return 0;
}
