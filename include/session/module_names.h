/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The files of module bodies as BPF read them at their first sample
 * (struct py_module_record), per process: a module body's code object is
 * freed as soon as its import ends, often before userspace could read it,
 * and these names are what is left to name its frames by. Pure and bounded:
 * a target sends as many records as it likes.
 */
#ifndef PYBPFPROF_MODULE_NAMES_H
#define PYBPFPROF_MODULE_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "bpf_abi.h"
#include "util/hashmap.h"

/* Names kept per process; beyond, records are counted and forgotten. */
#define MODULE_NAMES_MAX 1024

struct module_name {
	int32_t firstlineno;
	char file[PY_MODULE_PATH]; /* NUL-terminated; the target's bytes, made safe where printed */
};

struct module_names {
	struct hashmap by_key; /* module_names__key(code, fingerprint) -> index in v */
	struct module_name *v;
	size_t n, cap;
	uint64_t refused; /* records beyond MODULE_NAMES_MAX, or without a file's text */
};

static inline uint64_t module_names__key(uint64_t code, uint32_t fingerprint)
{
	return code ^ ((uint64_t)fingerprint << 47);
}

void module_names__init(struct module_names *m);
void module_names__free(struct module_names *m);
/*
 * Keeps the name of record r (size bytes as received). 0; -EINVAL for a
 * record too short or not a module record, -ENOSPC when full (counted in
 * refused), -ENODATA when it has no text (counted), -ENOMEM.
 */
int module_names__add(struct module_names *m, const void *r, size_t size);
/* The name kept for the module body (code, fingerprint), or NULL. */
const struct module_name *module_names__find(const struct module_names *m, uint64_t code,
					     uint32_t fingerprint);
/* Bytes it holds, for the caches' budget. */
size_t module_names__bytes(const struct module_names *m);

#endif
