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
#include <stdio.h>
#include <sys/types.h>
#include "target/py_layout.h"

struct map_entry {
	uint64_t start, end, off, inode;
	char perms[5];
	bool long_path;		/* a path too long for path[], which is then "" */
	char path[PATH_MAX];
};

/*
 * Pure: parses one whole /proc/PID/maps line. 0, or -EINVAL. A path that does
 * not fit path[] is not cut (a cut path's last component could be any part
 * of a name the target chose): path is "" and long_path is set.
 */
int maps_parse_line(const char *line, struct map_entry *e);

/*
 * The next entry of an open /proc/PID/maps (or any such text): 1, or 0 at its
 * end. Lines are read whole, whatever their length, into *line (getline's
 * buffer, freed by the caller), so a mapped file's long name cannot be split
 * into a second, forged line. Lines that do not parse are skipped.
 */
int maps_next(FILE *f, char **line, size_t *cap, struct map_entry *e);

struct target {
	pid_t pid;
	pid_t nspid;			/* pid inside its own pid namespace (= pid on the host) */
	char exe[PATH_MAX];		/* /proc/PID/exe as the process sees it */
	char cmdline[256];		/* argv joined by spaces, truncated */
	char comm[32];
	char python_elf[PATH_MAX];	/* file holding _PyRuntime (exe or libpython) */
	char python_elf_host[PATH_MAX];	/* the same file, openable from the host (/proc/PID/...) */
	uint64_t start_ticks;		/* its start (/proc/PID/stat field 22): with pid, who it is */
	uint32_t version;		/* PY_VERSION_HEX */
	char version_str[24];
	uint64_t runtime_addr;		/* &_PyRuntime in the target */
	uint64_t code_type_addr;	/* &PyCode_Type in the target */
	struct py_layout layout;
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
int target__open_early(pid_t pid, struct target *t, bool *unchecked, char *why,
			  size_t whylen);
/* The live layout check: 0, -EAGAIN (no interpreter yet), or -errno (mismatch, gone). */
int target__check(const struct target *t);

/*
 * A forked child's target: the parent's (same memory, same layout) with the
 * child's pid, namespace pid and names.
 */
void target__fork(const struct target *parent, pid_t child, struct target *t);

/* What /proc/PID/exe is, from a cache per file identity (cheap for every exec). */
enum py_exe_kind {
	PY_EXE_OTHER = 0,	/* no _PyRuntime, no libpython3 needed: never CPython */
	PY_EXE_STATIC = 1,	/* holds _PyRuntime */
	PY_EXE_SHARED = 2,	/* needs libpython3.X.so, which will hold it */
};

/* enum py_exe_kind, or -errno (process gone, no executable, permission). */
int py_exe_kind(pid_t pid);

/*
 * Reads a small text file (a /proc entry) into buf, NUL-terminated, trailing
 * newlines and spaces trimmed; "" if it cannot be read. nul_to_space turns
 * embedded NULs (cmdline) into spaces.
 */
void proc_read_small_file(const char *path, char *buf, size_t len, bool nul_to_space);

/*
 * Reads /proc/PID/stat into buf; returns the last ')' (the end of comm, which
 * may hold anything: the other fields follow it), or NULL.
 */
const char *proc_stat_read(pid_t pid, char *buf, size_t len);

/* The fields of /proc/PID/stat that pybpfprof uses. */
struct proc_stat {
	char state;			/* field 3: R, S, D, Z, X, ... */
	int ppid;			/* field 4; -1 if absent */
	long long starttime;		/* field 22, clock ticks after boot; -1 if absent */
};

/*
 * Pure: parses a /proc/PID/stat line. comm (field 2) may hold anything,
 * spaces and ')' included, so the fields are counted from the last ')'.
 * 0, or -EINVAL when there is no ')' followed by a state.
 */
int proc_stat_parse(const char *buf, struct proc_stat *st);

/* The process has a thread still running (a zombie main thread does not end it). */
bool proc_alive(pid_t pid);
/* Its main thread has exited while other threads still run. */
bool proc_leader_gone(pid_t pid);

/*
 * Pure: the start time (field 22, clock ticks since boot) from the text of a
 * /proc/PID/stat; 0 if it has none. comm may hold anything, ")" and spaces
 * included: the fields are counted from the last ")".
 */
uint64_t proc_stat_start_ticks(const char *stat);

/* The start time of pid now, in clock ticks since boot; 0 if it is gone. */
uint64_t proc_start_ticks(pid_t pid);

/*
 * Pids are reused: a process is named by a pidfd, which never refers to
 * another one. proc_pidfd_open gives one (or -errno: -ESRCH for no such
 * process, -ENOSYS before Linux 5.3); proc_pidfd_exited says whether its
 * process has ended (every thread: a zombie main thread does not end it).
 */
int proc_pidfd_open(pid_t pid);
bool proc_pidfd_exited(int pidfd);

/*
 * A pidfd for the process that t was read from, or -ESRCH when that process
 * is gone (its pid may name another one by now: the start times differ).
 */
int target__pidfd(const struct target *t);

/* When pid started, in seconds since the epoch (clock-tick precision); 0 if unknown. */
double proc_start_time(pid_t pid);

/* Reads /proc/PID/task/TID/comm into buf ("" if gone). */
void proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len);

#endif
