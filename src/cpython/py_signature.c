// SPDX-License-Identifier: GPL-2.0-only
/*
 * --signatures: reading a sampled frame's arguments (offsets for BPF) and
 * naming them (the text of a signature record). The BPF side reads at the
 * tick, while the frame is live; what is read here later is only what lives
 * as long as the types do: type objects and numpy dtype descriptors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "remote_mem.h"
#include "cpython/py_signature.h"
#include "util/hashmap.h"

int py_sig_offsets__for(uint32_t hexversion, bool free_threaded, struct py_sig_offsets *out)
{
	unsigned minor = (hexversion >> 16) & 0xff;
	struct py_obj_layout O;

	if (free_threaded || py_layout__objects(hexversion, &O))
		return -ENOTSUP;
	memset(out, 0, sizeof(*out));
	out->frame_localsplus = O.frame_localsplus;
	out->stackref = O.stackref_locals;
	/* measured on 3.8.18-3.10.13, 3.11.2/.7, 3.12.1, 3.13.0/.5, 3.14.8/.10, 3.15.2 */
	/* co_argcount at 16 / 56 / 52, co_flags at 36 / 48 / 48 (<=3.10, 3.11, 3.12+) */
	out->code_counts = minor <= 10 ? 16 : 48;
	out->argcount = minor <= 10 ? 0 : minor == 11 ? 8 : 4;
	out->flags = minor <= 10 ? 20 : 0;
	return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return hash_u64(h ^ v) + 0x9e3779b97f4a7c15ULL;
}

/* The kind of an argument's type; PYK_OTHER if it has none or it cannot be read. */
static enum py_kind arg_kind(struct py_reader *r, const struct py_sig_arg *a, const char **name)
{
	enum py_kind kind = PYK_OTHER;

	*name = NULL;
	if (a->flags & (PY_SIG_UNBOUND | PY_SIG_TAGGED_INT | PY_SIG_UNREAD))
		return PYK_OTHER;
	if (py_type_info(r, a->type, &kind, name))
		return PYK_OTHER;
	return kind;
}

uint64_t py_signature_key(struct py_reader *r, const struct py_sig_frame *f)
{
	uint64_t h = mix(mix(f->code, f->fingerprint), ((uint64_t)f->nargs << 16) | f->nread);
	const char *name;
	unsigned i, d;

	for (i = 0; i < f->nread && i < PY_SIG_ARGS; i++) {
		const struct py_sig_arg *a = &f->args[i];

		h = mix(h, a->flags & (PY_SIG_UNBOUND | PY_SIG_TAGGED_INT | PY_SIG_UNREAD));
		h = mix(h, a->type);
		if (arg_kind(r, a, &name) != PYK_NDARRAY)
			continue;
		h = mix(h, a->descr);
		h = mix(h, ((uint64_t)(uint32_t)a->nd << 8) | (a->flags & PY_SIG_DIMS));
		for (d = 0; (a->flags & PY_SIG_DIMS) && d < PY_SIG_NDIM && (int)d < a->nd; d++)
			h = mix(h, a->dims[d]);
	}
	return h;
}

/* An array as ndarray[float64, (500, 400)]: the shape sent, the dtype read now. */
static void put_ndarray(struct py_reader *r, const struct py_sig_arg *a, char *out, size_t len)
{
	int32_t type_num = -1;
	const char *dtype;
	size_t at;
	int i;

	if (a->descr >= 4096)
		remote_read(r->pid, a->descr + 28, &type_num, 4); /* PyArray_Descr.type_num */
	dtype = py_numpy_dtype(type_num);
	at = (size_t)snprintf(out, len, "ndarray[%s, (", dtype ? dtype : "?");
	if (!(a->flags & PY_SIG_DIMS) || a->nd < 1 || a->nd > PY_SIG_NDIM) {
		snprintf(out + (at < len ? at : len - 1), len - (at < len ? at : len - 1),
			 a->nd == 0 ? ")]" : "%d dims)]", a->nd);
		return;
	}
	for (i = 0; i < a->nd && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%" PRId64, i ? ", " : "",
				       (int64_t)a->dims[i]);
	if (at < len)
		snprintf(out + at, len - at, a->nd == 1 ? ",)]" : ")]");
}

/* The text of one argument's type. */
static void put_type(struct py_reader *r, const struct py_sig_arg *a, char *out, size_t len)
{
	const char *name;
	enum py_kind kind = arg_kind(r, a, &name);

	if (a->flags & PY_SIG_TAGGED_INT)
		snprintf(out, len, "int");
	else if (a->flags & PY_SIG_UNBOUND)
		snprintf(out, len, "<unbound>");
	else if (kind == PYK_NDARRAY)
		put_ndarray(r, a, out, len);
	else if (kind == PYK_NONE)
		snprintf(out, len, "None");
	else if (name)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "<unreadable>");
}

int py_signature_text(struct py_reader *r, const struct py_sig_frame *f, char *out, size_t outlen)
{
	char names[PY_SIG_ARGS][64], type[128];
	unsigned n = f->nread < PY_SIG_ARGS ? f->nread : PY_SIG_ARGS, i;
	size_t at = 0;
	int err = py_code_argnames(r, f->code, names, n);

	if (err)
		for (i = 0; i < n; i++)
			snprintf(names[i], sizeof(names[i]), "?");
	out[0] = 0;
	at = (size_t)snprintf(out, outlen, "(");
	for (i = 0; i < n && at < outlen; i++) {
		put_type(r, &f->args[i], type, sizeof(type));
		/* <= 3.10: a captured argument's slot is empty, its cell elsewhere */
		if ((f->args[i].flags & PY_SIG_UNBOUND) && !err &&
		    py_code_is_cellvar(r, f->code, names[i]))
			snprintf(type, sizeof(type), "cell");
		at += (size_t)snprintf(out + at, outlen - at, "%s%s: %s", i ? ", " : "", names[i],
				       type);
	}
	if (at < outlen && f->nargs > n)
		at += (size_t)snprintf(out + at, outlen - at, "%s...", n ? ", " : "");
	if (at < outlen)
		snprintf(out + at, outlen - at, ")");
	else
		memcpy(out + outlen - 5, "...)", 5);
	return err;
}
