// SPDX-License-Identifier: GPL-2.0-only
/*
 * A target's .eh_frame or .debug_frame, read as libdw reads it (see
 * native_cfi.h), to refuse what libdw would run unbounded. Where this reader
 * is stricter than libdw (a 64-bit entry, an augmentation it does not know,
 * a LEB128 longer than libdw reads) the file is refused too: an entry only
 * libdw can read is one not checked. Where both stop (an entry past the
 * section's end, an opcode libdw rejects) nothing after that runs, so the
 * check stops there too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "native_cfi.h"

#define CIE_CACHE 16
#define MAX_AUGMENTATION 8
#define LEB_MAX_BYTES 10 /* libdw reads no more of one */
#define DW_EH_PE_omit 0xff

struct rd {
	const uint8_t *p, *end;
	bool bad;      /* ran past the end: libdw stops here too */
	bool overlong; /* a LEB128 libdw would read otherwise: refuse */
};

struct cie {
	bool z;	       /* augmentation data follows (in each FDE too) */
	uint64_t regs; /* rules in its initial state (x86-64's ABI has 17) */
	int ptr_size;  /* an FDE's address (and DW_CFA_set_loc's): bytes, -1 LEB128 */
	const uint8_t *prog, *end;
};

struct walk {
	const struct native_cfi_in *in;
	uint32_t *fdes; /* offsets of the FDEs walked, ascending (for .eh_frame_hdr) */
	size_t nfdes, cap;
	uint64_t work, max_work;      /* instruction bytes read, rechecked CIEs included */
	uint64_t cie_ok[CIE_CACHE];   /* offsets + 1 of CIEs checked */
	uint64_t cie_regs[CIE_CACHE]; /* and the size of their initial states */
	const char *why;
};

static uint64_t rd_leb(struct rd *r)
{
	uint64_t v = 0;
	unsigned i;
	uint8_t b;

	for (i = 0;; i++) {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		if (i == LEB_MAX_BYTES) {
			r->overlong = r->bad = true;
			return 0;
		}
		b = *r->p++;
		if (i < 9 || (i == 9 && b <= 1))
			v |= (uint64_t)(b & 0x7f) << (7 * i);
		else
			v = UINT64_MAX;
		if (!(b & 0x80))
			return v;
	}
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return;
	}
	r->p += n;
}

static uint64_t rd_fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if ((uint64_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* Bytes of a pointer encoded as enc (its low four bits): -1 LEB128, 0 not one libdw reads. */
static int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: /* absptr: this reader takes 64-bit files only */
	case 0x04:
	case 0x0c:
		return 8;
	case 0x01:
	case 0x09:
		return -1;
	case 0x02:
	case 0x0a:
		return 2;
	case 0x03:
	case 0x0b:
		return 4;
	}
	return 0;
}

static void rd_ptr(struct rd *r, int size)
{
	if (size < 0)
		rd_leb(r);
	else
		rd_skip(r, (unsigned)size);
}

/* A DW_CFA_*expression's block: its length, then that many bytes. */
static const char *rd_expr(struct rd *r)
{
	uint64_t len = rd_leb(r);

	if (!r->bad && len > NATIVE_CFI_MAX_EXPR)
		return "a DWARF expression longer than 1 KiB";
	rd_skip(r, len);
	return NULL;
}

/* One operation's operands; *reg its register (or 0), *op_end whether libdw stops at it. */
static const char *operands(struct rd *r, uint8_t op, int loc_size, uint64_t *reg, bool *op_end)
{
	switch (op) {
	case 0x00: /* nop */
	case 0x0a: /* remember_state */
	case 0x0b: /* restore_state */
	case 0x2d: /* GNU_window_save */
		return NULL;
	case 0x01: /* set_loc */
		if (!loc_size)
			*op_end = true;
		else
			rd_ptr(r, loc_size);
		return NULL;
	case 0x02:
	case 0x03:
	case 0x04: /* advance_loc1, 2, 4 */
		rd_skip(r, 1u << (op - 0x02));
		return NULL;
	case 0x1d: /* MIPS_advance_loc8 */
		rd_skip(r, 8);
		return NULL;
	case 0x05: /* offset_extended */
	case 0x09: /* register: the second register is only read, but bounded alike */
	case 0x11: /* offset_extended_sf */
	case 0x14: /* val_offset */
	case 0x15: /* val_offset_sf */
	case 0x2f: /* GNU_negative_offset_extended */
		*reg = rd_leb(r);
		if (op == 0x09 && !r->bad)
			*reg |= rd_leb(r);
		else
			rd_leb(r);
		return NULL;
	case 0x06: /* restore_extended */
	case 0x07: /* undefined */
	case 0x08: /* same_value */
	case 0x0d: /* def_cfa_register */
		*reg = rd_leb(r);
		return NULL;
	case 0x0c: /* def_cfa */
	case 0x12: /* def_cfa_sf */
		*reg = rd_leb(r);
		rd_leb(r);
		return NULL;
	case 0x0e: /* def_cfa_offset */
	case 0x13: /* def_cfa_offset_sf */
	case 0x2e: /* GNU_args_size */
		rd_leb(r);
		return NULL;
	case 0x0f: /* def_cfa_expression */
		return rd_expr(r);
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		*reg = rd_leb(r);
		return r->bad ? NULL : rd_expr(r);
	}
	*op_end = true; /* libdw's "invalid CFI": nothing after it runs */
	return NULL;
}

/*
 * A CIE's initial instructions or an FDE's, as libdw's interpreter would run
 * them, from a state of *regs rules (the CIE's): *regs becomes the size the
 * state grows to.
 */
static const char *check_program(const uint8_t *p, const uint8_t *end, int loc_size, uint64_t *regs)
{
	struct rd r = { p, end, false, false };
	uint64_t depth = 0, copied = 0;
	bool op_end = false;
	const char *why;
	uint64_t reg;
	uint8_t op;

	if (end - p > NATIVE_CFI_MAX_PROGRAM)
		return "call frame instructions longer than 64 KiB";
	while (r.p < r.end && !r.bad && !op_end) {
		op = *r.p++;
		reg = 0;
		if (op >> 6 == 1 || op >> 6 == 3) /* advance_loc, restore: operand in the opcode */
			continue;
		if (op >> 6 == 2) { /* offset: register in the opcode, below 64 */
			rd_leb(&r);
			continue;
		}
		why = operands(&r, op, loc_size, &reg, &op_end);
		if (why)
			return why;
		if (reg > NATIVE_CFI_MAX_REG)
			return "a rule for a register past x86-64's last (130)";
		if (reg >= *regs)
			*regs = reg + 1;
		/* each copies the whole state, as large as it has grown */
		if (op == 0x0a &&
		    (++depth > NATIVE_CFI_MAX_DEPTH || (copied += *regs) > NATIVE_CFI_MAX_COPIED))
			return "more remembered states than 64 at once, or too many in all";
		if (op == 0x0b && depth)
			depth--;
	}
	return r.overlong ? "a LEB128 number longer than 10 bytes" : NULL;
}

/*
 * The entry at off: its bytes after the length, [*body, *end), and where the
 * next begins. 1: no entry fits there (libdw stops); -1: a 64-bit one.
 */
static int entry_at(const struct native_cfi_in *in, uint64_t off, const uint8_t **body,
		    const uint8_t **end, uint64_t *next)
{
	struct rd r = { in->data + off, in->data + in->len, false, false };
	uint64_t len;

	if (off >= in->len)
		return 1;
	len = rd_fixed(&r, 4);
	if (r.bad)
		return 1;
	if (len >= 0xfffffff0)
		return -1;
	if (len > (uint64_t)(r.end - r.p))
		return 1;
	*body = r.p;
	*end = r.p + len;
	*next = off + 4 + len;
	return 0;
}

/* The augmentation string's letters, after 'z': each one's data, to learn the FDE encoding. */
static const char *augmentation(struct rd *r, const char *aug, struct cie *c)
{
	uint8_t enc;

	for (; *aug; aug++)
		switch (*aug) {
		case 'R':
			enc = (uint8_t)rd_fixed(r, 1);
			c->ptr_size = enc_size(enc);
			if (!c->ptr_size)
				return "an FDE pointer encoding libdw does not read";
			break;
		case 'P':
			enc = (uint8_t)rd_fixed(r, 1);
			if (!enc_size(enc))
				return "a personality encoding libdw does not read";
			rd_ptr(r, enc_size(enc));
			break;
		case 'L':
			rd_fixed(r, 1);
			break;
		case 'S':
		case 'B':
			break;
		default:
			return "an augmentation libdw reads differently";
		}
	return NULL;
}

/* The CIE whose entry starts at off; NULL, or why the file is refused. *c is set when NULL. */
static const char *parse_cie(const struct native_cfi_in *in, uint64_t off, struct cie *c, bool *bad)
{
	const uint8_t *body, *end, *aug_end;
	char aug[MAX_AUGMENTATION + 1];
	const char *why;
	uint64_t next, id, n;
	struct rd r;
	uint8_t version;
	size_t k = 0;
	int ret = entry_at(in, off, &body, &end, &next);

	*bad = ret > 0;
	if (ret)
		return ret > 0 ? NULL : "a 64-bit call frame entry";
	r = (struct rd){ body, end, false, false };
	id = rd_fixed(&r, 4);
	version = (uint8_t)rd_fixed(&r, 1);
	if (r.bad || id != (in->eh_frame ? 0 : 0xffffffff) ||
	    (version != 1 && version != 3 && version != 4)) {
		*bad = true; /* not a CIE libdw takes: the FDEs naming it are refused by libdw */
		return NULL;
	}
	while (r.p < r.end && *r.p && k < MAX_AUGMENTATION)
		aug[k++] = (char)*r.p++;
	aug[k] = 0;
	if (r.p >= r.end || *r.p++)
		return "a CIE augmentation string too long or unterminated";
	if (version >= 4 && (rd_fixed(&r, 1) != 8 || rd_fixed(&r, 1) != 0))
		return "a CIE with an address size other than 8";
	rd_leb(&r); /* code alignment */
	rd_leb(&r); /* data alignment */
	n = version == 1 ? rd_fixed(&r, 1) : rd_leb(&r);
	/* libdw takes a number cut by the entry's end as UINT64_MAX */
	if (r.bad)
		return "a CIE whose fields run past its end";
	if (n > NATIVE_CFI_MAX_REG)
		return "a return address register past x86-64's last (130)";
	*c = (struct cie){ .z = aug[0] == 'z', .ptr_size = 8, .end = end };
	if (aug[0] && aug[0] != 'z')
		return "an augmentation libdw reads differently";
	if (c->z) {
		n = rd_leb(&r);
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return "a CIE's augmentation data past its end";
		aug_end = r.p + n;
		r.end = aug_end;
		why = augmentation(&r, aug + 1, c);
		if (why)
			return why;
		r.p = aug_end;
		r.end = end;
	}
	if (r.overlong)
		return "a LEB128 number longer than 10 bytes";
	*bad = r.bad;
	c->prog = r.p;
	return NULL;
}

/* The CIE at off, read and its instructions checked (once: a few CIEs serve every FDE). */
static const char *check_cie(struct walk *w, uint64_t off, struct cie *c, bool *bad)
{
	uint64_t *slot = &w->cie_ok[off % CIE_CACHE];
	const char *why = parse_cie(w->in, off, c, bad);

	if (why || *bad)
		return why;
	if (*slot == off + 1) {
		c->regs = w->cie_regs[off % CIE_CACHE];
		return NULL;
	}
	w->work += (uint64_t)(c->end - c->prog);
	if (w->work > w->max_work)
		return "call frame information too costly to check (CIEs read again and again)";
	c->regs = 17;
	why = check_program(c->prog, c->end, c->ptr_size, &c->regs);
	if (!why) {
		*slot = off + 1;
		w->cie_regs[off % CIE_CACHE] = c->regs;
	}
	return why;
}

/* The FDE whose entry is [body, end) at off (body: its CIE pointer). */
static const char *check_fde(struct walk *w, uint64_t off, const uint8_t *body, const uint8_t *end)
{
	struct rd r = { body, end, false, false };
	uint64_t id = rd_fixed(&r, 4), cie_off;
	const char *why;
	struct cie c;
	bool bad;

	if (w->in->eh_frame) {
		/* the pointer counts back from where it stands */
		if (id > off + 4)
			return NULL; /* no CIE there: libdw refuses the FDE */
		cie_off = off + 4 - id;
	} else {
		cie_off = id;
	}
	/* its instructions, its addresses and augmentation data (a few bytes in real ones) */
	if (end - body > NATIVE_CFI_MAX_PROGRAM + 64)
		return "an FDE longer than 64 KiB";
	why = check_cie(w, cie_off, &c, &bad);
	if (why || bad)
		return why;
	rd_ptr(&r, c.ptr_size); /* initial location */
	rd_ptr(&r, c.ptr_size); /* address range */
	if (c.z)
		rd_skip(&r, rd_leb(&r));
	if (r.overlong)
		return "a LEB128 number longer than 10 bytes";
	if (r.bad)
		return NULL;
	w->work += (uint64_t)(end - r.p);
	return check_program(r.p, end, c.ptr_size, &c.regs);
}

static int add_fde(struct walk *w, uint64_t off)
{
	uint32_t *more;

	if (w->nfdes == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		more = realloc(w->fdes, w->cap * sizeof(*more));
		if (!more)
			return -ENOMEM;
		w->fdes = more;
	}
	w->fdes[w->nfdes++] = (uint32_t)off;
	return 0;
}

/* Every entry from the section's start, as libdw's linear search goes. */
static const char *walk_entries(struct walk *w)
{
	const struct native_cfi_in *in = w->in;
	const uint8_t *body, *end;
	uint64_t off = 0, next, id, n = 0;
	const char *why;
	struct rd r;
	struct cie c;
	bool bad;
	int ret;

	while ((ret = entry_at(in, off, &body, &end, &next)) == 0) {
		if (++n > NATIVE_CFI_MAX_ENTRIES)
			return "more than 4 million call frame entries";
		r = (struct rd){ body, end, false, false };
		id = rd_fixed(&r, 4);
		if (r.bad) /* a zero terminator, or an entry too short to be one */
			why = NULL;
		else if (id == (in->eh_frame ? 0 : 0xffffffff))
			why = check_cie(w, off, &c, &bad);
		else if (!(why = check_fde(w, off, body, end)) && add_fde(w, off))
			why = "out of memory";
		if (why)
			return why;
		off = next;
	}
	return ret < 0 ? "a 64-bit call frame entry" : NULL;
}

/* A value of the .eh_frame_hdr at *p (in [hdr, end)): 0, or -1 for one this reader does not take. */
static int hdr_value(const struct native_cfi_in *in, const uint8_t **p, const uint8_t *end,
		     uint8_t enc, uint64_t *v)
{
	uint64_t at = in->hdr_vaddr + (uint64_t)(*p - in->hdr);
	struct rd r = { *p, end, false, false };
	int size = enc_size(enc);

	if (size != 4 && size != 8)
		return -1;
	*v = rd_fixed(&r, (unsigned)size);
	if (r.bad)
		return -1;
	if (size == 4 && (enc & 0x08)) /* signed */
		*v = (uint64_t)(int64_t)(int32_t)*v;
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10: /* pc-relative */
		*v += at;
		break;
	case 0x30: /* relative to the header */
		*v += in->hdr_vaddr;
		break;
	default:
		return -1;
	}
	*p = r.p;
	return 0;
}

int native_cfi__hdr_frame(const uint8_t *hdr, size_t len, uint64_t hdr_vaddr, uint64_t *frame)
{
	struct native_cfi_in in = { .hdr = hdr, .hdr_len = len, .hdr_vaddr = hdr_vaddr };
	const uint8_t *p = hdr + 4;

	if (len < 4 || hdr[0] != 1 || hdr[1] == DW_EH_PE_omit)
		return -ENOENT;
	return hdr_value(&in, &p, hdr + len, hdr[1], frame) ? -ENOENT : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Each FDE the search table names must be one the walk checked. */
static const char *check_table(struct walk *w)
{
	const struct native_cfi_in *in = w->in;
	const uint8_t *p = in->hdr + 4, *end = in->hdr + in->hdr_len;
	uint64_t frame, count, i, loc, fde;
	uint32_t key;
	uint8_t count_enc, table_enc;

	if (in->hdr_len < 4 || in->hdr[0] != 1 || in->hdr[1] == DW_EH_PE_omit)
		return NULL; /* libdw takes no CFI from this file at all */
	count_enc = in->hdr[2];
	table_enc = in->hdr[3];
	if (hdr_value(in, &p, end, in->hdr[1], &frame))
		return "an .eh_frame_hdr this reader does not take";
	if (frame != in->vaddr || count_enc == DW_EH_PE_omit)
		return NULL; /* not this section's, or no table: libdw searches linearly */
	if (hdr_value(in, &p, end, count_enc, &count))
		return "an .eh_frame_hdr this reader does not take";
	if (!count || table_enc == DW_EH_PE_omit || enc_size(table_enc) < 0)
		return NULL;
	if (table_enc != 0x3b)
		return "an .eh_frame_hdr table encoded other than the linkers do";
	if (count > (uint64_t)(end - p) / 8)
		return NULL; /* libdw refuses the table, and the file's CFI with it */
	for (i = 0; i < count; i++) {
		if (hdr_value(in, &p, end, table_enc, &loc) ||
		    hdr_value(in, &p, end, table_enc, &fde))
			return "an .eh_frame_hdr this reader does not take";
		key = (uint32_t)(fde - in->vaddr);
		if (fde - in->vaddr >= in->len || !w->nfdes ||
		    !bsearch(&key, w->fdes, w->nfdes, sizeof(*w->fdes), cmp_u32))
			return "an .eh_frame_hdr entry naming no FDE of the section";
	}
	return NULL;
}

int native_cfi__check(const struct native_cfi_in *in, char *why, size_t whylen)
{
	struct walk w = { .in = in, .max_work = 8 * (uint64_t)in->len + (1u << 20) };
	const char *bad;

	if (in->len > UINT32_MAX)
		bad = "call frame information larger than 4 GiB";
	else if (!(bad = walk_entries(&w)) && in->eh_frame && in->hdr)
		bad = check_table(&w);
	free(w.fdes);
	if (!bad)
		return 0;
	snprintf(why, whylen, "unwind tables libdw would run unbounded: %s", bad);
	return -EFBIG; /* out of memory too: what was not checked is not given to libdw */
}
