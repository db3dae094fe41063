/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `pybpfprof dump`: every thread's state and Python stack (and, asked,
 * locals and asyncio task trees), read once without stopping the process
 * (src/dump/). Takes its own name and the arguments after it (argv[0] is
 * "dump") and returns the exit status: 0 done, 1 failed, 2 bad usage.
 */
#ifndef PYBPFPROF_CMD_DUMP_H
#define PYBPFPROF_CMD_DUMP_H

int cmd_dump(int argc, char **argv);

#endif
