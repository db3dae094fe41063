// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ELF reader on any file: symbols (.dynsym, .symtab), reads at a symbol's
 * address, the PY_VERSION literal in .rodata, DT_NEEDED, the load bias, and
 * the USDT notes (.note.stapsdt) both through elf_file__usdt_probes and
 * usdt_probes__read. The reader opens files by path, as it does a target's
 * /proc/PID/map_files entry, so the input is written to a memfd and opened
 * through /proc/self/fd.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "proc/elf_file.h"
#include "session/usdt.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("fuzz_elf: memfd_create");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void on_probe(const char *name, uint64_t semaphore, void *ctx)
{
	/* the name must be a string that ends inside the note */
	*(size_t *)ctx += strlen(name) + (semaphore & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "_PyRuntime", "PyCode_Type", "Py_Version",
					     "_Py_DebugOffsets" };
	struct usdt_probes pr;
	struct elf_file *ef;
	uint8_t buf[256];
	size_t i, sum = 0;
	uint64_t bias;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	ef = elf_file__open(path);
	if (!ef)
		return 0;
	elf_file__type(ef);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t vaddr, len;

		if (elf_file__symbol(ef, names[i], &vaddr, &len))
			continue;
		elf_file__read(ef, vaddr, buf, len < sizeof(buf) ? len : sizeof(buf));
		elf_file__read(ef, vaddr, buf, 8);
	}
	elf_file__read(ef, 0x400000, buf, sizeof(buf));
	elf_file__find_py_version(ef, 8 + size % 8);
	elf_file__needs(ef, "libpython3");
	elf_file__bias(ef, 0x7f0000000000, 0, &bias);
	elf_file__bias(ef, 0x7f0000001000, 0x1000, &bias);
	elf_file__usdt_probes(ef, "python", on_probe, &sum);
	elf_file__close(ef);
	usdt_probes__read(path, &pr);
	return 0;
}
