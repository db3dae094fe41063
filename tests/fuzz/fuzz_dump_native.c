// SPDX-License-Identifier: GPL-2.0-only
/*
 * dump --native's placing of native frames among Python frames
 * (src/dump/dump_native.c) and --subprocesses' walk of a process tree
 * (src/proc/procfs.c), over what a target makes of them: the kinds of the
 * frames its stack unwinds to, which Python frames it says began an eval
 * call, parent pids that loop or repeat. Every native frame is placed
 * before an existing Python frame or left out, in order; every descendant
 * is found once, never the root.
 *
 * Input: byte 0, the Python frames (0-255); byte 1, flags (bit 0: the
 * Python stack was cut short; bit 1: no entries known); 16 bytes of entry
 * bits; then, up to a 0xff byte, one byte per native frame (its kind, mod
 * 3); then pairs of little-endian u16 (pid, parent), the root being the
 * first pid.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dump/dump.h"
#include "proc/procfs.h"
#include "session/native_merge.h"

#define MAX_NATIVE 512
#define MAX_LINKS 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void place(const uint8_t *data, size_t size, size_t *used)
{
	uint8_t kinds[MAX_NATIVE];
	int32_t at[MAX_NATIVE], last = 0;
	uint64_t entries[2];
	uint32_t n = 0, npy = data[0], placed, i;
	enum dump_native_status st;

	memcpy(entries, data + 2, sizeof(entries));
	for (*used = 18; *used < size && data[*used] != 0xff && n < MAX_NATIVE; (*used)++)
		kinds[n++] = data[*used] % 3;
	st = dump_native_place(kinds, n, npy, (data[1] & 2) ? NULL : entries, 128, data[1] & 1, at,
			       &placed);
	if (st != DUMP_NATIVE_PLACED && st != DUMP_NATIVE_PARTIAL && st != DUMP_NATIVE_BELOW &&
	    !(st == DUMP_NATIVE_WHOLE && !npy))
		abort();
	if (placed > npy || (st == DUMP_NATIVE_BELOW && placed))
		abort();
	for (i = 0; i < n; i++) {
		if (at[i] < -1 || (at[i] >= 0 && ((uint32_t)at[i] >= npy + !npy || at[i] < last)))
			abort();
		/* an eval call stands for Python frames: never shown among them */
		if (at[i] >= 0 && kinds[i] == NATIVE_PC_EVAL && npy)
			abort();
		if (at[i] >= 0)
			last = at[i];
	}
}

static void tree(const uint8_t *data, size_t size)
{
	struct proc_parent links[MAX_LINKS];
	pid_t out[64], root;
	size_t n = 0, found, i, j;

	for (; size >= 4 && n < MAX_LINKS; data += 4, size -= 4)
		links[n++] = (struct proc_parent){ data[0] | data[1] << 8, data[2] | data[3] << 8 };
	if (!n)
		return;
	root = links[0].pid;
	found = proc_descendants_of(links, n, root, out, 64);
	if (found > n)
		abort();
	for (i = 0; i < found && i < 64; i++) {
		if (out[i] == root || out[i] <= 0)
			abort();
		for (j = 0; j < i; j++)
			if (out[j] == out[i])
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used = 0;

	if (size < 18)
		return 0;
	place(data, size, &used);
	if (used < size)
		tree(data + used + 1, size - used - 1);
	return 0;
}
