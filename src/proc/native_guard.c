// SPDX-License-Identifier: GPL-2.0-only
/*
 * A target's file, checked before libdw sees it (see native_guard.h). The
 * .gnu_debugdata is decompressed here into a scratch buffer, counting, up to
 * its bound: an xz stream's own sizes (index, block headers) are the
 * target's word, checked by the decoder only once it has decoded the block.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "native_cfi.h"
#include "native_guard.h"

/* The decoder's memory (its dictionary): xz -9 needs 65 MB. */
#define DEBUGDATA_MEMLIMIT (80ULL << 20)

/* How many bytes the xz (or lzma) data in buf decodes to, stopping past max. */
static uint64_t xz_expanded(const void *buf, size_t len, uint64_t max)
{
	uint8_t out[16 << 10]; /* a scratch buffer, not static: any thread may check */
	lzma_stream s = LZMA_STREAM_INIT;
	uint64_t total = 0;
	lzma_ret ret;

	/* as libdw decodes it, or more: any format, every concatenated stream */
	if (lzma_auto_decoder(&s, DEBUGDATA_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return UINT64_MAX;
	s.next_in = buf;
	s.avail_in = len;
	do {
		s.next_out = out;
		s.avail_out = sizeof(out);
		ret = lzma_code(&s, LZMA_FINISH);
		total += sizeof(out) - s.avail_out;
	} while (ret == LZMA_OK && total <= max);
	lzma_end(&s);
	/* a damaged or too greedy stream: libdw gets no further than this either, but slower */
	return ret == LZMA_MEMLIMIT_ERROR ? UINT64_MAX : total;
}

/* The declared size a .zdebug section ("ZLIB", 8-byte big-endian size) expands to. */
static uint64_t zdebug_size(Elf_Scn *scn)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const uint8_t *p;
	uint64_t n = 0;
	int i;

	if (!d || !d->d_buf || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4))
		return 0; /* not expanded by anyone */
	p = (const uint8_t *)d->d_buf + 4;
	for (i = 0; i < 8; i++)
		n = n << 8 | p[i];
	return n;
}

/*
 * What one section expands to in libdw's hands: 0 for a plain one. *eh_frame
 * is set if it is named .eh_frame (whatever its type: libdw goes by the name).
 */
static uint64_t section_expanded(Elf *elf, Elf_Scn *scn, size_t shstrndx, uint64_t *debugdata,
				 bool *eh_frame)
{
	const char *name;
	GElf_Chdr ch;
	GElf_Shdr sh;
	Elf_Data *d;

	if (!gelf_getshdr(scn, &sh))
		return 0;
	name = elf_strptr(elf, shstrndx, sh.sh_name);
	if (name && !strcmp(name, ".eh_frame"))
		*eh_frame = true;
	if (sh.sh_type == SHT_NOBITS)
		return 0;
	if (sh.sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &ch) ? ch.ch_size : 0;
	if (!name)
		return 0;
	if (!strncmp(name, ".zdebug", 7))
		return zdebug_size(scn);
	if (!strcmp(name, ".gnu_debugdata") && !*debugdata) {
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf)
			*debugdata = xz_expanded(d->d_buf, d->d_size, NATIVE_GUARD_MAX_DEBUGDATA);
	}
	return 0;
}

static int check_elf(Elf *elf, bool *whole, char *why, size_t whylen)
{
	uint64_t total = 0, debugdata = 0, n;
	size_t nsec, shstrndx, i = 0;
	bool eh_frame = false;
	Elf_Scn *scn = NULL;

	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrnum(elf, &nsec) ||
	    elf_getshdrstrndx(elf, &shstrndx)) {
		snprintf(why, whylen, "not an ELF file libdw could read");
		return -ENOEXEC;
	}
	if (nsec > NATIVE_GUARD_MAX_SECTIONS) {
		snprintf(why, whylen, "%zu sections", nsec);
		return -EFBIG;
	}
	while ((scn = elf_nextscn(elf, scn)) && i++ < nsec) {
		n = section_expanded(elf, scn, shstrndx, &debugdata, &eh_frame);
		total = n > NATIVE_GUARD_MAX_EXPANDED - total ? UINT64_MAX : total + n;
		if (total > NATIVE_GUARD_MAX_EXPANDED) {
			snprintf(why, whylen, "compressed sections expanding past %llu MB",
				 NATIVE_GUARD_MAX_EXPANDED >> 20);
			return -EFBIG;
		}
		if (debugdata > NATIVE_GUARD_MAX_DEBUGDATA) {
			snprintf(why, whylen, ".gnu_debugdata expanding past %llu MB",
				 NATIVE_GUARD_MAX_DEBUGDATA >> 20);
			return -EFBIG;
		}
	}
	*whole = !eh_frame;
	return 0;
}

/* The first section named name that has bytes in the file, or NULL. */
static Elf_Scn *section_named(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *n;
	size_t i = 0;

	while ((scn = elf_nextscn(elf, scn)) && i++ < NATIVE_GUARD_MAX_SECTIONS) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Every .debug_frame: libdw's other CFI. One it would decompress is not checked: refused. */
static int check_debug_frames(Elf *elf, size_t shstrndx, char *why, size_t whylen)
{
	struct native_cfi_in in = { 0 };
	Elf_Scn *scn = NULL;
	const char *n;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t i = 0;
	int ret;

	while ((scn = elf_nextscn(elf, scn)) && i++ < NATIVE_GUARD_MAX_SECTIONS) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".zdebug_frame") ||
		    (!strcmp(n, ".debug_frame") && (sh.sh_flags & SHF_COMPRESSED))) {
			snprintf(why, whylen, "a compressed .debug_frame (not checked)");
			return -EFBIG;
		}
		if (strcmp(n, ".debug_frame") || !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
			continue;
		in.data = d->d_buf;
		in.len = d->d_size;
		ret = native_cfi__check(&in, why, whylen);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A file without an .eh_frame section: libdw finds its CFI through
 * PT_GNU_EH_FRAME, reading the .eh_frame from where the header says to the
 * file's end (the file is read whole already: *whole).
 */
static int check_phdr_eh_frame(Elf *elf, uint64_t size, char *why, size_t whylen)
{
	struct native_cfi_in in = { .eh_frame = true };
	size_t phnum, i;
	GElf_Phdr ph;
	Elf_Data *hdr, *data;
	uint64_t off;

	/* not elf_rawfile: libelf would then lose track of the sections read before */
	if (elf_getphdrnum(elf, &phnum))
		return 0;
	for (i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			break;
	if (i == phnum ||
	    !(hdr = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_BYTE)) ||
	    native_cfi__hdr_frame(hdr->d_buf, hdr->d_size, ph.p_vaddr, &in.vaddr))
		return 0;
	off = in.vaddr - ph.p_vaddr + ph.p_offset;
	if (off >= size || !(data = elf_getdata_rawchunk(elf, off, size - off, ELF_T_BYTE)))
		return 0;
	in.data = data->d_buf;
	in.len = data->d_size;
	in.hdr = hdr->d_buf;
	in.hdr_len = hdr->d_size;
	in.hdr_vaddr = ph.p_vaddr;
	return native_cfi__check(&in, why, whylen);
}

/* The call frame information libdw would run (native_cfi.h). */
static int check_cfi(Elf *elf, bool whole, uint64_t size, char *why, size_t whylen)
{
	struct native_cfi_in in = { .eh_frame = true };
	GElf_Shdr sh, hsh;
	Elf_Data *d, *h;
	Elf_Scn *scn;
	size_t shstrndx;
	unsigned char *ident = (unsigned char *)elf_getident(elf, NULL);
	int ret;

	if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB) {
		snprintf(why, whylen, "not a 64-bit little-endian ELF file");
		return -EFBIG;
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = 0;
	ret = shstrndx ? check_debug_frames(elf, shstrndx, why, whylen) : 0;
	if (ret || whole)
		return ret ? ret : check_phdr_eh_frame(elf, size, why, whylen);
	scn = section_named(elf, shstrndx, ".eh_frame", &sh);
	if (!scn || !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
		return 0;
	in.data = d->d_buf;
	in.len = d->d_size;
	in.vaddr = sh.sh_addr;
	scn = section_named(elf, shstrndx, ".eh_frame_hdr", &hsh);
	if (scn && (h = elf_rawdata(scn, NULL)) && h->d_buf) {
		in.hdr = h->d_buf;
		in.hdr_len = h->d_size;
		in.hdr_vaddr = hsh.sh_addr;
	}
	return native_cfi__check(&in, why, whylen);
}

/*
 * The .gnu_debugdata of elf decompressed into memory of its own, for what
 * must be read of it safely (symcache.c: its string table's bounds). The
 * guard has bounded what it expands to; past NATIVE_GUARD_MAX_DEBUGDATA,
 * damaged, or absent: NULL.
 */
void *native_guard__debugdata(Elf *elf, size_t *len)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret ret = LZMA_OK;
	size_t shstrndx, cap = 0;
	uint8_t *out = NULL, *p;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;

	*len = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) ||
	    !(scn = section_named(elf, shstrndx, ".gnu_debugdata", &sh)) ||
	    !(d = elf_rawdata(scn, NULL)) || !d->d_buf ||
	    lzma_auto_decoder(&s, DEBUGDATA_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return NULL;
	s.next_in = d->d_buf;
	s.avail_in = d->d_size;
	while (ret == LZMA_OK) {
		if (*len == cap) {
			/* one byte past the bound tells a stream that goes past it */
			if (cap > NATIVE_GUARD_MAX_DEBUGDATA)
				break;
			cap = cap ? 2 * cap : 64 << 10;
			cap = cap > NATIVE_GUARD_MAX_DEBUGDATA ? NATIVE_GUARD_MAX_DEBUGDATA + 1 :
								 cap;
			if (!(p = realloc(out, cap)))
				break;
			out = p;
		}
		s.next_out = out + *len;
		s.avail_out = cap - *len;
		ret = lzma_code(&s, LZMA_FINISH);
		*len = cap - s.avail_out;
	}
	lzma_end(&s);
	if (ret != LZMA_STREAM_END || *len > NATIVE_GUARD_MAX_DEBUGDATA) {
		free(out);
		*len = 0;
		return NULL;
	}
	return out;
}

int native_guard__check(int fd, bool *whole, char *why, size_t whylen)
{
	struct stat st;
	Elf *elf;
	int ret;

	*whole = false;
	elf_version(EV_CURRENT);
	/* read, not mapped: the target may truncate its file under us */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		snprintf(why, whylen, "not an ELF file libdw could read");
		return -ENOEXEC;
	}
	ret = check_elf(elf, whole, why, whylen);
	if (!ret && fstat(fd, &st)) {
		snprintf(why, whylen, "cannot stat it: %s", strerror(errno));
		ret = -EFBIG;
	} else if (!ret && *whole && (uint64_t)st.st_size > NATIVE_GUARD_MAX_WHOLE) {
		snprintf(why, whylen, "no .eh_frame section, and more than %llu MB to read whole",
			 NATIVE_GUARD_MAX_WHOLE >> 20);
		ret = -EFBIG;
	}
	if (!ret)
		ret = check_cfi(elf, *whole, (uint64_t)st.st_size, why, whylen);
	elf_end(elf);
	return ret;
}
