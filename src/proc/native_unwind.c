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

/* Callbacks between two looks at the stack's CPU time (a look is a system call). */
#define BUDGET_EVERY 32

struct native_unwinder {
	pid_t pid;
	uint64_t interp_lo, interp_hi;
	Dwfl *dwfl;
	bool attached;
	unsigned long generation; /* Dwfls made */
	uint64_t maps_hash;	  /* of the executable mappings the Dwfl has */
	long long maps_ns;	  /* when the mappings were last looked at */
	/* the process's unwind time left (ns of CPU), refilled by the clock */
	long long bucket, bucket_ns;
	/* the sample being unwound */
	pid_t tid;
	const struct native_regs *regs;
	const uint8_t *stack;
	size_t len;
	uint64_t *pcs, *sps;
	int n, max;
	bool complete;
	bool through;	/* on through the interpreter's code (unwind_all) */
	long long cpu0; /* this thread's CPU time when the stack's unwind began */
	unsigned calls; /* libdw's callbacks during it */
	bool over;	/* past NATIVE_STACK_NS */
	bool past_copy; /* libdw asked for a word beyond the copy since the last frame */
	enum native_stop stop;
	uint64_t stop_pc;
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

/* Whether this stack's unwind has had its time (looked at every BUDGET_EVERY callbacks). */
static bool over_budget(struct native_unwinder *u)
{
	if (!u->over && ++u->calls % BUDGET_EVERY == 0)
		u->over = thread_cpu_ns() - u->cpu0 > NATIVE_STACK_NS;
	return u->over;
}

/* A word of the stack copy; anything outside it cannot be read. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct native_unwinder *u = arg;

	(void)dwfl;
	if (over_budget(u))
		return false;
	if (addr >= u->regs->sp &&
	    (addr - u->regs->sp > u->len || u->len - (addr - u->regs->sp) < sizeof(*result)))
		u->past_copy = true;
	if (addr < u->regs->sp || addr - u->regs->sp > u->len ||
	    u->len - (addr - u->regs->sp) < sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - u->regs->sp), sizeof(*result));
	return true;
}

/*
 * x86-64's DWARF numbers: rbx 3, rbp 6, rsp 7, r12-r15 12-15, and the
 * instruction pointer 16. libdw keeps the pc apart from register 16, but a
 * PLT stub's CFA is an expression of it (rsp + 8, + 8 more past the stub's
 * push: DW_OP_breg16 and a test of its low bits): without 16 a sample in a
 * PLT stub stopped there, its outer Python frames with no native frames
 * between them (3 % of a ctypes callback's samples on pyenv's 3.12).
 */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct native_unwinder *u = arg;
	const struct native_regs *r = u->regs;
	Dwarf_Word bx = r->bx, bp_sp[2] = { r->bp, r->sp },
		   r12_15_ip[5] = { r->r12, r->r13, r->r14, r->r15, r->ip };

	/* dump's unwind from a thread in a system call knows only ip, sp and maybe bp */
	if (r->known == NATIVE_REGS_IP_SP_BP) {
		if (!dwfl_thread_state_registers(thread, 6, 2, bp_sp) ||
		    !dwfl_thread_state_registers(thread, 16, 1, &r12_15_ip[4]))
			return false;
	} else if (r->known == NATIVE_REGS_IP_SP) {
		if (!dwfl_thread_state_registers(thread, 7, 1, &bp_sp[1]) ||
		    !dwfl_thread_state_registers(thread, 16, 1, &r12_15_ip[4]))
			return false;
	} else if (!dwfl_thread_state_registers(thread, 3, 1, &bx) ||
		   !dwfl_thread_state_registers(thread, 6, 2, bp_sp) ||
		   !dwfl_thread_state_registers(thread, 12, 5, r12_15_ip)) {
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

/* FNV-1a of the executable file mappings: what a report of them depends on. */
static uint64_t hash_mapping(uint64_t h, const struct map_entry *e)
{
	const uint64_t words[4] = { e->start, e->end, e->off, e->inode };
	const unsigned char *p = (const unsigned char *)words;
	size_t i;

	for (i = 0; i < sizeof(words); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	for (p = (const unsigned char *)e->path; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return h;
}

/* The hash of the process's executable file mappings now; 0 if its maps cannot be read. */
static uint64_t maps_hash(pid_t pid)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	struct map_entry e;
	char path[64], *line = NULL;
	size_t cap = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (maps_next(f, &line, &cap, &e) && n++ < 4 * NATIVE_MAX_MODULES)
		if (e.inode && e.perms[2] == 'x')
			h = hash_mapping(h, &e);
	free(line);
	fclose(f);
	return h;
}

/* Every file mapped executable, once: 0, or -errno (the maps could not be read). */
static int report_modules(struct native_unwinder *u)
{
	uint64_t inode0 = 0, base = 0, hi = 0, h = 0xcbf29ce484222325ULL;
	struct map_entry e, first = { 0 };
	char path[64], *line = NULL;
	size_t cap = 0, n = 0, lines = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", u->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (maps_next(f, &line, &cap, &e) && lines++ < 4 * NATIVE_MAX_MODULES) {
		if (!e.inode)
			continue;
		if (e.perms[2] == 'x')
			h = hash_mapping(h, &e);
		/* a file's mappings are in address order, the one at offset 0 first */
		if (e.off == 0) {
			if (hi && n < NATIVE_MAX_MODULES) {
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
	u->maps_hash = h;
	u->maps_ns = mono_ns();
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
	u->generation++;
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

	if (over_budget(u) || !dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	u->past_copy = false;
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
	/* libdw would go on by frame pointers, which that file's code need not keep */
	if (refused_at(u, pc))
		return DWARF_CB_ABORT;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * A pc in no file known: if the process's executable mappings changed since
 * the last report (a module imported since), a new one. Looked at most every
 * NATIVE_MAPS_NS (reading the maps costs a fraction of a report); a refused
 * file's pc is known. The look and the report are charged to the process's
 * budget: a target mapping files again and again cannot have them reported
 * more than its budget pays for. Whether the files were reported again.
 */
static bool report_if_changed(struct native_unwinder *u, uint64_t pc)
{
	long long now, cpu;
	uint64_t h;
	bool again;

	if (u->bucket <= 0 || dwfl_addrmodule(u->dwfl, pc) || refused_at(u, pc))
		return false;
	now = mono_ns();
	if (now - u->maps_ns < NATIVE_MAPS_NS)
		return false;
	u->maps_ns = now;
	cpu = thread_cpu_ns();
	h = maps_hash(u->pid);
	again = h && h != u->maps_hash && !open_dwfl(u);
	u->bucket -= thread_cpu_ns() - cpu;
	return again;
}

/* The process's budget refilled by the time since, up to twice a second's; whether any is left. */
static bool budget_left(struct native_unwinder *u)
{
	long long now = mono_ns(), gain;

	gain = u->bucket_ns ? now - u->bucket_ns : 0;
	if (!u->bucket_ns)
		u->bucket = 2 * NATIVE_PROCESS_NS;
	u->bucket_ns = now;
	if (gain > 2000000000LL)
		gain = 2000000000LL;
	u->bucket += gain * (NATIVE_PROCESS_NS / 1000000) / 1000;
	if (u->bucket > 2 * NATIVE_PROCESS_NS)
		u->bucket = 2 * NATIVE_PROCESS_NS;
	return u->bucket > 0;
}

/* Why the walk that returned ret stopped (enum native_stop). */
static enum native_stop stop_of(struct native_unwinder *u, int ret)
{
	uint64_t pc = u->n ? u->pcs[u->n - 1] : u->regs->ip;

	u->stop_pc = pc;
	if (u->over)
		return NATIVE_STOP_BUDGET;
	if (refused_at(u, pc))
		return NATIVE_STOP_REFUSED;
	if (u->complete || u->n >= u->max || ret == 0)
		return NATIVE_STOP_END;
	if (!dwfl_addrmodule(u->dwfl, pc))
		return NATIVE_STOP_NO_FILE;
	return u->past_copy ? NATIVE_STOP_COPY : NATIVE_STOP_NO_CFI;
}

/* One walk of libdw's over the sample. */
static void walk(struct native_unwinder *u)
{
	int ret = -1;

	u->n = 0;
	u->complete = u->over = u->past_copy = false;
	u->calls = 0;
	if (u->attached)
		ret = dwfl_getthread_frames(u->dwfl, u->tid, on_frame, u);
	u->stop = stop_of(u, ret);
}

/* Both unwinds, within the stack's and the process's budgets. */
static int unwind(struct native_unwinder *u, pid_t tid, const struct native_regs *regs,
		  const uint8_t *stack, size_t len, uint64_t *pcs, int max)
{
	u->stop = NATIVE_STOP_END;
	u->stop_pc = 0;
	if (!u->dwfl || max <= 0)
		return 0;
	if (!budget_left(u)) {
		u->stop = NATIVE_STOP_PROCESS;
		u->stop_pc = regs->ip;
		return 0;
	}
	if (report_if_changed(u, regs->ip) && !u->dwfl)
		return 0;
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->len = len;
	u->pcs = pcs;
	u->max = max;
	u->cpu0 = thread_cpu_ns();
	walk(u);
	/* a return address into a library mapped since the last report: once more */
	if (u->stop == NATIVE_STOP_NO_FILE && report_if_changed(u, u->stop_pc) && u->dwfl)
		walk(u);
	u->bucket -= thread_cpu_ns() - u->cpu0;
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

enum native_stop native_unwinder__stop(const struct native_unwinder *u, uint64_t *pc)
{
	*pc = u->stop_pc;
	return u->stop;
}

unsigned long native_unwinder__generation(const struct native_unwinder *u)
{
	return u->generation;
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
	u->maps_ns = mono_ns();
	u->attached = dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_callbacks, u);
	return u;
}
