/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Launch mode (`pybpfprof -- cmd args`): the command is forked at once but
 * held before its exec until the kernel side is attached and its pid is
 * followed, so its first bytecode is already sampled. It runs in a session
 * of its own, with a terminal of its own in place of ours (launch_tty.h);
 * its exit status becomes ours.
 *
 * The child is known by a pidfd from its fork on: waiting for it and
 * signalling it go through the pidfd, never through a pid that could have
 * been reused. It runs as root, as perf and py-spy run theirs, unless
 * --user names another user (struct launch_user).
 *
 * Nothing it starts outlives the run unnoticed: we are the child subreaper
 * of everything it starts, so a process it leaves behind (double-forked,
 * in a session of its own, or not) becomes our child when its parent
 * exits, and stays one until we reap it. When the command has exited, such
 * processes are named in a warning and ended (launch__finish).
 */
#ifndef PYBPFPROF_LAUNCH_H
#define PYBPFPROF_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "launch_tty.h"

#define LAUNCH_MAX_GROUPS 256

/*
 * Who the command runs as (--user NAME|UID). A name or uid of the password
 * database gets that entry's primary group and supplementary groups, HOME,
 * USER and LOGNAME; a uid without an entry gets gid = uid and no
 * supplementary group (never root's group 0 by default).
 */
struct launch_user {
	bool set; /* false: the command runs as we do (root) */
	uid_t uid;
	gid_t gid;
	size_t ngroups;
	gid_t groups[LAUNCH_MAX_GROUPS];
	char name[64]; /* "" for a uid without a passwd entry */
	char home[256];
};

/*
 * Pure but for the password database: resolves NAME or a numeric UID. 0, or
 * -errno with a sentence in why (unknown user, too many groups).
 */
int launch_user__resolve(const char *spec, struct launch_user *u, char *why, size_t whylen);

struct launch {
	pid_t pid;	 /* 0: nothing launched */
	int pidfd;	 /* the child, for waiting and signals: -1 when none */
	const char *cmd; /* argv[0], for messages */
	int go_fd;	 /* write end: one byte lets the child exec */
	int err_fd;	 /* read end: the child's failure if exec failed, EOF if it worked */
	bool released;	 /* let go to its exec */
	bool finished;	 /* launch__finish done: nothing of it runs, the terminal is ours */
	bool exited;
	int exit_code; /* once exited: its own, or 128 + the signal that killed it */
	struct launch_tty tty;
	size_t left_behind; /* processes still running when the command had exited */
};

/*
 * Forks the child, which waits for launch__release, as user if user->set
 * (NULL: as we are); keys: our terminal's keys go to the command (not in
 * `top`). 0, or -errno with a reason in why.
 */
int launch__start(struct launch *l, char *const argv[], const struct launch_user *user, bool keys,
		  char *why, size_t whylen);

/* Lets the child exec argv; waits until the exec happened. 0, or -errno with a reason. */
int launch__release(struct launch *l, char *why, size_t whylen);

/*
 * Reaps the child if it has exited (wait: block until it does). True once
 * it has exited. Until then, also reaps what it left behind that has ended
 * since (our children as its subreaper).
 */
bool launch__reap(struct launch *l, bool wait);

/* Waits up to ms for the child to exit (launch__reap tells whether it did). */
void launch__wait(struct launch *l, int ms);

/*
 * Our terminal's keys to the command (on), or not (off: its mode is ours
 * again when this returns, to print the report while the command runs on).
 */
void launch__keys(struct launch *l, bool on);

/* Sends sig to the child, through its pidfd, unless it has been reaped already. */
void launch__signal(struct launch *l, int sig);

/* The same from a signal handler: async-signal-safe. */
void launch__signal_now(int sig);

/* The command's exit code: its own, or 128 + the signal that killed it. */
int launch__exit_code(const struct launch *l);

/* Setup failed before release: the held child (still pybpfprof) exits and is reaped. */
void launch__abort(struct launch *l);

/*
 * The end of the command, once it has exited (or, after a stop signal, had
 * its time): our terminal's keys stay ours from now on; the processes it
 * left running are given a second to end by themselves, then named in a
 * warning and sent SIGTERM, and those still running 2 s later SIGKILL;
 * then what its terminal still held is written out and our terminal's
 * mode restored. Idempotent; before release, launch__abort.
 */
void launch__finish(struct launch *l);

/* What has ended of what the command left behind (our children, as its subreaper), reaped. */
void launch_reap_orphans(struct launch *l);

/* One process the command left running. */
struct launch_leftover {
	pid_t pid;
	char comm[32];
};

/* Pure: the pids of a /proc/PID/task/TID/children text ("12 345 "), up to max; how many. */
size_t launch_children_parse(const char *text, pid_t *pids, size_t max);

/*
 * Pure: "pid 12 (sleep), pid 345 (python3, the command)" for the first n of
 * total leftovers (cmd: the command's pid), with "and N more" for the rest,
 * cut to fit len (at least 1).
 */
void launch_leftovers_describe(const struct launch_leftover *lo, size_t n, size_t total, pid_t cmd,
			       char *buf, size_t len);

#endif
