// SPDX-License-Identifier: GPL-2.0-only
/*
 * Launch mode (see launch.h). Two pipes: the child blocks reading `go`
 * until the profiler is ready; `err` is close-on-exec in the child, so the
 * parent reads EOF when the exec succeeded and the child's errno when it
 * failed, and can say so in a sentence instead of reporting an empty profile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "launch.h"

int launch__start(struct launch *l, char *const argv[], char *why, size_t whylen)
{
	int go[2], err[2], e;
	char byte;

	memset(l, 0, sizeof(*l));
	l->go_fd = l->err_fd = -1;
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
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	l->go_fd = go[1];
	l->err_fd = err[0];
	return 0;
fail:
	e = errno;
	snprintf(why, whylen, "cannot start the command: %s", strerror(e));
	return -e;
}

int launch__release(struct launch *l, char *why, size_t whylen)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1) {
		e = errno;
		snprintf(why, whylen, "cannot start the command: %s", strerror(e));
		return -e;
	}
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(e)) {
		launch__reap(l, true);
		snprintf(why, whylen, "cannot run the command %s: %s", l->cmd, strerror(e));
		return -e;
	}
	return 0;
}

bool launch__reap(struct launch *l, bool wait)
{
	pid_t r;

	if (!l->pid || l->exited)
		return l->exited;
	do
		r = waitpid(l->pid, &l->status, wait ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == l->pid || (r < 0 && errno == ECHILD))
		l->exited = true;
	return l->exited;
}

int launch__exit_code(const struct launch *l)
{
	if (WIFSIGNALED(l->status))
		return 128 + WTERMSIG(l->status);
	return WIFEXITED(l->status) ? WEXITSTATUS(l->status) : 1;
}

void launch__abort(struct launch *l)
{
	if (!l->pid || l->exited || l->go_fd < 0)
		return;
	/* still our own fork, before its exec: closing `go` makes it exit by itself */
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	launch__reap(l, true);
}
