/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `pybpfprof agent`: continuous profiling to files and backends, every
 * --interval a profile per process (src/agent/). Takes its own name and the
 * arguments after it (argv[0] is "agent", for argp's messages) and returns
 * the exit status: 0 done, 1 failed, 2 bad usage.
 */
#ifndef PYBPFPROF_CMD_AGENT_H
#define PYBPFPROF_CMD_AGENT_H

int cmd_agent(int argc, char **argv);

#endif
