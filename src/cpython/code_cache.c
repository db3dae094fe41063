// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads code objects out of a target. The object is checked to be a code
 * object (ob_type == &PyCode_Type) before any of its fields are trusted, and
 * the strings and line table it points at are read with bounded sizes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cpython/code_cache.h"
#include "cpython/linetable.h"
#include "remote_mem.h"
#include "util/text.h"

/*
 * What an entry costs beyond the bytes it holds: its two hash slots at the
 * map's worst load, and the allocator's headers of its four blocks.
 */
#define ENTRY_OVERHEAD (2 * (8 + 8 + 1) + 4 * 16)

void cache_budget__init(struct cache_budget *b, size_t limit_bytes)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit_bytes;
}

void cache_budget__free(struct cache_budget *b)
{
	size_t i;

	for (i = 0; i < TABLE_MEMO_SLOTS; i++)
		free(b->memo[i].runs);
	free(b->table);
	free(b->runs);
	b->table = NULL;
	b->runs = NULL;
}

static void unlink_entry(struct cache_budget *b, struct code_info *ci)
{
	if (ci->newer)
		ci->newer->older = ci->older;
	else
		b->newest = ci->older;
	if (ci->older)
		ci->older->newer = ci->newer;
	else
		b->oldest = ci->newer;
	ci->newer = ci->older = NULL;
}

static void link_newest(struct cache_budget *b, struct code_info *ci)
{
	ci->older = b->newest;
	ci->newer = NULL;
	if (b->newest)
		b->newest->newer = ci;
	b->newest = ci;
	if (!b->oldest)
		b->oldest = ci;
}

static void code_info__free(struct code_info *ci)
{
	if (!ci)
		return;
	free(ci->qualname);
	free(ci->filename);
	free(ci->runs);
	free(ci);
}

static void add_used(struct cache_budget *b, long long delta)
{
	b->used += delta;
}

/* Removes an entry from its cache and the budget, and frees it. */
static void drop_entry(struct code_info *ci)
{
	struct cache_budget *b = ci->owner->budget;

	hashmap__del(&ci->owner->by_addr, ci->addr);
	unlink_entry(b, ci);
	add_used(b, -(long long)ci->bytes);
	code_info__free(ci);
}

/*
 * Evicts the least recently used entries, never keep, until the budget
 * holds; the peak is what was held after that.
 */
static void trim(struct cache_budget *b, const struct code_info *keep)
{
	while (b->used > b->limit && b->oldest && b->oldest != keep) {
		drop_entry(b->oldest);
		b->evicted++;
	}
	if (b->used > b->peak)
		b->peak = b->used;
}

void cache_budget__charge(struct cache_budget *b, long long delta)
{
	add_used(b, delta);
	trim(b, NULL);
}

struct code_cache *code_cache__new(struct cache_budget *b)
{
	struct code_cache *cc = calloc(1, sizeof(*cc));

	if (cc)
		cc->budget = b;
	return cc;
}

void code_cache__free(struct code_cache *cc)
{
	size_t i;

	if (!cc)
		return;
	for (i = 0; i < cc->by_addr.cap; i++)
		if (cc->by_addr.used[i]) {
			struct code_info *ci = (struct code_info *)(uintptr_t)cc->by_addr.vals[i];

			unlink_entry(cc->budget, ci);
			add_used(cc->budget, -(long long)ci->bytes);
			code_info__free(ci);
		}
	add_used(cc->budget, -(long long)hashmap__bytes(&cc->by_addr));
	hashmap__free(&cc->by_addr);
	free(cc);
}

/* off + width <= len, whatever off is: no addition that can wrap. */
static bool inside(uint64_t off, uint64_t width, size_t len)
{
	return off <= len && width <= len - off;
}

/*
 * The word at off of a buffer of len bytes; 0 (no object) where it does not
 * lie inside, as BPF's load_u64 does. Offsets are computed in 64 bits, so a
 * field below a prefix's start wraps to a huge offset, and reads as 0.
 */
static uint64_t word_at(const uint8_t *buf, size_t len, uint64_t off)
{
	uint64_t v;

	if (!inside(off, sizeof(v), len))
		return 0;
	memcpy(&v, buf + off, sizeof(v));
	return v;
}

uint32_t code_identity(const struct py_offsets *off, const uint8_t *code_id, const uint8_t *str)
{
	size_t id_len = off->code_id_size < PY_CODE_ID_READ ? off->code_id_size : PY_CODE_ID_READ;
	uint64_t start = off->code_id_start, t, len;
	__u64 ptrs[4], text[PY_NAME_TEXT / 8] = {};
	uint32_t state, text_len = 0;
	int32_t firstline;
	int i;

	ptrs[0] = word_at(code_id, id_len, off->code_filename - start);
	ptrs[1] = word_at(code_id, id_len, off->code_name - start);
	ptrs[2] = word_at(code_id, id_len, off->code_qualname - start);
	ptrs[3] = word_at(code_id, id_len, off->code_linetable - start);
	/* co_firstlineno is an int: the low half of the little-endian word BPF reads there */
	firstline = (int32_t)word_at(code_id, id_len, off->code_firstlineno - start);
	if (str) {
		len = word_at(str, PY_STR_READ, 0);
		state = (uint32_t)word_at(str, PY_STR_READ,
					  (uint64_t)off->str_state - off->str_length);
		/* 3.14t: the state's interned flag is a byte, the other bits follow it */
		state >>= off->str_state_shift & 31;
		/* only compact ASCII text sits at a fixed place (bits: ascii 6, compact 5) */
		if ((state & 0x60) == 0x60) {
			t = (uint64_t)off->str_ascii_data - off->str_length;
			for (i = 0; i < PY_NAME_TEXT / 8; i++)
				text[i] = word_at(str, PY_STR_READ, t + 8 * i);
			text_len = len < PY_NAME_TEXT ? len : PY_NAME_TEXT;
		}
	}
	return py_code_fingerprint(ptrs, firstline, text, text_len);
}

int code_head__parse(const struct py_layout *L, const uint8_t *head, size_t len,
		     struct code_head *out)
{
	const struct py_offsets *off = &L->bpf;
	int32_t firstline;

	memset(out, 0, sizeof(*out));
	if (!inside(off->code_id_start, off->code_id_size, len) ||
	    off->code_id_size > PY_CODE_ID_READ || !inside(L->ob_type, 8, len) ||
	    !inside(off->code_filename, 8, len) || !inside(off->code_qualname, 8, len) ||
	    !inside(off->code_linetable, 8, len) || !inside(off->code_firstlineno, 4, len))
		return -EINVAL;
	out->type = word_at(head, len, L->ob_type);
	out->filename = word_at(head, len, off->code_filename);
	out->qualname = word_at(head, len, off->code_qualname);
	out->linetable = word_at(head, len, off->code_linetable);
	memcpy(&firstline, head + off->code_firstlineno, sizeof(firstline));
	/* Lines start at 1: anything below is the target's invention, so unknown. */
	out->firstlineno = firstline >= 1 ? firstline : -1;
	out->code_id = head + off->code_id_start;
	return 0;
}

/* 64-bit hash of a table, a word at a time: a 1 MiB table in about 0.1 ms. */
static uint64_t table_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return hash_u64(h);
}

/* Decodes b->table[0, len) into b->runs, or finds it decoded already. Runs or -E2BIG. */
static long decode_table(struct cache_budget *b, const struct code_cache *cc,
			 enum linetable_kind kind, size_t len, int firstlineno)
{
	uint64_t h = table_hash(b->table, len);
	struct table_memo *m;
	struct line_run *copy;
	size_t i;
	long n;

	/* the kind is the same for every table of one target: its cache stands for it */
	for (i = 0; i < TABLE_MEMO_SLOTS; i++) {
		m = &b->memo[i];
		if (m->owner == cc && m->hash == h && m->len == len &&
		    m->firstlineno == firstlineno) {
			b->memo_hits++;
			if (m->nruns > 0)
				memcpy(b->runs, m->runs, m->nruns * sizeof(*m->runs));
			return m->nruns;
		}
	}
	/* an instruction without a line is charged to the line before it (linetable.h) */
	n = linetable_decode_carried(kind, b->table, len, firstlineno, b->runs, LINETABLE_RUNS_MAX);
	copy = n > 0 ? malloc(n * sizeof(*copy)) : NULL;
	if (n > 0 && !copy)
		return n;
	if (copy)
		memcpy(copy, b->runs, n * sizeof(*copy));
	m = &b->memo[b->memo_next++ % TABLE_MEMO_SLOTS];
	free(m->runs);
	*m = (struct table_memo){ .owner = cc,
				  .hash = h,
				  .len = len,
				  .firstlineno = firstlineno,
				  .nruns = n,
				  .runs = copy };
	return n;
}

/*
 * Decodes the line table of a code object (a bytes object at addr) into
 * ci->runs. Only the runs are kept, never the table: the table is read into
 * the budget's one buffer. A table larger than REMOTE_MAX_BYTES, or that
 * decodes to more than LINETABLE_RUNS_MAX runs, is refused: the function
 * keeps its name, its lines are unknown. An unreadable table decodes as an
 * empty one, as it always did.
 */
static void read_lines(struct code_cache *cc, const struct target *t, uint64_t addr,
		       struct code_info *ci)
{
	struct cache_budget *b = cc->budget;
	const struct py_layout *L = &t->layout;
	int64_t size = 0; /* filled by remote_read; set for static analysers */
	size_t len = 0;
	long n;

	if (!b->table)
		b->table = malloc(REMOTE_MAX_BYTES);
	if (!b->runs)
		b->runs = calloc(LINETABLE_RUNS_MAX, sizeof(*b->runs));
	if (!b->table || !b->runs)
		return;
	if (!remote_read(t->pid, addr + L->bytes_size, &size, sizeof(size))) {
		if (size < 0 || (uint64_t)size > REMOTE_MAX_BYTES) {
			b->refused++;
			return;
		}
		if (!remote_read(t->pid, addr + L->bytes_data, b->table, size))
			len = size;
	}
	n = decode_table(b, cc, L->linetable, len, ci->firstlineno);
	if (n < 0) {
		b->refused++;
		return;
	}
	ci->runs = malloc(n * sizeof(*ci->runs));
	if (!ci->runs)
		return;
	memcpy(ci->runs, b->runs, n * sizeof(*ci->runs));
	ci->nruns = n;
}

/* Reads the code object at addr now. NULL if it cannot be read (or on ENOMEM). */
static struct code_info *read_code(struct code_cache *cc, const struct target *t, uint64_t addr)
{
	const struct py_layout *L = &t->layout;
	const struct py_offsets *off = &L->bpf;
	struct code_info *ci;
	char name[REMOTE_MAX_STR], file[REMOTE_MAX_STR];
	uint8_t head[PY_CODE_HEAD_READ], str[PY_STR_READ];
	struct code_head h;

	if (L->code_read_size > sizeof(head) ||
	    remote_read(t->pid, addr, head, L->code_read_size) ||
	    code_head__parse(L, head, L->code_read_size, &h))
		return NULL;
	if (t->code_type_addr && h.type != t->code_type_addr)
		return NULL;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->fingerprint = code_identity(off, h.code_id,
					remote_read(t->pid, h.qualname + off->str_length, str,
						    sizeof(str)) ?
						NULL :
						str);
	ci->firstlineno = h.firstlineno;
	if (remote_read_str(t->pid, L, h.qualname, name, sizeof(name)) ||
	    remote_read_str(t->pid, L, h.filename, file, sizeof(file))) {
		free(ci);
		return NULL;
	}
	/* A missing line table only costs line numbers, not the function name. */
	read_lines(cc, t, h.linetable, ci);
	/*
	 * A qualname is an identifier unless the target forged it: no control
	 * character in it is worth keeping, and a newline could fake a report
	 * line. File names stay as they are, to be opened (reports escape them).
	 */
	text_sanitize(name);
	ci->qualname = strdup(name);
	ci->filename = strdup(file);
	if (!ci->qualname || !ci->filename) {
		code_info__free(ci);
		return NULL;
	}
	ci->owner = cc;
	ci->addr = addr;
	ci->bytes = sizeof(*ci) + strlen(name) + strlen(file) + 2 + ci->nruns * sizeof(*ci->runs) +
		    ENTRY_OVERHEAD;
	return ci;
}

const struct code_info *code_cache__peek(struct code_cache *cc, uint64_t addr, uint32_t fp)
{
	uint64_t *slot = hashmap__find(&cc->by_addr, addr);
	struct code_info *ci = slot ? (struct code_info *)(uintptr_t)*slot : NULL;

	return ci && ci->fingerprint == fp ? ci : NULL;
}

const struct code_info *code_cache__get(struct code_cache *cc, const struct target *t,
					uint64_t addr, uint32_t fp)
{
	struct cache_budget *b = cc->budget;
	uint64_t *slot = hashmap__find(&cc->by_addr, addr);
	struct code_info *ci = slot ? (struct code_info *)(uintptr_t)*slot : NULL;
	size_t map_bytes;

	if (ci && ci->fingerprint == fp) {
		unlink_entry(b, ci);
		link_newest(b, ci);
		return ci;
	}
	/* The address now holds another object: its old entry names nothing any more. */
	if (ci)
		drop_entry(ci);
	/* Unknown address, or evicted, or another object: read it now. */
	ci = read_code(cc, t, addr);
	cc->reads++;
	if (!ci)
		return NULL;
	map_bytes = hashmap__bytes(&cc->by_addr);
	if (hashmap__set(&cc->by_addr, addr, (uintptr_t)ci)) {
		code_info__free(ci);
		return NULL;
	}
	link_newest(b, ci);
	add_used(b, (long long)(hashmap__bytes(&cc->by_addr) - map_bytes) + (long long)ci->bytes);
	trim(b, ci);
	return ci->fingerprint == fp ? ci : NULL;
}

int code_info__line(const struct code_info *ci, const struct py_layout *L, int32_t instr)
{
	long offset = L->bpf.instr_kind == PY_INSTR_LASTI ? (long)instr * L->lasti_unit : instr;

	if (!ci->runs)
		return offset < 0 ? ci->firstlineno : -1;
	return linetable_runs_line(ci->runs, ci->nruns, ci->firstlineno, offset);
}
