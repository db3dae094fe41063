// SPDX-License-Identifier: GPL-2.0-only
/*
 * Command line: one argp table in groups, values checked as they are parsed,
 * with a sentence that says what was expected, and --help ending in examples.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf_abi.h"
#include "cli/config.h"
#include "report/report.h"
#include "session/usdt.h"

const char *argp_program_version = "pybpfprof " PYBPFPROF_VERSION;
const char *argp_program_bug_address = NULL;

static const char doc[] =
	"pybpfprof: sample running CPython processes from the kernel, with no restart "
	"and no code change, and report where their CPU time goes, by function and by line."
	"\v"
	"Targets: CPython 3.8 to 3.15, static builds (such as Debian's /usr/bin/python3.X) and "
	"shared-libpython builds, on the host or in containers. Needs root (CAP_BPF, "
	"CAP_PERFMON, CAP_SYS_PTRACE).\n"
	"\n"
	"Examples:\n"
	"  sudo pybpfprof -p 1234                  # profile pid 1234 until Ctrl-C\n"
	"  sudo pybpfprof -p 1234 -p 5678 -d 30    # two processes for 30 seconds\n"
	"  sudo pybpfprof -p 1234 -d 10 -F 999     # 999 samples per second per CPU\n"
	"  sudo pybpfprof -p 1234 -f json -o prof.json\n"
	"  sudo pybpfprof -p 1234 -o prof.json     # format taken from the extension\n"
	"  sudo pybpfprof -p 1234 -d 10 -o flame.html -o prof.pstats -o prof.pb.gz\n"
	"                                          # several formats from one run\n"
	"  sudo pybpfprof -p 1234 --line-report=10 # line tables of 10 functions\n"
	"  sudo pybpfprof -a -d 10                 # every CPython, new ones as well\n"
	"  sudo pybpfprof -- python3 app.py args   # run a command and profile it\n"
	"  sudo pybpfprof --subprocesses -- python3 pool.py   # and all its descendants\n"
	"  sudo pybpfprof --user alice -- python3 app.py   # the command runs as alice\n"
	"  sudo pybpfprof top -a                   # live view, refreshed every second\n"
	"  sudo pybpfprof -p 1234 -d 10 --calls    # exact call counts and latencies\n"
	"  sudo pybpfprof -p 1234 --gc --imports   # GC pauses and import times\n"
	"  sudo pybpfprof -p 1234 -d 30 --mem      # where memory grows, by line\n"
	"  sudo pybpfprof -p 1234 --mem-timeline rss.svg   # resident memory over time\n"
	"  sudo pybpfprof -p 1234 -d 60 --mem=alloc  # and what stays allocated (leaks)\n"
	"\n"
	"Formats and the extensions that select them: text (.txt), json (.json), "
	"folded (.folded: one line per stack for flamegraph.pl or inferno), flamegraph "
	"(.html: interactive, self-contained, opens offline in a browser), speedscope "
	"(.speedscope.json: for speedscope.app), pstats (.pstats or .prof: for python3 -m "
	"pstats, snakeviz, gprof2dot -f pstats; times are samples / frequency), pprof "
	"(.pb.gz or .pprof: for go tool pprof, Pyroscope, Grafana).\n"
	"\n"
	"The report counts every sample: total, dropped (kernel buffer full, or still "
	"unconverted 0.3 s after the end of the run), truncated "
	"(deeper than --max-depth), unresolved (code object gone before it was read).";

enum {
	OPT_MAX_DEPTH = 0x100,
	OPT_LINES,
	OPT_LINE_REPORT,
	OPT_MEM,
	OPT_MEM_PERIOD,
	OPT_MEM_TIMELINE,
	OPT_ALLOC_PERIOD,
	OPT_MEM_FOLDED,
	OPT_SUBPROCESSES,
	OPT_MERGE,
	OPT_THREADS,
	OPT_CALLS,
	OPT_GC,
	OPT_IMPORTS,
	OPT_PY311_LINE,
	OPT_MAX_CACHE_MB,
	OPT_USER,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Targets:", 1 },
	{ "pid", 'p', "PID", 0, "Profile this process (repeat, or separate with commas)", 1 },
	{ "all", 'a', NULL, 0, "Profile every CPython process on the host, including those "
	  "that start during the run", 1 },
	{ "subprocesses", OPT_SUBPROCESSES, NULL, 0, "Also profile every descendant of the "
	  "targets (fork, exec, multiprocessing)", 1 },
	{ "user", OPT_USER, "NAME|UID", 0, "Run the command as this user (its groups, HOME, "
	  "USER and LOGNAME; a uid with no passwd entry gets gid = uid); without --user the "
	  "command runs as root, as with perf and py-spy", 1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: until Ctrl-C or the "
	  "targets exit)", 2 },
	{ "frequency", 'F', "HZ", 0, "Mean samples per second on each CPU; the rate varies at "
	  "random within 20% so that sampling never falls into step with the program "
	  "(default: 99)", 2 },
	{ "max-depth", OPT_MAX_DEPTH, "FRAMES", 0, "Deepest Python stack kept; deeper ones are "
	  "cut at the root and counted as truncated (default: 127, at most 1024)", 2 },
	{ "max-cache-mb", OPT_MAX_CACHE_MB, "MIB", 0, "Memory kept of the targets' code objects "
	  "(names, decoded line tables), all targets together; beyond it the least recently "
	  "used are evicted, and the report counts them (default: 64)", 2 },

	{ NULL, 0, NULL, 0, "Exact events (CPython's USDT probes; sampling goes on beside them):",
	  5 },
	{ "calls", OPT_CALLS, NULL, 0, "Count every Python call: calls, inclusive and exclusive "
	  "time, max and a latency histogram per function (CPython 3.8-3.10 and 3.15+ with "
	  "probes, as Debian's)", 5 },
	{ "gc", OPT_GC, NULL, 0, "Time every garbage collection, with the Python stack that "
	  "triggered it", 5 },
	{ "imports", OPT_IMPORTS, NULL, 0, "Time every import, with the imports it nested", 5 },
	{ "calls-py311-line", OPT_PY311_LINE, NULL, 0, "Allow --calls on Python 3.11 by also "
	  "enabling its line probe, which makes the target about 30 times slower", 5 },
	{ NULL, 0, NULL, 0, "Output:", 3 },
	{ "format", 'f', "FORMAT", 0, "text, json, folded, flamegraph, speedscope, pstats or "
	  "pprof: the format on stdout, and of any -o FILE whose extension names none "
	  "(default: text)", 3 },
	{ "output", 'o', "FILE", 0, "Write a report to FILE instead of stdout, in the format "
	  "its extension names; repeat for several formats from one run", 3 },
	{ "top", 'n', "N", 0, "Functions listed per process in the text report (default: 20)", 3 },
	{ "lines", OPT_LINES, "N", 0, "Hottest lines listed per process (default: 20)", 3 },
	{ "line-report", OPT_LINE_REPORT, "N", 0, "Line-by-line tables, with source, of the N "
	  "functions with the most self time per process in the text report; 0: none "
	  "(default: 5)", 3 },
	{ "merge", OPT_MERGE, NULL, 0, "One profile for all processes instead of one per process",
	  3 },
	{ "threads", OPT_THREADS, NULL, 0, "Break each process down by thread", 3 },
	{ NULL, 0, NULL, 0, "Diagnostics:", 4 },
	{ "verbose", 'v', NULL, 0, "More messages on stderr (-vv: libbpf and verifier)", 4 },
	{ NULL, 0, NULL, 0, "Memory:", 6 },
	{ "mem", OPT_MEM, "MODE", OPTION_ARG_OPTIONAL, "Also report where memory grows, by "
	  "line. faults (the default): sampled page faults (new memory touched) and "
	  "mmap/munmap/mremap/brk (memory mapped and unmapped), with the stack at the peak of "
	  "resident memory. alloc: also the C allocator's calls (uprobes on malloc, free, ...; "
	  "costly), sampled by bytes, and what is still live at the end", 6 },
	{ "mem-folded", OPT_MEM_FOLDED, "FILE", 0, "Write the memory stacks as folded text "
	  "weighted by bytes touched, for a flame graph of bytes (implies --mem)", 6 },
	{ "alloc-period", OPT_ALLOC_PERIOD, "BYTES", 0, "--mem=alloc: bytes allocated per "
	  "sample, on average (default: 524288); larger allocations are always recorded", 6 },
	{ "mem-period", OPT_MEM_PERIOD, "FAULTS", 0, "Page faults per memory sample, on average "
	  "(default: 64, one per 256 KiB touched)", 6 },
	{ "mem-timeline", OPT_MEM_TIMELINE, "FILE.svg", 0, "Draw resident memory over the run "
	  "as an SVG picture, the largest rises labelled by Python line (implies --mem)", 6 },
	{},
};

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int add_pids(struct pyprof_config *cfg, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, 1, INT_MAX, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid pid '%s': expected a "
				 "positive number", tok);
			err = -EINVAL;
			break;
		}
		if (cfg->npids == CONFIG_MAX_PIDS) {
			snprintf(cfg->error, sizeof(cfg->error), "too many pids (at most %d)",
				 CONFIG_MAX_PIDS);
			err = -EINVAL;
			break;
		}
		cfg->pids[cfg->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct pyprof_config *cfg = state->input;
	unsigned long v;
	char *end;
	double d;

	switch (key) {
	case 'p':
		if (add_pids(cfg, arg))
			goto bad;
		break;
	case 'd':
		errno = 0;
		d = strtod(arg, &end);
		if (errno || *end || !(d > 0) || d > 31536000) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid duration '%s': expected "
				 "seconds, greater than 0", arg);
			goto bad;
		}
		cfg->duration_s = d;
		break;
	case 'F':
		if (parse_uint(arg, 1, CONFIG_MAX_HZ, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid frequency '%s': expected "
				 "1 to %d samples per second", arg, CONFIG_MAX_HZ);
			goto bad;
		}
		cfg->frequency_hz = v;
		break;
	case OPT_MAX_DEPTH:
		if (parse_uint(arg, 1, PYPROF_MAX_DEPTH, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid --max-depth '%s': expected "
				 "1 to %d frames", arg, PYPROF_MAX_DEPTH);
			goto bad;
		}
		cfg->max_depth = v;
		break;
	case 'f':
		if (!report_find(arg)) {
			snprintf(cfg->error, sizeof(cfg->error), "unknown format '%s': expected one "
				 "of %s", arg, report_names());
			goto bad;
		}
		cfg->format = arg;
		break;
	case 'o':
		if (cfg->noutputs == CONFIG_MAX_OUTPUTS) {
			snprintf(cfg->error, sizeof(cfg->error), "too many -o files (at most %d)",
				 CONFIG_MAX_OUTPUTS);
			goto bad;
		}
		cfg->outputs[cfg->noutputs++] = arg;
		break;
	case 'n':
	case OPT_LINES:
	case OPT_LINE_REPORT:
		if (parse_uint(arg, 0, 100000, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid count '%s': expected a "
				 "number of rows", arg);
			goto bad;
		}
		if (key == 'n')
			cfg->top_functions = v;
		else if (key == OPT_LINES)
			cfg->top_lines = v;
		else
			cfg->line_report = v;
		break;
	case OPT_MEM:
		if (arg && strcmp(arg, "faults") && strcmp(arg, "alloc")) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid --mem '%s': expected "
				 "--mem, --mem=faults or --mem=alloc", arg);
			goto bad;
		}
		cfg->mem = arg && !strcmp(arg, "alloc") ? PYPROF_MEM_ALLOC : PYPROF_MEM_FAULTS;
		break;
	case OPT_ALLOC_PERIOD:
		if (parse_uint(arg, 1, 1UL << 40, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid --alloc-period '%s': "
				 "expected 1 to 2^40 bytes", arg);
			goto bad;
		}
		cfg->alloc_period = v;
		break;
	case OPT_MEM_PERIOD:
		if (parse_uint(arg, 1, 1000000, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid --mem-period '%s': expected "
				 "1 to 1000000 page faults", arg);
			goto bad;
		}
		cfg->mem_period = v;
		break;
	case OPT_MEM_FOLDED:
		cfg->mem_folded = arg;
		if (!cfg->mem)
			cfg->mem = PYPROF_MEM_FAULTS;
		break;
	case OPT_MEM_TIMELINE:
		cfg->mem_timeline = arg;
		if (!cfg->mem)
			cfg->mem = PYPROF_MEM_FAULTS;
		break;
	case 'v':
		cfg->verbose++;
		break;
	case OPT_MAX_CACHE_MB:
		if (parse_uint(arg, 1, PYPROF_MAX_CACHE_MB, &v)) {
			snprintf(cfg->error, sizeof(cfg->error), "invalid --max-cache-mb '%s': "
				 "expected 1 to %d MiB", arg, PYPROF_MAX_CACHE_MB);
			goto bad;
		}
		cfg->max_cache_mb = v;
		break;
	case 'a':
		cfg->all = true;
		break;
	case OPT_SUBPROCESSES:
		cfg->subprocesses = true;
		break;
	case OPT_MERGE:
		cfg->merge = true;
		break;
	case OPT_THREADS:
		cfg->threads = true;
		break;
	case OPT_CALLS:
		cfg->usdt_modes |= USDT_CALLS;
		break;
	case OPT_GC:
		cfg->usdt_modes |= USDT_GC;
		break;
	case OPT_IMPORTS:
		cfg->usdt_modes |= USDT_IMPORTS;
		break;
	case OPT_PY311_LINE:
		cfg->py311_line = 1;
		break;
	case OPT_USER:
		if (!*arg) {
			snprintf(cfg->error, sizeof(cfg->error), "--user needs a user name or a "
				 "numeric uid");
			goto bad;
		}
		cfg->user = arg;
		break;
	case ARGP_KEY_ARG:
		snprintf(cfg->error, sizeof(cfg->error), "unexpected argument '%s' (a command to "
			 "profile goes after --)", arg);
		goto bad;
	case ARGP_KEY_END:
		if (!cfg->npids && !cfg->all && !cfg->command) {
			snprintf(cfg->error, sizeof(cfg->error), "no target: give -p PID, -a, or a "
				 "command after --");
			goto bad;
		}
		if (cfg->all && (cfg->npids || cfg->command)) {
			snprintf(cfg->error, sizeof(cfg->error), "-a profiles every process already: "
				 "it takes no -p or command");
			goto bad;
		}
		if (cfg->command && cfg->npids) {
			snprintf(cfg->error, sizeof(cfg->error), "give either -p PID or a command "
				 "after --, not both");
			goto bad;
		}
		if (cfg->user && !cfg->command) {
			snprintf(cfg->error, sizeof(cfg->error), "--user runs a launched command as "
				 "that user: give the command after -- (profiled processes keep "
				 "their own users)");
			goto bad;
		}
		if (cfg->subprocesses && cfg->all) {
			snprintf(cfg->error, sizeof(cfg->error), "--subprocesses goes with -p or a "
				 "command; -a sees every process already");
			goto bad;
		}
		if (cfg->usdt_modes && (cfg->all || cfg->command || cfg->subprocesses)) {
			snprintf(cfg->error, sizeof(cfg->error), "--calls, --gc and --imports trace "
				 "the processes given with -p only, not -a, a command or "
				 "--subprocesses");
			goto bad;
		}
		if (cfg->merge && (cfg->usdt_modes & (USDT_GC | USDT_IMPORTS))) {
			snprintf(cfg->error, sizeof(cfg->error), "--gc and --imports report per "
				 "process: they do not go with --merge");
			goto bad;
		}
		if (cfg->py311_line && !(cfg->usdt_modes & USDT_CALLS)) {
			snprintf(cfg->error, sizeof(cfg->error), "--calls-py311-line only makes "
				 "sense with --calls");
			goto bad;
		}
		if (cfg->top && (cfg->noutputs || cfg->mem_timeline || cfg->mem_folded)) {
			snprintf(cfg->error, sizeof(cfg->error), "top shows a live view and writes "
				 "no file: drop -o, --mem-timeline and --mem-folded, or record "
				 "without top");
			goto bad;
		}
		/* The allocator's uprobes are attached to the processes known at the start. */
		if (cfg->mem == PYPROF_MEM_ALLOC && (cfg->all || cfg->command || cfg->subprocesses)) {
			snprintf(cfg->error, sizeof(cfg->error), "--mem=alloc traces the processes "
				 "given with -p only, not -a, a command or --subprocesses (--mem "
				 "works with all of them)");
			goto bad;
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
bad:
	argp_error(state, "%s", cfg->error);
	return EINVAL;
}

static const char args_doc[] = "[-- COMMAND [ARG...]]\ntop [OPTION...] [-- COMMAND [ARG...]]";

static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, NULL, NULL };

int cli_parse(int argc, char **argv, struct pyprof_config *cfg, unsigned argp_flags)
{
	int i, err;

	/* `top` first selects the live view; the options are the same. */
	if (argc > 1 && !strcmp(argv[1], "top")) {
		cfg->top = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	/* Everything after `--` is the command, untouched by option parsing. */
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			if (i + 1 == argc) {
				snprintf(cfg->error, sizeof(cfg->error), "no command after --");
				if (!(argp_flags & ARGP_SILENT))
					fprintf(stderr, "pybpfprof: %s\n", cfg->error);
				return EINVAL;
			}
			cfg->command = &argv[i + 1];
			argv[i] = NULL;
			argc = i;
			break;
		}
	err = argp_parse(&argp, argc, argv, argp_flags, NULL, cfg);

	if (err && !cfg->error[0])
		snprintf(cfg->error, sizeof(cfg->error), "invalid arguments");
	return err ? EINVAL : 0;
}
