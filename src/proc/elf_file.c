// SPDX-License-Identifier: GPL-2.0-only
/*
 * libelf wrapper for the few questions pybpfprof asks of a CPython binary.
 * Debian's python3.X is stripped but exports the whole C API in .dynsym
 * (linked with -export-dynamic), so .dynsym is searched first.
 *
 * The files are the target's: a hostile process can map a FIFO or a device,
 * or truncate its file while we read it. So a file is opened non-blocking,
 * must be a regular file of bounded size, and is read with pread
 * (ELF_C_READ), never mapped: a truncated file gives a short read, where a
 * mapping would give us SIGBUS. What libelf loads (section data) is capped
 * per file, whatever sizes the sections claim.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "proc/elf_file.h"

#define MAX_PHDRS 64

struct elf_file {
	int fd;
	struct stat st;	 /* at open: a reload finds the file unchanged, or fails */
	uint64_t budget; /* bytes of section data libelf may still load */
	Elf *elf;
	int type;
	size_t nphdr;
	GElf_Phdr phdr[MAX_PHDRS];
};

struct elf_file *elf_file__open(const char *path)
{
	struct elf_file *ef;
	GElf_Ehdr ehdr;
	size_t i, n;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	ef->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ef->fd < 0)
		goto fail;
	if (fstat(ef->fd, &ef->st))
		goto fail;
	if (!S_ISREG(ef->st.st_mode) || (uint64_t)ef->st.st_size > ELF_FILE_MAX_SIZE) {
		errno = ENOEXEC;
		goto fail;
	}
	ef->budget = ELF_FILE_READ_BUDGET;
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &ehdr) ||
	    elf_getphdrnum(ef->elf, &n)) {
		errno = ENOEXEC;
		goto fail;
	}
	ef->type = ehdr.e_type;
	for (i = 0; i < n && ef->nphdr < MAX_PHDRS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, i, &ph) && ph.p_type == PT_LOAD)
			ef->phdr[ef->nphdr++] = ph;
	}
	return ef;
fail:
	elf_file__close(ef);
	return NULL;
}

void elf_file__close(struct elf_file *ef)
{
	int saved = errno;

	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef);
	errno = saved;
}

int elf_file__type(const struct elf_file *ef)
{
	return ef->type;
}

void elf_file__release(struct elf_file *ef)
{
	if (ef && ef->elf) {
		elf_end(ef->elf);
		ef->elf = NULL;
	}
}

int elf_file__stat(const struct elf_file *ef, struct stat *st)
{
	*st = ef->st;
	return 0;
}

/* The libelf handle, made again after elf_file__release if the file is unchanged. */
static Elf *elf_of(struct elf_file *ef)
{
	struct stat st;

	if (ef->elf)
		return ef->elf;
	if (fstat(ef->fd, &st) || st.st_size != ef->st.st_size ||
	    st.st_mtim.tv_sec != ef->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != ef->st.st_mtim.tv_nsec)
		return NULL;
	ef->budget = ELF_FILE_READ_BUDGET;
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	return ef->elf;
}

/*
 * elf_getdata within the file's budget: libelf reads (and keeps) a section's
 * whole data, whatever size the section header claims, and a hostile file
 * can make many sections claim the whole file. A section's string table
 * (sh_link) is charged with it, as elf_strptr will load it too.
 */
static Elf_Data *getdata(struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *sh)
{
	uint64_t cost = sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
	Elf_Scn *link;
	GElf_Shdr lsh;

	if (sh->sh_link && (link = elf_getscn(ef->elf, sh->sh_link)) && gelf_getshdr(link, &lsh))
		cost += lsh.sh_size;
	if (cost > ef->budget)
		return NULL;
	ef->budget -= cost;
	return elf_getdata(scn, NULL);
}

static int find_in(struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
		   uint64_t *vaddr, uint64_t *size)
{
	Elf *elf = ef->elf;
	Elf_Data *data = getdata(ef, scn, sh);
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return -ENOENT;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			*vaddr = sym.st_value;
			if (size)
				*size = sym.st_size;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_file__symbol(struct elf_file *ef, const char *name, uint64_t *vaddr, uint64_t *size)
{
	static const unsigned types[] = { SHT_DYNSYM, SHT_SYMTAB };
	size_t t;

	if (!elf_of(ef))
		return -ENOENT;
	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(ef->elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t])
				continue;
			if (!find_in(ef, scn, &sh, name, vaddr, size))
				return 0;
		}
	}
	return -ENOENT;
}

int elf_file__find_py_version(struct elf_file *ef, unsigned minor)
{
	char prefix[16];
	Elf_Scn *scn = NULL, *names;
	size_t shstrndx, plen;
	GElf_Shdr nsh;

	if (!elf_of(ef) || elf_getshdrstrndx(ef->elf, &shstrndx))
		return -ENOENT;
	/* the section names elf_strptr will load, within the budget */
	names = elf_getscn(ef->elf, shstrndx);
	if (!names || !gelf_getshdr(names, &nsh) || nsh.sh_size > ef->budget)
		return -ENOENT;
	ef->budget -= nsh.sh_size;
	plen = snprintf(prefix, sizeof(prefix), "3.%u.", minor);
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *name, *p, *end;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".rodata"))
			continue;
		data = getdata(ef, scn, &sh);
		if (!data || !data->d_buf)
			return -ENOENT;
		p = data->d_buf;
		end = p + data->d_size;
		/*
		 * The string ends right after the micro digits. It may be the tail of a
		 * longer one ("/prefix/versions/3.8.18": the linker merges string tails),
		 * but not of another number.
		 */
		for (; p + plen + 2 <= end; p++) {
			const char *q = p + plen;
			unsigned micro = 0;

			if (p > (const char *)data->d_buf &&
			    ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.'))
				continue;
			if (memcmp(p, prefix, plen))
				continue;
			while (q < end && *q >= '0' && *q <= '9' && micro < 1000)
				micro = micro * 10 + (*q++ - '0');
			if (q > p + plen && q < end && !*q)
				return micro;
		}
		return -ENOENT;
	}
	return -ENOENT;
}

int elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	size_t i;

	for (i = 0; i < ef->nphdr; i++) {
		const GElf_Phdr *ph = &ef->phdr[i];

		if (vaddr < ph->p_vaddr || vaddr - ph->p_vaddr >= ph->p_filesz)
			continue;
		if (len > ph->p_filesz - (vaddr - ph->p_vaddr))
			return -EFAULT;
		if (pread(ef->fd, buf, len, ph->p_offset + (vaddr - ph->p_vaddr)) != (ssize_t)len)
			return -EFAULT;
		return 0;
	}
	return -EFAULT;
}

int elf_file__func_offset(struct elf_file *ef, const char *name, uint64_t *off)
{
	uint64_t vaddr;
	size_t i;

	if (elf_file__symbol(ef, name, &vaddr, NULL))
		return -ENOENT;
	for (i = 0; i < ef->nphdr; i++) {
		const GElf_Phdr *ph = &ef->phdr[i];

		if (vaddr < ph->p_vaddr || vaddr - ph->p_vaddr >= ph->p_filesz)
			continue;
		*off = ph->p_offset + (vaddr - ph->p_vaddr);
		return 0;
	}
	return -ENOENT;
}

int elf_file__bias(const struct elf_file *ef, uint64_t map_start, uint64_t map_off, uint64_t *bias)
{
	size_t i;

	if (ef->type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	for (i = 0; i < ef->nphdr; i++) {
		const GElf_Phdr *ph = &ef->phdr[i];
		uint64_t seg_off = ph->p_offset & ~0xfffULL;

		/* The mapping that covers this segment's first page carries its bias. */
		if (map_off >= seg_off && map_off < ph->p_offset + ph->p_filesz) {
			*bias = map_start - ((ph->p_vaddr & ~0xfffULL) + (map_off - seg_off));
			return 0;
		}
	}
	return -ENOENT;
}

int elf_file__needs(struct elf_file *ef, const char *prefix)
{
	size_t plen = strlen(prefix);
	Elf_Scn *scn = NULL;

	if (!elf_of(ef))
		return 0;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = getdata(ef, scn, &sh);
		if (!data)
			return 0;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *name;
			GElf_Dyn dyn;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(ef->elf, sh.sh_link, dyn.d_un.d_val);
			if (name && !strncmp(name, prefix, plen))
				return 1;
		}
		return 0;
	}
	return 0;
}

/*
 * SystemTap SDT notes (type 3, owner "stapsdt") in SHT_NOTE sections: after
 * three addresses (probe, base, semaphore) the descriptor holds the provider,
 * name and argument strings, each NUL-terminated. Names are checked to end
 * inside the descriptor, whatever the file claims.
 */
int elf_file__usdt_probes(struct elf_file *ef, const char *provider,
			  void (*fn)(const char *name, uint64_t semaphore, void *ctx), void *ctx)
{
	Elf_Scn *scn = NULL;
	int found = 0;

	if (!elf_of(ef))
		return 0;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off, next;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = getdata(ef, scn, &sh);
		if (!data || !data->d_buf)
			continue;
		while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off, *prov, *name;
			size_t len = nh.n_descsz;
			uint64_t sem;

			off = next;
			if (nh.n_type != 3 || nh.n_namesz != sizeof("stapsdt") ||
			    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) || len < 26)
				continue;
			memcpy(&sem, desc + 16, sizeof(sem));
			prov = desc + 24;
			if (!memchr(prov, '\0', len - 24))
				continue;
			name = prov + strlen(prov) + 1;
			if (name >= desc + len || !memchr(name, '\0', desc + len - name))
				continue;
			if (strcmp(prov, provider))
				continue;
			found++;
			if (fn)
				fn(name, sem, ctx);
		}
	}
	return found;
}
