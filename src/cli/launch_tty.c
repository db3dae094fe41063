// SPDX-License-Identifier: GPL-2.0-only
/*
 * The launched command's session and pty, and the thread that relays it
 * (see launch_tty.h). A thread, not the sampling loop: keys and output
 * then pass at once whatever the loop is doing (converting samples,
 * writing the report after -d, waiting for the command), and a command
 * that prints a lot is not slowed to the loop's pace. The thread uses
 * system calls only, blocks every signal, and is the only reader of our
 * terminal while it relays.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "util/log.h"
#include "util/mono.h"
#include "launch_tty.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* The terminal whose mode the relay changed, and that mode as it was: for any way out. */
static struct termios saved_mode;
static atomic_int saved_fd = -1;
/*
 * The last way out (a second stop signal, then _exit) has the terminal: the
 * relay thread, which sets raw mode again whenever it finds it gone, must
 * not do it between that restore and the exit (it did, relaying the
 * command's answer to the signal, and left root's shell in raw mode).
 */
static atomic_bool tty_final;
static atomic_int in_keys_raw;

/* The SIGWINCH handler's way to the thread. */
static volatile sig_atomic_t winch_fd = -1;
static atomic_bool winch;

#define DRAIN_NS 1000000000LL
#define JOIN_S 2

void launch_tty__raw(const struct termios *in, struct termios *out)
{
	*out = *in;
	out->c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF);
	out->c_oflag &= ~OPOST;
	out->c_lflag &= ~(ICANON | ECHO | ECHONL | ISIG | IEXTEN);
	out->c_cflag &= ~(CSIZE | PARENB);
	out->c_cflag |= CS8;
	out->c_cc[VMIN] = 1;
	out->c_cc[VTIME] = 0;
}

void launch_tty__restore(void)
{
	int fd = atomic_exchange(&saved_fd, -1);

	/* tcsetattr is async-signal-safe; TCSANOW: output stuck behind Ctrl-S must not block */
	if (fd >= 0)
		tcsetattr(fd, TCSANOW, &saved_mode);
	log_set_crlf(false);
}

void launch_tty__restore_final(void)
{
	const struct timespec ms = { 0, 1000000 };
	int i;

	atomic_store(&tty_final, true);
	/* a change under way on the relay thread ends first; bounded, as this may have
	 * interrupted one on its own thread */
	for (i = 0; i < 100 && atomic_load(&in_keys_raw); i++)
		nanosleep(&ms, NULL);
	launch_tty__restore();
}

/* Whether a and b put the terminal in the same mode. */
static bool same_mode(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag && a->c_lflag == b->c_lflag &&
	       a->c_cflag == b->c_cflag && a->c_cc[VMIN] == b->c_cc[VMIN] &&
	       a->c_cc[VTIME] == b->c_cc[VTIME];
}

/*
 * Our terminal in raw mode, again if needed (a shell that stopped and
 * continued us may have put its own mode back meanwhile), unless the keys
 * are off: under mode_lock, which launch_tty__keys holds to turn them off.
 */
static void keys_raw(struct launch_tty *t)
{
	struct termios cur, raw;

	/* counted before the look: launch_tty__restore_final waits for what it did not stop */
	atomic_fetch_add(&in_keys_raw, 1);
	if (atomic_load(&tty_final)) {
		atomic_fetch_sub(&in_keys_raw, 1);
		return;
	}
	pthread_mutex_lock(&t->mode_lock);
	if (atomic_load(&t->keys_off) || tcgetattr(t->keys_fd, &cur))
		goto out;
	if (atomic_load(&saved_fd) < 0)
		saved_mode = cur;
	launch_tty__raw(&saved_mode, &raw);
	if (same_mode(&cur, &raw))
		goto out;
	/* our messages end their lines themselves from before the first raw one */
	log_set_crlf(isatty(STDERR_FILENO));
	if (!tcsetattr(t->keys_fd, TCSANOW, &raw))
		atomic_store(&saved_fd, t->keys_fd);
	else if (atomic_load(&saved_fd) < 0)
		log_set_crlf(false);
out:
	pthread_mutex_unlock(&t->mode_lock);
	atomic_fetch_sub(&in_keys_raw, 1);
}

static void on_winch(int sig)
{
	int e = errno;

	(void)sig;
	atomic_store(&winch, true);
	if (winch_fd >= 0 && write(winch_fd, "w", 1) < 0)
		errno = e;
	errno = e;
}

/* The pty takes our terminal's window size; the kernel tells the command (SIGWINCH). */
static void copy_size(const struct launch_tty *t)
{
	struct winsize ws;

	if (t->size_fd >= 0 && !ioctl(t->size_fd, TIOCGWINSZ, &ws))
		ioctl(t->master, TIOCSWINSZ, &ws);
}

static void tty_init(struct launch_tty *t)
{
	memset(t, 0, sizeof(*t));
	t->master = t->slave = t->keys_fd = t->out_fd = t->size_fd = -1;
	t->wake[0] = t->wake[1] = -1;
	pthread_mutex_init(&t->mode_lock, NULL);
}

/* The pty's two ends, the command's in our terminal's mode and size. */
static int open_pty(struct launch_tty *t, uid_t owner)
{
	struct termios mode;
	int unlock = 0;

	t->master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->master < 0)
		return -errno;
	if (ioctl(t->master, TIOCSPTLCK, &unlock))
		return -errno;
	/* the command's end from our own, not by a path someone could have swapped */
	t->slave = ioctl(t->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0)
		return -errno;
	if (!tcgetattr(t->size_fd, &mode))
		tcsetattr(t->slave, TCSANOW, &mode);
	copy_size(t);
	/* its user's, as a login's terminal is: what reopens it by name (ttyname) works */
	if (owner != (uid_t)-1 && fchown(t->slave, owner, (gid_t)-1))
		return -errno;
	if (pipe2(t->wake, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	return 0;
}

int launch_tty__open(struct launch_tty *t, bool keys, uid_t owner, char *why, size_t whylen)
{
	int fd, err;

	tty_init(t);
	for (fd = 0; fd < 3; fd++) {
		t->streams[fd] = isatty(fd);
		if (t->streams[fd] && t->size_fd < 0)
			t->size_fd = fd;
	}
	if (t->size_fd < 0)
		return 0;
	t->keys_fd = keys && t->streams[0] ? 0 : -1;
	t->out_fd = t->streams[1] ? 1 : t->streams[2] ? 2 : 0;
	err = open_pty(t, owner);
	if (err) {
		snprintf(why, whylen,
			 "cannot give the command a terminal of its own (a pseudo-terminal): %s; "
			 "with its standard streams redirected from and to files or pipes it "
			 "needs none",
			 strerror(-err));
		launch_tty__close(t);
	}
	return err;
}

/* In the child: every descriptor above 2 that is a terminal closed (getdents64: no malloc). */
static void close_terminals(void)
{
	char buf[4096];
	long n, off;
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return;
	while ((n = getdents64(dir, buf, sizeof(buf))) > 0)
		for (off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			int fd = atoi(d->d_name);

			off += d->d_reclen;
			if (fd > 2 && fd != dir && isatty(fd))
				close(fd);
		}
	close(dir);
}

int launch_tty__child(const struct launch_tty *t)
{
	int fd;

	if (setsid() < 0)
		return -errno;
	if (t->slave >= 0) {
		if (ioctl(t->slave, TIOCSCTTY, 0))
			return -errno;
		for (fd = 0; fd < 3; fd++)
			if (t->streams[fd] && dup2(t->slave, fd) < 0)
				return -errno;
	}
	/* ours above 2 (and the pty's ends: the slave is 0-2 now) */
	close_terminals();
	return 0;
}

void launch_tty__forked(struct launch_tty *t)
{
	/* held by us, the slave would keep the pty open after every process of the command ended */
	if (t->slave >= 0)
		close(t->slave);
	t->slave = -1;
}

/* What one run of the relay keeps between wake-ups. */
struct relay {
	struct launch_tty *t;
	char keys[4096]; /* typed, not yet taken by the pty */
	size_t nkeys;
	bool out_open; /* the pty can still have output: some process holds its other end */
	bool keys_eof; /* our terminal has no more keys (hung up) */
	bool out_ok;   /* writing to our terminal works */
};

static void write_out(struct relay *r, const char *p, size_t n)
{
	struct pollfd pfd = { .fd = r->t->out_fd, .events = POLLOUT };
	ssize_t w;

	while (n && r->out_ok) {
		w = write(r->t->out_fd, p, n);
		if (w > 0) {
			p += w;
			n -= w;
		} else if (w < 0 && errno == EAGAIN) {
			poll(&pfd, 1, 100);
		} else if (!(w < 0 && errno == EINTR)) {
			r->out_ok = false;
		}
	}
}

/*
 * What the pty's output holds now, up to a buffer, written to our terminal
 * in one go (the pty hands it out a few KiB per read: one write per read
 * would cost the command's output a write and a wake-up each); false when
 * nothing was there.
 */
static bool relay_output(struct relay *r)
{
	char buf[65536];
	size_t len = 0;
	ssize_t n = 0;

	while (len < sizeof(buf)) {
		n = read(r->t->master, buf + len, sizeof(buf) - len);
		if (n <= 0)
			break;
		len += n;
	}
	/* EIO: no process holds the command's end any more */
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		r->out_open = false;
	write_out(r, buf, len);
	return len > 0;
}

static void put_keys(struct relay *r)
{
	ssize_t n = write(r->t->master, r->keys, r->nkeys);

	if (n > 0) {
		memmove(r->keys, r->keys + n, r->nkeys - n);
		r->nkeys -= n;
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		r->nkeys = 0; /* the pty is gone */
	}
}

static bool foreground(int fd)
{
	return tcgetpgrp(fd) == getpgrp();
}

/*
 * The suspend key typed while the command's own process group is in front
 * on its terminal: the kernel discards the SIGTSTP it makes there (the
 * command leads its session, its group is orphaned), so the key is taken
 * out here and the suspension done by launch__reap (main thread): the
 * command stopped, then we, as the shell's job. The key in keys, or NULL.
 */
static char *suspend_key(struct relay *r, size_t n)
{
	const struct launch_tty *t = r->t;
	struct termios mode;
	size_t i;
	int peer;

	for (i = 0; i < n && (unsigned char)r->keys[i] >= 0x20; i++)
		;
	if (i == n || t->group <= 0 || tcgetpgrp(t->master) != t->group)
		return NULL;
	/* the command's end holds its mode: looked at through a descriptor of our own */
	peer = ioctl(t->master, TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (peer < 0)
		return NULL;
	i = tcgetattr(peer, &mode);
	close(peer);
	if (i || !(mode.c_lflag & ISIG) || mode.c_cc[VSUSP] == _POSIX_VDISABLE)
		return NULL;
	return memchr(r->keys, mode.c_cc[VSUSP], n);
}

static void take_keys(struct relay *r)
{
	ssize_t n = read(r->t->keys_fd, r->keys, sizeof(r->keys));
	char *z;

	if (n > 0) {
		z = suspend_key(r, n);
		if (z) {
			memmove(z, z + 1, r->keys + n - z - 1);
			n--;
			atomic_store(&r->t->suspend, true);
		}
		r->nkeys = n;
		put_keys(r);
	} else if (n == 0 || (errno == EIO && foreground(r->t->keys_fd))) {
		/* hung up (EIO while in the background is SIGTTIN's, ignored) */
		r->keys_eof = true;
	}
}

/*
 * Whether to read keys now: only while we are our terminal's foreground
 * job (a background read would stop us with SIGTTIN), the pty has taken
 * the last ones, and the command still runs.
 */
static bool keys_wanted(struct relay *r)
{
	const struct launch_tty *t = r->t;

	if (t->keys_fd < 0 || r->keys_eof || atomic_load(&t->keys_off) || r->nkeys ||
	    !r->out_open || !foreground(t->keys_fd))
		return false;
	keys_raw(r->t);
	return !atomic_load(&t->keys_off);
}

static void take_wakeups(struct relay *r)
{
	char buf[64];

	while (read(r->t->wake[0], buf, sizeof(buf)) > 0)
		;
	if (atomic_exchange(&winch, false))
		copy_size(r->t);
}

/* At the end: what the pty holds, written out, for DRAIN_NS at most. */
static void drain(struct relay *r)
{
	long long end = mono_ns() + DRAIN_NS;

	while (r->out_open && mono_ns() < end && relay_output(r))
		;
}

static void *relay_thread(void *arg)
{
	struct relay *r = arg;
	struct launch_tty *t = r->t;

	while (!atomic_load(&t->stop) && (r->out_open || r->nkeys)) {
		bool keys = keys_wanted(r);
		/* in the background: look again now and then whether we are in front */
		int timeout = !keys && t->keys_fd >= 0 && !r->keys_eof &&
					      !atomic_load(&t->keys_off) ?
				      200 :
				      -1;
		struct pollfd p[3] = {
			{ .fd = t->wake[0], .events = POLLIN },
			{ .fd = t->master, .events = POLLIN | (r->nkeys ? POLLOUT : 0) },
			{ .fd = keys ? t->keys_fd : -1, .events = POLLIN },
		};

		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			take_wakeups(r);
		if (p[1].revents & POLLOUT)
			put_keys(r);
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			relay_output(r);
		if (p[2].revents)
			take_keys(r);
	}
	drain(r);
	launch_tty__restore();
	return r;
}

int launch_tty__relay(struct launch_tty *t, char *why, size_t whylen)
{
	struct sigaction sa = { .sa_handler = on_winch, .sa_flags = SA_RESTART };
	struct relay *r;
	sigset_t all, old;
	int err;

	if (t->master < 0)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(why, whylen, "cannot relay the command's terminal: out of memory");
		return -ENOMEM;
	}
	*r = (struct relay){ .t = t, .out_open = true, .out_ok = t->out_fd >= 0 };
	winch_fd = t->wake[1];
	sigaction(SIGWINCH, &sa, NULL);
	/* a read or a mode change while in the background fails instead of stopping us */
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t->thread, NULL, relay_thread, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(r);
		snprintf(why, whylen, "cannot relay the command's terminal: %s", strerror(err));
		return -err;
	}
	t->relay = r;
	t->relaying = true;
	/* the window may have changed since the pty was opened */
	atomic_store(&winch, true);
	if (write(t->wake[1], "w", 1) < 0)
		return 0;
	return 0;
}

void launch_tty__keys(struct launch_tty *t, bool on)
{
	if (t->master < 0)
		return;
	pthread_mutex_lock(&t->mode_lock);
	atomic_store(&t->keys_off, !on);
	/* off: our terminal's mode is back before the caller prints a line */
	if (!on)
		launch_tty__restore();
	pthread_mutex_unlock(&t->mode_lock);
	if (t->wake[1] >= 0 && write(t->wake[1], "k", 1) < 0)
		return;
}

/* Joins the thread, which ends within the drain; one stuck writing to our terminal is cancelled. */
static void stop_relay(struct launch_tty *t)
{
	struct timespec until;

	atomic_store(&t->stop, true);
	if (write(t->wake[1], "s", 1) < 0)
		errno = 0; /* a full pipe wakes it as well */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOIN_S;
	if (pthread_timedjoin_np(t->thread, NULL, &until)) {
		pthread_cancel(t->thread);
		pthread_join(t->thread, NULL);
	}
	free(t->relay);
	t->relay = NULL;
	t->relaying = false;
}

void launch_tty__close(struct launch_tty *t)
{
	if (t->relaying)
		stop_relay(t);
	launch_tty__restore();
	if (winch_fd == t->wake[1] && t->wake[1] >= 0) {
		signal(SIGWINCH, SIG_DFL);
		winch_fd = -1;
	}
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	if (t->wake[0] >= 0)
		close(t->wake[0]);
	if (t->wake[1] >= 0)
		close(t->wake[1]);
	t->master = t->slave = t->wake[0] = t->wake[1] = -1;
}
