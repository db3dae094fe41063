/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Launch mode (`pybpfprof -- cmd args`): the command is forked at once but
 * held before its exec until the kernel side is attached and its pid is
 * followed, so its first bytecode is already sampled. It keeps our stdin,
 * stdout and stderr; its exit status becomes ours.
 */
#ifndef PYBPFPROF_LAUNCH_H
#define PYBPFPROF_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct launch {
	pid_t pid;		/* 0: nothing launched */
	const char *cmd;	/* argv[0], for messages */
	int go_fd;		/* write end: one byte lets the child exec */
	int err_fd;		/* read end: the child's errno if exec failed, EOF if it worked */
	bool exited;
	int status;		/* from waitpid, once exited */
};

/* Forks the child, which waits for launch__release. 0, or -errno with a reason in why. */
int launch__start(struct launch *l, char *const argv[], char *why, size_t whylen);

/* Lets the child exec argv; waits until the exec happened. 0, or -errno with a reason. */
int launch__release(struct launch *l, char *why, size_t whylen);

/* Reaps the child if it has exited (wait: block until it does). True once it has exited. */
bool launch__reap(struct launch *l, bool wait);

/* The command's exit code: its own, or 128 + the signal that killed it. */
int launch__exit_code(const struct launch *l);

/* Setup failed before release: the held child (still pybpfprof) exits and is reaped. */
void launch__abort(struct launch *l);

#endif
