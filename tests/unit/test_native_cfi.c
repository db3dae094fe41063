/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the check of a target's call frame information before libdw
 * runs it (proc/native_cfi.h): an .eh_frame of one CIE and one FDE, built
 * here byte by byte, passes as gcc writes it and is refused with each of
 * the constructions libdw 0.188 runs without a bound; an .eh_frame_hdr
 * table may name only the FDEs the walk checked.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "proc/native_cfi.h"

#define VADDR 0x2000
#define HDR_VADDR 0x1f00

struct buf {
	uint8_t b[1 << 18];
	size_t n;
};

static void put(struct buf *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void put32(struct buf *o, uint32_t v)
{
	put(o, &v, 4);
}

/* gcc's CIE: "zR", code 1, data -8, return address 16, pcrel|sdata4; def_cfa r7+8, r16 at cfa-8. */
static void cie(struct buf *o)
{
	static const uint8_t body[] = { 0,  0, 0,    0,	   1, 'z', 'R',	 0, 1, 0x78,
					16, 1, 0x1b, 0x0c, 7, 8,   0x90, 1, 0, 0 };

	put32(o, sizeof(body));
	put(o, body, sizeof(body));
}

/* An FDE for [0x1000, 0x1100) after the CIE at 0, with program prog. */
static size_t fde(struct buf *o, const uint8_t *prog, size_t n)
{
	size_t at = o->n, len = 4 + 4 + 4 + 1 + n;
	uint32_t pad = (4 - len % 4) % 4;

	put32(o, (uint32_t)(len + pad));
	put32(o, (uint32_t)(at + 4)); /* back to the CIE at 0 */
	put32(o, 0x1000 - (uint32_t)(VADDR + o->n));
	put32(o, 0x100);
	put(o, "\0", 1); /* no augmentation data */
	put(o, prog, n);
	while (pad--)
		put(o, "\0", 1);
	return at;
}

static int check(const struct buf *o, const struct buf *hdr, char *why)
{
	struct native_cfi_in in = { .data = o->b, .len = o->n, .eh_frame = true, .vaddr = VADDR };

	if (hdr) {
		in.hdr = hdr->b;
		in.hdr_len = hdr->n;
		in.hdr_vaddr = HDR_VADDR;
	}
	why[0] = 0;
	return native_cfi__check(&in, why, 160);
}

static void test_gcc_like_passes(void **state)
{
	static const uint8_t prog[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x0a, 0x41, 0x0b };
	struct buf o = { .n = 0 };
	char why[160];

	(void)state;
	cie(&o);
	fde(&o, prog, sizeof(prog));
	put32(&o, 0); /* the terminator */
	assert_int_equal(check(&o, NULL, why), 0);
}

static void refused(const uint8_t *prog, size_t n, const char *what)
{
	static struct buf o;
	char why[160];

	o.n = 0;
	cie(&o);
	fde(&o, prog, n);
	assert_int_equal(check(&o, NULL, why), -EFBIG);
	assert_non_null(strstr(why, what));
}

static void test_hostile_programs_refused(void **state)
{
	/* DW_CFA_offset_extended r134217726: libdw's state grows to 2 GiB */
	static const uint8_t big_reg[] = { 0x05, 0xfe, 0xff, 0xff, 0x3f, 0x01 };
	/* DW_CFA_register r3 in r131 */
	static const uint8_t reg2[] = { 0x09, 3, 0x83, 0x01 };
	/* an 11-byte LEB128, which libdw reads otherwise */
	static const uint8_t leb[] = { 0x07, 0x80, 0x80, 0x80, 0x80, 0x80,
				       0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
	static uint8_t deep[65], expr[4 + 1100], many[70000];

	(void)state;
	refused(big_reg, sizeof(big_reg), "register past");
	refused(reg2, sizeof(reg2), "register past");
	refused(leb, sizeof(leb), "LEB128");
	memset(deep, 0x0a, sizeof(deep)); /* 65 nested DW_CFA_remember_state */
	refused(deep, sizeof(deep), "remembered states");
	expr[0] = 0x0f, expr[1] = 0xcc, expr[2] = 0x08; /* def_cfa_expression of 1100 bytes */
	refused(expr, sizeof(expr), "expression longer");
	memset(many, 0x41, sizeof(many)); /* 70000 advance_loc: a long program */
	refused(many, sizeof(many), "longer than 64 KiB");
}

static void test_remembered_states_counted(void **state)
{
	static uint8_t pairs[2 * 8100];
	size_t i;

	(void)state;
	/* 8100 remember/restore pairs of 17 rules each: within 1 Mi rules copied */
	for (i = 0; i < sizeof(pairs); i += 2)
		pairs[i] = 0x0a, pairs[i + 1] = 0x0b;
	{
		struct buf o = { .n = 0 };
		char why[160];

		cie(&o);
		fde(&o, pairs, sizeof(pairs));
		assert_int_equal(check(&o, NULL, why), 0);
	}
	/* the same after a rule for register 130: 131 rules each, 1 Mi past */
	{
		static uint8_t prog[3 + sizeof(pairs)];

		prog[0] = 0x07, prog[1] = 0x82, prog[2] = 0x01; /* undefined r130 */
		memcpy(prog + 3, pairs, sizeof(pairs));
		refused(prog, sizeof(prog), "remembered states");
	}
}

/* An .eh_frame_hdr of gcc's encodings whose one table entry names offset fde_off. */
static void hdr_naming(struct buf *h, uint32_t fde_off)
{
	static const uint8_t head[] = { 1, 0x1b, 0x03, 0x3b };

	h->n = 0;
	put(h, head, sizeof(head));
	put32(h, VADDR - (HDR_VADDR + 4)); /* eh_frame_ptr, pc-relative */
	put32(h, 1);			   /* one entry */
	put32(h, 0x1000 - HDR_VADDR);	   /* initial location, header-relative */
	put32(h, VADDR + fde_off - HDR_VADDR);
}

static void test_search_table(void **state)
{
	static const uint8_t prog[] = { 0x41, 0x0e, 16 };
	static struct buf o, h;
	size_t at;
	char why[160];

	(void)state;
	o.n = 0;
	cie(&o);
	at = fde(&o, prog, sizeof(prog));
	hdr_naming(&h, (uint32_t)at);
	assert_int_equal(check(&o, &h, why), 0);
	/* an entry inside the CIE: libdw would run whatever it finds there */
	hdr_naming(&h, 8);
	assert_int_equal(check(&o, &h, why), -EFBIG);
	assert_non_null(strstr(why, "naming no FDE"));
	/* a header for another section: libdw searches linearly, nothing to refuse */
	h.b[4] ^= 0x40;
	assert_int_equal(check(&o, &h, why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc_like_passes),
		cmocka_unit_test(test_hostile_programs_refused),
		cmocka_unit_test(test_remembered_states_counted),
		cmocka_unit_test(test_search_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
