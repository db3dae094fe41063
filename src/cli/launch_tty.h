/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The launched command's session and terminal. The command never holds the
 * terminal pybpfprof was started from: a process whose controlling
 * terminal it is can type into it with TIOCSTI (dev.tty.legacy_tiocsti),
 * and one that merely holds a descriptor of it can read what is typed next
 * or change its mode, also after pybpfprof has exited and root's shell has
 * the terminal back. So the command starts a session of its own, and when
 * one of our standard streams is a terminal it gets a pseudo-terminal
 * instead, which a thread of ours relays: the keys typed on our terminal
 * to the pty (ours in raw mode meanwhile, so that Ctrl-C, Ctrl-\\ and
 * Ctrl-D reach the pty's line discipline and act on the command as they
 * would have on ours; Ctrl-Z is taken out, see suspend), the pty's output
 * to our terminal as it is (the pty did the output processing), the window
 * size when it changes (SIGWINCH). Standard streams that are not terminals
 * (pipes, files) are the command's as they are. As `su --pty` and sudo's
 * use_pty do, and the same with or without --user.
 */
#ifndef PYBPFPROF_LAUNCH_TTY_H
#define PYBPFPROF_LAUNCH_TTY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

struct launch_tty {
	int master;	 /* our end of the pty; -1: none of our standard streams is a terminal */
	int slave;	 /* the command's end, until it has it (-1 after the fork) */
	bool streams[3]; /* the command's stdin, stdout, stderr that are the pty */
	int keys_fd;	 /* our terminal whose keys go to the command (stdin), or -1 */
	int out_fd;	 /* where the pty's output goes (our stdout, stderr or stdin), or -1 */
	int size_fd;	 /* our terminal whose window size the pty takes, or -1 */
	int wake[2];	 /* the relay thread's wake-up: a window change, keys off, stop */
	pthread_t thread;
	pthread_mutex_t mode_lock; /* our terminal's mode: the thread's keys against keys off */
	void *relay;		   /* the thread's state */
	bool relaying;		   /* the thread runs */
	atomic_bool keys_off;	   /* the command has exited: keys typed now are the shell's */
	atomic_bool stop;	   /* the thread drains the pty's output and ends */
	pid_t group;		   /* the command's own process group (its pid), once forked */
	atomic_bool suspend;	   /* the suspend key (Ctrl-Z) was typed to it */
};

/*
 * Opens the pty when one of our standard streams is a terminal; keys: ours
 * go to the command (false in `top`, which reads them); owner: the --user's
 * uid, which gets the pty's end as a login's terminal is its user's
 * ((uid_t)-1: ours). 0, or -errno with a sentence in why.
 */
int launch_tty__open(struct launch_tty *t, bool keys, uid_t owner, char *why, size_t whylen);

/*
 * In the forked child, before anything else: a session of its own, the pty
 * as its controlling terminal and in place of each standard stream that
 * was a terminal, and any other descriptor of a terminal closed. Uses
 * nothing but system calls. 0, or -errno.
 */
int launch_tty__child(const struct launch_tty *t);

/* In the parent, once the child is forked: the child's end closed. */
void launch_tty__forked(struct launch_tty *t);

/* The relay started (the command is let go). 0, or -errno with a sentence in why. */
int launch_tty__relay(struct launch_tty *t, char *why, size_t whylen);

/*
 * Keys off: those typed from now on stay in our terminal, whose mode is
 * restored when this returns (the command has exited, or we print the
 * report while it runs on); on: relayed again.
 */
void launch_tty__keys(struct launch_tty *t, bool on);

/*
 * The end: what the pty still holds written out (1 s at most), the thread
 * stopped, our terminal's mode restored, the pty closed. Idempotent.
 */
void launch_tty__close(struct launch_tty *t);

/* Our terminal's mode as it was, if the relay changed it; async-signal-safe. */
void launch_tty__restore(void);
/*
 * The same before an _exit: the relay thread changes the mode no more, and
 * a change it had under way ends first (at most 0.1 s); async-signal-safe.
 */
void launch_tty__restore_final(void);

/*
 * Pure: the mode our terminal takes while its keys are relayed: every key
 * passed as it is (no line editing, echo, signals, flow control or CR/NL
 * translation) and the output as it comes, as the pty already processed it
 * (our own messages meanwhile end their lines with "\r\n": log_set_crlf).
 */
void launch_tty__raw(const struct termios *in, struct termios *out);

#endif
