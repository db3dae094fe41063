// SPDX-License-Identifier: GPL-2.0-only
/* The protobuf wire format's few pieces the pprof and OTLP writers share. */
#include <stdlib.h>
#include <string.h>
#include "util/text.h"
#include "util/vec.h"
#include "report_pbuf.h"

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

void pb_put(struct pbuf *b, const void *data, size_t len)
{
	size_t ncap;
	void *nd;

	if (b->oom || !len)
		return;
	if (b->n + len > b->cap) {
		for (ncap = b->cap ? b->cap : 256; ncap < b->n + len;)
			ncap *= 2;
		nd = realloc(b->d, ncap);
		if (!nd) {
			b->oom = true;
			return;
		}
		b->d = nd;
		b->cap = ncap;
	}
	memcpy(b->d + b->n, data, len);
	b->n += len;
}

void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_put(b, tmp, n);
}

void pb_uint(struct pbuf *b, unsigned field, uint64_t v)
{
	pb_varint(b, field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

void pb_fixed64(struct pbuf *b, unsigned field, uint64_t v)
{
	uint8_t le[8];
	int i;

	for (i = 0; i < 8; i++)
		le[i] = v >> (8 * i);
	pb_varint(b, field << 3 | WIRE_I64);
	pb_put(b, le, 8);
}

void pb_bytes(struct pbuf *b, unsigned field, const void *data, size_t len)
{
	pb_varint(b, field << 3 | WIRE_LEN);
	pb_varint(b, len);
	pb_put(b, data, len);
}

void pb_string(struct pbuf *b, unsigned field, const char *s)
{
	char *u = text_utf8_dup(s);

	if (!u) {
		b->oom = true;
		return;
	}
	pb_bytes(b, field, u, strlen(u));
	free(u);
}

void pb_msg(struct pbuf *b, unsigned field, struct pbuf *sub)
{
	b->oom |= sub->oom;
	pb_bytes(b, field, sub->d, sub->n);
	sub->n = 0;
}

void pb_strtab__init(struct pb_strtab *t, unsigned field)
{
	memset(t, 0, sizeof(*t));
	t->field = field;
	hashmap__init(&t->index);
}

uint64_t pb_strtab__id(struct pb_strtab *t, const char *raw)
{
	char *s = text_utf8_dup(raw);
	uint64_t h, *slot, id;

	if (!s) {
		t->out.oom = true;
		return 0;
	}
	h = hash_bytes(s, strlen(s), 0x5bd1e995);
	/* Linear probing over hashes: a colliding string takes the next free one. */
	for (;; h++) {
		slot = hashmap__find(&t->index, h);
		if (!slot)
			break;
		if (!strcmp(t->strs[*slot], s)) {
			id = *slot;
			free(s);
			return id;
		}
	}
	if (vec_grow((void **)&t->strs, &t->cap, t->n + 1, sizeof(*t->strs)) ||
	    hashmap__set(&t->index, h, t->n)) {
		free(s);
		t->out.oom = true;
		return 0;
	}
	t->strs[t->n] = s;
	pb_bytes(&t->out, t->field, s, strlen(s));
	return t->n++;
}

void pb_strtab__free(struct pb_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->out.d);
	hashmap__free(&t->index);
}
