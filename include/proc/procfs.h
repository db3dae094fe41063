/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Readers of /proc/PID and pidfds: the maps, stat and status of a process,
 * its small text files, and a way to name it that a reused pid cannot fool.
 * What comes from the target (comm, mapped file names) may hold anything:
 * the parsers say how they stay in step.
 */
#ifndef PYBPFPROF_PROCFS_H
#define PYBPFPROF_PROCFS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start, end, off, inode;
	char perms[5];
	bool long_path; /* a path too long for path[], which is then "" */
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

/*
 * The first mapping in /proc/PID/maps of the file with this inode (or, for
 * inode 0, of a file whose base name starts with name_prefix), the one with
 * the lowest offset, for its load bias: 0, -ENOENT, or -errno.
 */
int maps_find(pid_t pid, uint64_t inode, const char *name_prefix, struct map_entry *out);

/*
 * The span of the executable mappings in /proc/PID/maps of the file with
 * this inode: [*start, *end). 0, -ENOENT (none), or -errno.
 */
int maps_exec_range(pid_t pid, uint64_t inode, uint64_t *start, uint64_t *end);

/*
 * Reads a small text file (a /proc entry) into buf, NUL-terminated, trailing
 * newlines and spaces trimmed; "" if it cannot be read. nul_to_space turns
 * embedded NULs (cmdline) into spaces.
 */
void proc_read_small_file(const char *path, char *buf, size_t len, bool nul_to_space);

/*
 * The first len bytes at most of /proc/PID/environ (the target's memory, as
 * it is now: any bytes, NUL-separated, rewritable by the target at any time)
 * into buf, not terminated; their count (0 when it cannot be read).
 */
size_t proc_read_environ(pid_t pid, char *buf, size_t len);

/*
 * Reads /proc/PID/stat into buf; returns the last ')' (the end of comm, which
 * may hold anything: the other fields follow it), or NULL.
 */
const char *proc_stat_read(pid_t pid, char *buf, size_t len);

/* The fields of /proc/PID/stat that pybpfprof uses. */
struct proc_stat {
	char state;	     /* field 3: R, S, D, Z, X, ... */
	int ppid;	     /* field 4; -1 if absent */
	int session;	     /* field 6; -1 if absent */
	long long starttime; /* field 22, clock ticks after boot; -1 if absent */
};

/*
 * Pure: parses a /proc/PID/stat line. comm (field 2) may hold anything,
 * spaces and ')' included, so the fields are counted from the last ')'.
 * 0, or -EINVAL when there is no ')' followed by a state.
 */
int proc_stat_parse(const char *buf, struct proc_stat *st);

/*
 * Pure: comm (field 2) of a /proc/PID/stat line, from after the first '('
 * to the last ')', cut to fit len (at least 1) and NUL-terminated; "" if
 * there is none. As the process named itself: anything but NUL.
 */
void proc_stat_comm(const char *buf, char *comm, size_t len);

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
 * From /proc/PID/status: the Tgid (the process a thread id belongs to) and
 * the innermost NSpid (the pid the process has in its own pid namespace, the
 * last of the NSpid list). -1 where absent.
 */
void proc_status_ids(pid_t pid, pid_t *tgid, pid_t *nspid);

/* A task of a process: its host id and the id its own pid namespace gives it. */
struct proc_nstid {
	pid_t tid, nstid;
};
/* Up to max tasks of pid, each with both ids (/proc/PID/task, their NSpid): how many. */
size_t proc_task_nsids(pid_t pid, struct proc_nstid *out, size_t max);

/* When pid started, in seconds since the epoch (clock-tick precision); 0 if unknown. */
double proc_start_time(pid_t pid);

/* Reads /proc/PID/task/TID/comm into buf ("" if gone). */
void proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len);

/* A process and its parent, from /proc/PID/stat. */
struct proc_parent {
	pid_t pid, ppid;
};

/*
 * Pure: the descendants of root among the n (pid, parent) pairs of links
 * (sorted by parent and used up here), parents before their children, each once even if
 * the pairs make a cycle: the first max into out. Returns how many it
 * found: more than max when some were left out (whose own descendants are
 * then not looked for).
 */
size_t proc_descendants_of(struct proc_parent *links, size_t n, pid_t root, pid_t *out, size_t max);

/*
 * The descendants of root running now (one scan of /proc): as
 * proc_descendants_of. -errno when /proc cannot be listed.
 */
ssize_t proc_descendants(pid_t root, pid_t *out, size_t max);

#endif
