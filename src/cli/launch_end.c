// SPDX-License-Identifier: GPL-2.0-only
/*
 * The end of a launched command (see launch.h): what it left running.
 *
 * We are the child subreaper of everything the command starts, so what it
 * leaves behind is, once its parent has exited, our own child: a pid that
 * stays its own until we reap it, which we can signal without racing a
 * reuse. Our other children (the short-lived helper that reads source
 * files) are in our session; the command and everything it started are
 * not: the command began a session of its own, and no process can join a
 * session other than its own (setsid only makes a new one). So our
 * children outside our session are exactly what the command left.
 *
 * They get a second to end by themselves (a multiprocessing forkserver or
 * resource tracker sees its parent's pipe close and exits), then SIGTERM
 * (and SIGCONT, for one that is stopped), as systemd stops a service, and
 * SIGKILL 2 s later. A process that escaped by double-forking or setsid()
 * is ours all the same; a process that ignores SIGTERM is killed; the
 * warning names each one, so nothing outlives the run unnoticed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "proc/procfs.h"
#include "util/log.h"
#include "util/mono.h"
#include "util/vec.h"
#include "launch.h"

#define GONE_NS 1000000000LL /* to end by themselves */
#define TERM_NS 2000000000LL /* after SIGTERM */
#define KILL_NS 1000000000LL /* after SIGKILL: only a process in an uninterruptible wait */
#define ROUND_NS 10000000LL  /* between two looks */
#define NAMED 8		     /* named in a warning; the others counted */
#define CHILDREN_TEXT 65536  /* of one thread's children file */

size_t launch_children_parse(const char *text, pid_t *pids, size_t max)
{
	size_t n = 0, len;
	long v;

	/* words of digits only, separated by white space: anything else is no pid */
	while (*text && n < max) {
		char *end;

		len = strcspn(text, " \t\n");
		if (len && strspn(text, "0123456789") == len) {
			errno = 0;
			v = strtol(text, &end, 10);
			if (!errno && v > 0 && v <= 0x3fffffff)
				pids[n++] = v;
		}
		text += len;
		text += strspn(text, " \t\n");
	}
	return n;
}

void launch_leftovers_describe(const struct launch_leftover *lo, size_t n, size_t total, pid_t cmd,
			       char *buf, size_t len)
{
	size_t i, used = 0;
	int w;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		w = snprintf(buf + used, len - used, "%spid %d (%s%s)", i ? ", " : "", lo[i].pid,
			     lo[i].comm, lo[i].pid == cmd ? ", the command" : "");
		used += w > 0 ? (size_t)w : 0;
	}
	if (total > n && used < len)
		snprintf(buf + used, len - used, "%sand %zu more", n ? ", " : "", total - n);
}

/* Our children, from each of our threads' children file; -ENOENT without that file. */
static int children_files(pid_t **pids, size_t *n, size_t *cap)
{
	char path[64], *text = malloc(CHILDREN_TEXT);
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int err = 0;

	if (!text || !dir) {
		free(text);
		if (dir)
			closedir(dir);
		return -ENOMEM;
	}
	while (!err && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/children", d->d_name);
		if (access(path, R_OK)) {
			err = -ENOENT;
			break;
		}
		proc_read_small_file(path, text, CHILDREN_TEXT, false);
		if (vec_grow((void **)pids, cap, *n + CHILDREN_TEXT / 2, sizeof(**pids)))
			err = -ENOMEM;
		else
			*n += launch_children_parse(text, *pids + *n, *cap - *n);
	}
	closedir(dir);
	free(text);
	return err;
}

/* Without CONFIG_PROC_CHILDREN: every process whose parent we are, from /proc. */
static int children_scan(pid_t **pids, size_t *n, size_t *cap)
{
	pid_t self = getpid(), pid;
	struct proc_stat st;
	struct dirent *d;
	char buf[512];
	DIR *dir = opendir("/proc");

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		pid = atoi(d->d_name);
		if (pid <= 0)
			continue;
		proc_stat_read(pid, buf, sizeof(buf));
		if (proc_stat_parse(buf, &st) || st.ppid != self)
			continue;
		if (vec_grow((void **)pids, cap, *n + 1, sizeof(**pids)))
			break;
		(*pids)[(*n)++] = pid;
	}
	closedir(dir);
	return 0;
}

/*
 * The command's processes still running (ours, outside our session), into
 * *lo (grown), their number; zombies among them reaped on the way.
 */
static size_t leftovers(struct launch *l, struct launch_leftover **lo, size_t *cap)
{
	pid_t *pids = NULL, sid = getsid(0);
	size_t n = 0, pcap = 0, i, found = 0;
	struct proc_stat st;
	char buf[512];

	launch_reap_orphans(l);
	launch__reap(l, false);
	n = 0;
	if (children_files(&pids, &n, &pcap) == -ENOENT) {
		n = 0;
		children_scan(&pids, &n, &pcap);
	}
	for (i = 0; i < n; i++) {
		proc_stat_read(pids[i], buf, sizeof(buf));
		if (proc_stat_parse(buf, &st) || st.session == sid || st.state == 'Z' ||
		    st.state == 'X')
			continue;
		if (vec_grow((void **)lo, cap, found + 1, sizeof(**lo)))
			break;
		(*lo)[found].pid = pids[i];
		proc_stat_comm(buf, (*lo)[found].comm, sizeof((*lo)[found].comm));
		found++;
	}
	free(pids);
	return found;
}

static void pause_round(void)
{
	struct timespec ts = { 0, ROUND_NS };

	nanosleep(&ts, NULL);
}

/* Whether pid is in the sorted list of those sent SIGTERM already; else adds it. */
static bool sent_before(pid_t **sent, size_t *n, size_t *cap, pid_t pid)
{
	size_t lo = 0, hi = *n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if ((*sent)[mid] == pid)
			return true;
		if ((*sent)[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (vec_grow((void **)sent, cap, *n + 1, sizeof(**sent)))
		return false;
	memmove(*sent + lo + 1, *sent + lo, (*n - lo) * sizeof(**sent));
	(*sent)[lo] = pid;
	(*n)++;
	return false;
}

/*
 * Until none is left or ns have passed: sig (0: none) to each leftover, once
 * (SIGTERM, with SIGCONT) or at every look (SIGKILL: its children come to
 * us as it dies). The number still running, in *lo.
 */
static size_t wait_gone(struct launch *l, long long ns, int sig, struct launch_leftover **lo,
			size_t *cap)
{
	long long end = mono_ns() + ns;
	pid_t *sent = NULL;
	size_t n, nsent = 0, scap = 0, i;

	for (;;) {
		n = leftovers(l, lo, cap);
		for (i = 0; sig && i < n; i++) {
			if (sig == SIGKILL) {
				kill((*lo)[i].pid, SIGKILL);
			} else if (!sent_before(&sent, &nsent, &scap, (*lo)[i].pid)) {
				kill((*lo)[i].pid, sig);
				kill((*lo)[i].pid, SIGCONT);
			}
		}
		if (!n || mono_ns() >= end)
			break;
		pause_round();
	}
	free(sent);
	return n;
}

/* "pid 12 (sleep), pid 345 (python3)", the first NAMED of n, into names. */
static const char *describe(const struct launch *l, const struct launch_leftover *lo, size_t n,
			    char *names, size_t len)
{
	launch_leftovers_describe(lo, n < NAMED ? n : NAMED, n, l->pid, names, len);
	return names;
}

/* What the command left running, ended; how many there were. */
static size_t end_leftovers(struct launch *l)
{
	struct launch_leftover *lo = NULL;
	size_t cap = 0, n, total;
	char names[1024];

	total = wait_gone(l, GONE_NS, 0, &lo, &cap);
	if (total) {
		pr_warn("%zu process%s started by the command %s still running: %s; sending "
			"SIGTERM, then SIGKILL to any still running 2 s later\n",
			total, total == 1 ? "" : "es", total == 1 ? "is" : "are",
			describe(l, lo, total, names, sizeof(names)));
		n = wait_gone(l, TERM_NS, SIGTERM, &lo, &cap);
		if (n) {
			pr_warn("%zu process%s still running 2 s after SIGTERM: %s; sending SIGKILL\n",
				n, n == 1 ? "" : "es", describe(l, lo, n, names, sizeof(names)));
			n = wait_gone(l, KILL_NS, SIGKILL, &lo, &cap);
		}
		if (n)
			pr_warn("%zu process%s still running after SIGKILL: %s; in a wait the kernel "
				"does not interrupt, each ends when it returns\n",
				n, n == 1 ? "" : "es", describe(l, lo, n, names, sizeof(names)));
	}
	free(lo);
	return total;
}

void launch__finish(struct launch *l)
{
	if (!l->pid || l->finished)
		return;
	if (!l->released) {
		launch__abort(l);
		l->finished = true;
		return;
	}
	/* keys typed from now on are for the shell, not for what the command left */
	launch_tty__keys(&l->tty, false);
	l->left_behind = end_leftovers(l);
	if (!launch__reap(l, false)) {
		/* the command itself got SIGKILL above: its status is 137 */
		launch__wait(l, (int)(KILL_NS / 1000000));
		launch__reap(l, false);
	}
	launch_tty__close(&l->tty);
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->pidfd = -1;
	l->finished = true;
}
