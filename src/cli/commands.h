/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Subcommands other than a run (`top` is a run with a live view, parsed by
 * cli_parse). Each takes its own name and the arguments after it
 * (argv[0] is NAME, for argp's messages) and returns the process's exit status: 0 done, 1 failed,
 * 2 bad usage. main() picks one by argv[1] from commands[].
 */
#ifndef PYBPFPROF_COMMANDS_H
#define PYBPFPROF_COMMANDS_H

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

/* `pybpfprof report FILE`: a saved JSON profile written again in any format (cmd_report.c). */
int cmd_report(int argc, char **argv);

/* The table, NULL-terminated; one line per subcommand, in main.c. */
extern const struct command commands[];

/* `pybpfprof diff BEFORE AFTER`: two saved profiles compared (cmd_diff.c). */
int cmd_diff(int argc, char **argv);

#endif
