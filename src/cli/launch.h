/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Launch mode (`pybpfprof -- cmd args`): the command is forked at once but
 * held before its exec until the kernel side is attached and its pid is
 * followed, so its first bytecode is already sampled. It keeps our stdin,
 * stdout and stderr; its exit status becomes ours.
 *
 * The child is known by a pidfd from its fork on: waiting for it and
 * signalling it go through the pidfd, never through a pid that could have
 * been reused. It runs as root, as perf and py-spy run theirs, unless
 * --user names another user (struct launch_user).
 */
#ifndef PYBPFPROF_LAUNCH_H
#define PYBPFPROF_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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
	bool exited;
	int exit_code; /* once exited: its own, or 128 + the signal that killed it */
};

/*
 * Forks the child, which waits for launch__release, as user if user->set
 * (NULL: as we are). 0, or -errno with a reason in why.
 */
int launch__start(struct launch *l, char *const argv[], const struct launch_user *user, char *why,
		  size_t whylen);

/* Lets the child exec argv; waits until the exec happened. 0, or -errno with a reason. */
int launch__release(struct launch *l, char *why, size_t whylen);

/* Reaps the child if it has exited (wait: block until it does). True once it has exited. */
bool launch__reap(struct launch *l, bool wait);

/* Sends sig to the child, through its pidfd, unless it has been reaped already. */
void launch__signal(struct launch *l, int sig);

/* The command's exit code: its own, or 128 + the signal that killed it. */
int launch__exit_code(const struct launch *l);

/* Setup failed before release: the held child (still pybpfprof) exits and is reaped. */
void launch__abort(struct launch *l);

#endif
