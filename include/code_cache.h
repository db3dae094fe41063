/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Code object -> (qualname, file, first line, line table), read once per
 * (process, address) from the target's memory. Addresses get reused after a
 * code object is freed, so each entry keeps the fingerprint of the object it
 * was read from, and a lookup with another fingerprint reads again instead of
 * returning a stale name.
 */
#ifndef PYBPFPROF_CODE_CACHE_H
#define PYBPFPROF_CODE_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include "hashmap.h"
#include "proc.h"

struct code_info {
	uint32_t fingerprint;
	bool ok;		/* false: the address did not hold a readable code object */
	int firstlineno;	/* >= 1, or -1: unknown (the object said a line below 1) */
	char *qualname;
	char *filename;
	uint8_t *linetable;
	size_t linetable_len;
};

struct code_cache {
	struct hashmap by_addr;	/* code address -> struct code_info * */
	uint64_t reads;		/* code objects read from the target */
};

void code_cache__init(struct code_cache *cc);
void code_cache__free(struct code_cache *cc);

/*
 * The code object at addr as it was when the BPF program saw fingerprint fp,
 * or NULL when it cannot be read or is no longer the same object.
 */
const struct code_info *code_cache__get(struct code_cache *cc, const struct py_target *t,
					uint64_t addr, uint32_t fp);

/*
 * Pure: the fingerprint of a code object from the bytes BPF reads too:
 * code_id holds off->code_id_size bytes at code + off->code_id_start, str
 * PY_STR_READ bytes at qualname + off->str_length (str NULL if unreadable).
 * A field placed outside those bytes reads as 0, as in BPF, never outside.
 */
uint32_t code_identity(const struct py_offsets *off, const uint8_t *code_id, const uint8_t *str);

/* What userspace takes from the head of a code object. */
struct code_head {
	uint64_t type, filename, qualname, linetable;	/* pointers in the target */
	int firstlineno;		/* >= 1, or -1: the object says a line below 1 */
	const uint8_t *code_id;		/* the identity prefix, inside head */
};

/*
 * Pure: the fields of a code object from its first len bytes (head), where
 * L places them. 0, or -EINVAL when a field or the identity prefix does not
 * lie inside those bytes (never a read outside them).
 */
int code_head_parse(const struct py_layout *L, const uint8_t *head, size_t len,
		    struct code_head *out);

/* Source line for a frame position as recorded by BPF (struct py_frame.instr); -1 if unknown. */
int code_info__line(const struct code_info *ci, const struct py_layout *L, int32_t instr);

#endif
