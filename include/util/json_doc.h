/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A JSON text read whole into one array of 16-byte values: how the
 * saved-profile loader reads a file anyone may hand in. A tree of values
 * allocated one by one (jansson's) costs 30 to 250 bytes per value, so a
 * crafted 32 MiB file of empty objects took 2.6 GB; here a value costs 16
 * bytes and every value takes at least 2 bytes of text, so a document never
 * holds more than 8 times its text's size in values, plus its strings
 * (never longer than in the text). The text is read twice: the first pass
 * checks it and counts what it holds, so that the memory it needs is known,
 * and can be refused, before any is taken; the second fills the array in.
 *
 * Values are read through const struct jval pointers; NULL stands for a
 * value that is not there (a missing key, an index past the end) and every
 * accessor takes it, so that a chain of lookups needs one check at its end.
 */
#ifndef PYBPFPROF_JSON_DOC_H
#define PYBPFPROF_JSON_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deeper than any pybpfprof file nests (7 levels), shallow enough to be no cost. */
#define JDOC_MAX_DEPTH 128

enum jval_type { JV_NULL, JV_FALSE, JV_TRUE, JV_INT, JV_REAL, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jval {
	uint8_t type;
	uint32_t n; /* entries of an array, members of an object, bytes of a string */
	union {
		long long i;
		double d;
		const char *s;	/* NUL-terminated; may hold a NUL of its own (\u0000) */
		uint64_t first; /* a container's entries begin at this + first; an object's
				 * as key, value, key, value... */
	} u;
};

struct jdoc {
	struct jval *vals; /* vals[0] is the text's value */
	char *strs;
	size_t nvals;
	size_t bytes; /* the memory it holds */
};

struct jdoc_error {
	char text[96];
	size_t line, column; /* 1-based; the column in bytes */
};

/*
 * Reads the JSON text buf (len bytes, not NUL-terminated) into d: 0; or
 * -EINVAL if it is not JSON (RFC 8259: one value, strings in UTF-8, no
 * duplicate key in an object, integers within 64 bits, nesting at most
 * JDOC_MAX_DEPTH), said in err; -EFBIG if it would take more than max_bytes,
 * err saying how much; -ENOMEM. d holds nothing unless 0 is returned.
 */
int jdoc_parse(struct jdoc *d, const char *buf, size_t len, size_t max_bytes,
	       struct jdoc_error *err);
void jdoc_free(struct jdoc *d);
/* The text's value (NULL for a document that holds none). */
const struct jval *jdoc_root(const struct jdoc *d);

bool jv_is_null(const struct jval *v);
bool jv_is_boolean(const struct jval *v);
bool jv_is_true(const struct jval *v);
bool jv_is_integer(const struct jval *v);
bool jv_is_number(const struct jval *v); /* an integer or a real */
bool jv_is_string(const struct jval *v);
bool jv_is_array(const struct jval *v);
bool jv_is_object(const struct jval *v);
/* An array's entries, an object's members; 0 for anything else. */
size_t jv_size(const struct jval *v);
/* An array's entry i; NULL past its end or for anything else. */
const struct jval *jv_at(const struct jval *v, size_t i);
/* An object's member named key; NULL if it has none or is not an object. */
const struct jval *jv_get(const struct jval *v, const char *key);
long long jv_int(const struct jval *v);	  /* 0 unless an integer */
double jv_number(const struct jval *v);	  /* an integer's or a real's value, else 0 */
const char *jv_str(const struct jval *v); /* NULL unless a string */
size_t jv_strlen(const struct jval *v);	  /* its bytes, a NUL of its own included */

#endif
