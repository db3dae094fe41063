// SPDX-License-Identifier: GPL-2.0-only
/*
 * Readers of /proc/PID: maps, stat, status, small text files, and pidfds.
 * The text comes from the kernel but names in it (comm, mapped paths) are
 * the process's own: fields are found from the last ')' of stat, and maps
 * lines are read whole.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proc/procfs.h"

int maps_parse_line(const char *line, struct map_entry *e)
{
	unsigned dev_major, dev_minor;
	int consumed = 0;
	const char *p;
	size_t n;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n", &e->start,
		   &e->end, e->perms, &e->off, &dev_major, &dev_minor, &e->inode, &consumed) < 7 ||
	    !consumed || e->end < e->start)
		return -EINVAL;
	p = line + consumed;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, "\n");
	if (n >= sizeof(e->path)) {
		e->long_path = true;
		n = 0;
	}
	memcpy(e->path, p, n);
	e->path[n] = '\0';
	return 0;
}

int maps_next(FILE *f, char **line, size_t *cap, struct map_entry *e)
{
	while (getline(line, cap, f) > 0)
		if (!maps_parse_line(*line, e))
			return 1;
	return 0;
}

void proc_read_small_file(const char *path, char *buf, size_t len, bool nul_to_space)
{
	ssize_t n = -1, i;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	for (i = 0; i < n; i++)
		if (buf[i] == '\0' && nul_to_space)
			buf[i] = ' ';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

size_t proc_read_environ(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	ssize_t r = 1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* a read stops at a page: until len, its end or an error (then what was read) */
	while (n < len && r > 0) {
		r = read(fd, buf + n, len - n);
		if (r < 0 && errno == EINTR)
			r = 1;
		else if (r > 0)
			n += r;
	}
	close(fd);
	return n;
}

const char *proc_stat_read(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	proc_read_small_file(path, buf, len, false);
	/* comm may hold spaces and parentheses: the fields start after the last ')' */
	return strrchr(buf, ')');
}

int proc_stat_parse(const char *buf, struct proc_stat *st)
{
	const char *p = strrchr(buf, ')');
	int i;

	st->state = 0;
	st->ppid = st->session = -1;
	st->starttime = -1;
	/* "pid (comm) S ppid pgrp session ...": p is at the end of field 2 */
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	st->state = p[2];
	if (sscanf(p + 3, "%d %*d %d", &st->ppid, &st->session) < 2)
		st->session = -1;
	if (st->ppid < 0)
		st->ppid = -1;
	if (st->session < 0)
		st->session = -1;
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p && p[1] >= '0' && p[1] <= '9') {
		char *end;

		errno = 0;
		st->starttime = strtoll(p + 1, &end, 10);
		/* a whole number, or none: "12x" is not a start time */
		if (errno || (*end && *end != ' ' && *end != '\n'))
			st->starttime = -1;
	}
	return 0;
}

void proc_stat_comm(const char *buf, char *comm, size_t len)
{
	const char *from = strchr(buf, '('), *to = strrchr(buf, ')');
	size_t n = from && to > from ? (size_t)(to - from - 1) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(comm, n ? from + 1 : "", n);
	comm[n] = '\0';
}

/* "Threads:" of /proc/PID/status: live threads, plus a main thread that has exited. */
static int status_threads(pid_t pid)
{
	char buf[2048];
	const char *p;

	snprintf(buf, sizeof(buf), "/proc/%d/status", pid);
	proc_read_small_file(buf, buf, sizeof(buf), false);
	p = strstr(buf, "\nThreads:");
	return p ? atoi(p + strlen("\nThreads:")) : 0;
}

bool proc_leader_gone(pid_t pid)
{
	struct proc_stat st;
	char buf[512];

	proc_stat_read(pid, buf, sizeof(buf));
	/*
	 * The main thread can exit (pthread_exit) while the others go on: it
	 * stays a zombie until the last one exits, and the process lives on.
	 */
	return !proc_stat_parse(buf, &st) && st.state == 'Z' && status_threads(pid) > 1;
}

bool proc_alive(pid_t pid)
{
	struct proc_stat st;
	char buf[512];

	proc_stat_read(pid, buf, sizeof(buf));
	/* a zombie main thread with other threads running (proc_leader_gone) is a live process */
	if (proc_stat_parse(buf, &st) || st.state == 'X')
		return false;
	return st.state != 'Z' || status_threads(pid) > 1;
}

void proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	proc_read_small_file(path, buf, len, false);
}

void proc_status_ids(pid_t pid, pid_t *tgid, pid_t *nspid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	*tgid = *nspid = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	/* whole lines: a long one (Groups:) is never read as two */
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "Tgid: %d", tgid) == 1)
			continue;
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;
			long v;

			for (;;) {
				v = strtol(p, &end, 10);
				if (end == p)
					break;
				*nspid = v;
				p = end;
			}
		}
	}
	free(line);
	fclose(f);
}

size_t proc_task_nsids(pid_t pid, struct proc_nstid *out, size_t max)
{
	struct dirent *de;
	char path[64];
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name), tgid, nstid;

		if (tid <= 0)
			continue;
		/* a task gone meanwhile, or whose id went to another process, reads no pair */
		proc_status_ids(tid, &tgid, &nstid);
		if (tgid == pid && nstid > 0)
			out[n++] = (struct proc_nstid){ .tid = tid, .nstid = nstid };
	}
	closedir(d);
	return n;
}

int maps_find(pid_t pid, uint64_t inode, const char *name_prefix, struct map_entry *out)
{
	char path[64], *line = NULL;
	struct map_entry e;
	int err = -ENOENT;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (maps_next(f, &line, &cap, &e)) {
		const char *base;

		if (!e.inode)
			continue;
		base = strrchr(e.path, '/');
		base = base ? base + 1 : e.path;
		if ((inode && e.inode == inode) ||
		    (!inode && name_prefix && !strncmp(base, name_prefix, strlen(name_prefix)))) {
			/* the lowest offset comes first in maps for one file */
			*out = e;
			err = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

int maps_exec_range(pid_t pid, uint64_t inode, uint64_t *start, uint64_t *end)
{
	char path[64], *line = NULL;
	uint64_t lo = UINT64_MAX, hi = 0;
	struct map_entry e;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (maps_next(f, &line, &cap, &e)) {
		if (!inode || e.inode != inode || e.perms[2] != 'x')
			continue;
		lo = e.start < lo ? e.start : lo;
		hi = e.end > hi ? e.end : hi;
	}
	free(line);
	fclose(f);
	if (!hi)
		return -ENOENT;
	*start = lo;
	*end = hi;
	return 0;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int proc_pidfd_open(pid_t pid)
{
	int fd = pid > 0 ? syscall(SYS_pidfd_open, pid, 0) : (errno = ESRCH, -1);

	return fd < 0 ? -errno : fd;
}

bool proc_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* readable once the whole thread group has exited */
	return poll(&p, 1, 0) != 0;
}

uint64_t proc_stat_start_ticks(const char *stat)
{
	struct proc_stat st;

	return !proc_stat_parse(stat, &st) && st.starttime > 0 ? (uint64_t)st.starttime : 0;
}

uint64_t proc_start_ticks(pid_t pid)
{
	char buf[1024];

	proc_stat_read(pid, buf, sizeof(buf));
	return proc_stat_start_ticks(buf);
}

double proc_start_time(pid_t pid)
{
	unsigned long long btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	struct proc_stat st;
	char buf[1024];
	FILE *f;

	proc_stat_read(pid, buf, sizeof(buf));
	if (proc_stat_parse(buf, &st) || st.starttime < 0 || hz <= 0)
		return 0;
	f = fopen("/proc/stat", "re");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime ? (double)btime + (double)st.starttime / hz : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct proc_parent *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_parent(const void *a, const void *b)
{
	const struct proc_parent *x = a, *y = b;

	return x->ppid < y->ppid ? -1 : x->ppid > y->ppid;
}

/* The first of links (sorted by parent) whose parent is ppid: its index, or n. */
static size_t first_child(const struct proc_parent *links, size_t n, pid_t ppid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (links[mid].ppid < ppid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t proc_descendants_of(struct proc_parent *links, size_t n, pid_t root, pid_t *out, size_t max)
{
	size_t head = 0, found = 0, i;
	pid_t p;

	/* a pid listed twice (with two parents: a listing that raced) is one process, once */
	qsort(links, n, sizeof(*links), cmp_pid);
	p = n ? links[0].pid : 0;
	for (i = 1; i < n; i++)
		if (links[i].pid == p)
			links[i].pid = 0;
		else
			p = links[i].pid;
	p = root;
	qsort(links, n, sizeof(*links), cmp_parent);
	/* breadth first; out is the queue while it holds them all, the count beyond it */
	for (;;) {
		for (i = first_child(links, n, p); i < n && links[i].ppid == p; i++) {
			/* taken: a pid that is its own ancestor in a forged or racing listing */
			if (links[i].pid == root || links[i].pid <= 0)
				continue;
			if (found < max)
				out[found] = links[i].pid;
			links[i].pid = 0;
			found++;
		}
		if (head >= found || head >= max)
			return found;
		p = out[head++];
	}
}

ssize_t proc_descendants(pid_t root, pid_t *out, size_t max)
{
	struct proc_parent *links = NULL, *more;
	size_t n = 0, cap = 0, found;
	struct proc_stat st;
	struct dirent *de;
	char buf[512];
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);

		if (pid <= 0)
			continue;
		proc_stat_read(pid, buf, sizeof(buf));
		if (proc_stat_parse(buf, &st) || st.ppid <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			more = realloc(links, cap * sizeof(*links));
			if (!more)
				break;
			links = more;
		}
		links[n++] = (struct proc_parent){ pid, st.ppid };
	}
	closedir(d);
	found = proc_descendants_of(links, n, root, out, max);
	free(links);
	return (ssize_t)found;
}
