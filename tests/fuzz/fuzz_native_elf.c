// SPDX-License-Identifier: GPL-2.0-only
/*
 * --native's libdw path on any file a target maps: the input is the file.
 * It goes into a memfd, mapped here read-only and executable (never run),
 * and is reported as the unwinder's only module the way a target's mapping
 * is (native_unwinder__new_file: the same checks and libdw calls as
 * report_mapping: the guard checks it, libelf reads it with pread). Then a
 * few unwinds start in it, over a stack copy of
 * return addresses into it (libdw's call frame interpreter over its
 * .eh_frame/.debug_frame), and every pc found, and a few more, is named
 * (its symbol tables, .gnu_debugdata decompressed). The outcome may be
 * anything but a crash, a hang or a read outside the stack copy.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bpf_abi.h"
#include "proc/native_unwind_file.h"

/* Where the file goes when it cannot be mapped (an empty input). */
#define FALLBACK_BASE 0x7f0000000000ULL
#define STACK_WORDS 64
#define SWEEP_BYTES 4096
#define UNWIND_STEP 256
#define NAME_STEP 8

static int memfd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz_native_elf", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("fuzz_native_elf: memfd_create");
		abort();
	}
	return 0;
}

/* A word of the input at off (wrapping), 0 if there is none. */
static uint64_t word_at(const uint8_t *data, size_t size, size_t off)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; size && i < sizeof(v); i++)
		v |= (uint64_t)data[(off + i) % size] << (8 * i);
	return v;
}

/*
 * libdw is not instrumented: the fuzzer sees only our code's edges. So what
 * libdw made of an input (how many frames, what kind of name) is counted in
 * libFuzzer's extra counters, as features of their own: inputs libdw reads
 * differently are kept apart in the corpus.
 */
#define OUTCOMES 16
__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t outcomes[OUTCOMES];

static void feedback(unsigned what)
{
	outcomes[what % OUTCOMES]++;
}

static void name_pc(struct native_unwinder *u, uint64_t pc)
{
	char name[256], file[512];
	int rc;

	rc = native_unwinder__name(u, pc, name, sizeof(name), file, sizeof(file));
	if (strlen(name) >= sizeof(name) || strlen(file) >= sizeof(file))
		abort();
	/* no module, library+0xoffset, or a symbol (by its first letter) */
	feedback(rc ? 12 : strstr(name, "+0x") ? 13 : name[0] == 'h' ? 14 : 15);
}

/* An unwind from ip with a stack of return addresses into the file; each pc named. */
static void unwind_from(struct native_unwinder *u, uint64_t ip, const uint64_t *stack)
{
	uint64_t pcs[NATIVE_MAX_FRAMES];
	struct native_regs r = { 0 };
	bool complete = false;
	int n, i;

	r.ip = ip;
	r.sp = (uint64_t)(uintptr_t)stack;
	r.bp = r.sp + 16;
	n = native_unwinder__unwind(u, getpid(), &r, (const uint8_t *)stack,
				    STACK_WORDS * sizeof(*stack), pcs, NATIVE_MAX_FRAMES,
				    &complete);
	if (n < 0 || n > NATIVE_MAX_FRAMES)
		abort();
	feedback(n < 10 ? (unsigned)n : 10 + complete);
	for (i = 0; i < n; i++)
		name_pc(u, pcs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t stack[STACK_WORDS], base = FALLBACK_BASE, entry, span, sweep, off;
	struct native_unwinder *u;
	void *map = MAP_FAILED;
	size_t i;
	int fd;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	if (size)
		map = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, memfd, 0);
	if (map != MAP_FAILED)
		base = (uint64_t)(uintptr_t)map;
	fd = dup(memfd);
	if (fd < 0)
		abort();
	u = native_unwinder__new_file(fd, base, size);
	if (!u)
		abort();
	span = size ? size : 1;
	/* return addresses into the file, from its own bytes (so the fuzzer moves them) */
	for (i = 0; i < STACK_WORDS; i++)
		stack[i] = base + word_at(data, size, size - (i * 8 + 8) % span) % span;
	entry = word_at(data, size, 24); /* e_entry of an ELF64 header */
	unwind_from(u, base + entry % span, stack);
	/* a small library's code is in its first pages: unwinds from, and names of, pcs there */
	sweep = span < SWEEP_BYTES ? span : SWEEP_BYTES;
	for (off = 0; off < sweep; off += UNWIND_STEP)
		unwind_from(u, base + off + word_at(data, size, off) % UNWIND_STEP, stack);
	for (off = 0; off < sweep; off += NAME_STEP)
		name_pc(u, base + off);
	name_pc(u, base + span + 4096);
	native_unwinder__free(u);
	/* the module's descriptor is closed with it, whether libdw took the file or not */
	if (fcntl(fd, F_GETFD) != -1)
		abort();
	if (map != MAP_FAILED)
		munmap(map, size);
	return 0;
}
