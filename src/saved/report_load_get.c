// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved profile loader's checked accessors: each reads one JSON value of
 * the type and range the schema gives it, or says where the file is wrong.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "report_load.h"

void ld_at(char *w, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w, len, fmt, ap); /* a place cut short still says where */
	va_end(ap);
}

int ld_fail(struct ld *l, const char *where, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (where && *where)
		snprintf(l->why, l->whylen, "%s: not a valid pybpfprof profile: %s: %s", l->name,
			 where, what);
	else
		snprintf(l->why, l->whylen, "%s: %s", l->name, what);
	return -EINVAL;
}

const struct jval *ld_get(struct ld *l, const struct jval *obj, const char *where, const char *key)
{
	const struct jval *v = jv_is_object(obj) ? jv_get(obj, key) : NULL;

	if (!jv_is_object(obj))
		ld_fail(l, where, "not an object");
	else if (!v)
		ld_fail(l, where, "no \"%s\"", key);
	return v;
}

int ld_array(struct ld *l, const struct jval *v, const char *where, size_t n, size_t max,
	     size_t *len)
{
	if (!v) /* missing: ld_get said so */
		return -EINVAL;
	if (!jv_is_array(v))
		return ld_fail(l, where, "not an array");
	*len = jv_size(v);
	if (n && *len != n)
		return ld_fail(l, where, "%zu entries instead of %zu", *len, n);
	if (*len > max)
		return ld_fail(l, where, "%zu entries, more than %zu", *len, max);
	return 0;
}

int ld_int(struct ld *l, const struct jval *v, const char *where, long long lo, long long hi,
	   long long *out)
{
	long long x;

	if (!v) /* missing: ld_get said so */
		return -EINVAL;
	if (!jv_is_integer(v))
		return ld_fail(l, where, "not an integer");
	x = jv_int(v);
	if (x < lo || x > hi)
		return ld_fail(l, where, "%lld is out of range (%lld to %lld)", x, lo, hi);
	*out = x;
	return 0;
}

int ld_u64(struct ld *l, const struct jval *v, const char *where, uint64_t max, uint64_t *out)
{
	long long x = 0;
	int err = ld_int(l, v, where, 0, max > LLONG_MAX ? LLONG_MAX : (long long)max, &x);

	if (!err)
		*out = (uint64_t)x;
	return err;
}

int ld_double(struct ld *l, const struct jval *v, const char *where, double lo, double hi,
	      double *out)
{
	double d;

	if (!v) /* missing: ld_get said so */
		return -EINVAL;
	if (!jv_is_number(v))
		return ld_fail(l, where, "not a number");
	d = jv_number(v);
	if (!isfinite(d) || d < lo || d > hi)
		return ld_fail(l, where, "%g is out of range (%g to %g)", d, lo, hi);
	*out = d;
	return 0;
}

int ld_bool(struct ld *l, const struct jval *v, const char *where, bool *out)
{
	if (!v) /* missing: ld_get said so */
		return -EINVAL;
	if (!jv_is_boolean(v))
		return ld_fail(l, where, "not true or false");
	*out = jv_is_true(v);
	return 0;
}

int ld_str(struct ld *l, const struct jval *v, const char *where, size_t max, const char **out)
{
	if (!v) /* missing: ld_get said so */
		return -EINVAL;
	if (!jv_is_string(v))
		return ld_fail(l, where, "not a string");
	*out = jv_str(v);
	if (jv_strlen(v) > max)
		return ld_fail(l, where, "a string of %zu bytes, more than %zu", jv_strlen(v), max);
	if (strlen(*out) != jv_strlen(v))
		return ld_fail(l, where, "a string with a NUL character");
	return 0;
}

int ld_u64s(struct ld *l, const struct jval *v, const char *where, uint64_t *out, size_t n)
{
	size_t i, len = 0;
	char w[LD_WHERE];

	if (ld_array(l, v, where, n, n, &len))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		if (ld_u64(l, jv_at(v, i), w, UINT64_MAX, &out[i]))
			return -EINVAL;
	}
	return 0;
}

int ld_frames(struct ld *l, const struct jval *e, size_t at, const char *where, size_t min,
	      uint32_t *out, uint32_t *n)
{
	const struct jval *v = jv_at(e, at);
	size_t i, len = 0;
	uint64_t x;
	char wa[LD_WHERE], w[LD_WHERE];

	ld_at(wa, sizeof(wa), "%s[%zu]", where, at);
	if (ld_array(l, v, wa, 0, REPORT_LOAD_MAX_DEPTH, &len))
		return -EINVAL;
	if (len < min)
		return ld_fail(l, wa, "a stack without frames");
	for (i = 0; i < len; i++) {
		ld_at(w, sizeof(w), "%s[%zu]", wa, i);
		if (ld_u64(l, jv_at(v, i), w, UINT32_MAX, &x))
			return -EINVAL;
		if (x >= l->p->nframes)
			return ld_fail(l, w, "frame %llu does not exist (%zu frames)",
				       (unsigned long long)x, l->p->nframes);
		out[i] = (uint32_t)x;
	}
	*n = (uint32_t)len;
	return 0;
}
