/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel symbols from /proc/kallsyms (--kernel): the text symbols sorted by
 * address, for naming the return addresses of kernel stacks.
 */
#ifndef PYBPFPROF_KSYMS_H
#define PYBPFPROF_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset in ksyms.names */
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

/*
 * Pure: reads kallsyms-format text ("ADDR TYPE NAME [MODULE]" lines) from f,
 * keeping text symbols (t, T, w, W) with a non-zero address, sorted. Lines
 * that do not parse are skipped; names are cut at 127 bytes. 0 or -ENOMEM.
 */
int ksyms__read(struct ksyms *k, FILE *f);
/* ksyms__read of /proc/kallsyms. 0, -errno, or 0 with no symbol (addresses hidden). */
int ksyms__load(struct ksyms *k);
/* The name of the symbol that holds addr, or NULL (before the first, or none loaded). */
const char *ksyms__find(const struct ksyms *k, uint64_t addr);
void ksyms__free(struct ksyms *k);

#endif
