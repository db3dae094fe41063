// SPDX-License-Identifier: GPL-2.0-only
/*
 * --native's unwinder on any registers and stack bytes, the way it unwinds a
 * struct py_ustack: libdw's call frame interpreter over the real mappings of
 * this process (its own code, libc, libdw...) with the registers and the
 * stack copy the fuzzer chooses, then every frame named. The instruction
 * pointer mostly lands in this binary's code (where there is call frame
 * information to follow), sometimes anywhere. Nothing may be read outside
 * the copy, nor more frames given than asked for.
 *
 * Input: 8 little-endian u64 registers (ip, sp, bp, bx, r12-r15), then the
 * stack bytes (at most PY_USTACK_BYTES).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf_abi.h"
#include "proc/native_unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct native_unwinder *u;
	uint64_t all[NATIVE_MAX_FRAMES_ALL], sps[NATIVE_MAX_FRAMES_ALL], words[8];
	char name[256], file[4096];
	struct native_regs r;
	bool complete = false;
	uint8_t *stack;
	size_t len;
	int n, i, max;

	if (size < sizeof(words))
		return 0;
	/* the interpreter's code: none here, so an unwind goes on until it cannot */
	if (!u && !(u = native_unwinder__new(getpid(), 0, 0)))
		abort();
	memcpy(words, data, sizeof(words));
	/* bp's top bits: which are known (all, or ip and sp, or those and bp as dump --native) */
	r = (struct native_regs){ words[0], words[1], words[2],
				  words[3], words[4], words[5],
				  words[6], words[7], (uint8_t)(words[2] >> 62) % 3 };
	if (!(r.ip >> 63))
		r.ip = (uint64_t)(uintptr_t)LLVMFuzzerTestOneInput + r.ip % 65536;
	len = size - sizeof(words);
	len = len > PY_USTACK_BYTES ? PY_USTACK_BYTES : len;
	/* a copy of its own, so that a read past it is an ASan report */
	stack = malloc(len ? len : 1);
	if (!stack)
		return 0;
	memcpy(stack, data + sizeof(words), len);
	max = (int)(words[2] % (NATIVE_MAX_FRAMES + 2));
	/* half the time the whole stack, as --native does to place frames between Python's */
	if (words[4] & 1) {
		max = (int)(words[2] % (NATIVE_MAX_FRAMES_ALL + 2));
		n = native_unwinder__unwind_all(u, getpid(), &r, stack, len, all, sps, max);
	} else {
		n = native_unwinder__unwind(u, getpid(), &r, stack, len, all, max, &complete);
	}
	/* now and then a new Dwfl, as when a pc is in no module known */
	if (words[3] % 64 == 1)
		native_unwinder__refresh(u);
	if (n < 0 || n > NATIVE_MAX_FRAMES_ALL || (max > 0 && n > max))
		abort();
	for (i = 0; i < n; i++) {
		native_unwinder__name(u, all[i], name, sizeof(name), file, sizeof(file));
		if (strlen(name) >= sizeof(name) || strlen(file) >= sizeof(file))
			abort();
	}
	free(stack);
	return 0;
}
