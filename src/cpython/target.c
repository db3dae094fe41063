// SPDX-License-Identifier: GPL-2.0-only
/*
 * Target discovery. The ELF that holds _PyRuntime is the executable for
 * static builds (Debian's python3.X) or a mapped libpython3.X.so for shared
 * builds (pyenv --enable-shared, Fedora, Docker images). Its files are read
 * through /proc/PID/exe and /proc/PID/map_files, never through the paths in
 * /proc/PID/maps, which are not valid from the host for a container.
 * Before a target is accepted, the offsets are checked against its live
 * memory: the interpreter's first thread state must point back at it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "proc/elf_file.h"
#include "proc/procfs.h"
#include "cpython/target.h"
#include "remote_mem.h"

/* comm and cmdline, as they are now. */
static void read_names(struct target *t)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", t->pid);
	proc_read_small_file(path, t->comm, sizeof(t->comm), false);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", t->pid);
	proc_read_small_file(path, t->cmdline, sizeof(t->cmdline), true);
}

void target__fork(const struct target *parent, pid_t child, struct target *t)
{
	pid_t tgid;

	*t = *parent;
	t->pid = child;
	t->start_ticks = proc_start_ticks(child);
	proc_status_ids(child, &tgid, &t->nspid);
	if (t->nspid <= 0)
		t->nspid = child;
	read_names(t);
	/* gone already: keep the parent's names, which the child had */
	if (!t->comm[0])
		memcpy(t->comm, parent->comm, sizeof(t->comm));
	if (!t->cmdline[0])
		memcpy(t->cmdline, parent->cmdline, sizeof(t->cmdline));
}

/*
 * Guesses the version from a file name like python3.12, libpython3.9.so.1.0
 * or python2.7: PY_VERSION_HEX with only major and minor, or 0. *threaded is
 * set for a free-threaded build's name (python3.13t, libpython3.14t.so).
 */
static uint32_t version_from_name(const char *path, bool *threaded)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned major, minor;
	int n = 0;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (threaded)
		*threaded = false;
	if (!p || sscanf(p + 6, "%u.%u%n", &major, &minor, &n) != 2 || major < 2 || major > 3 ||
	    minor > 99)
		return 0;
	if (threaded)
		*threaded = p[6 + n] == 't';
	return (major << 24) | (minor << 16);
}

/* Says what a process without _PyRuntime runs, if it is recognisably some Python. */
static void explain_not_cpython(pid_t pid, const struct target *t, char *why, size_t whylen)
{
	char path[64], *line = NULL;
	const char *base = strrchr(t->exe, '/');
	uint32_t v = version_from_name(t->exe, NULL);
	struct map_entry e;
	bool pypy = false;
	size_t cap = 0;
	FILE *f;

	base = base ? base + 1 : t->exe;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	while (f && maps_next(f, &line, &cap, &e)) {
		pypy |= strstr(e.path, "libpypy") != NULL;
		if (!v && strstr(e.path, "libpython"))
			v = version_from_name(e.path, NULL);
	}
	free(line);
	if (f)
		fclose(f);
	if (pypy || !strncmp(base, "pypy", 4))
		snprintf(why, whylen,
			 "pid %d (%s) runs PyPy, which is not supported (supported: "
			 "CPython %s)",
			 pid, t->comm, py_supported_versions);
	else if (v)
		snprintf(why, whylen,
			 "pid %d (%s) runs Python %u.%u, which is not supported "
			 "(supported: %s)",
			 pid, t->comm, v >> 24, (v >> 16) & 0xff, py_supported_versions);
	else
		snprintf(why, whylen,
			 "pid %d (%s) is not a CPython process: no _PyRuntime in %s or "
			 "a mapped libpython3",
			 pid, t->comm, t->exe);
}

/*
 * What one ELF file says about CPython, kept per file identity (device,
 * inode, size, mtime), so a hundred processes of the same python cost one
 * parse, and a non-Python executable seen at every exec costs a stat. The
 * file stays open for the load-bias computation of later processes.
 */
struct elf_facts {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int err;	      /* 0, or why it holds no _PyRuntime (-ENOENT, -ENOEXEC, ...) */
	bool needs_libpython; /* a DT_NEEDED libpython3: a shared build's executable */
	uint64_t runtime_vaddr, code_type_vaddr;
	uint64_t none_vaddr;  /* _Py_NoneStruct: None, for the exception state; 0 if absent */
	uint32_t py_version;  /* from Py_Version (3.11+), else 0 */
	unsigned micro_minor; /* minor whose PY_VERSION micro was looked up, or 0 */
	int micro;
	struct elf_file *ef; /* open while err == 0 */
};

/*
 * Every distinct executable seen at an exec under -a gets an entry, most of
 * them verdicts without an open file (no _PyRuntime), so a busy build host
 * (sh, make, cc1, ld ...) does not thrash it; a linear search of 1024 is ~1 us.
 */
#define ELF_CACHE_SIZE 1024

static struct elf_facts elf_cache[ELF_CACHE_SIZE];
static size_t elf_cache_used, elf_cache_next;

static struct elf_facts *elf_facts__get(const char *file)
{
	struct elf_facts *f;
	uint64_t v, size;
	struct stat st;
	size_t i;

	if (stat(file, &st))
		return NULL;
	for (i = 0; i < elf_cache_used; i++) {
		f = &elf_cache[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec && f->mtime.tv_nsec == st.st_mtim.tv_nsec)
			return f;
	}
	/* Round robin: a full cache evicts its oldest entry. */
	if (elf_cache_used < ELF_CACHE_SIZE) {
		f = &elf_cache[elf_cache_used++];
	} else {
		f = &elf_cache[elf_cache_next];
		elf_cache_next = (elf_cache_next + 1) % ELF_CACHE_SIZE;
		elf_file__close(f->ef);
	}
	memset(f, 0, sizeof(*f));
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->ef = elf_file__open(file);
	/* the identity of the file read, which may not be the one stat saw a moment ago */
	if (f->ef && !elf_file__stat(f->ef, &st)) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->size = st.st_size;
		f->mtime = st.st_mtim;
	}
	if (!f->ef) {
		f->err = errno ? -errno : -ENOEXEC;
		/* a permission problem may be ours to report, not the file's verdict */
		if (f->err == -EACCES || f->err == -EPERM || f->err == -EMFILE) {
			int err = f->err;

			elf_cache_used--;
			errno = -err;
			return NULL;
		}
		return f;
	}
	f->err = elf_file__symbol(f->ef, "_PyRuntime", &f->runtime_vaddr, &size);
	if (f->err) {
		f->needs_libpython = elf_file__needs(f->ef, "libpython3");
		elf_file__close(f->ef);
		f->ef = NULL;
		return f;
	}
	if (elf_file__symbol(f->ef, "PyCode_Type", &f->code_type_vaddr, NULL))
		f->code_type_vaddr = 0;
	if (elf_file__symbol(f->ef, "_Py_NoneStruct", &f->none_vaddr, NULL))
		f->none_vaddr = 0;
	if (!elf_file__symbol(f->ef, "Py_Version", &v, &size) && size == 8 &&
	    !elf_file__read(f->ef, v, &f->py_version, sizeof(f->py_version)) &&
	    f->py_version >> 24 != 3)
		f->py_version = 0;
	/* kept for the load bias of later processes: the symbol tables are not needed */
	elf_file__release(f->ef);
	return f;
}

int py_exe_kind(pid_t pid)
{
	char path[64];
	const struct elf_facts *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	f = elf_facts__get(path);
	if (!f)
		return -errno;
	if (!f->err)
		return PY_EXE_STATIC;
	return f->needs_libpython ? PY_EXE_SHARED : PY_EXE_OTHER;
}

/* Where a file that holds _PyRuntime has the symbols pybpfprof uses (link-time addresses). */
struct python_syms {
	uint64_t runtime, code_type, none; /* code_type and none: 0 when absent */
};

/*
 * Looks for _PyRuntime in file; fills version from Py_Version (3.11+) or the
 * name. *efp is the cached, still open file: not to be closed by the caller.
 */
static int probe_elf(const char *file, const char *shown_name, struct target *t,
		     struct python_syms *syms, struct elf_file **efp)
{
	struct elf_facts *f = elf_facts__get(file);

	if (!f)
		return -errno;
	if (f->err)
		return f->err;
	syms->runtime = f->runtime_vaddr;
	syms->code_type = f->code_type_vaddr;
	syms->none = f->none_vaddr;
	t->version = f->py_version;
	if (!t->version) {
		t->version = version_from_name(shown_name, NULL);
		/* Before 3.11 there is no Py_Version: take the patch level from PY_VERSION. */
		if (t->version) {
			unsigned minor = (t->version >> 16) & 0xff;

			if (f->micro_minor != minor) {
				f->micro = elf_file__find_py_version(f->ef, minor);
				f->micro_minor = minor;
				elf_file__release(f->ef);
			}
			if (f->micro >= 0 && f->micro < 256)
				t->version |= (f->micro << 8) | 0xf0;
		}
	}
	snprintf(t->python_elf, sizeof(t->python_elf), "%s", shown_name);
	*efp = f->ef;
	return 0;
}

/* 3.13+: the offsets come from _Py_DebugOffsets at the start of the target's _PyRuntime. */
static int layout_from_target(struct target *t, char *why, size_t whylen)
{
	uint8_t buf[PY_DEBUG_OFFSETS_READ];
	char reason[256];
	int err;

	err = remote_read(t->pid, t->runtime_addr, buf, sizeof(buf));
	if (err) {
		snprintf(why, whylen, "pid %d (Python %s): cannot read _Py_DebugOffsets: %s",
			 t->pid, t->version_str, strerror(-err));
		return err;
	}
	err = py_layout__from_debug_offsets(t->version, buf, sizeof(buf), &t->layout, reason,
					    sizeof(reason));
	/*
	 * Out-of-range offsets: the process wrote its own table, or its memory
	 * is damaged. Either way it stays so: never profiled, never retried.
	 */
	if (err == -EBADMSG) {
		snprintf(why, whylen,
			 "pid %d (%s) runs Python %s and publishes an inconsistent "
			 "_Py_DebugOffsets (%s): refusing it",
			 t->pid, t->comm, t->version_str, reason);
		return -ENOTSUP;
	}
	if (err)
		snprintf(why, whylen, "pid %d runs Python %s, which cannot be profiled: %s%s",
			 t->pid, t->version_str, reason,
			 err == -ENOTSUP ? "" :
					   " (a build this version of pybpfprof does not know)");
	return err;
}

/*
 * The first code object on a thread's frame chain, skipping C-stack shim
 * frames, as the BPF walker does: 0 when the thread runs no Python code.
 */
static uint64_t first_code(const struct target *t, uint64_t tstate)
{
	const struct py_offsets *o = &t->layout.bpf;
	uint8_t frame[PYPROF_FRAME_READ];
	uint64_t f = 0, code;
	int i;

	if (remote_read(t->pid, tstate + o->tstate_frame, &f, 8))
		return 0;
	if (f && o->cframe_current_frame != PYPROF_NO_OFFSET &&
	    remote_read(t->pid, f + o->cframe_current_frame, &f, 8))
		return 0;
	for (i = 0; i < 8 && f; i++) {
		if (remote_read(t->pid, f, frame, o->frame_read_size))
			return 0;
		memcpy(&code, frame + o->frame_code, 8);
		code &= ~(uint64_t)o->code_tag_mask;
		memcpy(&f, frame + o->frame_previous, 8);
		if (o->frame_owner != PYPROF_NO_OFFSET &&
		    frame[o->frame_owner] >= o->owner_skip_min)
			continue;
		if (code)
			return code;
	}
	return 0;
}

/*
 * One look at the live process: 0, -EAGAIN before its interpreter exists,
 * -EPROTO when a pointer does not point back; *code is the code object whose
 * type was read (0: none).
 */
static int check_once(const struct target *t, uint64_t *code)
{
	const struct py_layout *L = &t->layout;
	uint64_t interp = 0, tstate = 0, back = 0, type = 0;
	int err, i;

	*code = 0;
	err = remote_read(t->pid, t->runtime_addr + L->bpf.runtime_interp_head, &interp, 8);
	if (!err && interp)
		err = remote_read(t->pid, interp + L->bpf.interp_threads_head, &tstate, 8);
	if (err)
		return err;
	/* a process that has just exec'd: its interpreter does not exist yet */
	if (!interp || !tstate)
		return -EAGAIN;
	err = remote_read(t->pid, tstate + L->tstate_interp, &back, 8);
	if (err)
		return err;
	if (back != interp)
		return -EPROTO;
	for (i = 0; i < PYPROF_MAX_THREADS && tstate && !*code; i++) {
		*code = first_code(t, tstate);
		if (remote_read(t->pid, tstate + L->bpf.tstate_next, &tstate, 8))
			break;
	}
	/* No thread runs Python code right now (embedder, shutdown): nothing more to check. */
	if (!*code || !t->code_type_addr)
		return 0;
	if (remote_read(t->pid, *code + L->ob_type, &type, 8) || type != t->code_type_addr)
		return -EPROTO;
	return 0;
}

/*
 * Validates the layout on the live process: the interpreter's first thread
 * state points back at it, and the first Python frame found on its threads
 * holds an object whose type is PyCode_Type. A wrong table fails here with a
 * sentence instead of producing garbage names later.
 *
 * The process runs on while it is read: a frame whose code object is freed
 * as it returns (a module's body at the end of its import) shows that
 * object's type overwritten by the allocator. So a mismatch counts only when
 * the next look finds the same code object first; when it finds another,
 * the thread moved on and the check is made again, a few times.
 */
#define CHECK_TRIES 4

static int check_live(const struct target *t)
{
	uint64_t code, again;
	int err = 0, i;

	for (i = 0; i < CHECK_TRIES; i++) {
		err = check_once(t, &code);
		if (err != -EPROTO || !code)
			return err;
		if (check_once(t, &again) == 0)
			return 0;
		if (again == code)
			return -EPROTO;
	}
	return err;
}

int target__pidfd(const struct target *t)
{
	int fd = proc_pidfd_open(t->pid);

	if (fd < 0)
		return fd;
	/* read after the pidfd exists: a match means the pidfd is of that process */
	if (!t->start_ticks || proc_start_ticks(t->pid) != t->start_ticks) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

int target__check(const struct target *t)
{
	return check_live(t);
}

static int target_open(pid_t pid, struct target *t, bool *unchecked, char *why, size_t whylen);

int target__open(pid_t pid, struct target *t, char *why, size_t whylen)
{
	return target_open(pid, t, NULL, why, whylen);
}

int target__open_early(pid_t pid, struct target *t, bool *unchecked, char *why, size_t whylen)
{
	*unchecked = false;
	return target_open(pid, t, unchecked, why, whylen);
}

static int inspect(pid_t pid, struct target *t, bool *unchecked, char *why, size_t whylen);

/*
 * Everything is read from /proc/PID and the process's memory while a pidfd
 * holds on to the process: if it is still running afterwards, no other
 * process can have had its pid in between, and what was read is its own.
 */
static int target_open(pid_t pid, struct target *t, bool *unchecked, char *why, size_t whylen)
{
	int pidfd = proc_pidfd_open(pid), err;

	/* a thread's id, not a process's (-EINVAL, -ENOENT): inspect() says so in a sentence */
	if (pidfd == -ESRCH || pidfd == -ENOSYS) {
		memset(t, 0, sizeof(*t));
		if (pidfd == -ENOSYS)
			snprintf(why, whylen,
				 "cannot follow pid %d: pidfd_open is missing; "
				 "pybpfprof needs Linux 5.3 or later",
				 pid);
		else
			snprintf(why, whylen, "no such process: pid %d", pid);
		return pidfd == -ENOSYS ? pidfd : -ESRCH;
	}
	err = inspect(pid, t, unchecked, why, whylen);
	if (!err && (pidfd < 0 || proc_pidfd_exited(pidfd))) {
		snprintf(why, whylen, "pid %d exited while it was being inspected", pid);
		err = -ESRCH;
	}
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

/* It exists, is a process (not a thread of one), and its main thread still runs: names, ids. */
static int inspect_process(pid_t pid, struct target *t, char *why, size_t whylen)
{
	char path[64];
	struct stat st;
	pid_t tgid;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (pid <= 0 || stat(path, &st) || !proc_alive(pid)) {
		snprintf(why, whylen, "no such process: pid %d", pid);
		return -ESRCH;
	}
	/* Its executable, maps and root are no longer readable through /proc/PID. */
	if (proc_leader_gone(pid)) {
		snprintf(why, whylen,
			 "pid %d cannot be attached to: its main thread has exited "
			 "while its other threads run on (profiles started before that go on)",
			 pid);
		return -ESRCH;
	}
	proc_status_ids(pid, &tgid, &t->nspid);
	if (t->nspid <= 0)
		t->nspid = pid;
	if (tgid > 0 && tgid != pid) {
		snprintf(why, whylen,
			 "pid %d is a thread of process %d: profile the process "
			 "with -p %d (all its threads are sampled)",
			 pid, tgid, tgid);
		return -EINVAL;
	}
	read_names(t);
	t->start_ticks = proc_start_ticks(pid);
	return 0;
}

/* t->exe: where its executable is, as the process sees it. */
static int read_exe(struct target *t, const char *exe_link, char *why, size_t whylen)
{
	ssize_t n = readlink(exe_link, t->exe, sizeof(t->exe) - 1);
	int err;

	if (n < 0) {
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			snprintf(why, whylen, "cannot inspect pid %d (%s): permission denied",
				 t->pid, t->comm);
		else
			snprintf(why, whylen,
				 "pid %d (%s) is not a CPython process: it has no "
				 "executable (kernel thread?)",
				 t->pid, t->comm);
		return err;
	}
	t->exe[n] = '\0';
	return 0;
}

/* The ELF file that holds _PyRuntime in a process, and where it is mapped. */
struct python_elf {
	struct elf_file *ef; /* cached: not to be closed */
	struct map_entry m;  /* its first mapping */
	struct python_syms syms;
	char exe_link[64];  /* /proc/PID/exe */
	char map_file[128]; /* /proc/PID/map_files/START-END, for a libpython */
};

/* The executable (static build) or a mapped libpython3.X.so (shared build). */
static int find_python_elf(struct target *t, struct python_elf *pe, char *why, size_t whylen)
{
	pid_t pid = t->pid;
	struct stat st;
	int err;

	/* Static build: the executable itself holds _PyRuntime. */
	err = probe_elf(pe->exe_link, t->exe, t, &pe->syms, &pe->ef);
	if (err == -EACCES || err == -EPERM) {
		snprintf(why, whylen, "cannot read the executable of pid %d: permission denied",
			 pid);
		return err;
	}
	if (!err) {
		if (stat(pe->exe_link, &st) || maps_find(pid, st.st_ino, NULL, &pe->m))
			err = -ENOENT;
	} else if (!maps_find(pid, 0, "libpython3", &pe->m)) {
		/* Shared build: the interpreter is in a mapped libpython3.X.so. */
		snprintf(pe->map_file, sizeof(pe->map_file),
			 "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, pe->m.start, pe->m.end);
		err = probe_elf(pe->map_file, pe->m.path, t, &pe->syms, &pe->ef);
		if (err == -EACCES || err == -EPERM) {
			snprintf(
				why, whylen,
				"cannot read the libpython of pid %d (%s) through "
				"/proc/%d/map_files: permission denied; without root, reading it "
				"needs CAP_CHECKPOINT_RESTORE, and CAP_DAC_READ_SEARCH for another "
				"user's process",
				pid, pe->m.path, pid);
			return err;
		}
	}
	if (err) {
		explain_not_cpython(pid, t, why, whylen);
		return -ENOEXEC;
	}
	snprintf(t->python_elf_host, sizeof(t->python_elf_host), "%s",
		 strcmp(t->python_elf, t->exe) ? pe->map_file : pe->exe_link);
	return 0;
}

/* Where _PyRuntime and PyCode_Type are in the process; the version as text. */
static int locate_runtime(struct target *t, const struct python_elf *pe, char *why, size_t whylen)
{
	uint64_t bias = 0;
	int err;

	err = elf_file__bias(pe->ef, pe->m.start, pe->m.off, &bias);
	if (err) {
		snprintf(why, whylen, "pid %d: cannot compute the load address of %s", t->pid,
			 t->python_elf);
		return err;
	}
	t->runtime_addr = bias + pe->syms.runtime;
	t->code_type_addr = pe->syms.code_type ? bias + pe->syms.code_type : 0;
	t->none_addr = pe->syms.none ? bias + pe->syms.none : 0;
	/* only for the where split: a process without it is still profiled */
	if (maps_exec_range(t->pid, pe->m.inode, &t->text_start, &t->text_end))
		t->text_start = t->text_end = 0;
	if ((t->version & 0xffff) == 0)
		snprintf(t->version_str, sizeof(t->version_str), "%u.%u", t->version >> 24,
			 (t->version >> 16) & 0xff);
	else
		py_version_str(t->version, t->version_str, sizeof(t->version_str));
	return 0;
}

/*
 * t->layout: a table of this version's offsets, or (3.13+) the process's
 * own, which also says whether the build is free-threaded: its version then
 * reads "3.14.0t". Free-threaded builds exist from 3.13 on, which publish
 * their offsets; a name like python3.12t is no build pybpfprof knows.
 */
static int choose_layout(struct target *t, char *why, size_t whylen)
{
	bool threaded = false;
	size_t n;
	int err;

	version_from_name(t->python_elf, &threaded);
	err = t->version ? py_layout__for_version(t->version, &t->layout) : -ENOTSUP;
	if (!err && threaded) {
		snprintf(why, whylen,
			 "pid %d runs a free-threaded Python %st, which is not supported "
			 "(supported: %s; free-threaded builds from 3.13 on)",
			 t->pid, t->version_str, py_supported_versions);
		return -ENOTSUP;
	}
	if (err == -EAGAIN)
		err = layout_from_target(t, why, whylen);
	else if (err)
		snprintf(why, whylen,
			 "pid %d runs Python %s, which is not supported (supported: %s)", t->pid,
			 t->version ? t->version_str : "of unknown version", py_supported_versions);
	n = strlen(t->version_str);
	if (!err && t->layout.free_threaded && n + 1 < sizeof(t->version_str)) {
		t->version_str[n] = 't';
		t->version_str[n + 1] = '\0';
	}
	return err;
}

/* The layout checked on the live process; with unchecked, one not started yet passes. */
static int check_layout(const struct target *t, bool *unchecked, char *why, size_t whylen)
{
	int err = check_live(t);

	if (err == -EAGAIN && unchecked) {
		*unchecked = true;
		return 0;
	}
	if (err) {
		snprintf(why, whylen,
			 "pid %d (Python %s): its interpreter state does not match the "
			 "expected layout (%s); is it still starting up?",
			 t->pid, t->version_str, strerror(-err));
		return -EPROTO;
	}
	return 0;
}

static int inspect(pid_t pid, struct target *t, bool *unchecked, char *why, size_t whylen)
{
	struct python_elf pe = { 0 };
	int err;

	snprintf(pe.exe_link, sizeof(pe.exe_link), "/proc/%d/exe", pid);
	err = inspect_process(pid, t, why, whylen);
	if (!err)
		err = read_exe(t, pe.exe_link, why, whylen);
	if (!err)
		err = find_python_elf(t, &pe, why, whylen);
	if (!err)
		err = locate_runtime(t, &pe, why, whylen);
	if (!err)
		err = choose_layout(t, why, whylen);
	if (!err)
		err = check_layout(t, unchecked, why, whylen);
	return err;
}
