// SPDX-License-Identifier: GPL-2.0-only
/*
 * Launch mode (see launch.h). Two pipes: the child blocks reading `go`
 * until the profiler is ready; `err` is close-on-exec in the child, so the
 * parent reads EOF when the exec succeeded and the child's failure (which
 * step, which errno) when it failed, and can say so in a sentence instead
 * of reporting an empty profile.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
enum child_step { STEP_EXEC, STEP_GROUPS, STEP_GID, STEP_UID };

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

int launch__start(struct launch *l, char *const argv[], const struct launch_user *user, char *why,
		  size_t whylen)
{
	struct child_failure f = { STEP_EXEC, 0 };
	int go[2], err[2], e;
	char byte;

	memset(l, 0, sizeof(*l));
	l->go_fd = l->err_fd = l->pidfd = -1;
	l->cmd = argv[0];
	if (pipe2(go, O_CLOEXEC))
		goto fail;
	if (pipe2(err, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	l->pid = fork();
	if (l->pid < 0) {
		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		l->pid = 0;
		goto fail;
	}
	if (l->pid == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		close(go[1]);
		close(err[0]);
		/* our Ctrl-C handling is for the profiler; the command gets the default */
		sigaction(SIGINT, &dfl, NULL);
		sigaction(SIGTERM, &dfl, NULL);
		/* EOF without the byte: the profiler could not start, so neither do we */
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		close(go[0]);
		if (!user || !user->set || !become(user, &f)) {
			execvp(argv[0], argv);
			f.step = STEP_EXEC;
			f.err = errno;
		}
		if (write(err[1], &f, sizeof(f)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	l->go_fd = go[1];
	l->err_fd = err[0];
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
	return 0;
fail:
	e = errno;
	snprintf(why, whylen, "cannot start the command: %s", strerror(e));
	return -e;
}

int launch__release(struct launch *l, char *why, size_t whylen)
{
	struct child_failure f;
	ssize_t n;
	int e;

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
	else
		snprintf(why, whylen, "cannot run the command %s as the --user: %s failed: %s",
			 l->cmd,
			 f.step == STEP_GROUPS ? "setgroups" :
			 f.step == STEP_GID    ? "setresgid" :
						 "setresuid",
			 strerror(f.err));
	return -f.err;
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
	return l->exited;
}

void launch__signal(struct launch *l, int sig)
{
	/* once reaped, the pid may be another process's: the pidfd knows it is gone */
	if (l->pidfd >= 0 && !l->exited)
		syscall(SYS_pidfd_send_signal, l->pidfd, sig, NULL, 0);
}

int launch__exit_code(const struct launch *l)
{
	return l->exit_code;
}

void launch__abort(struct launch *l)
{
	if (!l->pid || l->exited || l->go_fd < 0)
		return;
	/* still our own fork, before its exec: closing `go` makes it exit by itself */
	close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	if (l->pidfd >= 0) {
		launch__reap(l, true);
		return;
	}
	/* pidfd_open failed: our unreaped child's pid is still its own */
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
	l->exited = true;
	l->exit_code = 127;
}
