// SPDX-License-Identifier: GPL-2.0-only
/*
 * A bounded text for a live object of a target (pybpfprof dump --locals).
 * Types are told by their type object's tp_name, and only for static types
 * (a class named "int" stays a class); each value costs at most
 * PY_RENDER_READS reads, containers show PY_RENDER_ITEMS items to a depth of
 * PY_RENDER_DEPTH, and every length read is checked against a bound before
 * it is used. What does not read as its type says prints as unreadable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote_mem.h"
#include "py_scalars.h"
#include "cpython/py_objects.h"

#define TP_NAME 24	     /* PyTypeObject.tp_name */
#define TP_BASICSIZE 32	     /* PyTypeObject.tp_basicsize */
#define TP_FLAGS 168	     /* PyTypeObject.tp_flags */
#define TP_BASE 256	     /* PyTypeObject.tp_base */
#define TPFLAGS_HEAPTYPE 512 /* Py_TPFLAGS_HEAPTYPE: a class, never a builtin */
/*
 * Py_TPFLAGS_IMMUTABLETYPE (3.10+): a type made by C code from a spec, as
 * _thread's are from 3.10 on. A class statement never sets it.
 */
#define TPFLAGS_IMMUTABLE 256
#define TPFLAGS_MANAGED_DICT 16 /* Py_TPFLAGS_MANAGED_DICT (3.11+): no tp_dictoffset */
#define DIGIT_BITS 30		/* PyLong digits (x86_64 builds) */
#define LEN_MAX (1LL << 40)	/* no real container or string is longer */

/*
 * spec: may be a heap type, if immutable (Py_TPFLAGS_IMMUTABLETYPE), as a
 * C module's types made from a spec are; a class is never immutable.
 */
static const struct {
	const char *name;
	enum py_kind kind;
	bool spec;
} known_types[] = {
	{ "NoneType", PYK_NONE, false },
	{ "bool", PYK_BOOL, false },
	{ "int", PYK_INT, false },
	{ "float", PYK_FLOAT, false },
	{ "str", PYK_STR, false },
	{ "bytes", PYK_BYTES, false },
	{ "tuple", PYK_TUPLE, false },
	{ "list", PYK_LIST, false },
	{ "dict", PYK_DICT, false },
	{ "set", PYK_SET, false },
	{ "frozenset", PYK_FROZENSET, false },
	{ "numpy.ndarray", PYK_NDARRAY, false },
	{ "cell", PYK_CELL, false },
	{ "<dummy key> type", PYK_DUMMY, false },
	{ "_thread.lock", PYK_LOCK, true },
	{ "_thread.RLock", PYK_RLOCK, true },
};

/* numpy's type numbers (stable since numpy 1.0) on x86_64 Linux. */
static const char *const numpy_dtypes[] = {
	"bool",	   "int8",     "uint8",	    "int16",	  "uint16",	 "int32",
	"uint32",  "int64",    "uint64",    "int64",	  "uint64",	 "float32",
	"float64", "float128", "complex64", "complex128", "complex256",	 "object",
	"bytes",   "str",      "void",	    "datetime64", "timedelta64", "float16",
};

/* A text being built: stops at its capacity, never overflows. */
struct sbuf {
	char *p;
	size_t cap, len;
};

struct render {
	struct py_reader *r;
	struct sbuf sb;
	unsigned reads;
	unsigned max_reads; /* 0: PY_RENDER_READS */
	unsigned scan;	    /* dict entries looked at; 0: PY_RENDER_SCAN */
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + 1 >= b->cap)
		return;
	if (n > b->cap - 1 - b->len)
		n = b->cap - 1 - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* One bounded read of the target, charged to this value's budget. */
static int rd(struct render *c, uint64_t addr, void *buf, size_t len)
{
	if (c->reads >= (c->max_reads ? c->max_reads : PY_RENDER_READS))
		return -E2BIG;
	c->reads++;
	if (addr < 4096 || addr + len < addr)
		return -EFAULT;
	return remote_read(c->r->pid, addr, buf, len);
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int py_reader__init(struct py_reader *r, pid_t pid, const struct py_layout *L, uint32_t version)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->L = L;
	return py_layout__objects(version, &r->O);
}

/*
 * The kind of a type named name with tp_flags flags: a builtin only if it is
 * static, or (for a C module's type made from a spec) immutable.
 */
static enum py_kind known_kind(const char *name, uint64_t flags)
{
	bool heap = flags & TPFLAGS_HEAPTYPE;
	size_t i;

	for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
		if (!strcmp(name, known_types[i].name) &&
		    (!heap || (known_types[i].spec && (flags & TPFLAGS_IMMUTABLE))))
			return known_types[i].kind;
	return !heap && py_npscalar_size(name) ? PYK_NPSCALAR : PYK_OTHER;
}

/* The kind and name of the type object at type; -errno if it cannot be read. */
static int type_kind(struct render *c, uint64_t type, enum py_kind *kind, const char **name)
{
	struct py_reader *r = c->r;
	uint8_t head[TP_FLAGS + 8];
	int64_t basicsize;
	char text[48];
	unsigned i, slot;
	int err;

	for (i = 0; i < r->ntypes && i < PY_TYPES_KNOWN; i++)
		if (r->types[i].addr == type) {
			*kind = r->types[i].kind;
			*name = r->types[i].name;
			return 0;
		}
	err = rd(c, type, head, sizeof(head));
	if (err)
		return err;
	/* the name is a C string in the target: read what fits, stop at its NUL */
	memset(text, 0, sizeof(text));
	err = rd(c, u64_at(head + TP_NAME), text, sizeof(text) - 1);
	if (err)
		return err;
	/* any bytes (a class may be named anything: the output escapes them), but some */
	if (!text[0])
		return -EBADMSG;
	slot = r->ntypes++ % PY_TYPES_KNOWN;
	r->types[slot].addr = type;
	r->types[slot].kind = known_kind(text, u64_at(head + TP_FLAGS));
	basicsize = (int64_t)u64_at(head + TP_BASICSIZE);
	r->types[slot].basicsize = basicsize < 0 ? 0 : basicsize > 65535 ? 65535 : basicsize;
	memcpy(r->types[slot].name, text, sizeof(text));
	*kind = r->types[slot].kind;
	*name = r->types[slot].name;
	return 0;
}

static void put_unreadable(struct render *c, uint64_t addr)
{
	sb_printf(&c->sb, "<unreadable at 0x%" PRIx64 ">", addr);
}

/* Decimal text of an unsigned 128-bit value. */
static void put_u128(struct sbuf *b, unsigned __int128 v)
{
	char tmp[48];
	int i = sizeof(tmp) - 1;

	tmp[i] = 0;
	do {
		tmp[--i] = '0' + (int)(v % 10);
		v /= 10;
	} while (v && i > 0);
	sb_put(b, tmp + i, sizeof(tmp) - 1 - i);
}

/*
 * An int: exact up to 4 digits (120 bits), beyond that abbreviated to its
 * leading digits and size. neg: -1 negative, 0 zero, 1 positive.
 */
static int put_int(struct render *c, uint64_t addr, uint64_t nd, int neg, bool as_bool)
{
	uint32_t d[4];
	unsigned __int128 v = 0;
	uint64_t top, i, n = nd < 4 ? nd : 4;
	long double approx = 0;
	int err;

	if (nd > (uint64_t)LEN_MAX)
		return -EBADMSG;
	if (as_bool) {
		sb_put(&c->sb, nd ? "True" : "False", nd ? 4 : 5);
		return 0;
	}
	if (!nd || !neg) {
		sb_put(&c->sb, "0", 1);
		return 0;
	}
	/* the 4 lowest digits when the value is exact, else the 3 highest */
	top = nd <= 4 ? 0 : nd - 3;
	if (nd > 4)
		n = 3;
	err = rd(c, addr + 24 + top * 4, d, n * 4);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		if (d[i] >> DIGIT_BITS)
			return -EBADMSG;
	if (neg < 0)
		sb_put(&c->sb, "-", 1);
	if (nd <= 4) {
		for (i = n; i-- > 0;)
			v = (v << DIGIT_BITS) | d[i];
		put_u128(&c->sb, v);
		return 0;
	}
	for (i = n; i-- > 0;)
		approx = approx * (1 << DIGIT_BITS) + d[i];
	if (!d[2])
		return -EBADMSG; /* a normalised int has no leading zero digit */
	for (i = 0; d[2] >> i; i++)
		;
	if (nd < 500) {
		approx = approx * __builtin_powl(2.0L, (long double)(DIGIT_BITS * top));
		sb_printf(&c->sb, "%.6Le", approx);
	} else {
		sb_put(&c->sb, "...", 3);
	}
	sb_printf(&c->sb, " (%" PRIu64 " bits)", DIGIT_BITS * (nd - 1) + i);
	return 0;
}

static int render_int(struct render *c, uint64_t addr, const uint8_t *head, bool as_bool)
{
	uint64_t f = u64_at(head + 16);
	int64_t size = (int64_t)f;

	if (c->r->O.long_tagged) {
		/* lv_tag: digit count << 3, sign in the low 2 bits (0 +, 1 zero, 2 -) */
		if ((f & 3) == 3)
			return -EBADMSG;
		return put_int(c, addr, f >> 3, (f & 3) == 1 ? 0 : (f & 3) == 2 ? -1 : 1, as_bool);
	}
	if (size < -LEN_MAX || size > LEN_MAX)
		return -EBADMSG;
	return put_int(c, addr, size < 0 ? -(uint64_t)size : (uint64_t)size,
		       size < 0 ? -1 : size > 0, as_bool);
}

static void render_float(struct render *c, const uint8_t *head)
{
	char tmp[40];
	double v;

	memcpy(&v, head + 16, sizeof(v));
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	sb_put(&c->sb, tmp, strlen(tmp));
	if (!strpbrk(tmp, ".einIN"))
		sb_put(&c->sb, ".0", 2);
}

/* Text between quotes, escaped as Python would: bytes < 0x20, 0x7f, \ and the quote. */
static void put_escaped(struct sbuf *b, const char *s, size_t n, bool bytes)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char ch = s[i];

		if (ch == '\\' || ch == '\'')
			sb_printf(b, "\\%c", ch);
		else if (ch == '\n')
			sb_put(b, "\\n", 2);
		else if (ch == '\t')
			sb_put(b, "\\t", 2);
		else if (ch == '\r')
			sb_put(b, "\\r", 2);
		else if (ch < 0x20 || ch == 0x7f || (bytes && ch > 0x7f))
			sb_printf(b, "\\x%02x", ch);
		else
			sb_put(b, (const char *)&ch, 1);
	}
}

static int render_str(struct render *c, uint64_t addr)
{
	const struct py_layout *L = c->r->L;
	uint8_t head[PY_STR_HEAD_READ], data[PY_RENDER_STR * 4];
	char text[PY_RENDER_STR * 4 + 1];
	uint32_t state;
	int64_t len;
	size_t n, kind;
	int err, k;

	if (L->str_compact_data > sizeof(head))
		return -EBADMSG;
	err = rd(c, addr, head, L->str_compact_data);
	if (err)
		return err;
	memcpy(&len, head + L->bpf.str_length, sizeof(len));
	memcpy(&state, head + L->bpf.str_state, sizeof(state));
	kind = (state >> 2) & 7;
	/* compact (bit 5) strings only: their text follows the header */
	if (!(state & 0x20) || (kind != 1 && kind != 2 && kind != 4) || len < 0 || len > LEN_MAX)
		return -EBADMSG;
	n = len < PY_RENDER_STR ? (size_t)len : PY_RENDER_STR;
	if (state & 0x40)
		err = rd(c, addr + L->bpf.str_ascii_data, data, n);
	else
		err = rd(c, addr + L->str_compact_data, data, n * kind);
	if (err && n)
		return err;
	k = ucs_to_utf8(data, n, (state & 0x40) ? 1 : (int)kind, text, sizeof(text));
	if (k < 0)
		return -EBADMSG;
	sb_put(&c->sb, "'", 1);
	put_escaped(&c->sb, text, (size_t)k, false);
	sb_put(&c->sb, "'", 1);
	if ((size_t)len > n)
		sb_printf(&c->sb, "... (%" PRId64 " chars)", len);
	return 0;
}

static int render_bytes(struct render *c, uint64_t addr, const uint8_t *head)
{
	const struct py_layout *L = c->r->L;
	int64_t len = (int64_t)u64_at(head + 16);
	char data[PY_RENDER_STR];
	size_t n;
	int err;

	if (L->bytes_size != 16 || len < 0 || len > LEN_MAX)
		return -EBADMSG;
	n = len < PY_RENDER_STR ? (size_t)len : PY_RENDER_STR;
	err = n ? rd(c, addr + L->bytes_data, data, n) : 0;
	if (err)
		return err;
	sb_put(&c->sb, "b'", 2);
	put_escaped(&c->sb, data, n, true);
	sb_put(&c->sb, "'", 1);
	if ((size_t)len > n)
		sb_printf(&c->sb, "... (%" PRId64 " bytes)", len);
	return 0;
}

static int render_obj(struct render *c, uint64_t addr, unsigned depth, char *type,
		      struct py_value_info *info);

/* An item inside a container: its own failure shows in its place. */
static void render_item(struct render *c, uint64_t addr, unsigned depth)
{
	size_t mark = c->sb.len;

	if (render_obj(c, addr, depth, NULL, NULL)) {
		c->sb.len = mark;
		if (c->sb.cap)
			c->sb.p[mark] = 0;
		if (c->reads >= PY_RENDER_READS)
			sb_put(&c->sb, "...", 3);
		else
			put_unreadable(c, addr);
	}
}

/* tuple and list: "(a, b)" / "[a, b, ...] (len N)". */
static int render_seq(struct render *c, uint64_t addr, const uint8_t *head, bool list,
		      unsigned depth)
{
	int64_t len = (int64_t)u64_at(head + 16);
	uint64_t items[PY_RENDER_ITEMS], at = list ? u64_at(head + 24) : addr + c->r->O.tuple_items;
	size_t i, n;
	int err;

	if (len < 0 || len > LEN_MAX)
		return -EBADMSG;
	if (depth >= PY_RENDER_DEPTH && len) {
		sb_printf(&c->sb, "<%s len %" PRId64 ">", list ? "list" : "tuple", len);
		return 0;
	}
	n = len < PY_RENDER_ITEMS ? (size_t)len : PY_RENDER_ITEMS;
	err = n ? rd(c, at, items, n * 8) : 0;
	if (err)
		return err;
	sb_put(&c->sb, list ? "[" : "(", 1);
	for (i = 0; i < n; i++) {
		if (i)
			sb_put(&c->sb, ", ", 2);
		render_item(c, items[i], depth + 1);
	}
	if ((size_t)len > n)
		sb_put(&c->sb, ", ...", 5);
	else if (!list && len == 1)
		sb_put(&c->sb, ",", 1);
	sb_put(&c->sb, list ? "]" : ")", 1);
	if ((size_t)len > n)
		sb_printf(&c->sb, " (len %" PRId64 ")", len);
	return 0;
}

/*
 * Where a combined dict's entries are: *entries, their size, how many
 * there are. -EBADMSG for sizes no dict has.
 */
static int dict_entries(struct render *c, uint64_t keys, uint64_t *entries, unsigned *esize,
			uint64_t *nentries)
{
	uint8_t k[40];
	uint64_t size;
	int err = rd(c, keys, k, sizeof(k));

	if (err)
		return err;
	if (c->r->O.dict_keys_311) {
		/* dk_log2_size, dk_log2_index_bytes, dk_kind; dk_nentries at 24, indices at 32 */
		if (k[8] > 40 || k[9] > k[8] + 3)
			return -EBADMSG;
		*nentries = u64_at(k + 24);
		*entries = keys + 32 + (1ULL << k[9]);
		*esize = k[10] ? 16 : 24;
		size = 1ULL << k[8];
	} else {
		/* dk_size at 8, dk_nentries at 32, indices at 40 with 1-8 bytes each */
		size = u64_at(k + 8);
		if (size < 8 || size > (1ULL << 40) || (size & (size - 1)))
			return -EBADMSG;
		*nentries = u64_at(k + 32);
		*entries = keys + 40 +
			   size * (size <= 0xff	      ? 1 :
				   size <= 0xffff     ? 2 :
				   size <= 0xffffffff ? 4 :
							8);
		*esize = 24;
	}
	if (*nentries > size)
		return -EBADMSG;
	return 0;
}

static int render_dict(struct render *c, const uint8_t *head, unsigned depth)
{
	int64_t used = (int64_t)u64_at(head + 16);
	uint64_t keys = u64_at(head + 32), values = u64_at(head + 40), entries, nentries, i;
	unsigned esize, shown = 0;
	uint8_t e[24];
	int err;

	if (used < 0 || used > LEN_MAX)
		return -EBADMSG;
	if (!used) {
		sb_put(&c->sb, "{}", 2);
		return 0;
	}
	if (depth >= PY_RENDER_DEPTH || values) {
		/* nested too deep, or a split table (an instance's attributes): size only */
		sb_printf(&c->sb, "<dict len %" PRId64 ">", used);
		return 0;
	}
	err = dict_entries(c, keys, &entries, &esize, &nentries);
	if (err)
		return err;
	sb_put(&c->sb, "{", 1);
	for (i = 0; i < nentries && i < PY_RENDER_SCAN && shown < PY_RENDER_ITEMS; i++) {
		if (rd(c, entries + i * esize, e, esize))
			break;
		/* general entries: hash, key, value; str-keyed ones: key, value */
		if (!u64_at(e + esize - 8))
			continue; /* deleted */
		if (shown++)
			sb_put(&c->sb, ", ", 2);
		render_item(c, u64_at(e + esize - 16), depth + 1);
		sb_put(&c->sb, ": ", 2);
		render_item(c, u64_at(e + esize - 8), depth + 1);
	}
	if ((uint64_t)used > shown)
		sb_put(&c->sb, shown ? ", ..." : "...", shown ? 5 : 3);
	sb_put(&c->sb, "}", 1);
	if ((uint64_t)used > shown)
		sb_printf(&c->sb, " (len %" PRId64 ")", used);
	return 0;
}

/* Whether key is the set's deleted-slot marker (or unreadable: skipped as well). */
static bool set_dummy(struct render *c, uint64_t key)
{
	uint8_t h[16];
	enum py_kind kind;
	const char *name;

	return rd(c, key, h, sizeof(h)) || type_kind(c, u64_at(h + 8), &kind, &name) ||
	       kind == PYK_DUMMY;
}

static int render_set(struct render *c, const uint8_t *head, bool frozen, unsigned depth)
{
	int64_t used = (int64_t)u64_at(head + 24);
	uint64_t mask = u64_at(head + 32), table = u64_at(head + 40), i, e[2];
	const char *name = frozen ? "frozenset" : "set";
	unsigned shown = 0;

	if (used < 0 || used > LEN_MAX || mask > (1ULL << 40) || (mask & (mask + 1)))
		return -EBADMSG;
	if (!used || depth >= PY_RENDER_DEPTH) {
		sb_printf(&c->sb, used ? "<%s len %" PRId64 ">" : "%s()", name, used);
		return 0;
	}
	sb_put(&c->sb, frozen ? "frozenset({" : "{", frozen ? 11 : 1);
	for (i = 0; i <= mask && i < PY_RENDER_SCAN && shown < PY_RENDER_ITEMS; i++) {
		if (rd(c, table + i * 16, e, sizeof(e)))
			break;
		if (!e[0] || set_dummy(c, e[0]))
			continue;
		if (shown++)
			sb_put(&c->sb, ", ", 2);
		render_item(c, e[0], depth + 1);
	}
	if ((uint64_t)used > shown)
		sb_put(&c->sb, shown ? ", ..." : "...", shown ? 5 : 3);
	sb_put(&c->sb, frozen ? "})" : "}", frozen ? 2 : 1);
	if ((uint64_t)used > shown)
		sb_printf(&c->sb, " (len %" PRId64 ")", used);
	return 0;
}

/* numpy arrays by dtype and shape: ndarray[float64, (500, 400)]. */
static int render_ndarray(struct render *c, const uint8_t *head)
{
	uint8_t descr[32];
	int32_t nd, type_num;
	uint64_t dims[32];
	int i, err;

	memcpy(&nd, head + 24, sizeof(nd));
	/* nd at 24, dimensions at 32, descr at 56 (PyArrayObject_fields, numpy 1 and 2) */
	if (nd < 0 || nd > 32)
		return -EBADMSG;
	err = nd ? rd(c, u64_at(head + 32), dims, nd * 8) : 0;
	if (err)
		return err;
	err = rd(c, u64_at(head + 56), descr, sizeof(descr));
	if (err)
		return err;
	memcpy(&type_num, descr + 28, sizeof(type_num)); /* PyArray_Descr.type_num */
	if (type_num < 0 || type_num >= (int)(sizeof(numpy_dtypes) / sizeof(numpy_dtypes[0])))
		sb_printf(&c->sb, "ndarray[dtype %d, (", type_num);
	else
		sb_printf(&c->sb, "ndarray[%s, (", numpy_dtypes[type_num]);
	for (i = 0; i < nd; i++)
		sb_printf(&c->sb, "%s%" PRId64, i ? ", " : "", (int64_t)dims[i]);
	sb_put(&c->sb, nd == 1 ? ",)]" : ")]", nd == 1 ? 3 : 2);
	return 0;
}

/* The basicsize memoised for the type object at type (type_kind put it there), or 0. */
static uint32_t type_basicsize(const struct py_reader *r, uint64_t type)
{
	unsigned i;

	for (i = 0; i < r->ntypes && i < PY_TYPES_KNOWN; i++)
		if (r->types[i].addr == type)
			return r->types[i].basicsize;
	return 0;
}

/* An object's header: what its fields follow (32 bytes in a free-threaded build). */
static unsigned obj_header(const struct render *c)
{
	return c->r->L->ob_type + 8;
}

const struct py_thread_id *py_thread_by_ident(const struct py_reader *r, uint64_t ident)
{
	size_t i;

	for (i = 0; ident && r->threads && i < r->nthreads; i++)
		if (r->threads[i].ident == ident)
			return &r->threads[i];
	return NULL;
}

/*
 * _thread.lock, by its layout (tp_basicsize): the lock, the weak-reference
 * list and a char "locked" (3.8 to early 3.13), or a PyMutex whose lowest
 * bit is "locked" (3.13.x, 3.14, 3.15; read live on each). Another size is
 * a layout not known: the lock is shown as any object.
 */
static int render_lock(struct render *c, uint64_t addr, uint32_t size, struct py_value_info *info)
{
	unsigned hdr = obj_header(c);
	bool mutex = size == hdr + 8;
	uint8_t b;
	int err;

	if (size != hdr + 24 && !mutex) {
		sb_printf(&c->sb, "<_thread.lock at 0x%" PRIx64 ">", addr);
		return 0;
	}
	err = rd(c, addr + (mutex ? hdr : hdr + 16), &b, 1);
	if (err)
		return err;
	if (info) {
		info->lock = 1;
		info->locked = mutex ? b & 1 : b != 0;
	}
	sb_printf(&c->sb, "<%s _thread.lock object at 0x%" PRIx64 ">",
		  (mutex ? b & 1 : b) ? "locked" : "unlocked", addr);
	return 0;
}

/* An RLock's owner: its thread's id and threading name when it is a thread read. */
static void put_owner(struct render *c, uint64_t ident)
{
	const struct py_thread_id *t = py_thread_by_ident(c->r, ident);

	if (t && t->tid > 0)
		sb_printf(&c->sb, "thread %d", (int)t->tid);
	else
		sb_printf(&c->sb, "ident 0x%" PRIx64, ident);
	if (t && t->name[0]) {
		sb_put(&c->sb, " (", 2);
		sb_put(&c->sb, t->name, strnlen(t->name, sizeof(t->name)));
		sb_put(&c->sb, ")", 1);
	}
}

/*
 * _thread.RLock: its owner (an ident, as threading.get_ident() gives) and
 * how many times it holds it. Up to 3.13 the lock, owner and count follow
 * the header (then the weak-reference list), held while count > 0; from
 * 3.14 a _PyRecursiveMutex: a PyMutex, the owner, and the acquisitions
 * beyond the first.
 */
static int render_rlock(struct render *c, uint64_t addr, uint32_t size, struct py_value_info *info)
{
	unsigned hdr = obj_header(c);
	bool mutex = size == hdr + 24;
	uint64_t w[3], owner, count;
	bool locked;
	int err;

	if (size != hdr + 32 && !mutex) {
		sb_printf(&c->sb, "<_thread.RLock at 0x%" PRIx64 ">", addr);
		return 0;
	}
	err = rd(c, addr + hdr, w, sizeof(w));
	if (err)
		return err;
	locked = mutex ? w[0] & 1 : w[2] != 0;
	owner = locked ? w[1] : 0;
	count = !locked ? 0 : mutex ? w[2] + 1 : w[2];
	if (info)
		*info = (struct py_value_info){ .lock = 2,
						.locked = locked,
						.owner = owner,
						.count = count };
	if (!locked) {
		sb_printf(&c->sb, "<unlocked _thread.RLock object at 0x%" PRIx64 ">", addr);
		return 0;
	}
	sb_put(&c->sb, "<locked _thread.RLock object owner=", 35);
	put_owner(c, owner);
	sb_printf(&c->sb, " count=%" PRIu64 " at 0x%" PRIx64 ">", count, addr);
	return 0;
}

/*
 * A numpy scalar by value (py_scalars.c): its value follows the header, and
 * the type's tp_basicsize must hold it.
 */
static int render_npscalar(struct render *c, uint64_t addr, const char *name, uint32_t size)
{
	unsigned n = py_npscalar_size(name), hdr = obj_header(c);
	char text[PY_NPSCALAR_TEXT];
	uint8_t v[16];
	int err;

	if (!n || size < hdr + n)
		return -EBADMSG;
	err = rd(c, addr + hdr, v, n);
	if (err)
		return err;
	py_npscalar_text(name, v, text, sizeof(text));
	sb_put(&c->sb, text, strlen(text));
	return 0;
}

/* What render_obj shows of kinds with no container inside. */
static int render_leaf(struct render *c, uint64_t addr, const uint8_t *head, enum py_kind kind,
		       const char *name, struct py_value_info *info)
{
	uint32_t size = type_basicsize(c->r, u64_at(head + c->r->L->ob_type));

	switch (kind) {
	case PYK_NONE:
		sb_put(&c->sb, "None", 4);
		return 0;
	case PYK_BOOL:
	case PYK_INT:
		return render_int(c, addr, head, kind == PYK_BOOL);
	case PYK_FLOAT:
		render_float(c, head);
		return 0;
	case PYK_STR:
		return render_str(c, addr);
	case PYK_BYTES:
		return render_bytes(c, addr, head);
	case PYK_NDARRAY:
		return render_ndarray(c, head);
	case PYK_LOCK:
		return render_lock(c, addr, size, info);
	case PYK_RLOCK:
		return render_rlock(c, addr, size, info);
	case PYK_NPSCALAR:
		return render_npscalar(c, addr, name, size);
	default:
		sb_printf(&c->sb, "<%s at 0x%" PRIx64 ">", name, addr);
		return 0;
	}
}

static int render_obj(struct render *c, uint64_t addr, unsigned depth, char *type,
		      struct py_value_info *info)
{
	uint8_t head[64];
	enum py_kind kind;
	const char *name;
	int err;

	err = rd(c, addr, head, sizeof(head));
	if (err)
		return err;
	err = type_kind(c, u64_at(head + c->r->L->ob_type), &kind, &name);
	if (err)
		return err;
	if (type)
		snprintf(type, 48, "%s", name);
	switch (kind) {
	case PYK_TUPLE:
	case PYK_LIST:
		return render_seq(c, addr, head, kind == PYK_LIST, depth);
	case PYK_DICT:
		return render_dict(c, head, depth);
	case PYK_SET:
	case PYK_FROZENSET:
		return render_set(c, head, kind == PYK_FROZENSET, depth);
	case PYK_CELL:
		/* a closure's variable (3.11+ keep the cell in the slot): what it holds */
		if (!u64_at(head + 16)) {
			sb_put(&c->sb, "<empty cell>", 12);
			if (info && !depth)
				info->empty_cell = true;
			return 0;
		}
		return render_obj(c, u64_at(head + 16), depth + 1, NULL, info);
	default:
		return render_leaf(c, addr, head, kind, name, info);
	}
}

int py_render_info(struct py_reader *r, uint64_t addr, char *out, size_t outlen, char *type,
		   struct py_value_info *info)
{
	struct render c = { .r = r, .sb = { out, outlen, 0 } };
	int err;

	if (type)
		snprintf(type, 48, "?");
	if (info)
		memset(info, 0, sizeof(*info));
	if (!outlen)
		return -EINVAL;
	out[0] = 0;
	err = render_obj(&c, addr, 0, type, info);
	if (err) {
		c.sb.len = 0;
		out[0] = 0;
		put_unreadable(&c, addr);
		if (info)
			memset(info, 0, sizeof(*info));
		return -EFAULT;
	}
	return 0;
}

int py_render(struct py_reader *r, uint64_t addr, char *out, size_t outlen, char *type)
{
	return py_render_info(r, addr, out, outlen, type, NULL);
}

/* The name tuple's i-th str into out; "?" if unreadable. */
static void local_name(struct py_reader *r, uint64_t item, char *out, size_t len)
{
	if (remote_read_str(r->pid, r->L, item, out, len) || !out[0])
		snprintf(out, len, "?");
}

/*
 * Reads n names of the tuple at names and n slots at slots into out. The
 * slots are _PyStackRefs from 3.14 on: tag 3 is an int held in the word.
 */
static int read_locals(struct py_reader *r, uint64_t names, uint64_t slots, size_t n,
		       struct py_local *out)
{
	uint64_t items[PY_LOCALS_MAX], vals[PY_LOCALS_MAX];
	size_t i;
	int err;

	if (!n)
		return 0;
	err = remote_read(r->pid, names + r->O.tuple_items, items, n * 8);
	if (!err)
		err = remote_read(r->pid, slots, vals, n * 8);
	for (i = 0; !err && i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		local_name(r, items[i], out[i].name, sizeof(out[i].name));
		out[i].value = vals[i];
		if (r->O.stackref_locals && (vals[i] & 3) == 3) {
			out[i].tagged = true;
			out[i].ival = (int64_t)vals[i] >> 2;
			out[i].value = 0;
		} else if (r->O.stackref_locals) {
			out[i].value = vals[i] & ~(uint64_t)3;
		}
	}
	return err;
}

/* The size of the tuple at code + off into *n (at most 65536), and its address. */
static int names_tuple(struct py_reader *r, uint64_t code, uint16_t off, uint64_t *names,
		       int64_t *n)
{
	if (remote_read(r->pid, code + off, names, 8) || remote_read(r->pid, *names + 16, n, 8))
		return -EFAULT;
	return *n < 0 || *n > 65536 ? -EBADMSG : 0;
}

/*
 * Marks the arguments among the first n locals out (of len the code
 * declares): co_argcount positional ones (the first co_posonlyargcount of
 * them positional-only), then co_kwonlyargcount keyword-only ones, then
 * *args and **kwargs, as CPython orders co_varnames. Counts len cannot hold
 * (a forged code object) mark nothing.
 */
static void mark_params(struct py_reader *r, uint64_t code, struct py_local *out, size_t n,
			int64_t len)
{
	int32_t counts[3], flags;
	int64_t pos, i;

	if (remote_read(r->pid, code + r->O.code_argcount, counts, sizeof(counts)) ||
	    remote_read(r->pid, code + r->O.code_flags, &flags, sizeof(flags)))
		return;
	/* co_argcount, co_posonlyargcount, co_kwonlyargcount */
	if (counts[0] < 0 || counts[1] < 0 || counts[2] < 0 || counts[1] > counts[0] ||
	    (int64_t)counts[0] + counts[2] + !!(flags & 4) + !!(flags & 8) > len)
		return;
	pos = counts[0];
	for (i = 0; i < (int64_t)n; i++)
		out[i].param = i < counts[1]			   ? PY_PARAM_POSONLY :
			       i < pos				   ? PY_PARAM_POS :
			       i < pos + counts[2]		   ? PY_PARAM_KWONLY :
			       i == pos + counts[2] && (flags & 4) ? PY_PARAM_VARARGS :
			       i == pos + counts[2] + !!(flags & 4) && (flags & 8) ?
								     PY_PARAM_VARKW :
								     PY_PARAM_NONE;
}

/*
 * <= 3.10: an argument captured by an inner function has an empty slot and
 * a cell of the same name among the cells (out[nfast..done)): the cell goes
 * in its place. Returns how many locals are left.
 */
static size_t cells_into_args(struct py_local *out, size_t nfast, size_t done)
{
	size_t i, j;

	for (i = 0; i < nfast; i++) {
		if (!out[i].param || out[i].value || out[i].tagged)
			continue;
		for (j = nfast; j < done && strcmp(out[j].name, out[i].name); j++)
			;
		if (j == done)
			continue;
		out[i].value = out[j].value;
		memmove(&out[j], &out[j + 1], (done - j - 1) * sizeof(*out));
		done--;
	}
	return done;
}

int py_frame_locals(struct py_reader *r, uint64_t frame, uint64_t code, struct py_local *out,
		    size_t max, size_t *total)
{
	uint64_t names, slots = frame + r->O.frame_localsplus;
	int64_t len, more[2] = { 0, 0 };
	uint16_t extra[2] = { r->O.code_cellvars, r->O.code_freevars };
	int32_t nlocals;
	size_t n, k, done, nfast;
	int err = names_tuple(r, code, r->O.code_names, &names, &len);

	if (err)
		return err;
	if (r->O.code_nlocals != PYPROF_NO_OFFSET) {
		/* <= 3.10: co_nlocals fast locals named by co_varnames, then cells, then frees */
		if (remote_read(r->pid, code + r->O.code_nlocals, &nlocals, 4))
			return -EFAULT;
		if (nlocals < 0 || nlocals > len)
			return -EBADMSG;
		len = nlocals;
	}
	if (max > PY_LOCALS_MAX)
		max = PY_LOCALS_MAX;
	n = (size_t)len < max ? (size_t)len : max;
	err = read_locals(r, names, slots, n, out);
	if (err)
		return err;
	mark_params(r, code, out, n, len);
	*total = (size_t)len;
	done = nfast = n;
	slots += 8 * (uint64_t)len;
	/* the cells and free variables (<= 3.10): an unreadable part just ends the list */
	for (k = 0; k < 2 && extra[k] != PYPROF_NO_OFFSET; k++) {
		if (names_tuple(r, code, extra[k], &names, &more[k]))
			break;
		n = (size_t)more[k] < max - done ? (size_t)more[k] : max - done;
		if (read_locals(r, names, slots, n, out + done))
			break;
		*total += (size_t)more[k];
		done += n;
		slots += 8 * (uint64_t)more[k];
	}
	n = cells_into_args(out, nfast, done);
	*total -= done - n;
	return (int)n;
}

/* Index and value (of a combined table) of the entry whose key is the str key. */
static int keys_find(struct render *c, uint64_t keys, const char *key, uint64_t *index,
		     uint64_t *value)
{
	uint64_t entries, nentries, i;
	char text[64];
	unsigned esize;
	uint8_t e[24];
	int err = dict_entries(c, keys, &entries, &esize, &nentries);

	for (i = 0; !err && i < nentries && i < (c->scan ? c->scan : PY_RENDER_SCAN); i++) {
		if (rd(c, entries + i * esize, e, esize))
			return -EFAULT;
		if (remote_read_str(c->r->pid, c->r->L, u64_at(e + esize - 16), text,
				    sizeof(text)) ||
		    strcmp(text, key))
			continue;
		*index = i;
		*value = u64_at(e + esize - 8);
		return 0;
	}
	return err ? err : -ENOENT;
}

/* The value of key in the dict at dict (its values array split off or not). */
static int dict_find(struct render *c, uint64_t dict, const char *key, uint64_t *value)
{
	uint8_t head[48];
	uint64_t index, values, v;
	int err = rd(c, dict, head, sizeof(head));

	if (!err)
		err = keys_find(c, u64_at(head + 32), key, &index, value);
	values = err ? 0 : u64_at(head + 40);
	if (!values)
		return err;
	/* a split table: the values are apart, in entry order (3.13+: after an 8-byte header) */
	err = rd(c, values + (c->r->O.managed_dict >= 3 ? 8 : 0) + index * 8, &v, 8);
	*value = v;
	return err;
}

/*
 * The instance attribute attr of obj: from its __dict__, or (3.11+) from
 * the values kept apart from it, keyed by the class's cached keys.
 */
static int object_attr(struct render *rc, uint64_t obj, const char *attr, uint64_t *out)
{
	struct render c = *rc;
	struct py_reader *r = c.r;
	uint64_t type, flags, w[2], keys, index, value = 0, at = 0;
	int64_t dictoffset, basicsize;
	unsigned kind = r->O.managed_dict;
	int err;

	/* w: 3.11's values pointer and the dict (or 3.12's dict-or-values) before the object */
	if (rd(&c, obj - 32, w, sizeof(w)) || rd(&c, obj + 8, &type, 8) ||
	    rd(&c, type + 168, &flags, 8) || rd(&c, type + 288, &dictoffset, 8) ||
	    rd(&c, type + 32, &basicsize, 8))
		return -EFAULT;
	if (!kind || !(flags & TPFLAGS_MANAGED_DICT)) {
		if (dictoffset <= 0 || dictoffset > 4096 || rd(&c, obj + dictoffset, &at, 8))
			return -ENOENT;
		err = dict_find(&c, at, attr, &value);
	} else if (w[1] && !(kind == 2 && (w[1] & 1))) {
		err = dict_find(&c, w[1], attr, &value); /* its __dict__ exists */
	} else {
		if (kind == 1)
			at = w[0]; /* PyDictValues before the object */
		else if (kind == 2)
			at = w[1] + 1; /* in place of the dict, stored less 1 (odd) */
		else if (basicsize > 0 && basicsize <= 4096)
			at = obj + basicsize + 8; /* inline after the object, after a header */
		if (!at)
			return -ENOENT;
		err = rd(&c, type + r->O.heap_cached_keys, &keys, 8);
		if (!err)
			err = keys_find(&c, keys, attr, &index, &value);
		if (!err)
			err = rd(&c, at + index * 8, &value, 8);
	}
	rc->reads = c.reads;
	*out = value;
	return err;
}

int py_object_attr_str(struct py_reader *r, uint64_t obj, const char *attr, char *out,
		       size_t outlen)
{
	struct render c = { .r = r };
	uint64_t value;
	int err = object_attr(&c, obj, attr, &value);

	return err ? err : remote_read_str(r->pid, r->L, value, out, outlen);
}

/* A walk of the interpreter's own structures: many reads, long dicts (sys.modules). */
#define WALK_READS 20000
#define WALK_SCAN 8192

int py_object_attr(struct py_reader *r, uint64_t obj, const char *attr, uint64_t *value)
{
	struct render c = { .r = r, .max_reads = WALK_READS, .scan = WALK_SCAN };

	return object_attr(&c, obj, attr, value);
}

int py_dict_get(struct py_reader *r, uint64_t dict, const char *key, uint64_t *value)
{
	struct render c = { .r = r, .max_reads = WALK_READS, .scan = WALK_SCAN };

	return dict_find(&c, dict, key, value);
}

int py_dict_items(struct py_reader *r, uint64_t dict, uint64_t *keys, uint64_t *values, size_t max)
{
	struct render c = { .r = r, .max_reads = WALK_READS };
	uint8_t head[48], e[PY_DICT_ITEMS * 24];
	uint64_t entries, nentries, i;
	unsigned esize;
	size_t n = 0;
	int err = rd(&c, dict, head, sizeof(head));

	/* a split table (an instance's attributes) has str keys: not what this is for */
	if (!err && u64_at(head + 40))
		return -ENOTSUP;
	if (!err)
		err = dict_entries(&c, u64_at(head + 32), &entries, &esize, &nentries);
	if (err)
		return err;
	if (nentries > PY_DICT_ITEMS)
		nentries = PY_DICT_ITEMS;
	if (nentries && rd(&c, entries, e, nentries * esize))
		return -EFAULT;
	for (i = 0; i < nentries && n < max; i++) {
		keys[n] = u64_at(e + i * esize + esize - 16);
		values[n] = u64_at(e + i * esize + esize - 8);
		n += keys[n] && values[n]; /* deleted entries have neither */
	}
	return (int)n;
}

int py_set_keys(struct py_reader *r, uint64_t set, uint64_t *out, size_t max, size_t *total)
{
	uint64_t head[6], mask, *table;
	size_t i, n = 0;
	int err;

	if (remote_read(r->pid, set, head, sizeof(head)))
		return -EFAULT;
	mask = head[4];
	*total = head[3];
	/* used, mask: a power of two less one; the table is read at once, bounded */
	if (head[3] > LEN_MAX || mask >= PY_SET_SLOTS || (mask & (mask + 1)))
		return -EBADMSG;
	table = malloc((mask + 1) * 16);
	if (!table)
		return -ENOMEM;
	err = remote_read(r->pid, head[5], table, (mask + 1) * 16);
	for (i = 0; !err && i <= mask && n < max; i++)
		if (table[2 * i])
			out[n++] = table[2 * i]; /* the dummy too: callers check each key's type */
	free(table);
	return err ? err : (int)n;
}

int py_list_items(struct py_reader *r, uint64_t list, uint64_t *out, size_t max, size_t *total)
{
	uint64_t head[4];
	size_t n;

	if (remote_read(r->pid, list, head, sizeof(head)))
		return -EFAULT;
	if (head[2] > LEN_MAX)
		return -EBADMSG;
	*total = head[2];
	n = head[2] < max ? head[2] : max;
	if (n && remote_read(r->pid, head[3], out, n * 8))
		return -EFAULT;
	return (int)n;
}

/* len, or less: the bytes from addr to the end of its 4 KiB page. */
static size_t page_rest(uint64_t addr, size_t len)
{
	size_t rest = 4096 - (addr & 4095);

	return rest < len ? rest : len;
}

int py_type_is(struct py_reader *r, uint64_t obj, const char *name)
{
	uint64_t type;
	char text[48];
	unsigned i;

	if (obj < 4096 || remote_read(r->pid, obj + 8, &type, 8))
		return -EFAULT;
	/* the type or one of its first bases, by tp_name */
	for (i = 0; i < PY_TYPE_BASES && type >= 4096; i++) {
		memset(text, 0, sizeof(text));
		/* the name's bytes up to its page's end: it may end a mapping */
		if (remote_read(r->pid, type + TP_NAME, &obj, 8) ||
		    remote_read(r->pid, obj, text, page_rest(obj, sizeof(text) - 1)))
			return -EFAULT;
		if (!strcmp(text, name))
			return 1;
		if (remote_read(r->pid, type + TP_BASE, &type, 8))
			return -EFAULT;
	}
	return 0;
}

int py_type_info(struct py_reader *r, uint64_t type, enum py_kind *kind, const char **name)
{
	struct render c = { .r = r };

	return type_kind(&c, type, kind, name);
}

int py_code_argnames(struct py_reader *r, uint64_t code, char (*out)[64], size_t n)
{
	uint64_t names, items[PY_LOCALS_MAX];
	int64_t len;
	size_t i;
	int err = names_tuple(r, code, r->O.code_names, &names, &len);

	if (err)
		return err;
	if (n > PY_LOCALS_MAX)
		n = PY_LOCALS_MAX;
	if ((int64_t)n > len)
		return -EBADMSG;
	if (n && remote_read(r->pid, names + r->O.tuple_items, items, n * 8))
		return -EFAULT;
	for (i = 0; i < n; i++)
		local_name(r, items[i], out[i], 64);
	return 0;
}

const char *py_numpy_dtype(int32_t type_num)
{
	if (type_num < 0 || type_num >= (int32_t)(sizeof(numpy_dtypes) / sizeof(numpy_dtypes[0])))
		return NULL;
	return numpy_dtypes[type_num];
}

bool py_code_is_cellvar(struct py_reader *r, uint64_t code, const char *name)
{
	uint64_t names, items[16];
	char text[64];
	int64_t len;
	size_t i;

	if (r->O.code_cellvars == PYPROF_NO_OFFSET ||
	    names_tuple(r, code, r->O.code_cellvars, &names, &len) || len <= 0)
		return false;
	if (len > 16)
		len = 16;
	if (remote_read(r->pid, names + r->O.tuple_items, items, (size_t)len * 8))
		return false;
	for (i = 0; i < (size_t)len; i++) {
		local_name(r, items[i], text, sizeof(text));
		if (!strcmp(text, name))
			return true;
	}
	return false;
}
