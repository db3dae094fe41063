// SPDX-License-Identifier: GPL-2.0-only
/*
 * --native's check of a target's call frame information (native_cfi.c) on
 * any .eh_frame or .debug_frame bytes and any .eh_frame_hdr: nothing read
 * outside them, and what it passes is within its bounds as libdw itself
 * reads the entries (dwarf_next_cfi over the same bytes): every CIE's and
 * FDE's instructions at most NATIVE_CFI_MAX_PROGRAM, every return address
 * register at most NATIVE_CFI_MAX_REG.
 *
 * Input: a flags byte (bit 0: .eh_frame, else .debug_frame; bit 1: with the
 * header), the section's address and the header's (little-endian u64 each),
 * the header's length (u32) and bytes, then the section's bytes. Seeds are
 * the sections of real libraries and of the crafted ones the tests use
 * (tests/fuzz/corpus/native_cfi/).
 */
#define _GNU_SOURCE
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "proc/native_cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libdw's own walk of the entries from the start, checked against the bounds. */
static void libdw_agrees(const struct native_cfi_in *in)
{
	static unsigned char ident[EI_NIDENT] = { ELFMAG0,    ELFMAG1,	   ELFMAG2,   ELFMAG3,
						  ELFCLASS64, ELFDATA2LSB, EV_CURRENT };
	Elf_Data d = { .d_buf = (void *)in->data, .d_size = in->len, .d_type = ELF_T_BYTE };
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int k;

	for (k = 0; k < 100000 && off != (Dwarf_Off)-1; k++, off = next) {
		if (dwarf_next_cfi(ident, &d, in->eh_frame, off, &next, &e))
			break;
		if (dwarf_cfi_cie_p(&e)) {
			if (e.cie.initial_instructions_end - e.cie.initial_instructions >
				    NATIVE_CFI_MAX_PROGRAM ||
			    e.cie.return_address_register > NATIVE_CFI_MAX_REG)
				abort();
		} else if (e.fde.end - e.fde.start > NATIVE_CFI_MAX_PROGRAM + 64) {
			abort(); /* its instructions, addresses and augmentation data */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct native_cfi_in in = { 0 };
	uint8_t *section, *hdr, flags;
	uint32_t hdr_len;
	char why[160];

	if (size < 21)
		return 0;
	flags = data[0];
	in.eh_frame = flags & 1;
	memcpy(&in.vaddr, data + 1, 8);
	memcpy(&in.hdr_vaddr, data + 9, 8);
	memcpy(&hdr_len, data + 17, 4);
	data += 21, size -= 21;
	hdr_len = hdr_len < size ? hdr_len : (uint32_t)size;
	/* copies of their own, so that a read past either is an ASan report */
	hdr = malloc(hdr_len ? hdr_len : 1);
	section = malloc(size - hdr_len ? size - hdr_len : 1);
	if (!hdr || !section)
		abort();
	memcpy(hdr, data, hdr_len);
	memcpy(section, data + hdr_len, size - hdr_len);
	in.data = section;
	in.len = size - hdr_len;
	if (flags & 2) {
		in.hdr = hdr;
		in.hdr_len = hdr_len;
	}
	if (native_cfi__check(&in, why, sizeof(why)) == 0)
		libdw_agrees(&in);
	else if (strlen(why) >= sizeof(why) || !why[0])
		abort();
	free(hdr);
	free(section);
	return 0;
}
