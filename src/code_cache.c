// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads code objects out of a target. The object is checked to be a code
 * object (ob_type == &PyCode_Type) before any of its fields are trusted, and
 * the strings and line table it points at are read with bounded sizes.
 */
#include <stdlib.h>
#include <string.h>
#include "code_cache.h"
#include "linetable.h"
#include "remote_mem.h"
#include "text.h"

#define CODE_HEAD_MAX 256

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

static uint64_t field_ptr(const uint8_t *head, uint16_t off)
{
	uint64_t v;

	memcpy(&v, head + off, sizeof(v));
	return v;
}

uint32_t code_identity(const struct py_offsets *off, const uint8_t *code_id, const uint8_t *str)
{
	__u64 ptrs[4], text[PY_NAME_TEXT / 8] = {}, len = 0;
	uint32_t state = 0, text_len = 0;
	int32_t firstline;

	ptrs[0] = field_ptr(code_id, off->code_filename - off->code_id_start);
	ptrs[1] = field_ptr(code_id, off->code_name - off->code_id_start);
	ptrs[2] = field_ptr(code_id, off->code_qualname - off->code_id_start);
	ptrs[3] = field_ptr(code_id, off->code_linetable - off->code_id_start);
	memcpy(&firstline, code_id + off->code_firstlineno - off->code_id_start, sizeof(firstline));
	if (str) {
		memcpy(&len, str, sizeof(len));
		memcpy(&state, str + off->str_state - off->str_length, sizeof(state));
		/* only compact ASCII text sits at a fixed place (bits: ascii 6, compact 5) */
		if ((state & 0x60) == 0x60) {
			memcpy(text, str + off->str_ascii_data - off->str_length, sizeof(text));
			text_len = len < PY_NAME_TEXT ? len : PY_NAME_TEXT;
		}
	}
	return py_code_fingerprint(ptrs, firstline, text, text_len);
}

/* Reads the code object at addr now. Never NULL except on ENOMEM; ->ok tells success. */
static struct code_info *read_code(const struct py_target *t, uint64_t addr)
{
	const struct py_layout *L = &t->layout;
	const struct py_offsets *off = &L->bpf;
	struct code_info *ci = calloc(1, sizeof(*ci));
	char name[REMOTE_MAX_STR], file[REMOTE_MAX_STR];
	uint8_t head[CODE_HEAD_MAX], str[PY_STR_READ];
	int32_t firstline;
	uint64_t qual;

	if (!ci)
		return NULL;
	if (L->code_read_size > sizeof(head) ||
	    remote_read(t->pid, addr, head, L->code_read_size))
		return ci;
	if (t->code_type_addr && field_ptr(head, L->ob_type) != t->code_type_addr)
		return ci;
	qual = field_ptr(head, off->code_qualname);
	ci->fingerprint = code_identity(off, head + off->code_id_start,
					remote_read(t->pid, qual + off->str_length, str,
						    sizeof(str)) ? NULL : str);
	memcpy(&firstline, head + off->code_firstlineno, sizeof(firstline));
	ci->firstlineno = firstline;
	if (remote_read_str(t->pid, L, qual, name, sizeof(name)) ||
	    remote_read_str(t->pid, L, field_ptr(head, off->code_filename), file, sizeof(file)))
		return ci;
	/* A missing line table only costs line numbers, not the function name. */
	if (remote_read_bytes(t->pid, L, field_ptr(head, off->code_linetable), REMOTE_MAX_BYTES,
			      &ci->linetable, &ci->linetable_len))
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
