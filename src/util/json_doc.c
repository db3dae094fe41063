// SPDX-License-Identifier: GPL-2.0-only
/*
 * A JSON text read into one array of values (include/util/json_doc.h): two
 * passes of one reader, the first counting (values, string bytes, each
 * container's entries), the second filling in. Each container's entries
 * get consecutive slots the moment it opens, from its count in the first
 * pass, so an entry is found by index and nothing is allocated per value.
 * The walk keeps its own stack of open containers: no recursion, whatever
 * the text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/json_doc.h"
#include "util/text.h"
#include "util/vec.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* One open container while the text is read. */
struct level {
	size_t ci;     /* its number among the containers, in text order */
	size_t node;   /* pass 2: its value's slot */
	size_t slot;   /* pass 2: its next entry's */
	uint32_t left; /* pass 2: entries still to come */
	bool object;
};

struct scan {
	const char *p, *end;
	bool build; /* the second pass */
	const char *err_at;
	struct jdoc_error *err;
	size_t nvals, strbytes, ncont; /* what the first pass counted */
	uint32_t *counts;	       /* entries (members) of each container, in text order */
	size_t cap_counts;
	struct jval *vals, scratch; /* the first pass reads into scratch */
	char *strs;
	size_t next_val, next_str;
	struct level stack[JDOC_MAX_DEPTH];
	size_t depth;
};

static int fail(struct scan *s, const char *at, const char *what)
{
	if (!s->err_at) {
		s->err_at = at;
		snprintf(s->err->text, sizeof(s->err->text), "%s", what);
	}
	return -EINVAL;
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
		s->p++;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
	unsigned v = 0;
	int i;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		unsigned c = (unsigned char)p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (c | 0x20) - 'a' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A \u escape at *pp (its backslash), a surrogate pair as one code point; advances *pp. */
static int unicode_escape(struct scan *s, const char **pp, uint32_t *cp)
{
	const char *p = *pp;
	unsigned hi, lo;

	if (hex4(p + 2, s->end, &hi))
		return fail(s, p, "an invalid \\u escape in a string");
	p += 6;
	if (hi >= 0xDC00 && hi <= 0xDFFF)
		return fail(s, *pp, "a lone UTF-16 surrogate in a \\u escape");
	if (hi >= 0xD800 && hi <= 0xDBFF) {
		if (s->end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, s->end, &lo) ||
		    lo < 0xDC00 || lo > 0xDFFF)
			return fail(s, *pp, "a lone UTF-16 surrogate in a \\u escape");
		hi = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
		p += 6;
	}
	*cp = hi;
	*pp = p;
	return 0;
}

/* cp in UTF-8 at w: its length. */
static size_t put_utf8(char *w, uint32_t cp)
{
	if (cp < 0x80) {
		w[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		w[0] = (char)(0xC0 | cp >> 6);
		w[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		w[0] = (char)(0xE0 | cp >> 12);
		w[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		w[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	w[0] = (char)(0xF0 | cp >> 18);
	w[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	w[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	w[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* An escape at *pp (its backslash), decoded into buf (at most 4 bytes): its length, or -EINVAL. */
static int read_escape(struct scan *s, const char **pp, char *buf)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p = *pp, *c;
	uint32_t cp;

	if (s->end - p < 2)
		return fail(s, p, "a string not closed");
	if (p[1] == 'u') {
		if (unicode_escape(s, pp, &cp))
			return -EINVAL;
		return (int)put_utf8(buf, cp);
	}
	c = p[1] ? strchr(from, p[1]) : NULL;
	if (!c)
		return fail(s, p, "an invalid escape in a string");
	buf[0] = to[c - from];
	*pp = p + 2;
	return 1;
}

/*
 * The string at s->p (its opening quote) into v, decoded into the strings'
 * buffer in pass 2. Decoded, a string is never longer than its text, so the
 * first pass counts its text's bytes.
 */
static int read_string(struct scan *s, struct jval *v)
{
	const char *p = s->p + 1, *open = s->p;
	char *w = s->build ? s->strs + s->next_str : NULL, esc[4];
	size_t n = 0;
	int k;

	while (p < s->end && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return fail(s, p, "a control character in a string (it must be escaped)");
		if (*p == '\\') {
			k = read_escape(s, &p, esc);
			if (k < 0)
				return k;
			if (w)
				memcpy(w + n, esc, k);
		} else {
			k = text_utf8_len((const unsigned char *)p, s->end - p);
			if (!k)
				return fail(s, p, "a byte that is not UTF-8 in a string");
			if (w)
				memcpy(w + n, p, k);
			p += k;
		}
		n += k;
	}
	if (p >= s->end)
		return fail(s, open, "a string not closed");
	if (w) {
		w[n] = '\0';
		s->next_str += n + 1;
	} else {
		s->strbytes += (size_t)(p - open - 1) + 1;
	}
	v->type = JV_STRING;
	v->n = (uint32_t)n;
	v->u.s = w;
	s->p = p + 1;
	return 0;
}

/* Reals are read in the C locale, whatever the process's (JSON's decimal point is '.'). */
static double c_strtod(const char *text)
{
	static locale_t c_locale;

	if (!c_locale)
		c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	return c_locale ? strtod_l(text, NULL, c_locale) : strtod(text, NULL);
}

/* The number's text [start, s->p): an integer within 64 bits, or a finite real. */
static int number_value(struct scan *s, const char *start, bool real, struct jval *v)
{
	unsigned long long acc = 0, lim = LLONG_MAX;
	bool neg = *start == '-';
	const char *c = start + neg;
	char text[64];

	if (real) {
		if ((size_t)(s->p - start) >= sizeof(text))
			return fail(s, start, "a number too long (more than 63 characters)");
		memcpy(text, start, s->p - start);
		text[s->p - start] = '\0';
		v->type = JV_REAL;
		v->u.d = c_strtod(text);
		return isinf(v->u.d) ? fail(s, start, "a number out of range") : 0;
	}
	lim += neg;
	for (; c < s->p; c++) {
		if (acc > (lim - (unsigned)(*c - '0')) / 10)
			return fail(s, start, "an integer out of range (64 bits)");
		acc = acc * 10 + (unsigned)(*c - '0');
	}
	v->type = JV_INT;
	v->u.i = neg ? (long long)(0 - acc) : (long long)acc;
	return 0;
}

static void skip_digits(struct scan *s)
{
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
}

static bool at_digit(const struct scan *s)
{
	return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int read_number(struct scan *s, struct jval *v)
{
	const char *start = s->p;
	bool real = false;

	if (*s->p == '-')
		s->p++;
	if (!at_digit(s))
		return fail(s, start, "a value expected");
	if (*s->p++ != '0')
		skip_digits(s);
	if (s->p < s->end && *s->p == '.') {
		real = true;
		s->p++;
		if (!at_digit(s))
			return fail(s, s->p, "a digit expected after '.'");
		skip_digits(s);
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		real = true;
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!at_digit(s))
			return fail(s, s->p, "a digit expected in an exponent");
		skip_digits(s);
	}
	return number_value(s, start, real, v);
}

static int read_literal(struct scan *s, struct jval *v)
{
	static const struct {
		const char *word;
		uint8_t type;
	} lits[] = { { "true", JV_TRUE }, { "false", JV_FALSE }, { "null", JV_NULL } };
	size_t i, n;

	for (i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
		n = strlen(lits[i].word);
		if ((size_t)(s->end - s->p) >= n && !memcmp(s->p, lits[i].word, n)) {
			v->type = lits[i].type;
			s->p += n;
			return 0;
		}
	}
	return fail(s, s->p, "a value expected");
}

/* A '[' or '{' at s->p: a level pushed; in pass 2 its entries' slots reserved. */
static int open_container(struct scan *s, size_t slot)
{
	struct level *lv;
	uint32_t count;

	if (s->depth == JDOC_MAX_DEPTH)
		return fail(s, s->p, "nested deeper than " STR(JDOC_MAX_DEPTH) " levels");
	lv = &s->stack[s->depth++];
	lv->object = *s->p++ == '{';
	lv->ci = s->ncont++;
	if (!s->build)
		return vec_grow((void **)&s->counts, &s->cap_counts, s->ncont, sizeof(*s->counts));
	count = s->counts[lv->ci];
	s->vals[slot].type = lv->object ? JV_OBJECT : JV_ARRAY;
	s->vals[slot].n = count;
	s->vals[slot].u.first = s->next_val - slot;
	lv->node = slot;
	lv->slot = s->next_val;
	lv->left = count;
	s->next_val += (size_t)count * (lv->object ? 2 : 1);
	return 0;
}

/* The value at s->p, into slot in pass 2; a container is opened, its entries come later. */
static int read_value(struct scan *s, size_t slot)
{
	struct jval *v = s->build ? &s->vals[slot] : &s->scratch;

	skip_ws(s);
	if (s->p >= s->end)
		return fail(s, s->p, "a value expected");
	s->nvals += !s->build;
	switch (*s->p) {
	case '[':
	case '{':
		return open_container(s, slot);
	case '"':
		return read_string(s, v);
	case 't':
	case 'f':
	case 'n':
		return read_literal(s, v);
	default:
		return read_number(s, v);
	}
}

/* The next entry of the innermost container: an object's key and ':' first. */
static int read_entry(struct scan *s, struct level *lv)
{
	size_t slot = 0;
	int err;

	if (!s->build) {
		s->counts[lv->ci]++;
	} else {
		if (!lv->left--) /* the text is the first pass's: this cannot be */
			return fail(s, s->p, "more entries than counted");
		slot = lv->slot;
		lv->slot += lv->object ? 2 : 1;
	}
	if (lv->object) {
		skip_ws(s);
		if (s->p >= s->end || *s->p != '"')
			return fail(s, s->p, "a string (a member's name) expected");
		s->nvals += !s->build;
		err = read_string(s, s->build ? &s->vals[slot] : &s->scratch);
		if (err)
			return err;
		skip_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return fail(s, s->p, "':' expected");
		s->p++;
		slot++;
	}
	return read_value(s, slot);
}

static int cmp_key(const struct jval *x, const struct jval *y)
{
	int c = memcmp(x->u.s, y->u.s, x->n < y->n ? x->n : y->n);

	return c ? c : x->n < y->n ? -1 : x->n > y->n;
}

static int cmp_keys(const void *a, const void *b)
{
	return cmp_key(*(const struct jval *const *)a, *(const struct jval *const *)b);
}

/* An object has key twice (pass 2): said at its end, as RFC 8259 advises against it. */
static int duplicate(struct scan *s, const struct jval *key, const char *at)
{
	char what[sizeof(s->err->text)];

	snprintf(what, sizeof(what), "a member named \"%.40s\" twice in one object", key->u.s);
	return fail(s, at, what);
}

/* An object's members all read (pass 2): no name twice. */
static int check_keys(struct scan *s, const struct jval *obj, const char *at)
{
	const struct jval *m = obj + obj->u.first, **keys;
	size_t n = obj->n, i, j;
	int err = 0;

	if (n <= 16) {
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (!cmp_key(&m[2 * i], &m[2 * j]))
					return duplicate(s, &m[2 * j], at);
		return 0;
	}
	keys = malloc(n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		keys[i] = &m[2 * i];
	qsort(keys, n, sizeof(*keys), cmp_keys);
	for (i = 1; i < n && !err; i++)
		if (!cmp_key(keys[i - 1], keys[i]))
			err = duplicate(s, keys[i], at);
	free(keys);
	return err;
}

/* The innermost container's ']' or '}' at s->p. */
static int close_container(struct scan *s)
{
	struct level *lv = &s->stack[--s->depth];
	const char *at = s->p++;

	return s->build && lv->object ? check_keys(s, &s->vals[lv->node], at) : 0;
}

/* One pass over the whole text. */
static int walk(struct scan *s)
{
	size_t depth = 0;
	bool opened;
	int err = read_value(s, 0);

	opened = s->depth > depth;
	while (!err && s->depth) {
		struct level *lv = &s->stack[s->depth - 1];

		skip_ws(s);
		if (s->p < s->end && *s->p == (lv->object ? '}' : ']')) {
			err = close_container(s);
			opened = false;
			continue;
		}
		if (!opened) {
			if (s->p >= s->end || *s->p != ',')
				return fail(s, s->p,
					    lv->object ? "',' or '}' expected" :
							 "',' or ']' expected");
			s->p++;
		}
		depth = s->depth;
		err = read_entry(s, lv);
		opened = s->depth > depth;
	}
	if (err)
		return err;
	skip_ws(s);
	return s->p < s->end ? fail(s, s->p, "the end expected after the value") : 0;
}

/* Where the first problem is, as a line and a column of the text. */
static void locate(const char *buf, const char *at, struct jdoc_error *err)
{
	const char *line = buf, *c;

	err->line = 1;
	for (c = buf; c < at; c++)
		if (*c == '\n') {
			err->line++;
			line = c + 1;
		}
	err->column = (size_t)(at - line) + 1;
}

/* The second pass: every value into d's array, every string into its buffer. */
static int fill(struct scan *s, const char *buf, size_t len, struct jdoc *d)
{
	d->vals = malloc(s->nvals * sizeof(*d->vals));
	d->strs = malloc(s->strbytes + 1);
	if (!d->vals || !d->strs)
		return -ENOMEM;
	s->p = buf;
	s->end = buf + len;
	s->build = true;
	s->vals = d->vals;
	s->strs = d->strs;
	s->next_val = 1;
	s->ncont = 0;
	s->depth = 0;
	return walk(s);
}

int jdoc_parse(struct jdoc *d, const char *buf, size_t len, size_t max_bytes,
	       struct jdoc_error *err)
{
	struct scan *s = calloc(1, sizeof(*s));
	size_t need;
	int rc;

	memset(d, 0, sizeof(*d));
	memset(err, 0, sizeof(*err));
	if (!s)
		return -ENOMEM;
	s->p = buf;
	s->end = buf + len;
	s->err = err;
	/* counts and lengths are 32-bit: a text under 4 GiB has fewer of each */
	rc = len > UINT32_MAX ? fail(s, buf, "longer than 4 GiB") : walk(s);
	need = s->nvals * sizeof(struct jval) + s->strbytes;
	if (!rc && need > max_bytes) {
		snprintf(err->text, sizeof(err->text),
			 "it would take %zu MiB of memory to read, more than %zu MiB",
			 (need >> 20) + 1, max_bytes >> 20);
		rc = -EFBIG;
	}
	if (!rc)
		rc = fill(s, buf, len, d);
	if (rc == -EINVAL)
		locate(buf, s->err_at ? s->err_at : buf, err);
	if (rc) {
		jdoc_free(d);
	} else {
		d->nvals = s->nvals;
		d->bytes = need;
	}
	free(s->counts);
	free(s);
	return rc;
}

void jdoc_free(struct jdoc *d)
{
	free(d->vals);
	free(d->strs);
	memset(d, 0, sizeof(*d));
}

const struct jval *jdoc_root(const struct jdoc *d)
{
	return d->nvals ? d->vals : NULL;
}

bool jv_is_null(const struct jval *v)
{
	return v && v->type == JV_NULL;
}

bool jv_is_boolean(const struct jval *v)
{
	return v && (v->type == JV_TRUE || v->type == JV_FALSE);
}

bool jv_is_true(const struct jval *v)
{
	return v && v->type == JV_TRUE;
}

bool jv_is_integer(const struct jval *v)
{
	return v && v->type == JV_INT;
}

bool jv_is_number(const struct jval *v)
{
	return v && (v->type == JV_INT || v->type == JV_REAL);
}

bool jv_is_string(const struct jval *v)
{
	return v && v->type == JV_STRING;
}

bool jv_is_array(const struct jval *v)
{
	return v && v->type == JV_ARRAY;
}

bool jv_is_object(const struct jval *v)
{
	return v && v->type == JV_OBJECT;
}

size_t jv_size(const struct jval *v)
{
	return jv_is_array(v) || jv_is_object(v) ? v->n : 0;
}

const struct jval *jv_at(const struct jval *v, size_t i)
{
	return jv_is_array(v) && i < v->n ? v + v->u.first + i : NULL;
}

const struct jval *jv_get(const struct jval *v, const char *key)
{
	size_t len = strlen(key), i;
	const struct jval *m;

	if (!jv_is_object(v))
		return NULL;
	for (i = 0, m = v + v->u.first; i < v->n; i++, m += 2)
		if (m->n == len && !memcmp(m->u.s, key, len))
			return m + 1;
	return NULL;
}

long long jv_int(const struct jval *v)
{
	return jv_is_integer(v) ? v->u.i : 0;
}

double jv_number(const struct jval *v)
{
	return jv_is_integer(v) ? (double)v->u.i : v && v->type == JV_REAL ? v->u.d : 0;
}

const char *jv_str(const struct jval *v)
{
	return jv_is_string(v) ? v->u.s : NULL;
}

size_t jv_strlen(const struct jval *v)
{
	return jv_is_string(v) ? v->n : 0;
}
