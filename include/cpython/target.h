/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Finding out what a process is: whether it runs CPython, which version,
 * where its interpreter state lives. Files of the target are opened through
 * /proc/PID (exe, map_files), so processes in containers and chroots work
 * like host ones.
 */
#ifndef PYBPFPROF_TARGET_H
#define PYBPFPROF_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cpython/py_layout.h"

struct target {
	pid_t pid;
	pid_t nspid;	    /* pid inside its own pid namespace (= pid on the host) */
	char exe[PATH_MAX]; /* /proc/PID/exe as the process sees it */
	char cmdline[256];  /* argv joined by spaces, truncated */
	char comm[32];
	char python_elf[PATH_MAX];	/* file holding _PyRuntime (exe or libpython) */
	char python_elf_host[PATH_MAX]; /* the same file, openable from the host (/proc/PID/...) */
	uint64_t start_ticks; /* its start (/proc/PID/stat field 22): with pid, who it is */
	uint32_t version;     /* PY_VERSION_HEX */
	char version_str[24];
	uint64_t runtime_addr;	 /* &_PyRuntime in the target */
	uint64_t code_type_addr; /* &PyCode_Type in the target */
	uint64_t none_addr;	 /* &_Py_NoneStruct (None) in the target; 0: not known */
	struct py_layout layout;
	/* The interpreter's machine code (python_elf's executable mappings); 0, 0: unknown. */
	uint64_t text_start, text_end;
};

/*
 * Inspects pid. 0 on success; otherwise -errno with a one-sentence reason in
 * why (no such process, not CPython, unsupported version, no permission).
 */
int target__open(pid_t pid, struct target *t, char *why, size_t whylen);

/*
 * For a process that has just exec'd: like target__open, but a process
 * whose interpreter does not exist yet is accepted with *unchecked set (its
 * ELF, version and addresses are known; the layout check waits for
 * target__check), so it can be sampled from its first bytecode.
 */
int target__open_early(pid_t pid, struct target *t, bool *unchecked, char *why, size_t whylen);
/* The live layout check: 0, -EAGAIN (no interpreter yet), or -errno (mismatch, gone). */
int target__check(const struct target *t);

/*
 * A forked child's target: the parent's (same memory, same layout) with the
 * child's pid, namespace pid and names.
 */
void target__fork(const struct target *parent, pid_t child, struct target *t);

/* What /proc/PID/exe is, from a cache per file identity (cheap for every exec). */
enum py_exe_kind {
	PY_EXE_OTHER = 0,  /* no _PyRuntime, no libpython3 needed: never CPython */
	PY_EXE_STATIC = 1, /* holds _PyRuntime */
	PY_EXE_SHARED = 2, /* needs libpython3.X.so, which will hold it */
};

/* enum py_exe_kind, or -errno (process gone, no executable, permission). */
int py_exe_kind(pid_t pid);

/*
 * A pidfd for the process that t was read from, or -ESRCH when that process
 * is gone (its pid may name another one by now: the start times differ).
 */
int target__pidfd(const struct target *t);

#endif
