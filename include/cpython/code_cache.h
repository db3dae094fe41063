/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Code object -> (qualname, file, first line, decoded line table), read once
 * per (process, address) from the target's memory. Addresses get reused after
 * a code object is freed, so each entry keeps the fingerprint of the object it
 * was read from, and a lookup with another fingerprint reads again instead of
 * returning a stale name.
 *
 * Targets choose how many code objects they make and how big their line
 * tables are, so everything kept from them lives within one memory budget
 * (--max-cache-mb) shared by every target: entries are accounted in bytes and
 * the least recently used are evicted. An evicted entry is read again when a
 * sample needs it; if the object is gone by then, the frame is unresolved,
 * never named after whatever now lives at its address.
 */
#ifndef PYBPFPROF_CODE_CACHE_H
#define PYBPFPROF_CODE_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include "util/hashmap.h"
#include "cpython/linetable.h"
#include "cpython/target.h"

struct code_cache;

struct code_info {
	uint32_t fingerprint;
	int firstlineno; /* >= 1, or -1: unknown (the object said a line below 1) */
	char *qualname;
	char *filename;
	struct line_run *runs; /* the decoded line table; NULL: lines unknown */
	size_t nruns;
	/* budget bookkeeping */
	struct code_cache *owner;
	uint64_t addr;
	size_t bytes; /* everything this entry holds, as charged to the budget */
	struct code_info *newer, *older;
};

/*
 * Recently decoded line tables, by content: a target's code objects often
 * share one table (a flood of fresh code objects shares a 1 MiB one), and
 * reading it again costs little where decoding it again costs much. Keyed by
 * the target too, so that no process can pass its lines off as another's.
 * Each slot holds at most LINETABLE_RUNS_MAX runs: 2 MiB in all, not charged.
 */
#define TABLE_MEMO_SLOTS 16

struct table_memo {
	const struct code_cache *owner; /* NULL: empty slot */
	uint64_t hash;
	size_t len;
	int firstlineno;
	long nruns; /* -E2BIG: refused */
	struct line_run *runs;
};

/* One budget for every target's code cache and frame memo. */
struct cache_budget {
	size_t limit; /* bytes */
	size_t used;
	size_t peak;
	size_t memo_bytes;    /* the collector's raw-frame memos, part of used */
	uint64_t evicted;     /* code objects dropped to stay within the limit */
	uint64_t refused;     /* line tables not kept: too large, or decoding to too many runs */
	uint64_t memo_resets; /* raw-frame memos emptied to stay within their share */
	struct code_info *newest, *oldest;
	uint8_t *table;	       /* one line table being decoded (REMOTE_MAX_BYTES), not charged */
	struct line_run *runs; /* its runs before they are copied (LINETABLE_RUNS_MAX) */
	struct table_memo memo[TABLE_MEMO_SLOTS];
	unsigned memo_next; /* the slot replaced next */
	uint64_t memo_hits;
};

struct code_cache {
	struct hashmap by_addr; /* code address -> struct code_info * */
	struct cache_budget *budget;
	uint64_t reads; /* code objects read from the target */
};

void cache_budget__init(struct cache_budget *b, size_t limit_bytes);
void cache_budget__free(struct cache_budget *b);
/*
 * Charges (or with a negative delta releases) bytes held outside the code
 * caches, then evicts least recently used code objects until the budget
 * holds.
 */
void cache_budget__charge(struct cache_budget *b, long long delta);

/* NULL on ENOMEM. */
struct code_cache *code_cache__new(struct cache_budget *b);
void code_cache__free(struct code_cache *cc);

/*
 * The code object at addr as it was when the BPF program saw fingerprint fp,
 * or NULL when it cannot be read or is no longer the same object. Valid until
 * the next call on any code cache of the same budget.
 */
const struct code_info *code_cache__get(struct code_cache *cc, const struct target *t,
					uint64_t addr, uint32_t fp);

/*
 * The cached entry of the code object at addr with fingerprint fp, or NULL:
 * never reads, and never drops the entry of another object at addr (which
 * code_cache__get does, to read the address again).
 */
const struct code_info *code_cache__peek(struct code_cache *cc, uint64_t addr, uint32_t fp);

/*
 * Pure: the fingerprint of a code object from the bytes BPF reads too:
 * code_id holds off->code_id_size bytes at code + off->code_id_start, str
 * PY_STR_READ bytes at qualname + off->str_length (str NULL if unreadable).
 * A field placed outside those bytes reads as 0, as in BPF, never outside.
 */
uint32_t code_identity(const struct py_offsets *off, const uint8_t *code_id, const uint8_t *str);

/* What userspace takes from the head of a code object. */
struct code_head {
	uint64_t type, filename, qualname, linetable; /* pointers in the target */
	int firstlineno;	/* >= 1, or -1: the object says a line below 1 */
	const uint8_t *code_id; /* the identity prefix, inside head */
};

/*
 * Pure: the fields of a code object from its first len bytes (head), where
 * L places them. 0, or -EINVAL when a field or the identity prefix does not
 * lie inside those bytes (never a read outside them).
 */
int code_head__parse(const struct py_layout *L, const uint8_t *head, size_t len,
		     struct code_head *out);

/* Source line for a frame position as recorded by BPF (struct py_frame.instr); -1 if unknown. */
int code_info__line(const struct code_info *ci, const struct py_layout *L, int32_t instr);

#endif
