// SPDX-License-Identifier: GPL-2.0-only
/*
 * Launch mode (see launch.h). Two pipes: the child blocks reading `go`
 * until the profiler is ready; `err` is close-on-exec in the child, so the
 * parent reads EOF when the exec succeeded and the child's failure (which
 * step, which errno) when it failed, and can say so in a sentence instead
 * of reporting an empty profile. What the command leaves behind is
 * launch_end.c's; its terminal launch_tty.c's.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "launch.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* What the held child failed at, sent on the err pipe with the errno. */
enum child_step { STEP_EXEC, STEP_GROUPS, STEP_GID, STEP_UID, STEP_TTY };

/* The command, for a signal handler (launch__signal_now): its pidfd while it is ours. */
static volatile sig_atomic_t signal_pidfd = -1;

struct child_failure {
	int step;
	int err;
};

int launch_user__resolve(const char *spec, struct launch_user *u, char *why, size_t whylen)
{
	struct passwd *pw;
	const char *p;
	char *end;
	unsigned long v;
	int n;

	memset(u, 0, sizeof(*u));
	for (p = spec; *p && isdigit((unsigned char)*p); p++)
		;
	errno = 0;
	if (*spec && !*p) {
		v = strtoul(spec, &end, 10);
		if (errno || v >= (uid_t)-1) {
			snprintf(why, whylen, "--user %s: not a valid uid", spec);
			return -EINVAL;
		}
		u->uid = v;
		pw = getpwuid(u->uid);
	} else {
		pw = *spec ? getpwnam(spec) : NULL;
		if (!pw) {
			snprintf(why, whylen,
				 "--user %s: no such user; give a name from the "
				 "password database or a numeric uid",
				 spec);
			return -ENOENT;
		}
		u->uid = pw->pw_uid;
	}
	u->set = true;
	if (!pw) {
		/* no entry: a group of its own number, never root's group by default */
		u->gid = u->uid;
		return 0;
	}
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir);
	n = LAUNCH_MAX_GROUPS;
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &n) < 0) {
		snprintf(why, whylen, "--user %s: the user is in more than %d groups", spec,
			 LAUNCH_MAX_GROUPS);
		return -E2BIG;
	}
	u->ngroups = n;
	return 0;
}

/* In the child, before its exec: become the user, or say which step failed. */
static int become(const struct launch_user *u, struct child_failure *f)
{
	f->step = STEP_GROUPS;
	if (setgroups(u->ngroups, u->groups))
		goto fail;
	f->step = STEP_GID;
	if (setresgid(u->gid, u->gid, u->gid))
		goto fail;
	f->step = STEP_UID;
	if (setresuid(u->uid, u->uid, u->uid))
		goto fail;
	if (u->name[0]) {
		setenv("HOME", u->home, 1);
		setenv("USER", u->name, 1);
		setenv("LOGNAME", u->name, 1);
	}
	return 0;
fail:
	f->err = errno;
	return -1;
}

/*
 * In the child, before its exec: the signals as a new program expects them
 * (we ignore SIGPIPE, and exec keeps what is ignored), then its session and
 * terminal. Its failure, if any, in f.
 */
static void child_setup(const struct launch *l, struct child_failure *f)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGTTIN, SIGTTOU, SIGWINCH };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	size_t i;
	int err;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	err = launch_tty__child(&l->tty);
	if (err)
		*f = (struct child_failure){ STEP_TTY, -err };
}

/* The forked child: held until `go`, then exec, or its failure on `err`. */
static void child(struct launch *l, char *const argv[], const struct launch_user *user, int go,
		  int err)
{
	struct child_failure f = { STEP_EXEC, 0 };
	char byte;

	child_setup(l, &f);
	/* EOF without the byte: the profiler could not start, so neither do we */
	if (read(go, &byte, 1) != 1)
		_exit(127);
	close(go);
	if (!f.err && (!user || !user->set || !become(user, &f))) {
		execvp(argv[0], argv);
		f.step = STEP_EXEC;
		f.err = errno;
	}
	if (write(err, &f, sizeof(f)) < 0)
		_exit(127);
	_exit(127);
}

/* The pipes and the pty; the fork; in the parent, 0 or -errno. */
static int fork_child(struct launch *l, char *const argv[], const struct launch_user *user,
		      bool keys, char *why, size_t whylen)
{
	int go[2], err[2], e;

	if (pipe2(go, O_CLOEXEC))
		goto fail;
	if (pipe2(err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	l->go_fd = go[1];
	l->err_fd = err[0];
	e = launch_tty__open(&l->tty, keys, user && user->set ? user->uid : (uid_t)-1, why, whylen);
	if (!e)
		l->pid = fork();
	if (e || l->pid < 0) {
		e = e ? e : -errno;
		close(go[0]);
		close(err[1]);
		l->pid = 0;
		if (!why[0])
			snprintf(why, whylen, "cannot start the command: %s", strerror(-e));
		return e;
	}
	if (l->pid == 0) {
		close(go[1]);
		close(err[0]);
		child(l, argv, user, go[0], err[1]);
	}
	close(go[0]);
	close(err[1]);
	launch_tty__forked(&l->tty);
	l->tty.group = l->pid;
	return 0;
fail:
	e = errno;
	snprintf(why, whylen, "cannot start the command: %s", strerror(e));
	return -e;
}

int launch__start(struct launch *l, char *const argv[], const struct launch_user *user, bool keys,
		  char *why, size_t whylen)
{
	int e;

	memset(l, 0, sizeof(*l));
	l->go_fd = l->err_fd = l->pidfd = -1;
	l->tty.master = l->tty.slave = l->tty.wake[0] = l->tty.wake[1] = -1;
	l->cmd = argv[0];
	why[0] = '\0';
	/* what the command leaves behind becomes ours when its parent exits */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		e = errno;
		snprintf(why, whylen, "cannot start the command: PR_SET_CHILD_SUBREAPER: %s",
			 strerror(e));
		return -e;
	}
	e = fork_child(l, argv, user, keys, why, whylen);
	if (e) {
		launch__abort(l);
		return e;
	}
	/* Our own unreaped child: its pid cannot have been reused yet. */
	l->pidfd = syscall(SYS_pidfd_open, l->pid, 0);
	if (l->pidfd < 0) {
		e = errno;
		launch__abort(l);
		snprintf(why, whylen,
			 "cannot start the command: pidfd_open failed (%s); launch "
			 "mode needs Linux 5.3 or later",
			 strerror(e));
		return -e;
	}
	signal_pidfd = l->pidfd;
	return 0;
}

int launch__release(struct launch *l, char *why, size_t whylen)
{
	struct child_failure f;
	ssize_t n;
	int e;

	/* the relay first: the command never runs without its terminal */
	e = launch_tty__relay(&l->tty, why, whylen);
	if (e)
		return e;
	l->released = true;
	if (write(l->go_fd, "g", 1) != 1) {
		e = errno;
		snprintf(why, whylen, "cannot start the command: %s", strerror(e));
		return -e;
	}
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &f, sizeof(f));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n != sizeof(f))
		return 0;
	launch__reap(l, true);
	if (f.step == STEP_EXEC)
		snprintf(why, whylen, "cannot run the command %s: %s", l->cmd, strerror(f.err));
	else if (f.step == STEP_TTY)
		snprintf(
			why, whylen,
			"cannot run the command %s: cannot give it a session and a terminal of its "
			"own: %s",
			l->cmd, strerror(f.err));
	else
		snprintf(why, whylen, "cannot run the command %s as the --user: %s failed: %s",
			 l->cmd,
			 f.step == STEP_GROUPS ? "setgroups" :
			 f.step == STEP_GID    ? "setresgid" :
						 "setresuid",
			 strerror(f.err));
	return -f.err;
}

/* Zombies reaped per call: a bound on one look. */
#define REAP_MAX 256

/*
 * What the command left behind is our child once its parent has exited
 * (we are its subreaper): reaped as it ends, so that no zombie of it
 * lingers while the run goes on.
 */
void launch_reap_orphans(struct launch *l)
{
	siginfo_t info;
	int i;

	for (i = 0; i < REAP_MAX; i++) {
		memset(&info, 0, sizeof(info));
		/* looked at, not reaped: the command's own status is its pidfd's to take */
		if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) || !info.si_pid ||
		    info.si_pid == l->pid)
			return;
		waitpid(info.si_pid, NULL, WNOHANG);
	}
}

/*
 * Ctrl-Z typed to the command (launch_tty.c takes it): the command's group
 * stopped, then we, so that the shell has its terminal and the job back as
 * it would have without us; continued (fg, bg), the command goes on too.
 * Our group orphaned (no job control above us): we are not stopped, and
 * neither is it for long.
 */
static void follow_suspend(struct launch *l)
{
	siginfo_t info;

	if (!atomic_exchange(&l->tty.suspend, false))
		return;
	/* its group is its pid: our child, unreaped, so the id is still its own */
	kill(-l->pid, SIGSTOP);
	/* stopped (or gone) before the shell hears of us: SIGSTOP waits for a CPU */
	memset(&info, 0, sizeof(info));
	while (waitid(P_PIDFD, l->pidfd, &info, WSTOPPED | WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	launch_tty__keys(&l->tty, false);
	raise(SIGTSTP);
	/* in front again (fg), the keys are relayed again; in the background (bg), not */
	launch_tty__keys(&l->tty, true);
	kill(-l->pid, SIGCONT);
}

bool launch__reap(struct launch *l, bool wait)
{
	siginfo_t info;
	int r;

	if (!l->pid || l->exited || l->pidfd < 0)
		return l->exited;
	do {
		memset(&info, 0, sizeof(info));
		r = waitid(P_PIDFD, l->pidfd, &info, WEXITED | (wait ? 0 : WNOHANG));
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		/* not ours any more (ECHILD): nothing to wait for, nothing to report */
		l->exited = true;
		l->exit_code = 1;
	} else if (info.si_pid) {
		l->exited = true;
		l->exit_code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
	}
	if (l->exited) {
		signal_pidfd = -1;
	} else {
		launch_reap_orphans(l);
		if (!wait)
			follow_suspend(l);
	}
	return l->exited;
}

void launch__wait(struct launch *l, int ms)
{
	struct pollfd pfd = { .fd = l->pidfd, .events = POLLIN };

	/* a pidfd is readable once its process has exited */
	if (l->pidfd >= 0 && !l->exited && poll(&pfd, 1, ms) < 0 && errno != EINTR)
		return;
}

void launch__keys(struct launch *l, bool on)
{
	if (l->released && !l->finished)
		launch_tty__keys(&l->tty, on);
}

void launch__signal(struct launch *l, int sig)
{
	/* once reaped, the pid may be another process's: the pidfd knows it is gone */
	if (l->pidfd >= 0 && !l->exited)
		syscall(SYS_pidfd_send_signal, l->pidfd, sig, NULL, 0);
}

void launch__signal_now(int sig)
{
	int fd = signal_pidfd;

	if (fd >= 0)
		syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

int launch__exit_code(const struct launch *l)
{
	return l->exit_code;
}

void launch__abort(struct launch *l)
{
	if (l->pid && !l->exited && l->go_fd >= 0) {
		/* still our own fork, before its exec: closing `go` makes it exit by itself */
		close(l->go_fd);
		l->go_fd = -1;
		if (l->pidfd >= 0) {
			launch__reap(l, true);
		} else {
			/* pidfd_open failed: our unreaped child's pid is still its own */
			while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
				;
			l->exited = true;
			l->exit_code = 127;
		}
	}
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	launch_tty__close(&l->tty);
}
