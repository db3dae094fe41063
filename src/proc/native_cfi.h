/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A target's call frame information, checked before libdw runs it
 * (native_guard.c). libdw's CFA interpreter (0.188) trusts what it reads:
 * a rule for register N grows the frame state to N + 1 rules, cleared, up to
 * 134 million of them (2 GiB), and does so again for every frame it unwinds
 * through that code; each DW_CFA_remember_state copies the whole state; an
 * entry's program and expressions are read to their end at every frame. A
 * 15 KB library with one such rule made pybpfprof take 1 GB and 6 s for
 * -d 2, keeping 2 samples. So every CIE and FDE libdw can reach is read here
 * first, and a file whose tables go past the bounds below is not given to
 * libdw at all (its frames end the unwind, named by offset).
 *
 * Which entries libdw can reach: those of the section's walk from its start
 * (libdw's linear search), and those the .eh_frame_hdr search table names
 * (which may point anywhere): each must be an FDE the walk found, or the
 * file is refused.
 */
#ifndef PYBPFPROF_NATIVE_CFI_H
#define PYBPFPROF_NATIVE_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* x86-64's DWARF registers end at 130 (k7 is 125): one state is then 2 KiB. */
#define NATIVE_CFI_MAX_REG 130
/* One CIE's or FDE's instructions (real ones: under 1 KiB; a huge function's, a few). */
#define NATIVE_CFI_MAX_PROGRAM (64 << 10)
/* A DWARF expression in a rule (real ones: PLT stubs and signal frames, under 64 bytes). */
#define NATIVE_CFI_MAX_EXPR 1024
/*
 * DW_CFA_remember_state: nested at once, and the register rules they copy in
 * all of one program, counted as the largest state (Debian's libpython3.14
 * has 1033 in its eval loop's FDE, of 17 rules each).
 */
#define NATIVE_CFI_MAX_DEPTH 64
#define NATIVE_CFI_MAX_COPIED (1u << 20)
/* Entries of one section (libxul has some 300 thousand). */
#define NATIVE_CFI_MAX_ENTRIES (4u << 20)

struct native_cfi_in {
	const uint8_t *data; /* the .eh_frame or .debug_frame bytes */
	size_t len;
	bool eh_frame;	/* .eh_frame's CIE pointers and ids, else .debug_frame's */
	uint64_t vaddr; /* where data is in the file's address space (.eh_frame) */
	/* .eh_frame_hdr, if libdw has one to use with this .eh_frame (else NULL) */
	const uint8_t *hdr;
	size_t hdr_len;
	uint64_t hdr_vaddr;
};

/*
 * 0 if every entry libdw can reach in in's section is within the bounds;
 * else -EFBIG (or -ENOMEM), with why, a sentence naming what. Pure: reads
 * in's bytes only.
 */
int native_cfi__check(const struct native_cfi_in *in, char *why, size_t whylen);

/*
 * Where the .eh_frame an .eh_frame_hdr of len bytes (at hdr_vaddr) names
 * begins: 0 with *frame, or -ENOENT (libdw would find none through it).
 */
int native_cfi__hdr_frame(const uint8_t *hdr, size_t len, uint64_t hdr_vaddr, uint64_t *frame);

#endif
