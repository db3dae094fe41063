// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads code objects out of a target. The object is checked to be a code
 * object (ob_type == &PyCode_Type) before any of its fields are trusted, and
 * the strings and line table it points at are read with bounded sizes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "code_cache.h"
#include "linetable.h"
#include "remote_mem.h"
#include "text.h"

void code_cache__init(struct code_cache *cc)
{
	memset(cc, 0, sizeof(*cc));
}

static void code_info__free(struct code_info *ci)
{
	if (!ci)
		return;
	free(ci->qualname);
	free(ci->filename);
	free(ci->linetable);
	free(ci);
}

void code_cache__free(struct code_cache *cc)
{
	size_t i;

	for (i = 0; i < cc->by_addr.cap; i++)
		if (cc->by_addr.used[i])
			code_info__free((struct code_info *)(uintptr_t)cc->by_addr.vals[i]);
	hashmap__free(&cc->by_addr);
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
		state = (uint32_t)word_at(str, PY_STR_READ, (uint64_t)off->str_state - off->str_length);
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

int code_head_parse(const struct py_layout *L, const uint8_t *head, size_t len,
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

/* Reads the code object at addr now. Never NULL except on ENOMEM; ->ok tells success. */
static struct code_info *read_code(const struct py_target *t, uint64_t addr)
{
	const struct py_layout *L = &t->layout;
	const struct py_offsets *off = &L->bpf;
	struct code_info *ci = calloc(1, sizeof(*ci));
	char name[REMOTE_MAX_STR], file[REMOTE_MAX_STR];
	uint8_t head[PY_CODE_HEAD_READ], str[PY_STR_READ];
	struct code_head h;

	if (!ci)
		return NULL;
	if (L->code_read_size > sizeof(head) ||
	    remote_read(t->pid, addr, head, L->code_read_size) ||
	    code_head_parse(L, head, L->code_read_size, &h))
		return ci;
	if (t->code_type_addr && h.type != t->code_type_addr)
		return ci;
	ci->fingerprint = code_identity(off, h.code_id,
					remote_read(t->pid, h.qualname + off->str_length, str,
						    sizeof(str)) ? NULL : str);
	ci->firstlineno = h.firstlineno;
	if (remote_read_str(t->pid, L, h.qualname, name, sizeof(name)) ||
	    remote_read_str(t->pid, L, h.filename, file, sizeof(file)))
		return ci;
	/* A missing line table only costs line numbers, not the function name. */
	if (remote_read_bytes(t->pid, L, h.linetable, REMOTE_MAX_BYTES, &ci->linetable,
			      &ci->linetable_len))
		ci->linetable_len = 0;
	/*
	 * A qualname is an identifier unless the target forged it: no control
	 * character in it is worth keeping, and a newline could fake a report
	 * line. File names stay as they are, to be opened (reports escape them).
	 */
	text_sanitize(name);
	ci->qualname = strdup(name);
	ci->filename = strdup(file);
	ci->ok = ci->qualname && ci->filename;
	return ci;
}

const struct code_info *code_cache__get(struct code_cache *cc, const struct py_target *t,
					uint64_t addr, uint32_t fp)
{
	uint64_t *slot = hashmap__find(&cc->by_addr, addr);
	struct code_info *ci = slot ? (struct code_info *)(uintptr_t)*slot : NULL;

	if (ci && ci->ok && ci->fingerprint == fp)
		return ci;
	/* Unknown address, an earlier failure, or the address now holds another object. */
	ci = read_code(t, addr);
	cc->reads++;
	if (!ci)
		return NULL;
	if (slot)
		code_info__free((struct code_info *)(uintptr_t)*slot);
	if (hashmap__set(&cc->by_addr, addr, (uintptr_t)ci)) {
		code_info__free(ci);
		return NULL;
	}
	return ci->ok && ci->fingerprint == fp ? ci : NULL;
}

int code_info__line(const struct code_info *ci, const struct py_layout *L, int32_t instr)
{
	long offset = L->bpf.instr_kind == PY_INSTR_LASTI ? (long)instr * L->lasti_unit : instr;

	return linetable_line(L->linetable, ci->linetable, ci->linetable_len, ci->firstlineno,
			      offset);
}
