// SPDX-License-Identifier: GPL-2.0-only
/*
 * numpy's scalars by value (see py_scalars.h). numpy keeps a scalar's value
 * right after the object's header (PyArrayScalar's obval), in the C type
 * its name says; a float is printed as the shortest text that reads back as
 * the same value in its own precision, as numpy and Python print them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "py_scalars.h"

/*
 * numpy's scalar types (static types of numpy's C code), named as numpy 1
 * and 2 name them (read live from numpy 1.24.2): kind b(ool), i(nt),
 * u(nsigned), f(loat), c(omplex), and size in bytes.
 */
static const struct {
	const char *name;
	char kind;
	uint8_t size;
} scalars[] = {
	{ "numpy.bool_", 'b', 1 },	 { "numpy.bool", 'b', 1 },
	{ "numpy.int8", 'i', 1 },	 { "numpy.uint8", 'u', 1 },
	{ "numpy.int16", 'i', 2 },	 { "numpy.uint16", 'u', 2 },
	{ "numpy.int32", 'i', 4 },	 { "numpy.uint32", 'u', 4 },
	{ "numpy.int64", 'i', 8 },	 { "numpy.uint64", 'u', 8 },
	{ "numpy.longlong", 'i', 8 },	 { "numpy.ulonglong", 'u', 8 },
	{ "numpy.float16", 'f', 2 },	 { "numpy.float32", 'f', 4 },
	{ "numpy.float64", 'f', 8 },	 { "numpy.float128", 'f', 16 },
	{ "numpy.longdouble", 'f', 16 }, { "numpy.complex64", 'c', 8 },
	{ "numpy.complex128", 'c', 16 },
};

static int scalar(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (!strcmp(name, scalars[i].name))
			return (int)i;
	return -1;
}

unsigned py_npscalar_size(const char *name)
{
	int k = scalar(name);

	return k < 0 ? 0 : scalars[k].size;
}

/* IEEE half precision, for numpy.float16. */
static double half_value(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0  ? ldexp(m, -24) :
		   e == 31 ? (m ? NAN : INFINITY) :
			     ldexp(m + 1024, e - 25);

	return h & 0x8000 ? -v : v;
}

/* The half nearest to d (ties to even), as numpy rounds to float16. */
static uint16_t half_of(double d)
{
	uint16_t sign = signbit(d) ? 0x8000 : 0;
	double f, m;
	int e;

	d = fabs(d);
	if (isnan(d))
		return sign | 0x7e00;
	if (d >= 65520.0)
		return sign | 0x7c00;
	if (d < 0x1p-14)
		return sign | (uint16_t)rint(d * 0x1p24); /* 1024 is the smallest normal's bits */
	f = frexp(d, &e);
	m = rint((f * 2.0 - 1.0) * 1024.0);
	if (m == 1024.0) {
		m = 0;
		e++;
	}
	return e - 1 > 15 ? sign | 0x7c00 : sign | (uint16_t)((e + 14) << 10) | (uint16_t)m;
}

/* Whether back is v once both are rounded to a float of size bytes (2, 4 or 8). */
static bool same_value(double back, double v, unsigned size)
{
	if (isnan(v))
		return true;
	if (size == 2)
		return half_of(back) == half_of(v);
	if (size == 4)
		return (float)back == (float)v;
	return back == v;
}

/*
 * The shortest text of v, a float of size bytes (2, 4, 8), that reads back
 * as the same value; whole: ".0" after a whole number, as Python prints one.
 */
static void real_text(double v, unsigned size, bool whole, char *out, size_t len)
{
	char tmp[32]; /* "-1.2345678901234567e-308" at most */
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*g", p, v);
		if (same_value(strtod(tmp, NULL), v, size))
			break;
	}
	snprintf(out, len, "%s%s", tmp, whole && !strpbrk(tmp, ".einIN") ? ".0" : "");
}

/* A float of size bytes (2, 4, 8; 16: x86's 80-bit long double, 21 digits) at p. */
static void float_text(const uint8_t *p, unsigned size, bool whole, char *out, size_t len)
{
	long double ld;
	uint16_t h;
	float f;
	double d;

	switch (size) {
	case 2:
		memcpy(&h, p, 2);
		real_text(half_value(h), 2, whole, out, len);
		return;
	case 4:
		memcpy(&f, p, 4);
		real_text(f, 4, whole, out, len);
		return;
	case 16:
		memcpy(&ld, p, sizeof(ld));
		snprintf(out, len, "%.21Lg", ld);
		if (whole && !strpbrk(out, ".einIN") && strlen(out) + 2 < len)
			strcat(out, ".0");
		return;
	default:
		memcpy(&d, p, 8);
		real_text(d, 8, whole, out, len);
	}
}

/* An integer of n bytes (1, 2, 4, 8) at v, signed or not. */
static void int_text(const uint8_t *v, unsigned n, bool sign, char *out, size_t len)
{
	uint64_t u = 0;

	memcpy(&u, v, n);
	if (sign)
		snprintf(out, len, "%" PRId64,
			 n < 8 ? (int64_t)(u << (64 - 8 * n)) >> (64 - 8 * n) : (int64_t)u);
	else
		snprintf(out, len, "%" PRIu64, u);
}

void py_npscalar_text(const char *name, const uint8_t *v, char *out, size_t outlen)
{
	int k = scalar(name);
	char a[40], b[40];
	unsigned n;

	if (!outlen)
		return;
	out[0] = 0;
	if (k < 0)
		return;
	n = scalars[k].size;
	switch (scalars[k].kind) {
	case 'b':
		snprintf(out, outlen, "%s", v[0] ? "np.True_" : "np.False_");
		return;
	case 'i':
	case 'u':
		int_text(v, n, scalars[k].kind == 'i', a, sizeof(a));
		break;
	case 'c':
		/* Python's complex: (1-2j), the parts without ".0" */
		float_text(v, n / 2, false, a, sizeof(a));
		float_text(v + n / 2, n / 2, false, b, sizeof(b));
		snprintf(out, outlen, "np.%s(%s%s%sj)", name + 6, a, b[0] == '-' ? "" : "+", b);
		return;
	default:
		float_text(v, n, true, a, sizeof(a));
	}
	snprintf(out, outlen, "np.%s(%s)", name + 6, a);
}
