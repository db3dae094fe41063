/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Everything the command line decides, with its defaults. Parsed by cli.c
 * and passed explicitly to whoever needs it.
 */
#ifndef PYBPFPROF_CONFIG_H
#define PYBPFPROF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "session/mem.h"     /* enum pyprof_mem_mode */
#include "session/session.h" /* SESSION_MAX_PIDS, SESSION_MAX_HZ */

#define CONFIG_MAX_PIDS SESSION_MAX_PIDS
#define CONFIG_MAX_HZ SESSION_MAX_HZ
#define CONFIG_MAX_OUTPUTS 16

struct pyprof_config {
	pid_t pids[CONFIG_MAX_PIDS];
	size_t npids;
	double duration_s; /* 0: until Ctrl-C or every target has exited */
	unsigned frequency_hz;
	unsigned max_depth;
	const char *format; /* stdout's format, and that of an -o with no known extension */
	const char *outputs[CONFIG_MAX_OUTPUTS]; /* none: stdout; "-" is stdout too */
	size_t noutputs;
	unsigned top_functions;
	unsigned top_lines;
	unsigned line_report; /* functions shown line by line in the text report */
	double prune_pct;     /* --prune: tree and dot leave out functions under this share */
	bool merge_lines;     /* --merge-lines: folded, flame graphs, speedscope, pprof */
	double min_share;     /* --min-share: text sections of processes with at least this share */
	int verbose;
	int mem;			 /* enum pyprof_mem_mode */
	unsigned mem_period;		 /* page faults per fault sample */
	unsigned long alloc_period;	 /* bytes allocated per allocator sample */
	const char *mem_timeline;	 /* SVG of resident memory over time, or NULL */
	const char *mem_folded;		 /* folded stacks of bytes touched, or NULL */
	const char *mem_retained_folded; /* folded stacks of bytes retained, or NULL */
	const char *mem_pprof;		 /* pprof of the memory stacks, or NULL */
	bool all;			 /* -a: every CPython process on the host */
	bool subprocesses;		 /* follow the targets' descendants */
	bool merge;			 /* one profile for all processes */
	bool threads;			 /* per-thread breakdown */
	const char *match;     /* --match: only the processes whose command line matches */
	const char *thread;    /* --thread: only the threads whose name matches */
	bool top;	       /* `pybpfprof top`: live view instead of a report */
	char **command;	       /* after `--`: the command to launch, NULL-terminated */
	const char *user;      /* --user NAME|UID: the command runs as this user, not root */
	unsigned usdt_modes;   /* enum usdt_mode: --calls, --gc, --imports */
	bool py311_line;       /* --calls-py311-line: accept the line probe's slowdown on 3.11 */
	unsigned max_cache_mb; /* --max-cache-mb: all that is kept of the targets' code objects */
	bool async_aware;      /* --async: samples in an asyncio task charged to its awaiters */
	const char *mode;      /* --mode: "cpu" (the default), "wall" or "exception" */
	bool idle;	       /* --idle: show threads blocked for the whole run (--mode wall) */
	bool gil;	       /* --gil: GIL held, waiting or released per sample */
	bool signatures;       /* --signatures: split functions by their arguments' types */
	bool opcodes;	 /* --opcodes: each sample's innermost instruction, lines split by it */
	bool exceptions; /* --exceptions: each CPU sample says if its thread handles one */
	unsigned native_modes; /* enum native_mode: --kernel */
	bool timeline;	       /* --timeline, or a timeline output: keep every event in time */
	unsigned long timeline_events; /* --timeline-events: at most this many (0: the default) */
	char error[512]; /* why parsing failed (a sentence naming every known extension) */
};

/* --mem=alloc: one sample per 512 KiB allocated on average (per thread). */
#define PYPROF_DEFAULT_ALLOC_PERIOD (512 * 1024)

/*
 * One sample per 64 faults is one per 256 KiB first touched: a 1 MiB
 * allocation is seen four times, and the stack walk stays a few percent of
 * the faults' own cost (bench/mem.sh).
 */
#define PYPROF_DEFAULT_MEM_PERIOD 64

#define PYPROF_CONFIG_DEFAULTS                                                                     \
	{                                                                                          \
		.frequency_hz = 99, .max_depth = 127, .top_functions = 20, .top_lines = 20,        \
		.line_report = 5, .prune_pct = 1.0, .min_share = 1.0,                              \
		.max_cache_mb = PYPROF_DEFAULT_MAX_CACHE_MB,                                       \
		.mem_period = PYPROF_DEFAULT_MEM_PERIOD,                                           \
		.alloc_period = PYPROF_DEFAULT_ALLOC_PERIOD,                                       \
	}

/*
 * Parses argv into *cfg (which holds the defaults on entry). Returns 0, or
 * EINVAL with a sentence in cfg->error. argp_flags are passed to argp_parse
 * (tests use ARGP_SILENT so nothing is printed and nothing exits).
 */
int cli_parse(int argc, char **argv, struct pyprof_config *cfg, unsigned argp_flags);

/*
 * The run's output options that `pybpfprof report` takes too (-p, --match,
 * --thread, --merge, -f, -o, -n, --lines, --line-report, --prune,
 * --merge-lines, --min-share, --threads, --mem-timeline, --mem-folded, -v;
 * report's -p selects from the saved processes): their argp entries, at most
 * max of them, into options (the count is
 * returned); and one of them applied to cfg as a run applies it: 0, -EINVAL
 * with a sentence in cfg->error, or ARGP_ERR_UNKNOWN for another key.
 */
struct argp_option;
size_t cli_report_options(struct argp_option *options, size_t max);
int cli_report_apply(int key, const char *arg, struct pyprof_config *cfg);

/*
 * Every rule between options, once all are parsed (cli_parse calls it): sets
 * the defaults that follow from other options, then refuses the combinations
 * that make no sense. Returns 0, or -EINVAL with a sentence in why.
 */
int config_check(struct pyprof_config *cfg, char *why, size_t whylen);
/*
 * Each -o file's format, before anything is profiled: a name whose extension
 * no writer claims is refused unless -f names the format; a name without an
 * extension, "-" and character devices (/dev/stdout) take the -f format.
 * Returns 0, or -EINVAL with a sentence in why.
 */
int config_check_outputs(const struct pyprof_config *cfg, char *why, size_t whylen);
/*
 * Sets cfg->timeline when an output draws the timeline (by its ending, or
 * -f's format) or --timeline-events was given; refuses it beside a cut
 * report (--match, --thread; and --pid in `pybpfprof report`, where it
 * selects). Returns 0, or -EINVAL with a sentence in why.
 */
int config_check_timeline(struct pyprof_config *cfg, bool report, char *why, size_t whylen);

#endif
