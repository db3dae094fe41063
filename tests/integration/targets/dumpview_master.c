// SPDX-License-Identifier: GPL-2.0-only
/*
 * A server's master written in C, like uwsgi's or a process manager's, for
 * dumpview's tests: it is no Python itself and starts Python workers.
 * `dumpview_master EARLY LATE COMMAND ARGS...` forks EARLY workers at once
 * (each execs COMMAND ARGS), prints "ready", waits for a line on its
 * standard input, forks LATE workers, and exits when every worker has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void start(char **argv)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		execv(argv[0], argv);
		perror("execv");
		_exit(127);
	}
}

int main(int argc, char **argv)
{
	int early, late, i;
	char line[64];

	if (argc < 4) {
		fprintf(stderr, "usage: dumpview_master EARLY LATE COMMAND ARGS...\n");
		return 2;
	}
	early = atoi(argv[1]);
	late = atoi(argv[2]);
	for (i = 0; i < early; i++)
		start(argv + 3);
	printf("ready\n");
	fflush(stdout);
	if (late && fgets(line, sizeof(line), stdin))
		for (i = 0; i < late; i++)
			start(argv + 3);
	while (wait(NULL) > 0)
		;
	return 0;
}
