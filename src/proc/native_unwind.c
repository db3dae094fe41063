// SPDX-License-Identifier: GPL-2.0-only
/*
 * --native's unwinder over libdw's Dwfl: the process's executable mappings
 * are reported as modules (each file opened through /proc/PID/map_files and
 * read by libelf with pread, never mapped: see struct native_file),
 * and its thread state is the stack copy of one sample at a time: libdw's
 * memory_read callback reads that copy only, so an unwind never touches the
 * live process and a frame outside the copy ends it.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "proc/elf_file.h"
#include "proc/native_unwind.h"
#include "native_guard.h"
#include "native_unwind_file.h"
#include "proc/procfs.h"
#include "proc/symcache.h"
#include "util/mono.h"

/* Files libdw was not given (native_guard.h) whose pcs are still named library+0xoffset. */
#define NATIVE_MAX_REFUSED 32

/* How often the mappings are reported again when a pc is in none of them. */
#define REPORT_AGAIN_NS 1000000000LL

struct native_unwinder {
	pid_t pid;
	uint64_t interp_lo, interp_hi;
	Dwfl *dwfl;
	bool attached;
	long long reported_ns;
	/* the sample being unwound */
	pid_t tid;
	const struct native_regs *regs;
	const uint8_t *stack;
	size_t len;
	uint64_t *pcs, *sps;
	int n, max;
	bool complete;
	bool through; /* on through the interpreter's code (unwind_all) */
	/* this Dwfl's refused files: the first NATIVE_MAX_REFUSED of them by place */
	struct refused_file {
		uint64_t lo, hi, base;
		const char *name; /* a copy */
	} refused[NATIVE_MAX_REFUSED];
	int nrefused;
	unsigned long refused_total;
	/* this Dwfl's files, one per module */
	struct native_file {
		int fd;
		Elf *elf;		 /* until find_elf hands it to libdw, which ends it */
		struct symcache_file id; /* for the shared symbol tables */
	} files[NATIVE_MAX_MODULES];
	int nfiles;
};

/*
 * A module's file. libdw maps a file it opens itself, and a target that
 * truncates its file afterwards turns the lost pages into a SIGBUS in the
 * profiler (libdw 0.188: a report, truncate(path, 0), then naming a pc died
 * so). So libdw opens nothing: each module is reported by its address range
 * alone and find_elf gives it an Elf that libelf reads with pread on demand
 * (ELF_C_READ); a truncated file is then short reads, errors, never a signal.
 * The fd stays ours (find_elf returns -1), closed after the Dwfl ends.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct native_file *f = *userdata;

	(void)mod, (void)modname, (void)base, (void)file_name;
	*elfp = f ? f->elf : NULL;
	if (f)
		f->elf = NULL;
	return -1;
}

/* No separate debug files: the target's own files are all that is read. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = no_debuginfo,
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct native_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct native_unwinder *u = arg;

	(void)dwfl;
	*thread_argp = u;
	return tid == u->tid;
}

/* A word of the stack copy; anything outside it cannot be read. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct native_unwinder *u = arg;

	(void)dwfl;
	if (addr < u->regs->sp || addr - u->regs->sp > u->len ||
	    u->len - (addr - u->regs->sp) < sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - u->regs->sp), sizeof(*result));
	return true;
}

/* x86-64's DWARF numbers: rbx 3, rbp 6, rsp 7, r12-r15 12-15. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct native_unwinder *u = arg;
	const struct native_regs *r = u->regs;
	Dwarf_Word bx = r->bx, bp_sp[2] = { r->bp, r->sp },
		   r12_15[4] = { r->r12, r->r13, r->r14, r->r15 };

	if (r->known == NATIVE_REGS_IP_SP_BP) {
		if (!dwfl_thread_state_registers(thread, 6, 2, bp_sp))
			return false;
	} else if (r->known == NATIVE_REGS_IP_SP) {
		if (!dwfl_thread_state_registers(thread, 7, 1, &bp_sp[1]))
			return false;
	} else if (!dwfl_thread_state_registers(thread, 3, 1, &bx) ||
		   !dwfl_thread_state_registers(thread, 6, 2, bp_sp) ||
		   !dwfl_thread_state_registers(thread, 12, 4, r12_15)) {
		return false;
	}
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void forget_refused(struct native_unwinder *u)
{
	while (u->nrefused > 0)
		free((char *)u->refused[--u->nrefused].name);
}

/* The Dwfl and then its files: the Elfs libdw was given are ended by dwfl_end. */
static void end_dwfl(struct native_unwinder *u)
{
	dwfl_end(u->dwfl);
	u->dwfl = NULL;
	while (u->nfiles > 0) {
		struct native_file *f = &u->files[--u->nfiles];

		elf_end(f->elf);
		close(f->fd);
	}
	forget_refused(u);
}

/* A file libdw is not given: counted, and its pcs in [lo, hi) named by offset from base. */
static void refuse_file(struct native_unwinder *u, const char *name, uint64_t lo, uint64_t hi,
			uint64_t base)
{
	struct refused_file *r = &u->refused[u->nrefused];

	u->refused_total++;
	if (u->nrefused == NATIVE_MAX_REFUSED || !(r->name = strdup(name)))
		return;
	r->lo = lo, r->hi = hi, r->base = base;
	u->nrefused++;
}

/* The refused file holding pc, if any. */
static const struct refused_file *refused_at(const struct native_unwinder *u, uint64_t pc)
{
	int i;

	for (i = 0; i < u->nrefused; i++)
		if (pc >= u->refused[i].lo && pc < u->refused[i].hi)
			return &u->refused[i];
	return NULL;
}

/*
 * One file of the target as a module named name, its offset 0 mapped at base
 * (so libdw's bias is base less the first PT_LOAD's page), its code ending at
 * hi. fd is consumed. A file libdw must not see (native_guard.h) is left out
 * and its pcs named by offset; one libelf cannot read as ELF is left out.
 */
static void report_file(struct native_unwinder *u, const char *name, int fd, uint64_t base,
			uint64_t lo, uint64_t hi)
{
	struct native_file *f = &u->files[u->nfiles];
	Dwfl_Module *mod;
	struct stat st;
	bool whole;
	char why[96];
	size_t phnum;
	void **ud;

	if (u->nfiles == NATIVE_MAX_MODULES || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > ELF_FILE_MAX_SIZE) {
		close(fd);
		return;
	}
	if (native_guard__check(fd, &whole, why, sizeof(why)) == -EFBIG) {
		refuse_file(u, name, lo, hi, base);
		close(fd);
		return;
	}
	f->fd = fd;
	f->elf = elf_begin(fd, ELF_C_READ, NULL);
	/* read whole now if libdw will take it whole later (native_guard.h) */
	if (f->elf && whole && !elf_rawfile(f->elf, NULL)) {
		refuse_file(u, name, lo, hi, base);
		elf_end(f->elf);
		close(fd);
		return;
	}
	/* what dwfl_report_elf refused: not ELF, or no program headers to place it by */
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || elf_getphdrnum(f->elf, &phnum) || !phnum ||
	    !(mod = dwfl_report_module(u->dwfl, name, base, hi))) {
		elf_end(f->elf);
		close(fd);
		return;
	}
	symcache__file_of(&st, &f->id);
	u->nfiles++;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = f;
}

/* The identity of mod's file, for the shared symbol tables. */
static const struct symcache_file *file_of(Dwfl_Module *mod)
{
	void **userdata = NULL;
	const struct native_file *f;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	f = userdata ? *userdata : NULL;
	return f ? &f->id : NULL;
}

/*
 * A file's executable mappings as one module: the first of them, e (its file
 * opened through it), to hi, the end of the last; placed where the file's
 * offset 0 is mapped, base (linux-proc-maps.c's way, without its opening).
 */
static void report_mapping(struct native_unwinder *u, const struct map_entry *e, uint64_t base,
			   uint64_t hi)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, u->pid, e->start,
		 e->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	report_file(u, e->path[0] ? e->path : "[unnamed]", fd, base, e->start, hi);
}

/* Every file mapped executable, once: 0, or -errno (the maps could not be read). */
static int report_modules(struct native_unwinder *u)
{
	uint64_t inode0 = 0, base = 0, hi = 0;
	struct map_entry e, first = { 0 };
	char path[64], *line = NULL;
	size_t cap = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", u->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (maps_next(f, &line, &cap, &e) && n < NATIVE_MAX_MODULES) {
		if (!e.inode)
			continue;
		/* a file's mappings are in address order, the one at offset 0 first */
		if (e.off == 0) {
			if (hi) {
				report_mapping(u, &first, base, hi);
				n++;
			}
			inode0 = e.inode;
			base = e.start;
			hi = 0;
		}
		if (e.perms[2] != 'x' || e.inode != inode0)
			continue;
		if (!hi)
			first = e;
		hi = e.end;
	}
	if (hi && n < NATIVE_MAX_MODULES)
		report_mapping(u, &first, base, hi);
	dwfl_report_end(u->dwfl, NULL, NULL);
	free(line);
	fclose(f);
	u->reported_ns = mono_ns();
	return 0;
}

/*
 * A new Dwfl with the process's modules and its thread state attached. Never
 * reported again in place: the thread state keeps the architecture backend
 * of one of the modules, which a new report would free under it (the fuzzer
 * found libdw asserting on the freed backend).
 */
static int open_dwfl(struct native_unwinder *u)
{
	end_dwfl(u);
	u->refused_total = 0;
	u->attached = false;
	u->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!u->dwfl)
		return -ENOMEM;
	report_modules(u);
	u->attached = dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_callbacks, u);
	return 0;
}

struct native_unwinder *native_unwinder__new(pid_t pid, uint64_t interp_lo, uint64_t interp_hi)
{
	struct native_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pid = pid;
	u->interp_lo = interp_lo;
	u->interp_hi = interp_hi;
	if (open_dwfl(u)) {
		free(u);
		return NULL;
	}
	return u;
}

int native_unwinder__refresh(struct native_unwinder *u)
{
	return open_dwfl(u);
}

void native_unwinder__free(struct native_unwinder *u)
{
	if (!u)
		return;
	end_dwfl(u);
	free(u);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct native_unwinder *u = arg;
	bool activation = false;
	Dwarf_Word sp = 0;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* a return address is just past its call */
	if (!activation && pc)
		pc--;
	if (!u->through && pc >= u->interp_lo && pc < u->interp_hi) {
		u->complete = true;
		return DWARF_CB_ABORT;
	}
	/* the frame's stack pointer: 7 is rsp in x86-64's DWARF numbering */
	if (u->sps && dwfl_frame_reg(state, 7, &sp))
		sp = 0;
	if (u->sps)
		u->sps[u->n] = sp;
	u->pcs[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Both unwinds. */
static int unwind(struct native_unwinder *u, pid_t tid, const struct native_regs *regs,
		  const uint8_t *stack, size_t len, uint64_t *pcs, int max)
{
	if (!u->dwfl)
		return 0;
	/*
	 * code mapped since the last report (a module imported later): report
	 * again; not for a refused file's code, checked again at every report
	 */
	if (!dwfl_addrmodule(u->dwfl, regs->ip) && !refused_at(u, regs->ip) &&
	    mono_ns() - u->reported_ns > REPORT_AGAIN_NS && open_dwfl(u))
		return 0;
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->len = len;
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	u->complete = false;
	if (u->max <= 0)
		return 0;
	if (u->attached)
		dwfl_getthread_frames(u->dwfl, tid, on_frame, u);
	/* no state (no module yet): the sampled instruction is all there is */
	if (!u->n && !u->complete) {
		if (u->sps)
			u->sps[0] = regs->sp;
		pcs[u->n++] = regs->ip;
	}
	return u->n;
}

int native_unwinder__unwind(struct native_unwinder *u, pid_t tid, const struct native_regs *regs,
			    const uint8_t *stack, size_t len, uint64_t *pcs, int max,
			    bool *complete)
{
	int n;

	u->through = false;
	u->sps = NULL;
	n = unwind(u, tid, regs, stack, len, pcs,
		   max < NATIVE_MAX_FRAMES ? max : NATIVE_MAX_FRAMES);
	*complete = u->complete;
	return n;
}

int native_unwinder__unwind_all(struct native_unwinder *u, pid_t tid,
				const struct native_regs *regs, const uint8_t *stack, size_t len,
				uint64_t *pcs, uint64_t *sps, int max)
{
	u->through = true;
	u->sps = sps;
	return unwind(u, tid, regs, stack, len, pcs,
		      max < NATIVE_MAX_FRAMES_ALL ? max : NATIVE_MAX_FRAMES_ALL);
}

#define STACK_PAGE 4096
#define STACK_IOV 64 /* pages per process_vm_readv */

ssize_t native_read_stack(pid_t pid, uint64_t sp, uint8_t *buf, size_t max)
{
	struct iovec local, remote[STACK_IOV];
	size_t done = 0, want, chunk;
	ssize_t got;
	int k;

	if (sp < STACK_PAGE || sp + max < sp)
		return -EFAULT;
	while (done < max) {
		/* one iovec per page: a partial read ends at the first page not mapped */
		want = 0;
		for (k = 0; k < STACK_IOV && done + want < max; k++) {
			uint64_t at = sp + done + want;

			chunk = STACK_PAGE - (at & (STACK_PAGE - 1));
			if (chunk > max - done - want)
				chunk = max - done - want;
			remote[k] = (struct iovec){ (void *)(uintptr_t)at, chunk };
			want += chunk;
		}
		local = (struct iovec){ buf + done, want };
		got = process_vm_readv(pid, &local, 1, remote, k, 0);
		if (got <= 0)
			return done ? (ssize_t)done : got < 0 ? -errno : -EFAULT;
		done += (size_t)got;
		if ((size_t)got < want)
			break;
	}
	return (ssize_t)done;
}

bool native_unwinder__in_code(struct native_unwinder *u, uint64_t pc)
{
	return u->dwfl && dwfl_addrmodule(u->dwfl, pc);
}

bool native_unwinder__in_interp(const struct native_unwinder *u, uint64_t pc)
{
	return pc >= u->interp_lo && pc < u->interp_hi;
}

/* pc in a file libdw was not given: "library+0xoffset". */
static bool name_refused(struct native_unwinder *u, uint64_t pc, char *name, size_t namelen,
			 char *file, size_t filelen)
{
	const struct refused_file *r = refused_at(u, pc);
	const char *base;

	if (!r)
		return false;
	base = strrchr(r->name, '/');
	snprintf(name, namelen, "%s+0x%" PRIx64, base ? base + 1 : r->name, pc - r->base);
	snprintf(file, filelen, "%s", r->name);
	return true;
}

unsigned long native_unwinder__refused(const struct native_unwinder *u)
{
	return u->refused_total;
}

int native_unwinder__name(struct native_unwinder *u, uint64_t pc, char *name, size_t namelen,
			  char *file, size_t filelen)
{
	Dwfl_Module *mod = u->dwfl ? dwfl_addrmodule(u->dwfl, pc) : NULL;
	const char *modname, *base;
	Dwarf_Addr start = 0;

	if (!mod && name_refused(u, pc, name, namelen, file, filelen))
		return 0;
	if (!mod) {
		snprintf(name, namelen, "0x%" PRIx64, pc);
		snprintf(file, filelen, "%s", "");
		return -ENOENT;
	}
	modname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	modname = modname ? modname : "";
	snprintf(file, filelen, "%s", modname);
	/* the table shared by every process mapping this very file */
	if (symcache__name(symcache__shared(), mod, file_of(mod), pc, name, namelen) > 0)
		return 0;
	base = strrchr(modname, '/');
	snprintf(name, namelen, "%s+0x%" PRIx64, base ? base + 1 : modname, pc - start);
	return 0;
}

struct native_unwinder *native_unwinder__new_file(int fd, uint64_t base, uint64_t size)
{
	struct native_unwinder *u = calloc(1, sizeof(*u));

	if (!u) {
		close(fd);
		return NULL;
	}
	u->pid = getpid();
	u->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!u->dwfl) {
		close(fd);
		free(u);
		return NULL;
	}
	report_file(u, "[fuzz]", fd, base, base, base + size);
	dwfl_report_end(u->dwfl, NULL, NULL);
	u->reported_ns = mono_ns();
	u->attached = dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_callbacks, u);
	return u;
}
