/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few pieces of the protobuf wire format the pprof and OTLP writers
 * need, encoded by hand: a growable buffer, varint, fixed64 and
 * length-delimited fields, embedded messages, and a string table that gives
 * each distinct string one index (index 0 the empty string, as both formats
 * require) and appends it to its own buffer as a repeated string field. An
 * allocation failure sets oom and later calls do nothing; the writer checks
 * oom once at the end.
 */
#ifndef PYBPFPROF_REPORT_PBUF_H
#define PYBPFPROF_REPORT_PBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/hashmap.h"

struct pbuf {
	uint8_t *d;
	size_t n, cap;
	bool oom;
};

void pb_put(struct pbuf *b, const void *data, size_t len);
void pb_varint(struct pbuf *b, uint64_t v);
void pb_uint(struct pbuf *b, unsigned field, uint64_t v);
void pb_fixed64(struct pbuf *b, unsigned field, uint64_t v);
void pb_bytes(struct pbuf *b, unsigned field, const void *data, size_t len);
/*
 * A string field: protobuf parsers refuse a message whose string is not
 * UTF-8, so s goes in as text_utf8_dup makes it (U+FFFD for what is not).
 */
void pb_string(struct pbuf *b, unsigned field, const char *s);
/* Appends sub as an embedded message and empties it for reuse. */
void pb_msg(struct pbuf *b, unsigned field, struct pbuf *sub);

struct pb_strtab {
	struct pbuf out;      /* the encoded string fields */
	unsigned field;	      /* their field number */
	struct hashmap index; /* string hash -> index */
	char **strs;
	size_t n, cap;
};

void pb_strtab__init(struct pb_strtab *t, unsigned field);
/*
 * The index of s as pb_string writes it (so two strings that differ only in
 * what is replaced share one), appending it on first sight; 0 (and out.oom)
 * on allocation failure.
 */
uint64_t pb_strtab__id(struct pb_strtab *t, const char *s);
void pb_strtab__free(struct pb_strtab *t);

#endif
