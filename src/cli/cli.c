// SPDX-License-Identifier: GPL-2.0-only
/*
 * Command line: one table of options in groups, each with how its argument is
 * read, its bounds and the config field it sets; argp's own table is built
 * from it. A bad value is refused with a sentence that says what was
 * expected; the rules between options are config_check()'s (config_check.c).
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
#include "session/native.h"
#include "session/usdt.h"
#include "util/text.h"

const char *argp_program_version = "pybpfprof " PYBPFPROF_VERSION;
const char *argp_program_bug_address = NULL;

static const char doc[] =
	"pybpfprof: sample running CPython processes from the kernel, with no restart "
	"and no code change, and report where their CPU time goes, by function and by line.\n"
	"\n"
	"Subcommands (first on the command line, each with its own --help):\n"
	"  pybpfprof top [OPTION...] [-- COMMAND [ARG...]]     the run, as a live view\n"
	"  pybpfprof report FILE.json [-f FORMAT] [-o FILE]... re-render a saved run\n"
	"  pybpfprof diff [OPTION...] BEFORE.json AFTER.json   compare two saved runs\n"
	"  pybpfprof dump [-p PID...|-a] [OPTION...]           each thread, right now\n"
	"  pybpfprof agent [OPTION...]                         continuous profiling"
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
	"  sudo pybpfprof -p 1234 -o f.html --merge-lines  # a box per function\n"
	"  pybpfprof report run.json --merge-lines -o f.pb.gz  # pprof by function\n"
	"  sudo pybpfprof -a -d 10                 # every CPython, new ones as well\n"
	"  sudo pybpfprof -- python3 app.py args   # run a command and profile it\n"
	"  sudo pybpfprof --subprocesses -- python3 pool.py   # and all its descendants\n"
	"  sudo pybpfprof --user alice -- python3 app.py   # the command runs as alice\n"
	"  sudo pybpfprof --subprocesses --match spawn_main -- python3 pool.py\n"
	"                                          # only its multiprocessing workers\n"
	"  sudo pybpfprof -p 1234 --thread '^worker'   # only the threads named worker...\n"
	"  sudo pybpfprof -d 10 -o p.json -- python3 server.py   # a report of its first 10 s;\n"
	"                                          # Ctrl-C or SIGTERM then still reach it\n"
	"  sudo pybpfprof top -a                   # live view, refreshed every second\n"
	"  sudo pybpfprof dump -p 1234 --locals    # each thread now, with its locals\n"
	"  sudo pybpfprof dump -p 1234 --async     # its asyncio task tree\n"
	"  sudo pybpfprof -p 1234 -d 10 --async    # samples by asyncio task chain\n"
	"  sudo pybpfprof -p 1234 -d 10 --calls    # exact call counts and latencies\n"
	"  sudo pybpfprof -p 1234 --gc --imports   # GC pauses and import times\n"
	"  sudo pybpfprof --calls -- python3 app.py   # exact calls from the start\n"
	"  sudo pybpfprof --subprocesses -- python3 pool.py   # a table of its processes by\n"
	"                                          # role (spawn worker of PID), busiest first\n"
	"  sudo pybpfprof --subprocesses -o p.html -o p.pb.gz -- python3 pool.py\n"
	"                                          # the titles and pprof -top name the\n"
	"                                          # busiest process and thread\n"
	"  sudo pybpfprof -p 1234 -d 10 --threads   # each thread's functions, by its\n"
	"                                          # threading name\n"
	"  sudo pybpfprof -p 1234 --mode wall     # also where threads wait, and why\n"
	"  sudo pybpfprof -p 1234 --gil           # who holds the GIL, who waits for it\n"
	"  sudo pybpfprof -p 1234 --native --kernel   # C and kernel frames too\n"
	"  sudo pybpfprof -v --native -- python3 app.py   # and where unwinds were cut\n"
	"  sudo pybpfprof -p 1234 --signatures    # functions split by argument types\n"
	"  sudo pybpfprof -p 1234 -d 10 --mode wall -o run.perfetto-trace\n"
	"                                          # every thread over time, for Perfetto\n"
	"  sudo pybpfprof --mode wall --gc -o t.trace.json -o t.json -- python3 app.py\n"
	"                                          # as Chrome's trace JSON, and saved\n"
	"  sudo pybpfprof -p 1234 --opcodes       # lines split by bytecode instruction\n"
	"  sudo pybpfprof -p 1234 --mode exception   # only time spent handling exceptions\n"
	"  sudo pybpfprof -p 1234 -d 30 --mem      # where memory grows, by line\n"
	"  sudo pybpfprof -p 1234 --mem-timeline rss.svg   # resident memory over time\n"
	"  sudo pybpfprof -p 1234 -d 60 --mem=alloc  # and what stays allocated (leaks)\n"
	"  sudo pybpfprof -p 1234 -d 30 -o src.heat.html   # each source line shaded by\n"
	"                                          # its samples, in a browser\n"
	"  sudo pybpfprof -p 1234 --mode wall -o w.heat.html   # with off-CPU time\n"
	"  pybpfprof report prof.json -o p.html    # a saved profile in another format\n"
	"  pybpfprof report t.json -o t.pftrace    # a saved timeline, for Perfetto\n"
	"                                          # (see pybpfprof report --help)\n"
	"  pybpfprof diff before.json after.json   # compare two saved runs\n"
	"\n"
	"A command after -- runs in a session of its own and never gets this terminal: when "
	"pybpfprof's standard input, output or error is a terminal, the command gets a "
	"pseudo-terminal that pybpfprof relays (keys, output, window size; the terminal is in "
	"raw mode meanwhile, so Ctrl-C and Ctrl-D act on the command, and Ctrl-Z stops it and "
	"pybpfprof together until fg). SIGINT, SIGTERM "
	"and SIGHUP sent to pybpfprof are passed to the command, also after -d (whose report is "
	"written while the command runs on); the run ends when it exits, or 5 s later. The "
	"processes it leaves running are then named and sent SIGTERM, and SIGKILL 2 s later. "
	"pybpfprof exits with the command's exit status (128 + N if signal N killed it); when "
	"no CPython process was seen, it says so, writes no report and exits with the "
	"command's status, or 1 if that was 0 (a shell running Python needs --subprocesses).\n"
	"\n"
	"Formats and the extensions that select them: text (.txt), json (.json), "
	"folded (.folded: one line per stack for flamegraph.pl or inferno), flamegraph "
	"(.html: interactive, self-contained, opens offline in a browser), speedscope "
	"(.speedscope.json: for speedscope.app, opening on the busiest thread), pstats (.pstats or .prof: for python3 -m "
	"pstats, snakeviz, gprof2dot -f pstats; times are samples / frequency), pprof "
	"(.pb.gz or .pprof: for go tool pprof, Pyroscope, Grafana), svg (.svg: a flame graph "
	"as flamegraph.pl draws it, interactive in a browser), tree (.tree: the call tree of "
	"each process, like pyinstrument's, coloured on a terminal), dot (.dot or .gv: the call "
	"graph for Graphviz, like gprof2dot's), perfetto (.perfetto-trace or .pftrace: the "
	"timeline of every process and thread, for ui.perfetto.dev), trace-json (.trace.json: "
	"the same timeline as Chrome's trace event JSON, for Perfetto, chrome://tracing, the "
	"Firefox Profiler and speedscope), heatmap (.heat.html: every sampled line of every "
	"source file shaded by its samples, with their 95% intervals, self-contained). A FILE whose extension names no format is "
	"refused, unless -f gives its format; a FILE without an extension, or a character "
	"device such as /dev/stdout, is written in the -f format.\n"
	"\n"
	"The report counts every sample: total, dropped (kernel buffer full, or still "
	"unconverted 0.3 s after the end of the run), truncated "
	"(deeper than --max-depth), unresolved (code object gone before it was read).";

static const char top_doc[] =
	"pybpfprof top: the run as a live view in this terminal, redrawn every second: the "
	"processes, samples per second, drops; the busiest processes, each by its role as the "
	"report's process table names it (spawn worker of PID, fork of PID, -m module, the "
	"script) with its busiest threads by tid and Python name; and the functions over all "
	"processes by self and total share in the last second (which sets the order) and since "
	"the start; with --mode wall, under each off-CPU row the lines that waited so. q or Ctrl-C quits and restores the terminal; it writes no file (no -o). "
	"Its other options are the run's (pybpfprof --help)."
	"\v"
	"Examples:\n"
	"  sudo pybpfprof top -a                   # every CPython on the machine\n"
	"  sudo pybpfprof top -p 1234 -p 5678      # two processes\n"
	"  sudo pybpfprof top --subprocesses -p 1234  # a service and its workers, by role\n"
	"  sudo pybpfprof top --mode wall -p 1234  # where its threads wait, and why\n"
	"  sudo pybpfprof top -- python3 app.py    # a command, from its first bytecode";

/* How an option's argument is read, and so what type its config field has. */
enum cli_kind {
	CLI_GROUP,   /* no option: a group's title in --help */
	CLI_SET,     /* a flag that sets a bool */
	CLI_BIT,     /* a flag that adds the bit in max to an unsigned set */
	CLI_COUNT,   /* a flag counted in an int (-vv) */
	CLI_UINT,    /* an unsigned from min to max */
	CLI_ULONG,   /* an unsigned long from min to max */
	CLI_SECONDS, /* a double above 0, at most max */
	CLI_PERCENT, /* a double from 0 to max */
	CLI_PIDS,    /* pids separated with commas, added to cfg->pids */
	CLI_FORMAT,  /* the name of a report format */
	CLI_OUTPUT,  /* a file added to cfg->outputs */
	CLI_MEM,     /* --mem[=MODE] into an int enum pyprof_mem_mode; no MODE: faults */
	CLI_PATH,    /* a file name */
	CLI_NAME,    /* a name, not empty */
};

struct cli_option {
	struct argp_option argp; /* name, key, argument, flags, --help text, group */
	enum cli_kind kind;
	size_t field; /* where it goes in struct pyprof_config (FIELD) */
	unsigned long min, max;
	/* a refused value: "invalid WHAT 'ARG': expected EXPECTED" (CLI_NAME: "WHAT needs ...") */
	const char *what, *expected;
};

/*
 * The offset of a config field, which must be of the given type: a table
 * row that stores into a field of another type does not compile.
 */
#define FIELD(f, type)                                                                             \
	(offsetof(struct pyprof_config, f) +                                                       \
	 0 * sizeof(_Generic(((struct pyprof_config *)0)->f, type : 1)))
#define STR_(x) #x
#define STR(x) STR_(x)
#define GROUP(title, group)                                                                        \
	{                                                                                          \
		{ NULL, 0, NULL, 0, title, group }, CLI_GROUP, 0, 0, 0, NULL, NULL                 \
	}

enum {
	OPT_MAX_DEPTH = 0x100,
	OPT_LINES,
	OPT_LINE_REPORT,
	OPT_MEM,
	OPT_MEM_PERIOD,
	OPT_MEM_TIMELINE,
	OPT_ALLOC_PERIOD,
	OPT_MEM_FOLDED,
	OPT_MEM_RETAINED_FOLDED,
	OPT_MEM_PPROF,
	OPT_SUBPROCESSES,
	OPT_MERGE,
	OPT_THREADS,
	OPT_CALLS,
	OPT_GC,
	OPT_IMPORTS,
	OPT_PY311_LINE,
	OPT_MAX_CACHE_MB,
	OPT_USER,
	OPT_PRUNE,
	OPT_MERGE_LINES,
	OPT_MIN_SHARE,
	OPT_ASYNC,
	OPT_MODE,
	OPT_IDLE,
	OPT_GIL,
	OPT_SIGNATURES,
	OPT_OPCODES,
	OPT_EXCEPTIONS,
	OPT_KERNEL,
	OPT_NATIVE,
	OPT_MATCH,
	OPT_THREAD,
	OPT_TIMELINE,
	OPT_TIMELINE_EVENTS,
};

// clang-format off
static const struct cli_option cli_options[] = {
	GROUP("Targets:", 1),
	{ { "pid", 'p', "PID", 0, "Profile this process (repeat, or separate with commas)", 1 },
	  CLI_PIDS, 0, 1, INT_MAX, "pid", "a positive number" },
	{ { "all", 'a', NULL, 0, "Profile every CPython process on the host, including those "
	    "that start during the run", 1 },
	  CLI_SET, FIELD(all, bool), 0, 0, NULL, NULL },
	{ { "subprocesses", OPT_SUBPROCESSES, NULL, 0, "Also profile every descendant of the "
	    "targets (fork, exec, multiprocessing)", 1 },
	  CLI_SET, FIELD(subprocesses, bool), 0, 0, NULL, NULL },
	{ { "user", OPT_USER, "NAME|UID", 0, "Run the command as this user (its groups, HOME, "
	    "USER and LOGNAME; a uid with no passwd entry gets gid = uid); without --user the "
	    "command runs as root, as with perf and py-spy", 1 },
	  CLI_NAME, FIELD(user, const char *), 0, 0, "--user", "a user name or a numeric uid" },
	GROUP("Sampling:", 2),
	{ { "duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: until Ctrl-C or the "
	    "targets exit)", 2 },
	  CLI_SECONDS, FIELD(duration_s, double), 0, 31536000, "duration",
	  "seconds, greater than 0" },
	{ { "frequency", 'F', "HZ", 0, "Mean samples per second on each CPU; the rate varies at "
	    "random within 20% so that sampling never falls into step with the program "
	    "(default: 99)", 2 },
	  CLI_UINT, FIELD(frequency_hz, unsigned), 1, CONFIG_MAX_HZ, "frequency",
	  "1 to " STR(CONFIG_MAX_HZ) " samples per second" },
	{ { "max-depth", OPT_MAX_DEPTH, "FRAMES", 0, "Deepest Python stack kept; deeper ones are "
	    "cut at the root and counted as truncated (default: 127, at most 1024)", 2 },
	  CLI_UINT, FIELD(max_depth, unsigned), 1, PYPROF_MAX_DEPTH, "--max-depth",
	  "1 to " STR(PYPROF_MAX_DEPTH) " frames" },
	{ { "max-cache-mb", OPT_MAX_CACHE_MB, "MIB", 0, "Memory kept of the targets' code objects "
	    "(names, decoded line tables), all targets together; beyond it the least recently "
	    "used are evicted, and the report counts them (default: 64)", 2 },
	  CLI_UINT, FIELD(max_cache_mb, unsigned), 1, PYPROF_MAX_CACHE_MB, "--max-cache-mb",
	  "1 to " STR(PYPROF_MAX_CACHE_MB) " MiB" },
	{ { "async", OPT_ASYNC, NULL, 0, "Charge a sample taken inside an asyncio task to the "
	    "chain of tasks awaiting it: its coroutine frames, then each task with its own "
	    "coroutine stack, in place of the event loop's frames (CPython 3.11+)", 2 },
	  CLI_SET, FIELD(async_aware, bool), 0, 0, NULL, NULL },
	{ { "mode", OPT_MODE, "MODE", 0, "cpu: where CPU time goes (the default). wall: every "
	    "thread is charged for the whole run, on the CPU (sampled) and off it (each "
	    "blocked interval, exact, from the scheduler's sched_switch), off-CPU time by "
	    "why: sleep, I/O, lock, GIL wait, waiting for a CPU, other. exception: only the "
	    "CPU samples of threads handling an exception (in an except block, or in code "
	    "called from one), the others counted as left out", 2 },
	  CLI_NAME, FIELD(mode, const char *), 0, 0, "--mode", "cpu, wall or exception" },
	{ { "idle", OPT_IDLE, NULL, 0, "--mode wall: also show the threads that were blocked "
	    "for the whole run (hidden by default)", 2 },
	  CLI_SET, FIELD(idle, bool), 0, 0, NULL, NULL },
	{ { "gil", OPT_GIL, NULL, 0, "Whether each sampled thread holds the GIL, waits for it "
	    "or runs without it (CPython 3.8-3.15 with a GIL); without --mode wall, only the "
	    "waits for the GIL are followed off the CPU", 2 },
	  CLI_SET, FIELD(gil, bool), 0, 0, NULL, NULL },
	{ { "signatures", OPT_SIGNATURES, NULL, 0, "Split each function of the innermost two "
	    "frames of a sample by the types of its arguments at that moment, numpy arrays by "
	    "dtype and shape: scale(x: ndarray[float64, (500, 400)], factor: float) (not "
	    "free-threaded builds)", 2 },
	  CLI_SET, FIELD(signatures, bool), 0, 0, NULL, NULL },
	{ { "opcodes", OPT_OPCODES, NULL, 0, "Record the bytecode instruction each sample's "
	    "innermost frame was running, read at the tick, and split each line by it in the "
	    "text (under the line-by-line tables), JSON and pstats reports; on 3.11+ by the "
	    "specialised name the interpreter runs, BINARY_OP_ADD_INT against BINARY_OP", 2 },
	  CLI_SET, FIELD(opcodes, bool), 0, 0, NULL, NULL },
	{ { "exceptions", OPT_EXCEPTIONS, NULL, 0, "Say of each CPU sample whether its thread "
	    "was handling an exception (in an except block or code called from one), and show "
	    "the time spent so by function (--mode exception keeps only those samples)", 2 },
	  CLI_SET, FIELD(exceptions, bool), 0, 0, NULL, NULL },

	GROUP("Exact events (CPython's USDT probes; sampling goes on beside them; with a "
	      "command, --subprocesses or -a, a process without usable probes is named and "
	      "only sampled):",
	      5),
	{ { "calls", OPT_CALLS, NULL, 0, "Count every Python call: calls, inclusive and exclusive "
	    "time, max and a latency histogram per function (CPython 3.8-3.10 and 3.15+ with "
	    "probes, as Debian's)", 5 },
	  CLI_BIT, FIELD(usdt_modes, unsigned), 0, USDT_CALLS, NULL, NULL },
	{ { "gc", OPT_GC, NULL, 0, "Time every garbage collection, with the Python stack that "
	    "triggered it", 5 },
	  CLI_BIT, FIELD(usdt_modes, unsigned), 0, USDT_GC, NULL, NULL },
	{ { "imports", OPT_IMPORTS, NULL, 0, "Time every import, with the imports it nested", 5 },
	  CLI_BIT, FIELD(usdt_modes, unsigned), 0, USDT_IMPORTS, NULL, NULL },
	{ { "calls-py311-line", OPT_PY311_LINE, NULL, 0, "Allow --calls on Python 3.11 by also "
	    "enabling its line probe, which makes the target about 30 times slower", 5 },
	  CLI_SET, FIELD(py311_line, bool), 0, 0, NULL, NULL },
	GROUP("Output:", 3),
	{ { "format", 'f', "FORMAT", 0, "text, json, folded, flamegraph, speedscope, pstats, "
	    "pprof, svg, tree, dot, perfetto, trace-json or heatmap: the format on stdout, and of any -o "
	    "FILE whose extension names none (default: text)", 3 },
	  CLI_FORMAT, FIELD(format, const char *), 0, 0, NULL, NULL },
	{ { "output", 'o', "FILE", 0, "Write a report to FILE instead of stdout, in the format "
	    "its extension names; repeat for several formats from one run", 3 },
	  CLI_OUTPUT, 0, 0, CONFIG_MAX_OUTPUTS, NULL, NULL },
	{ { "top", 'n', "N", 0, "Functions listed per process in the text report (default: 20)",
	    3 },
	  CLI_UINT, FIELD(top_functions, unsigned), 0, 100000, "count", "a number of rows" },
	{ { "lines", OPT_LINES, "N", 0, "Hottest lines listed per process, and as many native "
	    "frames with --native or --kernel (default: 20)", 3 },
	  CLI_UINT, FIELD(top_lines, unsigned), 0, 100000, "count", "a number of rows" },
	{ { "line-report", OPT_LINE_REPORT, "N", 0, "Line-by-line tables, with source, of the N "
	    "functions whose own lines cost the most (the native code they called included) "
	    "per process in the text report; 0: none (default: 5)", 3 },
	  CLI_UINT, FIELD(line_report, unsigned), 0, 100000, "count", "a number of rows" },
	{ { "prune", OPT_PRUNE, "PCT", 0, "Call tree and call graph (tree, dot): leave out the "
	    "functions under PCT % of their process's samples, 0 to 100; 0 keeps all (default: "
	    "1)", 3 },
	  CLI_PERCENT, FIELD(prune_pct, double), 0, 100, "--prune", "a percentage from 0 to 100" },
	{ { "merge-lines", OPT_MERGE_LINES, NULL, 0, "Folded stacks, flame graphs, speedscope and "
	    "pprof (folded, flamegraph, svg, speedscope, pprof) by function: a function's lines "
	    "merged into one frame, at its first line in speedscope and pprof (the HTML page opens "
	    "with Merge lines on); text and json keep the lines: the text report's line tables "
	    "are its point, and the JSON is the whole run, which `report --merge-lines` renders "
	    "merged", 3 },
	  CLI_SET, FIELD(merge_lines, bool), 0, 0, NULL, NULL },
	{ { "min-share", OPT_MIN_SHARE, "PCT", 0, "Text report: a section of its own for each "
	    "process with at least PCT % of the samples, 0 to 100; the others (idle ones too) "
	    "get a row of the process table only; 0 keeps every section (default: 1)", 3 },
	  CLI_PERCENT, FIELD(min_share, double), 0, 100, "--min-share",
	  "a percentage from 0 to 100" },
	{ { "merge", OPT_MERGE, NULL, 0, "One profile for all processes instead of one per "
	    "process", 3 },
	  CLI_SET, FIELD(merge, bool), 0, 0, NULL, NULL },
	{ { "threads", OPT_THREADS, NULL, 0, "Break each process down by thread, each by its "
	    "tid and Python name (MainThread, worker_0)", 3 },
	  CLI_SET, FIELD(threads, bool), 0, 0, NULL, NULL },
	{ { "match", OPT_MATCH, "REGEX", 0, "Report only the processes whose command line "
	    "matches REGEX (POSIX extended, anywhere in it; the others are sampled but left "
	    "out, and the report counts them)", 3 },
	  CLI_NAME, FIELD(match, const char *), 0, 0, "--match", "a regular expression" },
	{ { "thread", OPT_THREAD, "REGEX", 0, "Report only the threads whose name matches "
	    "REGEX (POSIX extended), and the processes that have one; not with --mem, --calls, "
	    "--gc or --imports, whose figures are per process", 3 },
	  CLI_NAME, FIELD(thread, const char *), 0, 0, "--thread", "a regular expression" },
	{ { "timeline", OPT_TIMELINE, NULL, 0, "Keep every event in time, per process and "
	    "thread: CPU samples with their stacks, off-CPU intervals with their reason "
	    "(--mode wall, --gil), GC pauses (--gc), imports (--imports), process starts, forks, "
	    "execs and exits; for the timeline formats (perfetto, trace-json), and in a JSON "
	    "profile for `pybpfprof report` to write them later. Implied by an -o FILE in a "
	    "timeline format", 3 },
	  CLI_SET, FIELD(timeline, bool), 0, 0, NULL, NULL },
	{ { "timeline-events", OPT_TIMELINE_EVENTS, "N", 0, "Keep at most N timeline events "
	    "(40 bytes each; default: " STR(PROFILE_TL_DEFAULT_CAP) ", at most "
	    STR(PROFILE_TL_MAX_CAP) "); those beyond are dropped and counted in every report "
	    "(implies --timeline)", 3 },
	  CLI_ULONG, FIELD(timeline_events, unsigned long), 1, PROFILE_TL_MAX_CAP,
	  "--timeline-events", "1 to " STR(PROFILE_TL_MAX_CAP) " events" },
	GROUP("Diagnostics:", 4),
	{ { "verbose", 'v', NULL, 0, "More messages on stderr (-vv: libbpf and verifier)", 4 },
	  CLI_COUNT, FIELD(verbose, int), 0, 0, NULL, NULL },
	GROUP("Memory:", 6),
	{ { "mem", OPT_MEM, "MODE", OPTION_ARG_OPTIONAL, "Also report where memory grows, by "
	    "line. faults (the default): sampled page faults (new memory touched) and "
	    "mmap/munmap/mremap/brk (memory mapped and unmapped), with the stack at the peak of "
	    "resident memory. alloc: also the C allocator's calls (uprobes on malloc, free, ...; "
	    "costly), sampled by bytes, and what is still live at the end", 6 },
	  CLI_MEM, FIELD(mem, int), 0, 0, "--mem", "--mem, --mem=faults or --mem=alloc" },
	{ { "mem-folded", OPT_MEM_FOLDED, "FILE", 0, "Write the memory stacks as folded text "
	    "weighted by bytes touched, for a flame graph of bytes (implies --mem)", 6 },
	  CLI_PATH, FIELD(mem_folded, const char *), 0, 0, NULL, NULL },
	{ { "alloc-period", OPT_ALLOC_PERIOD, "BYTES", 0, "--mem=alloc: bytes allocated per "
	    "sample, on average (default: 524288); larger allocations are always recorded", 6 },
	  CLI_ULONG, FIELD(alloc_period, unsigned long), 1, 1UL << 40, "--alloc-period",
	  "1 to 2^40 bytes" },
	{ { "mem-period", OPT_MEM_PERIOD, "FAULTS", 0, "Page faults per memory sample, on "
	    "average (default: 64, one per 256 KiB touched)", 6 },
	  CLI_UINT, FIELD(mem_period, unsigned), 1, 1000000, "--mem-period",
	  "1 to 1000000 page faults" },
	{ { "mem-timeline", OPT_MEM_TIMELINE, "FILE.svg", 0, "Draw resident memory over the run "
	    "as an SVG picture, the largest rises labelled by Python line (implies --mem)", 6 },
	  CLI_PATH, FIELD(mem_timeline, const char *), 0, 0, NULL, NULL },
	{ { "mem-retained-folded", OPT_MEM_RETAINED_FOLDED, "FILE", 0, "Write the memory stacks "
	    "as folded text weighted by bytes they mapped and still held at the end (implies "
	    "--mem)", 6 },
	  CLI_PATH, FIELD(mem_retained_folded, const char *), 0, 0, NULL, NULL },
	{ { "mem-pprof", OPT_MEM_PPROF, "FILE.pb.gz", 0, "Write the memory stacks as a pprof "
	    "profile: touched_space, mapped_space, released_space and inuse_space (retained at "
	    "the end, the default) bytes (implies --mem)", 6 },
	  CLI_PATH, FIELD(mem_pprof, const char *), 0, 0, NULL, NULL },
	GROUP("Machine code under the Python stack (CPU samples):", 7),
	{ { "kernel", OPT_KERNEL, NULL, 0, "Add the kernel's frames (named from /proc/kallsyms) "
	    "below the Python stack of each sample taken in the kernel", 7 },
	  CLI_BIT, FIELD(native_modes, unsigned), 0, NATIVE_KERNEL, NULL, NULL },
	{ { "native", OPT_NATIVE, NULL, 0, "Add the native frames (C extensions, libraries) "
	    "below the Python stack and between Python frames where native code called "
	    "back into Python, unwound from a copy of the stack with the libraries' call "
	    "frame information; the interpreter's own frames are folded away. Unwind "
	    "tables libdw would run unbounded are refused, and an unwind has 10 ms (a "
	    "process 250 ms a second): such stacks count as refused", 7 },
	  CLI_BIT, FIELD(native_modes, unsigned), 0, NATIVE_USER, NULL, NULL },
};
// clang-format on

#define NOPTIONS (sizeof(cli_options) / sizeof(cli_options[0]))

static const struct cli_option *cli_option__find(int key)
{
	size_t i;

	for (i = 0; i < NOPTIONS; i++)
		if (cli_options[i].kind != CLI_GROUP && cli_options[i].argp.key == key)
			return &cli_options[i];
	return NULL;
}

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

/* A share in percent: a decimal number from 0 to hi (no NaN, no sign). */
static int parse_percent(const char *s, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	d = strtod(s, &end);
	if (errno || *end || !(d >= 0) || d > hi)
		return -EINVAL;
	*out = d;
	return 0;
}

static int parse_seconds(const char *s, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || !(d > 0) || d > hi)
		return -EINVAL;
	*out = d;
	return 0;
}

/* "invalid WHAT 'ARG': expected EXPECTED", in cfg->error. */
static int cli_option__invalid(const struct cli_option *o, const char *arg,
			       struct pyprof_config *cfg)
{
	snprintf(cfg->error, sizeof(cfg->error), "invalid %s '%s': expected %s", o->what, arg,
		 o->expected);
	return -EINVAL;
}

static int add_pids(const struct cli_option *o, struct pyprof_config *cfg, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, o->min, o->max, &v)) {
			err = cli_option__invalid(o, tok, cfg);
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

/* The options whose argument is text: stored as given, once checked. */
static int cli_option__set_text(const struct cli_option *o, const char *arg,
				struct pyprof_config *cfg)
{
	const char **field = (const char **)((char *)cfg + o->field);

	if (o->kind == CLI_FORMAT && !report_find(arg)) {
		snprintf(cfg->error, sizeof(cfg->error), "unknown format '%s': expected one of %s",
			 arg, report_names());
		return -EINVAL;
	}
	if (o->kind == CLI_OUTPUT) {
		if (cfg->noutputs == o->max) {
			snprintf(cfg->error, sizeof(cfg->error), "too many -o files (at most %lu)",
				 o->max);
			return -EINVAL;
		}
		field = &cfg->outputs[cfg->noutputs++];
	}
	if (o->kind == CLI_NAME && !*arg) {
		snprintf(cfg->error, sizeof(cfg->error), "%s needs %s", o->what, o->expected);
		return -EINVAL;
	}
	*field = arg;
	return 0;
}

/* Reads one option's argument (arg: NULL if it has none) into its config field. */
static int cli_option__apply(const struct cli_option *o, const char *arg, struct pyprof_config *cfg)
{
	void *field = (char *)cfg + o->field;
	unsigned long v;
	double d;

	switch (o->kind) {
	case CLI_SET:
		*(bool *)field = true;
		return 0;
	case CLI_BIT:
		*(unsigned *)field |= o->max;
		return 0;
	case CLI_COUNT:
		(*(int *)field)++;
		return 0;
	case CLI_UINT:
	case CLI_ULONG:
		if (parse_uint(arg, o->min, o->max, &v))
			return cli_option__invalid(o, arg, cfg);
		if (o->kind == CLI_UINT)
			*(unsigned *)field = v;
		else
			*(unsigned long *)field = v;
		return 0;
	case CLI_SECONDS:
		if (parse_seconds(arg, o->max, &d))
			return cli_option__invalid(o, arg, cfg);
		*(double *)field = d;
		return 0;
	case CLI_PERCENT:
		if (parse_percent(arg, o->max, &d))
			return cli_option__invalid(o, arg, cfg);
		*(double *)field = d;
		return 0;
	case CLI_MEM:
		if (arg && strcmp(arg, "faults") && strcmp(arg, "alloc"))
			return cli_option__invalid(o, arg, cfg);
		*(int *)field = arg && !strcmp(arg, "alloc") ? PYPROF_MEM_ALLOC : PYPROF_MEM_FAULTS;
		return 0;
	case CLI_PIDS:
		return add_pids(o, cfg, arg);
	case CLI_FORMAT:
	case CLI_OUTPUT:
	case CLI_PATH:
	case CLI_NAME:
		return cli_option__set_text(o, arg, cfg);
	case CLI_GROUP:
		break;
	}
	return 0;
}

/*
 * A word that is no option's argument: a command typed without `--` before it.
 * Parsed in order (ARGP_IN_ORDER), it comes before the command's own options,
 * which would otherwise be refused as ours ("invalid option -- 'c'").
 */
static void command_without_dashes(struct pyprof_config *cfg, const struct argp_state *state,
				   const char *arg)
{
	char word[48], next[48];
	bool more = state->next < state->argc;

	text_clean(word, sizeof(word), arg);
	text_clean(next, sizeof(next), more ? state->argv[state->next] : "");
	snprintf(cfg->error, sizeof(cfg->error),
		 "unexpected argument '%s'; to run a command put `--` before it: %s "
		 "[OPTION...] -- %s%s%s%s",
		 word, state->name, word, more ? " " : "", next,
		 state->next + 1 < state->argc ? " ..." : "");
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct pyprof_config *cfg = state->input;
	const struct cli_option *o = cli_option__find(key);
	int err;

	if (o) {
		err = cli_option__apply(o, arg, cfg);
	} else if (key == ARGP_KEY_ARG) {
		command_without_dashes(cfg, state, arg);
		err = -EINVAL;
	} else if (key == ARGP_KEY_END) {
		err = config_check(cfg, cfg->error, sizeof(cfg->error));
		if (!err)
			err = config_check_outputs(cfg, cfg->error, sizeof(cfg->error));
	} else {
		return ARGP_ERR_UNKNOWN;
	}
	if (!err)
		return 0;
	argp_error(state, "%s", cfg->error);
	return EINVAL;
}

/* The run's options that `pybpfprof report` takes too, read the same way. */
static const int report_keys[] = { 'p',
				   OPT_MATCH,
				   OPT_THREAD,
				   OPT_MERGE,
				   'f',
				   'o',
				   'n',
				   OPT_LINES,
				   OPT_LINE_REPORT,
				   OPT_PRUNE,
				   OPT_MERGE_LINES,
				   OPT_MIN_SHARE,
				   OPT_THREADS,
				   OPT_MEM_TIMELINE,
				   OPT_MEM_FOLDED,
				   OPT_MEM_RETAINED_FOLDED,
				   OPT_MEM_PPROF,
				   'v' };
#define NREPORT_KEYS (sizeof(report_keys) / sizeof(report_keys[0]))

size_t cli_report_options(struct argp_option *options, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < NREPORT_KEYS && n < max; i++)
		options[n++] = cli_option__find(report_keys[i])->argp;
	return n;
}

int cli_report_apply(int key, const char *arg, struct pyprof_config *cfg)
{
	size_t i;

	for (i = 0; i < NREPORT_KEYS; i++)
		if (report_keys[i] == key)
			return cli_option__apply(cli_option__find(key), arg, cfg);
	return ARGP_ERR_UNKNOWN;
}

/*
 * argp puts "[OPTION...]" after the program name on every usage line, which
 * would put the run's options before a subcommand; subcommands are listed in
 * the doc text instead, in the order they must be typed.
 */
static const char args_doc[] = "[-- COMMAND [ARG...]]";

int cli_parse(int argc, char **argv, struct pyprof_config *cfg, unsigned argp_flags)
{
	struct argp_option options[NOPTIONS + 1] = {};
	struct argp argp = { options, parse_opt, args_doc, doc, NULL, NULL, NULL };
	static char top_name[] = "pybpfprof top"; /* argp's name in its usage and messages */
	size_t o;
	int i, err;

	for (o = 0; o < NOPTIONS; o++)
		options[o] = cli_options[o].argp;
	/* `top` first selects the live view; the options are the same, its help its own. */
	if (argc > 1 && !strcmp(argv[1], "top")) {
		cfg->top = true;
		argv[1] = top_name;
		argv++;
		argc--;
		argp.doc = top_doc;
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
	err = argp_parse(&argp, argc, argv, argp_flags | ARGP_IN_ORDER, NULL, cfg);

	if (err && !cfg->error[0])
		snprintf(cfg->error, sizeof(cfg->error), "invalid arguments");
	return err ? EINVAL : 0;
}
