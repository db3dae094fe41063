// SPDX-License-Identifier: GPL-2.0-only
/*
 * `pybpfprof agent`: the always-on run. The same session, collector and
 * tracker as a one-shot run (main.c), CPU sampling only, with no end: every
 * --interval, each process's stacks are taken out of its profile section and
 * become one gzip pprof, labelled, handed to every sink (agent_sink.c).
 *
 * Where an interval is cut: at a tick of the loop, after the ring buffer has
 * been drained, the sections' stacks are swapped for empty ones; the
 * interval's from and until are the clock at the previous cut and at this
 * one. So one process's intervals are contiguous by construction (each
 * until is the next from, read once) and no sample is counted twice or
 * lost: a sample belongs to the interval in which it was read. Cutting by
 * the samples' kernel timestamps instead would need every sample held back
 * until no earlier one can still come; the swap misplaces at most the
 * samples in flight at the cut (one per CPU, taken a few microseconds
 * earlier), far under the sampling error of an interval.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>
#include "session/collector.h"
#include "session/mem.h"
#include "session/modes.h"
#include "session/session.h"
#include "session/tracker.h"
#include "report/report_writer.h"
#include "proc/procfs.h"
#include "proc/source.h"
#include "util/log.h"
#include "util/mono.h"
#include "util/vec.h"
#include "agent.h"
#include "agent_budget.h"
#include "agent_metrics.h"
#include "agent_ring.h"
#include "pybpfprof.skel.h"
#include "agent/cmd_agent.h"

#define AGENT_POLL_MS 50
#define AGENT_ALIVE_CHECK_NS 200000000LL
#define AGENT_MAX_SINKS 3
#define AGENT_FLUSH_NS 5000000000LL
/* Forgotten processes' records are compacted away once there are this many. */
#define AGENT_COMPACT_MIN 16
/* --match-user's users at most, and user names kept (uid -> name, the user database's). */
#define AGENT_MATCH_USERS 64
#define AGENT_USER_NAMES 64
#define BTF_PATH "/sys/kernel/btf/vmlinux"

struct agent_opts {
	pid_t pids[SESSION_MAX_PIDS];
	size_t npids;
	bool all, subprocesses, merge;
	const char *match;
	uid_t match_uids[AGENT_MATCH_USERS]; /* --match-user */
	size_t nmatch_uids;
	unsigned hz, max_depth, max_cache_mb, interval_s;
	const char *service_name;
	const char *label_env[AGENT_LABEL_ENV_MAX]; /* --label-env: OTEL_RESOURCE_ATTRIBUTES keys */
	size_t nlabel_env;
	const char *output_dir;
	double max_disk_mb;
	unsigned queue;
	double queue_mb; /* --queue-mb: bytes of profiles each sink holds waiting */
	const char *push, *otlp, *basic_auth_file, *bearer_file;
	const char *metrics;
	int verbose;
	bool mem;	     /* --mem: page faults and memory calls, by line, every interval */
	unsigned mem_period; /* page faults per memory sample */
	/* --recorder: the last SECONDS at --recorder-rate, written when triggered */
	unsigned recorder_s, recorder_rate, recorder_cooldown_s;
	double recorder_max_mb;
	double trigger_cpu;	/* --trigger-cpu PCT: of one CPU; 0: off */
	unsigned trigger_for_s; /* over the last SECONDS */
	double max_overhead;	/* --max-overhead PCT: of one CPU; 0: off */
};

/* What the agent knows of one profile section, by its index. */
struct agent_proc {
	bool skip; /* --match refused it: its stacks are thrown away */
	bool done; /* its last interval is out */
	char service[AGENT_SERVICE_MAX];
	struct agent_label labels[AGENT_MAX_LABELS];
	size_t nlabels, nbase; /* nbase: those before uid and user (agent_labels_user) */
	long long uid;	       /* its effective uid at the last look; -1: unknown */
	/* --mem: its last interval's bytes touched, and held at that interval's end */
	uint64_t mem_touched, mem_retained;
	struct agent_cpu_window cpu; /* --trigger-cpu: its samples of the last seconds */
};

struct agent {
	struct agent_opts o;
	regex_t re;
	char host[AGENT_LABEL_MAX];
	struct profile prof;
	struct collector c;
	struct session *s;
	struct tracker tr;
	struct agent_proc *procs;
	size_t nprocs, cap_procs;
	struct agent_sink *sinks[AGENT_MAX_SINKS];
	size_t nsinks;
	struct agent_metrics *metrics;
	struct {
		uid_t uid;
		char name[AGENT_LABEL_MAX]; /* "": none in the user database */
	} users[AGENT_USER_NAMES];
	size_t nusers, next_user;
	struct mem mem;
	uint64_t mem_intervals;
	/* --mem, every interval's together: released bytes mapped before the agent
	 * (or untracked), mappings the range table had no room for */
	uint64_t mem_released_unknown, mem_untracked, mem_unmatched;
	int stats_fd; /* BPF run-time statistics on while held (--metrics, --max-overhead) */
	struct agent_budget budget; /* the sampling rate of the open interval, and its cost */
	/* --recorder: every sample of the last seconds; the profiles keep agent_rate_keep's */
	struct agent_ring ring;
	uint64_t rng;
	struct agent_gate gate; /* its triggers' cooldown */
	long long cpu_checked;	/* --trigger-cpu: the bucket up to which shares were looked at */
	uint64_t captures, capture_failed;
	long long from_mono, from_real; /* the open interval's start */
	uint64_t intervals, samples, seen, compactions;
	uint64_t empty, mem_empty; /* profiles not made: nothing in them (an idle process) */
	char why[512];
};

static volatile sig_atomic_t agent_stop;
/* SIGUSR1: a capture asked for, made by the loop */
static volatile sig_atomic_t agent_capture_asked;

static void agent_on_usr1(int sig)
{
	(void)sig;
	agent_capture_asked = 1;
}

static void agent_on_signal(int sig)
{
	static const char msg[] = "\npybpfprof agent: second stop signal: exiting at once\n";

	if (agent_stop) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(128 + sig);
		_exit(128 + sig);
	}
	agent_stop = sig;
}

static int agent_on_sample(void *ctx, void *data, size_t size)
{
	collector__sample(ctx, data, size);
	return 0;
}

/*
 * The sampling rate, in one place with agent_on_cpu's share (a dynamic rate
 * budget changes both here): -F's, or with --recorder its higher rate, of
 * which the interval profiles keep -F / --recorder-rate, each kept sample
 * standing for 1 / -F s as without the recorder.
 */
static unsigned agent_sampling_hz(const struct agent_opts *o)
{
	return o->recorder_s ? o->recorder_rate : o->hz;
}

/* The sampling rate now: agent_sampling_hz's, or under it by --max-overhead. */
static unsigned agent_sampling_hz_now(const struct agent *a)
{
	return a->o.recorder_s ? a->o.recorder_rate : a->budget.hz;
}

/*
 * The open interval's profiles' rate: -F's with --recorder (they keep its
 * share), else the sampling rate, which --max-overhead may have lowered
 * (agent__budget_step, at each cut; the two options exclude each other).
 */
static unsigned agent_profile_hz(const struct agent *a)
{
	return a->o.recorder_s ? a->o.hz : a->budget.hz;
}

/* --recorder: every CPU sample into the ring (not --match's left out); whether a profile counts it. */
static bool agent_on_cpu(void *ctx, const struct collector_target *ts, const struct py_sample *s,
			 const uint32_t *frames, uint32_t n)
{
	struct agent *a = ctx;

	if (ts->target_index >= a->nprocs || !a->procs[ts->target_index].skip)
		agent_ring__push(&a->ring, (long long)s->ktime_ns, (int)s->pid, s->tid, frames, n);
	if (a->o.trigger_cpu && ts->target_index < a->nprocs)
		agent_cpu_window__add(&a->procs[ts->target_index].cpu,
				      ((long long)s->ktime_ns - a->prof.start_ns) /
					      AGENT_CPU_BUCKET_NS);
	return agent_rate_keep(&a->rng, a->o.hz, a->o.recorder_rate);
}

/* argp */

enum {
	OPT_SUBPROC = 0x100,
	OPT_MATCH,
	OPT_INTERVAL,
	OPT_MERGE,
	OPT_SERVICE,
	OPT_LABEL_ENV,
	OPT_OUTDIR,
	OPT_MAXDISK,
	OPT_PUSH,
	OPT_BASIC,
	OPT_BEARER,
	OPT_MAXDEPTH,
	OPT_MAXCACHE,
	OPT_QUEUE,
	OPT_OTLP,
	OPT_METRICS,
	OPT_MEM,
	OPT_MEM_PERIOD,
	OPT_QUEUE_MB,
	OPT_MATCH_USER,
	OPT_RECORDER,
	OPT_RECORDER_RATE,
	OPT_RECORDER_MB,
	OPT_RECORDER_COOLDOWN,
	OPT_TRIGGER_CPU,
	OPT_TRIGGER_FOR,
	OPT_MAX_OVERHEAD,
};

static const struct argp_option agent_options[] = {
	{ NULL, 0, NULL, 0, "Targets:", 1 },
	{ "all", 'a', NULL, 0, "Every CPython process on the host, new ones too (the default)", 1 },
	{ "pid", 'p', "PID", 0, "Profile this process (repeatable, or PID,PID,...)", 1 },
	{ "subprocesses", OPT_SUBPROC, NULL, 0, "With -p: their descendants too", 1 },
	{ "match", OPT_MATCH, "REGEX", 0,
	  "Only processes whose command line matches REGEX (POSIX extended)", 1 },
	{ "match-user", OPT_MATCH_USER, "USER", 0,
	  "Only processes whose effective user is USER, a name or a uid (repeatable, or "
	  "USER,USER,...); with --match, both must hold",
	  1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "frequency", 'F', "HZ", 0, "Samples per second per CPU (default: 99)", 2 },
	{ "max-depth", OPT_MAXDEPTH, "FRAMES", 0,
	  "Deepest Python stack kept (default: 127, at most 1024)", 2 },
	{ "max-cache-mb", OPT_MAXCACHE, "MIB", 0,
	  "Memory for the targets' code objects, all together (default: 64)", 2 },
	{ "mem", OPT_MEM, "faults", OPTION_ARG_OPTIONAL,
	  "Also a memory profile per process and interval: bytes touched (sampled page faults), "
	  "mapped and released (mmap, munmap, mremap, brk: exact) and in use at the interval's "
	  "end, by the line that mapped them (--mem=alloc is not offered here)",
	  2 },
	{ "mem-period", OPT_MEM_PERIOD, "FAULTS", 0,
	  "With --mem: page faults per memory sample, on average (default: 64)", 2 },
	{ "max-overhead", OPT_MAX_OVERHEAD, "PCT", 0,
	  "Hold the agent's whole cost (its BPF programs' run time, by the kernel's statistics, "
	  "and its own CPU) to PCT % of one CPU, 0.01 to 100, fractions allowed: measured every "
	  "interval, the next interval's rate lowered or raised to fit, never above -F; each "
	  "profile's values are in ns at its own rate, labelled sample_rate_hz and "
	  "overhead_budget (default: no budget, -F always)",
	  2 },
	{ NULL, 0, NULL, 0, "Profiles:", 3 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0,
	  "One profile per process every SECONDS, at least 1 (default: 60, at most 86400)", 3 },
	{ "merge", OPT_MERGE, NULL, 0,
	  "One profile per service, user and labels, not per process (another user's process "
	  "of that name is apart, as is one in another container, pod or environment)",
	  3 },
	{ "service-name", OPT_SERVICE, "NAME", 0,
	  "The service label of a profile whose process's environment names none "
	  "(OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES) (default: the script "
	  "or module name)",
	  3 },
	{ "label-env", OPT_LABEL_ENV, "KEY", 0,
	  "Also label each profile with KEY of its process's OTEL_RESOURCE_ATTRIBUTES, when set "
	  "(repeatable, at most 8; KEY: a letter, then letters, digits, '.', '-', '_', under 48 "
	  "bytes)",
	  3 },
	{ NULL, 0, NULL, 0, "Sinks (any combination, at least one):", 4 },
	{ "output-dir", OPT_OUTDIR, "DIR", 0,
	  "One gzip pprof file per process and interval (with samples) in DIR, opened once at the "
	  "start and held: if DIR is moved, the files follow it",
	  4 },
	{ "max-disk", OPT_MAXDISK, "MB", 0,
	  "With --output-dir: delete the oldest of the files the agent wrote (this run's and, "
	  "by its manifest, earlier runs') beyond MB, fractions allowed; no other file "
	  "(default: 0, no limit)",
	  4 },
	{ "push", OPT_PUSH, "URL", 0, "Push to a Pyroscope server: POST URL/ingest", 4 },
	{ "otlp", OPT_OTLP, "URL", 0,
	  "Push OTLP profiles (v1development) to an OpenTelemetry collector: POST "
	  "URL/v1development/profiles",
	  4 },
	{ "basic-auth-file", OPT_BASIC, "FILE", 0,
	  "With --push or --otlp: HTTP basic auth, USER:PASSWORD on FILE's first line", 4 },
	{ "bearer-token-file", OPT_BEARER, "FILE", 0,
	  "With --push or --otlp: a bearer token on FILE's first line", 4 },
	{ "queue", OPT_QUEUE, "N", 0,
	  "Profiles each sink holds waiting while it cannot send, besides the one it is sending; "
	  "beyond, the oldest of the process holding the most bytes are dropped (default: 512, "
	  "at most 65536)",
	  4 },
	{ "queue-mb", OPT_QUEUE_MB, "MIB", 0,
	  "And their bytes at most, per sink, fractions allowed; a profile larger alone is "
	  "dropped (default: 32)",
	  4 },
	{ NULL, 0, NULL, 0, "Flight recorder:", 5 },
	{ "recorder", OPT_RECORDER, "SECONDS", 0,
	  "Keep every sample of the last SECONDS (1 to 3600) in memory, taken at --recorder-rate "
	  "(the profiles keep -F's share of them), and on SIGUSR1, or POST /capture on the "
	  "--metrics port from this host's loopback, write them as one gzip pprof in "
	  "--output-dir, each sample with its time (label timestamp_ns): "
	  "DATE-recorder-N.capture.pb.gz, and as a Perfetto trace beside it (ui.perfetto.dev): "
	  "DATE-recorder-N.capture.perfetto-trace.gz",
	  5 },
	{ "recorder-rate", OPT_RECORDER_RATE, "HZ", 0,
	  "With --recorder: samples per second per CPU, at least -F's (default: 999)", 5 },
	{ "recorder-max-mb", OPT_RECORDER_MB, "MIB", 0,
	  "With --recorder: memory for its samples at most, fractions allowed; beyond, the "
	  "oldest are evicted (counted in --metrics) (default: 32)",
	  5 },
	{ "recorder-cooldown", OPT_RECORDER_COOLDOWN, "SECONDS", 0,
	  "With --recorder: at most one capture per SECONDS; a trigger sooner is refused and "
	  "counted (default: --recorder's SECONDS)",
	  5 },
	{ "trigger-cpu", OPT_TRIGGER_CPU, "PCT", 0,
	  "With --recorder: also capture when a process's CPU, from its samples over the last "
	  "--trigger-for seconds, crosses PCT % of one CPU (above 100 for several threads)",
	  5 },
	{ "trigger-for", OPT_TRIGGER_FOR, "SECONDS", 0,
	  "With --trigger-cpu: the seconds its CPU is averaged over, 1 to 60 (default: 5)", 5 },
	{ NULL, 0, NULL, 0, "Other:", 6 },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "Serve the agent's own metrics (Prometheus text) at http://ADDR:PORT/metrics; each "
	  "connection closed 3 s after it opened, at most 8 at once per client (a local user, or "
	  "an address)",
	  6 },
	{ "verbose", 'v', NULL, 0, "Say more (repeatable)", 6 },
	{ 0 },
};

static const char agent_doc[] =
	"pybpfprof agent: profile CPython processes without end, and every interval hand one "
	"profile per process to the sinks: gzip pprof files in a directory, a Pyroscope "
	"server, an OpenTelemetry collector (OTLP profiles), in any combination. Stops on SIGTERM or SIGINT, after the last partial interval is out."
	"\v"
	"Labels on every profile: hostname, service_name, pid, command, python_version, "
	"container_id (or cgroup) when the process is in one, k8s_pod_uid when a kubelet's cgroup "
	"names its pod, and whose the process is: uid (its "
	"effective uid) and user (its name, when the user database has one); each sample also "
	"carries its thread's id and name. From the process's own environment: OTEL_SERVICE_NAME "
	"(or service.name of OTEL_RESOURCE_ATTRIBUTES) names the service, before --service-name; "
	"service.version, deployment.environment.name, k8s.pod.name, k8s.namespace.name, "
	"container.id and the --label-env keys of OTEL_RESOURCE_ATTRIBUTES, and PYROSCOPE_TAGS's "
	"k=v pairs, are labels too (at most 8, bounded, reduced to safe bytes; never one of the "
	"agent's own). An interval in which a process had no sample makes no "
	"profile (counted in --metrics).\n"
	"\n"
	"Examples:\n"
	"  sudo pybpfprof agent --output-dir /var/lib/pybpfprof --max-disk 500\n"
	"  sudo pybpfprof agent --match-user www-data --push http://pyroscope:4040\n"
	"  sudo pybpfprof agent --push http://pyroscope:4040 --interval 15\n"
	"  sudo pybpfprof agent --push http://pyroscope:4040 -F 999 --max-overhead 1\n"
	"  sudo pybpfprof agent --match 'gunicorn|celery' --merge --push https://p.example "
	"--basic-auth-file /etc/pybpfprof/auth\n"
	"  sudo pybpfprof agent -p 1234 --interval 10 --output-dir /tmp/prof\n"
	"  sudo pybpfprof agent --otlp http://otel-collector:4318\n"
	"  sudo pybpfprof agent --push http://pyroscope:4040 --label-env team.name\n"
	"  sudo pybpfprof agent --output-dir /tmp/prof --recorder 60\n"
	"  sudo pybpfprof agent --output-dir /tmp/prof --recorder 60 --trigger-cpu 90";

/* An unsigned from min to max, or a sentence via argp_error. */
static unsigned parse_uint(struct argp_state *st, const char *opt, const char *arg, unsigned min,
			   unsigned max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
		argp_error(st, "%s takes a whole number from %u to %u, not '%s'", opt, min, max,
			   arg);
	return v;
}

/* --max-overhead: a percentage of one CPU, fractions allowed. */
static double parse_pct(struct argp_state *st, const char *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0.01 && v <= 100.0))
		argp_error(st, "%s takes a percentage of one CPU from 0.01 to 100, not '%s'", opt,
			   arg);
	return v;
}

/* --max-disk, --queue-mb: megabytes, fractions allowed (a test's budget is a few files). */
static double parse_mb(struct argp_state *st, const char *opt, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0.001 && v <= 16777216.0))
		argp_error(st, "%s takes megabytes from 0.001 to 16777216, not '%s'", opt, arg);
	return v;
}

static void parse_pids(struct argp_state *st, struct agent_opts *o, const char *arg)
{
	char buf[4096], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->npids == SESSION_MAX_PIDS)
			argp_error(st, "at most %d pids", SESSION_MAX_PIDS);
		o->pids[o->npids++] = parse_uint(st, "-p", tok, 1, INT32_MAX);
	}
}

/* --label-env KEY: an OpenTelemetry attribute name agent_env_parse can take. */
static void parse_label_env(struct argp_state *st, struct agent_opts *o, const char *arg)
{
	size_t n = strlen(arg);

	if (o->nlabel_env == AGENT_LABEL_ENV_MAX)
		argp_error(st, "--label-env takes at most %d keys", AGENT_LABEL_ENV_MAX);
	if (!n || n >= AGENT_KEY_MAX || !isalpha((unsigned char)arg[0]) ||
	    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		argp_error(st,
			   "--label-env '%s': not an attribute name; give a letter, then letters, "
			   "digits, '.', '-' or '_', under %d bytes (e.g. --label-env team.name)",
			   arg, AGENT_KEY_MAX);
	o->label_env[o->nlabel_env++] = arg;
}

/* --match-user: names (the user database's, now) and uids, into o->match_uids. */
static void parse_users(struct argp_state *st, struct agent_opts *o, const char *arg)
{
	char buf[4096], pwbuf[4096], *tok, *save;
	struct passwd pw, *res;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nmatch_uids == AGENT_MATCH_USERS)
			argp_error(st, "--match-user takes at most %d users", AGENT_MATCH_USERS);
		if (strspn(tok, "0123456789") == strlen(tok)) {
			o->match_uids[o->nmatch_uids++] = parse_uint(st, "--match-user", tok, 0,
								     UINT32_MAX - 1);
			continue;
		}
		if (getpwnam_r(tok, &pw, pwbuf, sizeof(pwbuf), &res) || !res)
			argp_error(st,
				   "--match-user %s: no such user on this host; give a name from "
				   "the user database or a numeric uid",
				   tok);
		o->match_uids[o->nmatch_uids++] = res->pw_uid;
	}
}

/* --mem[=faults]; --mem=alloc is refused (usage, exit 2) with what to do instead. */
static void parse_mem(struct argp_state *st, struct agent_opts *o, const char *arg)
{
	if (arg && !strcmp(arg, "alloc"))
		argp_error(st, "--mem=alloc is not offered by the agent: its allocator probes "
			       "cost too much to leave on for weeks; use --mem (page faults and "
			       "memory calls), or a one-off `pybpfprof -p PID --mem=alloc`");
	if (arg && strcmp(arg, "faults"))
		argp_error(st, "--mem takes faults (or nothing), not '%s'", arg);
	o->mem = true;
}

/* The sinks' options (agent_parse_opt's group 4, and --metrics). */
static error_t parse_sink_opt(int key, char *arg, struct argp_state *st)
{
	struct agent_opts *o = st->input;

	switch (key) {
	case OPT_OUTDIR:
		o->output_dir = arg;
		break;
	case OPT_MAXDISK:
		o->max_disk_mb = parse_mb(st, "--max-disk", arg);
		break;
	case OPT_QUEUE:
		o->queue = parse_uint(st, "--queue", arg, 1, 65536);
		break;
	case OPT_QUEUE_MB:
		o->queue_mb = parse_mb(st, "--queue-mb", arg);
		break;
	case OPT_PUSH:
		o->push = arg;
		break;
	case OPT_OTLP:
		o->otlp = arg;
		break;
	case OPT_METRICS:
		o->metrics = arg;
		break;
	case OPT_BASIC:
		o->basic_auth_file = arg;
		break;
	case OPT_BEARER:
		o->bearer_file = arg;
		break;
	case OPT_RECORDER:
		o->recorder_s = parse_uint(st, "--recorder", arg, 1, 3600);
		break;
	case OPT_RECORDER_RATE:
		o->recorder_rate = parse_uint(st, "--recorder-rate", arg, 1, SESSION_MAX_HZ);
		break;
	case OPT_RECORDER_MB:
		o->recorder_max_mb = parse_mb(st, "--recorder-max-mb", arg);
		break;
	case OPT_RECORDER_COOLDOWN:
		o->recorder_cooldown_s = parse_uint(st, "--recorder-cooldown", arg, 1, 86400);
		break;
	case OPT_TRIGGER_CPU:
		o->trigger_cpu = parse_uint(st, "--trigger-cpu", arg, 1, 100000);
		break;
	case OPT_TRIGGER_FOR:
		o->trigger_for_s = parse_uint(st, "--trigger-for", arg, 1, 60);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t agent_parse_opt(int key, char *arg, struct argp_state *st)
{
	struct agent_opts *o = st->input;

	switch (key) {
	case 'a':
		o->all = true;
		break;
	case 'p':
		parse_pids(st, o, arg);
		break;
	case OPT_SUBPROC:
		o->subprocesses = true;
		break;
	case OPT_MATCH:
		o->match = arg;
		break;
	case OPT_MATCH_USER:
		parse_users(st, o, arg);
		break;
	case 'F':
		o->hz = parse_uint(st, "-F", arg, 1, SESSION_MAX_HZ);
		break;
	case OPT_MAXDEPTH:
		o->max_depth = parse_uint(st, "--max-depth", arg, 1, PYPROF_MAX_DEPTH);
		break;
	case OPT_MAXCACHE:
		o->max_cache_mb = parse_uint(st, "--max-cache-mb", arg, 1, PYPROF_MAX_CACHE_MB);
		break;
	case OPT_INTERVAL:
		o->interval_s = parse_uint(st, "--interval", arg, 1, 86400);
		break;
	case OPT_MERGE:
		o->merge = true;
		break;
	case OPT_SERVICE:
		o->service_name = arg;
		break;
	case OPT_LABEL_ENV:
		parse_label_env(st, o, arg);
		break;
	case 'v':
		o->verbose++;
		break;
	case OPT_MEM:
		parse_mem(st, o, arg);
		break;
	case OPT_MEM_PERIOD:
		o->mem_period = parse_uint(st, "--mem-period", arg, 1, 1000000);
		break;
	case OPT_MAX_OVERHEAD:
		o->max_overhead = parse_pct(st, "--max-overhead", arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	default:
		return parse_sink_opt(key, arg, st);
	}
	return 0;
}

/* The rules between options; a sentence in why. */
int agent_opts_check(struct agent_opts *o, char *why, size_t whylen);
int agent_opts_check(struct agent_opts *o, char *why, size_t whylen)
{
	why[0] = '\0';
	if (o->all && o->npids)
		snprintf(why, whylen, "-a and -p exclude each other: give one");
	else if (o->subprocesses && !o->npids)
		snprintf(why, whylen, "--subprocesses follows the -p targets' children: give -p");
	else if (!o->output_dir && !o->push && !o->otlp)
		snprintf(why, whylen,
			 "give at least one sink: --output-dir DIR, --push URL or --otlp URL");
	else if (o->max_disk_mb && !o->output_dir)
		snprintf(why, whylen, "--max-disk limits --output-dir: give --output-dir");
	else if ((o->basic_auth_file || o->bearer_file) && !o->push && !o->otlp)
		snprintf(why, whylen, "the auth files are for --push and --otlp: give one");
	else if (o->basic_auth_file && o->bearer_file)
		snprintf(why, whylen,
			 "--basic-auth-file and --bearer-token-file exclude each other: give one");
	else if (o->mem_period && !o->mem)
		snprintf(why, whylen,
			 "--mem-period is the page-fault sampling of --mem: give --mem");
	else if (o->trigger_for_s && !o->trigger_cpu)
		snprintf(why, whylen,
			 "--trigger-for is --trigger-cpu's window: give --trigger-cpu");
	else if (!o->recorder_s && (o->recorder_rate || o->recorder_max_mb ||
				    o->recorder_cooldown_s || o->trigger_cpu))
		snprintf(why, whylen, "the --recorder-* options set --recorder: give --recorder");
	else if (o->recorder_s && o->max_overhead)
		snprintf(why, whylen,
			 "--max-overhead cannot yet change --recorder's rate (a capture's samples "
			 "are all valued at --recorder-rate): give one of them");
	else if (o->recorder_s && !o->output_dir)
		snprintf(why, whylen, "--recorder writes its captures in --output-dir: give it");
	else if (o->recorder_s && o->recorder_rate && o->recorder_rate < o->hz)
		snprintf(
			why, whylen,
			"--recorder-rate %u is under -F %u: the recorder samples at least as often "
			"as the profiles",
			o->recorder_rate, o->hz);
	if (why[0])
		return -EINVAL;
	if (o->recorder_s) {
		o->recorder_rate = o->recorder_rate ? o->recorder_rate : 999;
		o->recorder_rate = o->recorder_rate < o->hz ? o->hz : o->recorder_rate;
		o->recorder_max_mb = o->recorder_max_mb ? o->recorder_max_mb : 32;
		if (!o->recorder_cooldown_s)
			o->recorder_cooldown_s = o->recorder_s;
		if (!o->trigger_for_s)
			o->trigger_for_s = 5;
	}
	o->all = !o->npids;
	if (!o->mem_period)
		o->mem_period = 64;
	return 0;
}

/* Parses argv; 2 with argp's message for a refused command line. */
static int agent__parse(struct agent *a, int argc, char **argv)
{
	static const struct argp argp = {
		agent_options, agent_parse_opt, NULL, agent_doc, NULL, NULL, NULL
	};
	int err;

	char *argv0 = argv[0];
	int perr;

	/* argp's messages and usage name the subcommand: "pybpfprof agent: ..." */
	argv[0] = "pybpfprof agent";
	argp_err_exit_status = 2;
	perr = argp_parse(&argp, argc, argv, 0, NULL, &a->o);
	argv[0] = argv0;
	if (perr)
		return 2;
	if (agent_opts_check(&a->o, a->why, sizeof(a->why))) {
		pr_err("%s\n", a->why);
		return 2;
	}
	if (a->o.match) {
		err = regcomp(&a->re, a->o.match, REG_EXTENDED | REG_NOSUB);
		if (err) {
			regerror(err, &a->re, a->why, sizeof(a->why));
			pr_err("--match '%s' is not a regular expression: %s\n", a->o.match,
			       a->why);
			a->o.match = NULL;
			return 2;
		}
	}
	log_set_level(LOG_WARN + a->o.verbose);
	log_hook_libbpf();
	return 0;
}

/* The sinks, started before any BPF: a bad directory or URL fails first. */
static int agent__open_sinks(struct agent *a)
{
	const struct agent_opts *o = &a->o;
	uint64_t qb = (uint64_t)(o->queue_mb * 1048576);
	struct agent_sink *s;

	if (o->output_dir) {
		s = agent_sink__dir(o->output_dir, (uint64_t)(o->max_disk_mb * 1048576), o->queue,
				    qb, a->why, sizeof(a->why));
		if (!s)
			return -EINVAL;
		a->sinks[a->nsinks++] = s;
	}
	if (o->push) {
		s = agent_sink__push(o->push, o->bearer_file ? o->bearer_file : o->basic_auth_file,
				     o->bearer_file != NULL, o->queue, qb, a->why, sizeof(a->why));
		if (!s)
			return -EINVAL;
		a->sinks[a->nsinks++] = s;
	}
	if (o->otlp) {
		s = agent_sink__otlp(o->otlp, o->bearer_file ? o->bearer_file : o->basic_auth_file,
				     o->bearer_file != NULL, o->queue, qb, a->why, sizeof(a->why));
		if (!s)
			return -EINVAL;
		a->sinks[a->nsinks++] = s;
	}
	return 0;
}

/* The -p targets, checked and added to the collector. */
static int agent__open_pids(struct agent *a)
{
	size_t i;
	int err = 0;

	for (i = 0; i < a->o.npids && !err; i++) {
		struct target t;

		if (collector__find(&a->c, a->o.pids[i]))
			continue;
		err = target__open(a->o.pids[i], &t, a->why, sizeof(a->why));
		if (!err)
			err = collector__add_target(&a->c, &t);
	}
	return err;
}

/* Everything before sampling: the profile, sinks, privileges, targets, session. */
static int agent__prepare(struct agent *a)
{
	const struct agent_opts *o = &a->o;
	int err;

	profile__init(&a->prof, o->mem ? "cpu+mem" : "cpu", o->hz);
	a->prof.start_ns = mono_ns();
	a->prof.mem = o->mem;
	a->prof.mem_ages = o->mem;
	a->prof.mem_period = o->mem_period;
	a->prof.page_size = sysconf(_SC_PAGESIZE);
	err = collector__init(&a->c, &a->prof, (size_t)o->max_cache_mb << 20);
	if (!err && o->recorder_s) {
		err = agent_ring__init(&a->ring, (size_t)(o->recorder_max_mb * 1048576),
				       o->recorder_s * 1000000000LL);
		a->c.on_cpu = agent_on_cpu;
		a->c.on_cpu_ctx = a;
		a->rng = (uint64_t)mono_ns() | 1;
		agent_gate__init(&a->gate, o->recorder_cooldown_s * 1000000000LL);
	}
	if (gethostname(a->host, sizeof(a->host) - 1))
		snprintf(a->host, sizeof(a->host), "unknown");
	if (!err)
		err = agent__open_sinks(a);
	if (!err && o->metrics) {
		a->metrics = agent_metrics__start(o->metrics, a->sinks, a->nsinks, a->why,
						  sizeof(a->why));
		err = a->metrics ? 0 : -EINVAL;
		if (o->recorder_s)
			agent_metrics__set_gate(a->metrics, &a->gate);
	}
	if (!err)
		err = check_privileges(a->why, sizeof(a->why));
	if (!err)
		err = check_kernel(BTF_PATH, a->why, sizeof(a->why));
	if (!err)
		err = agent__open_pids(a);
	if (!err) {
		a->s = modes__open_session(o->max_depth,
					   o->mem ? PYPROF_MEM_FAULTS : PYPROF_MEM_OFF, 0, 0, 0,
					   false, false, agent_on_sample, &a->c, a->why,
					   sizeof(a->why));
		err = a->s ? 0 : -EINVAL;
	}
	return err;
}

/* Targets registered and followed, then sampling; -a finds the running ones. */
static int agent__attach(struct agent *a)
{
	unsigned flags = PY_FOLLOW_SELF | (a->o.subprocesses ? PY_FOLLOW_CHILDREN : 0);
	struct rlimit rl;
	size_t i;
	int err = 0;

	/* each section holds its process's root open: many processes, many fds */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < a->c.ntargets && !err; i++) {
		err = session__add_target(a->s, &a->c.targets[i].t);
		snprintf(a->why, sizeof(a->why), "cannot register pid %d: %s",
			 a->c.targets[i].t.pid, strerror(-err));
	}
	a->why[0] = '\0';
	tracker__init(&a->tr, &a->c, a->s, a->o.all);
	if (!err)
		err = session__track(a->s, a->o.all, tracker__on_event, &a->tr, a->why,
				     sizeof(a->why));
	for (i = 0; !err && a->o.subprocesses && i < a->c.ntargets; i++)
		err = session__follow(a->s, a->c.targets[i].t.pid, flags);
	if (!err && a->o.subprocesses)
		tracker__adopt(&a->tr, a->o.pids, a->o.npids, flags);
	if (err && !a->why[0])
		snprintf(a->why, sizeof(a->why), "cannot follow the targets: %s", strerror(-err));
	if (!err)
		err = session__attach(a->s, agent_sampling_hz(&a->o), a->why, sizeof(a->why));
	if (!err && a->o.mem)
		err = mem__attach(&a->mem, a->s, &a->c, a->o.mem_period, 0, a->why, sizeof(a->why));
	if (!err && a->o.all)
		pr_info("%zu CPython processes found\n", tracker__scan(&a->tr));
	if (!err)
		pr_info("attached: sampling %zu processes at %u Hz, a profile every %u s at %u Hz\n",
			a->c.ntargets, agent_sampling_hz(&a->o), a->o.interval_s, a->o.hz);
	return err;
}

static long long real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Whose a process is: its effective uid now, from its /proc/PID/status held
 * open since it was first seen (a reused pid reads nothing there, never
 * another process's); gone, the last it was seen with; -1 when never read.
 */
static long long proc_euid(const struct profile_target *pp)
{
	const struct proc_sources *ps = pp->sources;
	struct source_creds c;
	long long uid = -1;

	if (!ps)
		return -1;
	if (ps->status_fd >= 0 && !source_creds__read(ps->status_fd, &c)) {
		uid = c.uid[1];
		source_creds__free(&c);
	} else if (ps->ncreds && ps->creds[ps->ncreds - 1].kind == SOURCE_CREDS_PROC) {
		uid = ps->creds[ps->ncreds - 1].uid[1];
	}
	return uid;
}

/* uid's name in the host's user database ("" if none), kept for the next ones. */
static const char *user_name(struct agent *a, uid_t uid)
{
	char buf[4096];
	struct passwd pw, *res;
	size_t i;

	for (i = 0; i < a->nusers; i++)
		if (a->users[i].uid == uid)
			return a->users[i].name;
	/* the table full: the oldest entry makes room (a lookup again costs only time) */
	i = a->nusers < AGENT_USER_NAMES ? a->nusers++ : a->next_user++ % AGENT_USER_NAMES;
	a->users[i].uid = uid;
	a->users[i].name[0] = '\0';
	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &res) && res)
		snprintf(a->users[i].name, sizeof(a->users[i].name), "%s", res->pw_name);
	return a->users[i].name;
}

/* The process's user looked at again: its uid and user labels follow a change. */
static void agent__look_user(struct agent *a, size_t i)
{
	struct agent_proc *ap = &a->procs[i];
	long long uid = proc_euid(&a->prof.targets[i]);

	if (uid < 0 || uid == ap->uid)
		return;
	ap->uid = uid;
	ap->nlabels = agent_labels_user(ap->labels, ap->nbase, uid, user_name(a, uid));
}

/* --match-user: whether the process's user (at the last look) is one of them. */
static bool user_matches(const struct agent *a, const struct agent_proc *ap)
{
	size_t i;

	for (i = 0; i < a->o.nmatch_uids; i++)
		if (ap->uid == a->o.match_uids[i])
			return true;
	return !a->o.nmatch_uids;
}

/* A new section: its service and labels, read while its process is (likely) alive. */
static void agent__see(struct agent *a, size_t i)
{
	const struct profile_target *pp = &a->prof.targets[i];
	struct agent_proc *ap = &a->procs[i];
	char path[64], cgroup[4096];
	struct agent_env env;
	char *environ_buf;
	size_t n;

	memset(ap, 0, sizeof(*ap));
	ap->skip = a->o.match && regexec(&a->re, pp->cmdline, 0, NULL, 0);
	/* the target's environment, its own memory: bounded here, every value reduced */
	environ_buf = malloc(AGENT_ENVIRON_MAX);
	n = environ_buf ? proc_read_environ(pp->pid, environ_buf, AGENT_ENVIRON_MAX) : 0;
	agent_env_parse(environ_buf, n, a->o.label_env, a->o.nlabel_env, &env);
	free(environ_buf);
	if (env.service[0])
		snprintf(ap->service, sizeof(ap->service), "%s", env.service);
	else if (a->o.service_name)
		agent_label_value(a->o.service_name, ap->service, sizeof(ap->service));
	else
		agent_service_name(pp->cmdline, pp->comm, ap->service, sizeof(ap->service));
	/* the target writes its cgroup path (by naming its cgroup): bounded, then reduced */
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pp->pid);
	proc_read_small_file(path, cgroup, sizeof(cgroup), false);
	n = agent_labels(ap->labels, a->host, ap->service, pp->pid, pp->cmdline, pp->python,
			 cgroup);
	ap->nbase = ap->nlabels = agent_labels_env(ap->labels, n, &env);
	ap->uid = -1;
	agent__look_user(a, i);
}

/* Sections opened since the last call get their agent_proc. */
static int agent__see_new(struct agent *a)
{
	size_t n = a->prof.ntargets;

	if (vec_grow((void **)&a->procs, &a->cap_procs, n, sizeof(*a->procs)))
		return -ENOMEM;
	while (a->nprocs < n) {
		agent__see(a, a->nprocs++);
		a->seen++;
	}
	return 0;
}

/* Moves a section's stacks into snap (which borrows its names and threads). */
static void take_stacks(struct profile_target *pp, struct profile_target *snap)
{
	memset(snap, 0, sizeof(*snap));
	snap->pid = pp->pid;
	snap->nspid = pp->nspid;
	snap->root_fd = -1;
	snap->exe = pp->exe;
	snap->cmdline = pp->cmdline;
	snap->comm = pp->comm;
	snap->python = pp->python;
	snap->threads = pp->threads;
	snap->nthreads = pp->nthreads;
	snap->stacks = pp->stacks;
	snap->nstacks = pp->nstacks;
	snap->stack_index = pp->stack_index;
	snap->samples = pp->samples;
	snap->truncated = pp->truncated;
	snap->partial = pp->partial;
	snap->unresolved = pp->unresolved;
	pp->stacks = NULL;
	pp->nstacks = pp->cap_stacks = 0;
	hashmap__init(&pp->stack_index);
	pp->samples = pp->truncated = pp->partial = pp->unresolved = 0;
}

static void free_stacks(struct profile_target *snap)
{
	size_t i;

	for (i = 0; i < snap->nstacks; i++)
		free(snap->stacks[i].frames);
	free(snap->stacks);
	hashmap__free(&snap->stack_index);
	profile_mem__free(&snap->mem);
}

/* Of the collector's records of one section, the first ones' recent memory calls pinned. */
#define AGENT_MEM_PINS 64

/*
 * --mem: section i's memory figures of the interval into snap->mem (after
 * take_stacks). The stacks its records' recent memory calls name stay in
 * the section, renumbered: a range record may still come for them.
 */
static void take_mem(struct agent *a, size_t i, struct profile_target *snap, bool count)
{
	struct collector_target *ts;
	uint64_t tot[PROFILE_MEM_NKINDS];
	long pins[AGENT_MEM_PINS];
	size_t k, j, n = 0;

	if (!a->o.mem)
		return;
	for (k = 0; k < a->c.ntargets; k++)
		for (ts = &a->c.targets[k], j = 0;
		     ts->target_index == i && j < 16 && n < AGENT_MEM_PINS; j++)
			pins[n++] = ts->mem_recent[j].stack;
	if (profile_target__mem_cut(&a->prof.targets[i], &snap->mem, pins, n, mono_ns())) {
		pr_warn("out of memory while closing pid %d's memory interval: its figures "
			"stay for the next\n",
			snap->pid);
		return;
	}
	for (k = 0, n = 0; k < a->c.ntargets; k++)
		for (ts = &a->c.targets[k], j = 0;
		     ts->target_index == i && j < 16 && n < AGENT_MEM_PINS; j++)
			ts->mem_recent[j].stack = pins[n++];
	if (!count)
		return;
	profile_target__mem_totals(snap, tot);
	a->procs[i].mem_touched = tot[PROFILE_MEM_TOUCHED];
	a->procs[i].mem_retained = tot[PROFILE_MEM_RETAINED] + snap->mem.retained_no_stack;
	a->mem_released_unknown += snap->mem.released_unknown;
	a->mem_untracked += snap->mem.ranges.untracked;
	a->mem_unmatched += snap->mem.ranges_unmatched;
}

/* --otlp: the same profile as OTLP (by w), the labels as resource attributes by their OTel names. */
static int encode_otlp(struct agent_job *j, const struct profile *v, const struct report_opts *ro,
		       const struct report_writer *w)
{
	const char *pairs[AGENT_MAX_LABELS + 1][2];
	struct report_opts o = *ro;
	size_t i;
	FILE *f;

	for (i = 0; i < j->nlabels; i++) {
		pairs[i][0] = agent_label_otel(&j->labels[i]);
		pairs[i][1] = j->labels[i].value;
	}
	pairs[i][0] = "process.runtime.name";
	pairs[i][1] = "CPython";
	o.sample_labels = (const char *const(*)[2])pairs;
	o.nsample_labels = i + 1;
	f = open_memstream((char **)&j->otlp, &j->otlp_len);
	return !f || w->write(f, v, &o) | fclose(f) ? -ENOMEM : 0;
}

/* A view's own function and frame tables: only what its stacks use. */
struct view_tables {
	struct profile_func *funcs;
	struct profile_frame *frames;
	size_t nfuncs, nframes, cap_funcs, cap_frames;
	struct hashmap func_map, frame_map; /* the profile's ids -> the view's */
};

/* The view's id of frame id in all, added at first use; UINT32_MAX when out of memory. */
static uint32_t view_frame(struct view_tables *vt, const struct profile *all, uint32_t id)
{
	uint64_t *slot = hashmap__find(&vt->frame_map, id);
	const struct profile_frame *fr = &all->frames[id];
	uint32_t fn;

	if (slot)
		return *slot;
	slot = hashmap__find(&vt->func_map, fr->func);
	if (!slot) {
		if (vec_grow((void **)&vt->funcs, &vt->cap_funcs, vt->nfuncs + 1,
			     sizeof(*vt->funcs)) ||
		    hashmap__set(&vt->func_map, fr->func, vt->nfuncs))
			return UINT32_MAX;
		vt->funcs[vt->nfuncs] = all->funcs[fr->func]; /* its strings borrowed */
		fn = vt->nfuncs++;
	} else {
		fn = *slot;
	}
	if (vec_grow((void **)&vt->frames, &vt->cap_frames, vt->nframes + 1, sizeof(*vt->frames)) ||
	    hashmap__set(&vt->frame_map, id, vt->nframes))
		return UINT32_MAX;
	vt->frames[vt->nframes] = (struct profile_frame){ fn, fr->line };
	return vt->nframes++;
}

/*
 * The functions and frames of the snapshots' stacks only, their ids
 * rewritten (the snapshots are the interval's own): a profile's size and cost
 * follow what ran in it, not every function the agent has ever seen.
 */
static int view_tables__build(struct view_tables *vt, const struct profile *all,
			      struct profile_target *snaps, size_t n)
{
	size_t i, j, k;

	memset(vt, 0, sizeof(*vt));
	hashmap__init(&vt->func_map);
	hashmap__init(&vt->frame_map);
	for (i = 0; i < n; i++) {
		for (j = 0; j < snaps[i].nstacks; j++)
			for (k = 0; k < snaps[i].stacks[j].nframes; k++) {
				uint32_t *f = &snaps[i].stacks[j].frames[k];

				if (*f >= all->nframes ||
				    (*f = view_frame(vt, all, *f)) == UINT32_MAX)
					return -ENOMEM;
			}
		/* --mem: the memory stacks' frames (their own copies) likewise */
		for (j = 0; j < snaps[i].mem.nstacks; j++)
			for (k = 0; k < snaps[i].mem.stacks[j].nframes; k++) {
				uint32_t *f = &snaps[i].mem.stacks[j].frames[k];

				if (*f >= all->nframes ||
				    (*f = view_frame(vt, all, *f)) == UINT32_MAX)
					return -ENOMEM;
			}
	}
	return 0;
}

static void view_tables__free(struct view_tables *vt)
{
	free(vt->funcs);
	free(vt->frames);
	hashmap__free(&vt->func_map);
	hashmap__free(&vt->frame_map);
}

/* A new job (refs 0) of snaps[0..n): service, pid, labels (pairs: the same), times. */
static struct agent_job *job_new(struct agent *a, struct profile_target *snaps, size_t n,
				 const struct agent_proc *ap, long long until_real,
				 const char *pairs[][2])
{
	struct agent_job *j = calloc(1, sizeof(*j));
	size_t i, k;

	if (!j)
		return NULL;
	for (i = 0; i < n; i++)
		j->samples += snaps[i].samples;
	snprintf(j->service, sizeof(j->service), "%s", ap->service);
	j->pid = n == 1 && !a->o.merge ? snaps[0].pid : 0;
	for (i = 0, k = 0; i < ap->nlabels; i++)
		/* a service's profile is no one process's */
		if (j->pid ||
		    (strcmp(ap->labels[i].key, "pid") && strcmp(ap->labels[i].key, "command")))
			j->labels[k++] = ap->labels[i];
	j->nlabels = k;
	/*
	 * The pprof samples' labels: the pid is on each already, as a number
	 * (report_pprof.c; --merge's tell the processes apart by it); a string
	 * pid besides would count every sample twice in go tool pprof -tags.
	 * Pyroscope's series and OTLP's resource keep it (j->labels).
	 */
	for (i = 0, k = 0; i < j->nlabels; i++)
		if (strcmp(j->labels[i].key, "pid")) {
			pairs[k][0] = j->labels[i].key;
			pairs[k++][1] = j->labels[i].value;
		}
	j->npairs = k;
	j->from_ns = a->from_real;
	j->until_ns = until_real;
	j->hz = agent_profile_hz(a);
	return j;
}

/* The job's bodies by writer w (and ow for --otlp); NULL, the job freed, when out of memory. */
static struct agent_job *job_encode(struct agent *a, struct agent_job *j, const struct profile *v,
				    struct report_opts *ro, const struct report_writer *w,
				    const struct report_writer *ow)
{
	FILE *f;

	if (!j)
		return NULL;
	ro->nsample_labels = j->npairs;
	f = open_memstream((char **)&j->body, &j->len);
	if (!f || w->write(f, v, ro) | fclose(f) || (a->o.otlp && encode_otlp(j, v, ro, ow))) {
		free(j->body);
		free(j->otlp);
		free(j);
		return NULL;
	}
	return j;
}

/* What one interval of some processes gives the sinks. */
struct interval_jobs {
	struct agent_job *cpu, *mem; /* new jobs (refs 0); NULL: out of memory, or empty */
	bool cpu_empty, mem_empty;   /* nothing in it: not made */
};

/* Whether a --mem snapshot has a byte to show (the memory pprof writes those stacks only). */
static bool mem_empty(const struct profile_target *snaps, size_t n)
{
	static const enum profile_mem_kind kinds[] = { PROFILE_MEM_TOUCHED, PROFILE_MEM_MAPPED,
						       PROFILE_MEM_RELEASED, PROFILE_MEM_RETAINED };
	size_t i, j, k;

	for (i = 0; i < n; i++)
		for (j = 0; j < snaps[i].mem.nstacks; j++)
			for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
				if (snaps[i].mem.stacks[j].nframes &&
				    snaps[i].mem.stacks[j].bytes[kinds[k]])
					return false;
	return true;
}

/*
 * The interval's profile of snaps[0..n) as gzip pprof, and with --mem its
 * memory profile, into *out; a profile with nothing in it (no sample, no
 * byte) is not made: an idle process costs no file and no push.
 */
static void encode_job(struct agent *a, struct profile_target *snaps, size_t n,
		       const struct agent_proc *ap, long long until_mono, long long until_real,
		       struct interval_jobs *out)
{
	const char *pairs[AGENT_MAX_LABELS + 2][2], *mpairs[AGENT_MAX_LABELS][2];
	struct report_opts ro = { .tool_version = PYBPFPROF_VERSION };
	char rate[16];
	struct profile v = a->prof;
	struct agent_job *j = NULL;
	struct view_tables vt;
	uint64_t samples = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)
		samples += snaps[i].samples;
	out->cpu_empty = !samples;
	out->mem_empty = a->o.mem && mem_empty(snaps, n);
	if (out->cpu_empty && (!a->o.mem || out->mem_empty))
		return;
	if (view_tables__build(&vt, &a->prof, snaps, n)) {
		view_tables__free(&vt);
		return;
	}
	v.funcs = vt.funcs;
	v.nfuncs = vt.nfuncs;
	v.frames = vt.frames;
	v.nframes = vt.nframes;
	v.targets = snaps;
	v.ntargets = v.cap_targets = n;
	v.start_ns = a->from_mono;
	v.duration_s = (until_mono - a->from_mono) / 1e9;
	v.frequency_hz = agent_profile_hz(a); /* each sample 1e9 / rate ns */
	memset(&v.counts, 0, sizeof(v.counts));
	v.counts.events = samples;
	if (!out->cpu_empty) {
		j = job_new(a, snaps, n, ap, until_real, pairs);
		if (j && a->o.max_overhead) {
			/* the rate differs between intervals: each profile says its own */
			snprintf(rate, sizeof(rate), "%u", v.frequency_hz);
			pairs[j->npairs][0] = "sample_rate_hz";
			pairs[j->npairs++][1] = rate;
			pairs[j->npairs][0] = "overhead_budget";
			pairs[j->npairs++][1] = agent_budget_state_name(a->budget.state);
		}
		ro.sample_labels = (const char *const(*)[2])pairs;
		out->cpu = job_encode(a, j, &v, &ro, &report_pprof, &report_otlp);
	}
	if (a->o.mem && !out->mem_empty) {
		ro.sample_labels = (const char *const(*)[2])mpairs;
		out->mem = job_encode(a, job_new(a, snaps, n, ap, until_real, mpairs), &v, &ro,
				      &report_mem_pprof, &report_otlp_mem);
		if (out->mem) {
			out->mem->mem = true;
			out->mem->samples = 0;
		}
	}
	view_tables__free(&vt);
}

static void agent__submit_one(struct agent *a, struct agent_job *j)
{
	size_t i;

	j->refs = 1;
	for (i = 0; i < a->nsinks; i++)
		agent_sink__submit(a->sinks[i], j);
	if (j->mem) {
		a->mem_intervals++;
	} else {
		a->intervals++;
		a->samples += j->samples;
	}
	agent_job__put(j);
}

/* The CPU profile, then (--mem) the memory profile; missing ones are lost, and said. */
static void agent__submit(struct agent *a, const struct interval_jobs *ij)
{
	a->empty += ij->cpu_empty;
	a->mem_empty += ij->mem_empty;
	if ((!ij->cpu && !ij->cpu_empty) || (a->o.mem && !ij->mem && !ij->mem_empty))
		pr_warn("out of memory while encoding an interval's profile: it is lost\n");
	if (ij->cpu)
		agent__submit_one(a, ij->cpu);
	if (ij->mem)
		agent__submit_one(a, ij->mem);
}

/* Whether two processes' labels, pid and command aside, are the same: one series. */
static bool same_labels(const struct agent_proc *x, const struct agent_proc *y)
{
	size_t i = 0, k = 0;

	for (;; i++, k++) {
		while (i < x->nlabels &&
		       (!strcmp(x->labels[i].key, "pid") || !strcmp(x->labels[i].key, "command")))
			i++;
		while (k < y->nlabels &&
		       (!strcmp(y->labels[k].key, "pid") || !strcmp(y->labels[k].key, "command")))
			k++;
		if (i == x->nlabels || k == y->nlabels)
			return i == x->nlabels && k == y->nlabels;
		if (strcmp(x->labels[i].key, y->labels[k].key) ||
		    strcmp(x->labels[i].value, y->labels[k].value))
			return false;
	}
}

/* --merge: the snapshots of service i's processes, put together. */
static void submit_merged(struct agent *a, struct profile_target *snaps, const size_t *idx,
			  size_t n, long long until_mono, long long until_real)
{
	struct profile_target *group = calloc(n ? n : 1, sizeof(*group));
	bool *taken = calloc(n ? n : 1, sizeof(*taken));
	struct interval_jobs ij;
	size_t i, k, g;

	for (i = 0; group && taken && i < n; i++) {
		if (taken[i])
			continue;
		for (k = i, g = 0; k < n; k++)
			/*
			 * one service per user and labels: another user's process of that
			 * name is apart, and so is one in another pod, container or
			 * environment (the profile's labels are every process's in it)
			 */
			if (!taken[k] &&
			    !strcmp(a->procs[idx[k]].service, a->procs[idx[i]].service) &&
			    a->procs[idx[k]].uid == a->procs[idx[i]].uid &&
			    same_labels(&a->procs[idx[k]], &a->procs[idx[i]])) {
				group[g++] = snaps[k];
				taken[k] = true;
			}
		encode_job(a, group, g, &a->procs[idx[i]], until_mono, until_real, &ij);
		agent__submit(a, &ij);
	}
	if (!group || !taken)
		pr_warn("out of memory while merging an interval's profiles: they are lost\n");
	free(group);
	free(taken);
}

/* Warns of drops and errors new since the last interval (the metrics count them all). */
static void agent__report(struct agent *a, uint64_t *last_drops)
{
	struct agent_sink_stats st;
	size_t i;

	for (i = 0; i < a->nsinks; i++) {
		agent_sink__stats(a->sinks[i], &st);
		if (st.dropped > last_drops[i])
			pr_warn("%s: %llu profiles dropped so far (queue full or refused)\n",
				agent_sink__name(a->sinks[i]), (unsigned long long)st.dropped);
		last_drops[i] = st.dropped;
		pr_info("%s: %llu sent, %llu dropped, %llu refused, %llu errors, %zu queued\n",
			agent_sink__name(a->sinks[i]), (unsigned long long)st.sent,
			(unsigned long long)st.dropped, (unsigned long long)st.rejected,
			(unsigned long long)st.errors, st.depth);
	}
}

/* A target whose last interval is out, released: nothing of it is needed any more. */
static bool forgettable(const struct agent *a, size_t i)
{
	const struct collector_target *ts = &a->c.targets[i];

	return ts->exited && ts->target_index < a->nprocs && a->procs[ts->target_index].done;
}

/*
 * The records of forgotten processes (about 15 KB each: their target, section
 * and labels) compacted away, so that weeks of process churn leave nothing
 * behind; amortized: once AGENT_COMPACT_MIN have gathered.
 */
static void agent__compact(struct agent *a)
{
	size_t i, n = 0, kept = 0, nprof = a->prof.ntargets, *map, *pmap;
	bool *drop;

	for (i = 0; i < a->c.ntargets; i++)
		n += forgettable(a, i);
	if (n < AGENT_COMPACT_MIN)
		return;
	drop = calloc(a->c.ntargets, sizeof(*drop));
	map = calloc(a->c.ntargets, sizeof(*map));
	pmap = calloc(nprof + 1, sizeof(*pmap));
	for (i = 0; drop && map && pmap && i < a->c.ntargets; i++)
		drop[i] = forgettable(a, i);
	if (drop && map && pmap && collector__compact(&a->c, drop, map, pmap)) {
		tracker__remap(&a->tr, map);
		/* pmap keeps the order: the agent's records move down in place */
		for (i = 0; i < a->nprocs; i++)
			if (pmap[i] != SIZE_MAX)
				a->procs[kept++] = a->procs[i];
		a->nprocs = kept;
		a->compactions++;
		pr_debug("%zu finished processes forgotten, %zu kept\n", n, a->c.ntargets);
	}
	free(drop);
	free(map);
	free(pmap);
}

/* The run time of all the agent's BPF programs so far (0 with the kernel's statistics off). */
static uint64_t bpf_run_ns(struct agent *a)
{
	struct bpf_program *prog;
	uint64_t ns = 0;

	bpf_object__for_each_program(prog, session__skel(a->s)->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			ns += info.run_time_ns;
	}
	return ns;
}

/* The agent's CPU so far, every thread's (the sinks' and --metrics' too). */
static uint64_t own_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* --max-overhead: the interval's cost measured, the next one's rate set. */
static void agent__budget_step(struct agent *a)
{
	unsigned was = a->budget.hz;

	agent_budget__step(&a->budget, bpf_run_ns(a), own_cpu_ns(), mono_ns());
	if (!a->o.max_overhead)
		return;
	if (a->budget.hz != was)
		session__set_hz(a->s, a->budget.hz);
	pr_info("the last interval at %u Hz cost %.3f %% of a CPU (budget %g %%): %u Hz next\n",
		was, a->budget.cost_pct, a->o.max_overhead, a->budget.hz);
}

/*
 * Closes the open interval: the ring buffer drained, every section's stacks
 * taken, one profile per process (or service) handed to the sinks. last:
 * the agent stops, every process has had its last interval.
 */
static void agent__cut(struct agent *a, bool last)
{
	struct profile_target *snaps, tmp;
	long long until_mono, until_real;
	size_t i, n = 0, *idx;
	int k;

	for (k = 0; k < 64 && session__poll(a->s, 0) > 0; k++)
		;
	collector__name_threads(&a->c);
	collector__check_alive(&a->c);
	if (agent__see_new(a))
		pr_warn("out of memory for the new processes' labels\n");
	until_mono = mono_ns();
	until_real = real_ns();
	snaps = calloc(a->nprocs + 1, sizeof(*snaps));
	idx = calloc(a->nprocs + 1, sizeof(*idx));
	for (i = 0; i < a->nprocs; i++) {
		struct profile_target *pp = &a->prof.targets[i];
		struct agent_proc *ap = &a->procs[i];

		/* a server that drops root is its user's from then on */
		if (!ap->done)
			agent__look_user(a, i);
		if (ap->done || ap->skip || !user_matches(a, ap) || !snaps || !idx) {
			/* late samples of a finished process, or one --match(-user) left out */
			take_stacks(pp, &tmp);
			take_mem(a, i, &tmp, false);
			free_stacks(&tmp);
			ap->done |= pp->exited;
			continue;
		}
		take_stacks(pp, &snaps[n]);
		take_mem(a, i, &snaps[n], true);
		idx[n++] = i;
		ap->done = pp->exited || last;
	}
	if (a->o.merge)
		submit_merged(a, snaps, idx, n, until_mono, until_real);
	for (i = 0; !a->o.merge && i < n; i++) {
		struct interval_jobs ij;

		encode_job(a, &snaps[i], 1, &a->procs[idx[i]], until_mono, until_real, &ij);
		agent__submit(a, &ij);
	}
	for (i = 0; i < n; i++)
		free_stacks(&snaps[i]);
	free(snaps);
	free(idx);
	if (!last)
		agent__budget_step(a);
	/* the processes whose last interval is out: their caches and files let go */
	for (i = 0; i < a->c.ntargets; i++)
		if (a->c.targets[i].target_index < a->nprocs &&
		    a->procs[a->c.targets[i].target_index].done)
			collector__release(&a->c, i);
	agent__compact(a);
	a->from_mono = until_mono;
	a->from_real = until_real;
	/*
	 * An interval's profiles are megabytes that come and go: glibc keeps
	 * what they leave free in each thread's arena, scattered, and an agent
	 * left on for weeks would hold its largest intervals' worth for good.
	 * Given back once per interval (every arena, a few ms at most).
	 */
	malloc_trim(0);
}

/* Whether a capture takes the samples of section i: not those --match(-user) leaves out. */
static bool capture_keeps(void *ctx, size_t i)
{
	struct agent *a = ctx;

	return i >= a->nprocs || (!a->procs[i].skip && user_matches(a, &a->procs[i]));
}

/*
 * The capture as gzip pprof, each sample with its time, and as a gzip'd
 * Perfetto trace into *tl (NULL when out of memory: the pprof alone); NULL
 * when out of memory.
 */
static struct agent_job *capture_encode(struct agent *a, struct agent_capture *cap, long long now,
					long long real_off, struct agent_job **tl)
{
	struct report_opts ro = { .tool_version = PYBPFPROF_VERSION };
	struct agent_job *j = calloc(1, sizeof(*j));
	struct profile v = a->prof;
	struct view_tables vt;
	char comment[320];
	FILE *f = NULL;

	if (!j || view_tables__build(&vt, &a->prof, cap->targets, cap->n))
		goto fail;
	v.funcs = vt.funcs;
	v.nfuncs = vt.nfuncs;
	v.frames = vt.frames;
	v.nframes = vt.nframes;
	v.targets = cap->targets;
	v.ntargets = v.cap_targets = cap->n;
	v.frequency_hz = a->o.recorder_rate;
	v.start_ns = now - a->o.recorder_s * 1000000000LL;
	v.start_unix_ns = v.start_ns + real_off;
	v.duration_s = a->o.recorder_s;
	memset(&v.counts, 0, sizeof(v.counts));
	v.counts.events = cap->samples;
	snprintf(comment, sizeof(comment),
		 "flight recorder: the last %u s at %u Hz, %llu samples (the oldest %.2f s before "
		 "the trigger); since the start %llu evicted by --recorder-max-mb, %llu refused "
		 "(larger than it)",
		 a->o.recorder_s, a->o.recorder_rate, (unsigned long long)cap->samples,
		 cap->first_ns ? (now - cap->first_ns) / 1e9 : 0.0,
		 (unsigned long long)a->ring.evicted, (unsigned long long)a->ring.refused);
	ro.stack_num_label = "timestamp_ns";
	ro.stack_nums = (const uint64_t *const *)cap->times;
	ro.comment = comment;
	f = open_memstream((char **)&j->body, &j->len);
	if (!f || report_pprof.write(f, &v, &ro) | fclose(f))
		goto fail;
	*tl = calloc(1, sizeof(**tl));
	if (*tl && agent_capture__timeline(&v, cap, &(*tl)->body, &(*tl)->len)) {
		free(*tl);
		*tl = NULL;
	}
	view_tables__free(&vt);
	return j;
fail:
	if (j)
		view_tables__free(&vt);
	if (j)
		free(j->body);
	free(j);
	return NULL;
}

/*
 * A trigger the gate took: the ring's last --recorder seconds written as one
 * file in --output-dir by its sink's thread (the encoding here, between
 * polls, as an interval's).
 */
static void agent__capture(struct agent *a)
{
	long long now = mono_ns(), real_off = real_ns() - now;
	struct agent_capture cap;
	struct agent_job *j, *tl = NULL;
	uint64_t samples;
	int k;

	/* what the kernel has taken so far is in the ring first */
	for (k = 0; k < 64 && session__poll(a->s, 0) > 0; k++)
		;
	if (agent_capture__build(&cap, &a->ring, &a->prof, now - a->o.recorder_s * 1000000000LL,
				 real_off, capture_keeps, a)) {
		a->capture_failed++;
		pr_warn("out of memory while making a flight recorder capture: none written\n");
		return;
	}
	j = capture_encode(a, &cap, now, real_off, &tl);
	samples = cap.samples;
	agent_capture__free(&cap);
	/* its copies of the window's stacks (about twice the ring's bytes) given back */
	malloc_trim(0);
	if (!j) {
		a->capture_failed++;
		pr_warn("out of memory while encoding a flight recorder capture: none written\n");
		return;
	}
	snprintf(j->service, sizeof(j->service), "recorder");
	j->pid = (int)++a->captures;
	j->capture = true;
	j->from_ns = now - a->o.recorder_s * 1000000000LL + real_off;
	j->until_ns = now + real_off;
	j->hz = a->o.recorder_rate;
	j->refs = 1;
	/* the --output-dir sink only (the first): a capture is no interval to push */
	pr_info("capture %llu: %llu samples, %zu bytes (timeline %zu), made in %.1f ms; handed to "
		"--output-dir\n",
		(unsigned long long)a->captures, (unsigned long long)samples, j->len,
		tl ? tl->len : 0, (mono_ns() - now) / 1e6);
	if (tl) { /* the same window and number: a second file beside the first */
		uint8_t *body = tl->body;
		size_t len = tl->len;

		*tl = *j;
		tl->body = body;
		tl->len = len;
		tl->timeline = true;
	} else {
		pr_warn("out of memory while encoding capture %llu's timeline: its pprof alone\n",
			(unsigned long long)a->captures);
	}
	agent_sink__submit(a->sinks[0], j);
	agent_job__put(j);
	if (tl) {
		agent_sink__submit(a->sinks[0], tl);
		agent_job__put(tl);
	}
}

/*
 * --trigger-cpu, at each quarter second: each process's CPU over the last
 * --trigger-for seconds (whole quarters), from its samples at --recorder-rate;
 * one that crosses PCT % triggers a capture (staying above does not again).
 */
static void agent__cpu_trigger(struct agent *a, long long now)
{
	long long b = (now - a->prof.start_ns) / AGENT_CPU_BUCKET_NS;
	unsigned k = a->o.trigger_for_s * (1000000000LL / AGENT_CPU_BUCKET_NS);
	double per_sample = 100.0 / ((double)a->o.recorder_rate * a->o.trigger_for_s);
	size_t i;

	if (b <= a->cpu_checked)
		return;
	a->cpu_checked = b;
	for (i = 0; i < a->nprocs; i++) {
		struct agent_proc *ap = &a->procs[i];
		bool above;

		if (ap->done || ap->skip || !user_matches(a, ap))
			continue;
		above = agent_cpu_window__sum(&ap->cpu, b, k) * per_sample >= a->o.trigger_cpu;
		if (above && !ap->cpu.above) {
			if (agent_gate__try(&a->gate, now, AGENT_TRIGGER_CPU)) {
				pr_info("pid %d above %.0f %% of a CPU for %u s: a capture\n",
					a->prof.targets[i].pid, a->o.trigger_cpu,
					a->o.trigger_for_s);
				agent__capture(a);
			}
		}
		ap->cpu.above = above;
	}
}

/* --recorder: a SIGUSR1 since the last tick, or a /capture the --metrics thread took. */
static void agent__triggers(struct agent *a, long long now)
{
	if (agent_capture_asked) {
		agent_capture_asked = 0;
		if (agent_gate__try(&a->gate, now, AGENT_TRIGGER_SIGNAL))
			agent__capture(a);
		else
			pr_info("SIGUSR1 refused: a capture was made within --recorder-cooldown "
				"(%u s)\n",
				a->o.recorder_cooldown_s);
	}
	if (agent_gate__take_http(&a->gate))
		agent__capture(a);
	if (a->o.trigger_cpu)
		agent__cpu_trigger(a, now);
}

/* Each BPF program's run time and count (with the kernel's statistics on). */
static void prog_stats(struct agent *a, struct agent_metrics_snapshot *m)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, session__skel(a->s)->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || m->nprogs == AGENT_METRICS_PROGS ||
		    bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		snprintf(m->progs[m->nprogs].name, sizeof(m->progs->name), "%s",
			 bpf_program__name(prog));
		m->progs[m->nprogs].run_ns = info.run_time_ns;
		m->progs[m->nprogs++].runs = info.run_cnt;
	}
}

static int cmp_mem_proc(const void *x, const void *y)
{
	const struct agent_metrics_mem_proc *a = x, *b = y;

	return a->retained < b->retained ? 1 : a->retained > b->retained ? -1 : a->pid - b->pid;
}

/* --mem: the range tables' counts, and the processes holding most (as of the last cut). */
static void mem_stats(struct agent *a, struct agent_metrics_snapshot *m)
{
	struct agent_metrics_mem_proc all[AGENT_METRICS_MEM_PROCS * 2];
	size_t i, n = 0;

	if (!(m->mem = a->o.mem))
		return;
	m->mem_intervals = a->mem_intervals;
	m->mem_released_unknown = a->mem_released_unknown;
	m->mem_untracked = a->mem_untracked;
	m->mem_unmatched = a->mem_unmatched;
	m->mem_records_lost = session__skel(a->s)->bss->ranges_lost;
	for (i = 0; i < a->nprocs; i++) {
		const struct agent_proc *ap = &a->procs[i];

		m->mem_ranges += a->prof.targets[i].mem.ranges.n;
		if (ap->done || ap->skip)
			continue;
		/* the top half kept as it goes: bounded, whatever the number of processes */
		if (n == sizeof(all) / sizeof(all[0])) {
			qsort(all, n, sizeof(*all), cmp_mem_proc);
			n = AGENT_METRICS_MEM_PROCS;
		}
		all[n].pid = a->prof.targets[i].pid;
		snprintf(all[n].service, sizeof(all[n].service), "%s", ap->service);
		all[n].touched = ap->mem_touched;
		all[n++].retained = ap->mem_retained;
	}
	qsort(all, n, sizeof(*all), cmp_mem_proc);
	m->nmem_procs = n < AGENT_METRICS_MEM_PROCS ? n : AGENT_METRICS_MEM_PROCS;
	memcpy(m->mem_procs, all, m->nmem_procs * sizeof(*all));
}

/* --metrics: the figures of now, for the server thread. */
static void agent__publish(struct agent *a)
{
	struct agent_metrics_snapshot m = {};
	uint64_t k[PYPROF_CNT_SLOTS] = {};
	char statm[128];
	struct rusage ru;
	size_t i;

	session__counters(a->s, k);
	m.samples = a->samples;
	m.events = k[PYPROF_CNT_EVENTS];
	m.intervals = a->intervals;
	m.intervals_empty = a->empty;
	m.mem_intervals_empty = a->mem_empty;
	m.processes_seen = a->seen;
	m.records = a->c.ntargets;
	m.dropped[0] = k[PYPROF_CNT_DROPPED];
	m.dropped[1] = a->c.unknown_pid;
	m.dropped[2] = a->c.malformed;
	m.partial[0] = k[PYPROF_CNT_TRUNCATED];
	m.partial[1] = k[PYPROF_CNT_UNREADABLE];
	m.partial[2] = k[PYPROF_CNT_READ_ERROR];
	m.partial[3] = k[PYPROF_CNT_NO_TSTATE] + k[PYPROF_CNT_NO_FRAME];
	for (i = 0; i < a->c.ntargets; i++)
		m.processes += !a->c.targets[i].exited;
	if (!getrusage(RUSAGE_SELF, &ru))
		m.cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	proc_read_small_file("/proc/self/statm", statm, sizeof(statm), false);
	m.rss = strtod(strchr(statm, ' ') ? strchr(statm, ' ') : "0", NULL) * sysconf(_SC_PAGESIZE);
	m.cache_bytes = a->c.budget.used;
	prog_stats(a, &m);
	m.rate_hz = agent_sampling_hz_now(a);
	m.max_hz = agent_sampling_hz(&a->o);
	m.budget_pct = a->o.max_overhead;
	m.cost_pct = a->budget.cost_pct;
	m.budget_state = agent_budget_state_name(a->budget.state);
	m.rate_lowered = a->budget.lowered;
	m.rate_raised = a->budget.raised;
	mem_stats(a, &m);
	if ((m.recorder = a->o.recorder_s)) {
		m.captures = a->captures;
		m.capture_failed = a->capture_failed;
		pthread_mutex_lock(&a->gate.lock);
		memcpy(m.capture_refused, a->gate.refused, sizeof(m.capture_refused));
		m.not_loopback = a->gate.not_loopback;
		pthread_mutex_unlock(&a->gate.lock);
		m.ring_bytes = a->ring.used;
		m.ring_cap = a->ring.cap;
		m.ring_samples = a->ring.n;
		m.ring_evicted = a->ring.evicted;
		m.ring_refused = a->ring.refused;
	}
	agent_metrics__publish(a->metrics, &m);
}

/* Samples until a stop signal, closing an interval at every boundary. */
static void agent__loop(struct agent *a)
{
	long long start = a->from_mono, iv = a->o.interval_s * 1000000000LL;
	long long next = start + iv, last_check = start;
	uint64_t last_drops[AGENT_MAX_SINKS] = { 0 };

	while (!agent_stop) {
		long long t = mono_ns();
		int timeout = tracker__timeout_ms(&a->tr, AGENT_POLL_MS, t);

		if (a->o.mem)
			timeout = mem__timeout_ms(&a->mem, timeout, t);
		session__poll(a->s, mono_ms_until(next, t, timeout));
		collector__name_threads(&a->c);
		t = mono_ns();
		tracker__tick(&a->tr, t);
		if (a->o.mem) {
			/* the period redrawn; no resident-size timeline (no profile draws
			 * one): its statm reads would cost 20 a second per process */
			a->mem.last_rss_ns = t;
			mem__tick(&a->mem, &a->c, t);
		}
		if (t - last_check >= AGENT_ALIVE_CHECK_NS) {
			last_check = t;
			collector__check_alive(&a->c);
			agent__see_new(a);
			if (a->metrics)
				agent__publish(a);
		}
		if (a->o.recorder_s)
			agent__triggers(a, t);
		if (t >= next) {
			agent__cut(a, false);
			agent__report(a, last_drops);
			next = agent_next_boundary(start, iv, mono_ns());
		}
	}
	pr_info("stop signal: closing the last interval\n");
	mem__detach(&a->mem);
	session__detach(a->s);
	agent__cut(a, true);
}

static void agent__free(struct agent *a)
{
	long long deadline = mono_ns() + AGENT_FLUSH_NS;
	size_t i;

	agent_metrics__stop(a->metrics);
	if (a->stats_fd >= 0)
		close(a->stats_fd);
	/* the sinks get a few seconds, all together, for what is queued */
	for (i = 0; i < a->nsinks; i++)
		agent_sink__stop(a->sinks[i], deadline);
	pr_info("%llu profiles closed, %llu samples; %llu empty ones not made\n",
		(unsigned long long)a->intervals, (unsigned long long)a->samples,
		(unsigned long long)a->empty);
	session__close(a->s);
	tracker__free(&a->tr);
	collector__free(&a->c);
	profile__free(&a->prof);
	agent_ring__free(&a->ring);
	free(a->procs);
	if (a->o.match)
		regfree(&a->re);
}

int cmd_agent(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = agent_on_signal };
	struct agent *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return 1;
	a->stats_fd = -1;
	a->o = (struct agent_opts){ .hz = 99,
				    .max_depth = 127,
				    .interval_s = 60,
				    .queue = 512,
				    .queue_mb = 32,
				    .max_cache_mb = PYPROF_DEFAULT_MAX_CACHE_MB };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	err = agent__parse(a, argc, argv);
	if (err) {
		free(a);
		return err;
	}
	/* --recorder's trigger; without it SIGUSR1 keeps its default action */
	sa.sa_handler = agent_on_usr1;
	if (a->o.recorder_s)
		sigaction(SIGUSR1, &sa, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	err = agent__prepare(a);
	if (!err)
		err = agent__attach(a);
	/* the first interval starts with the sampling, not before the attach (which a loaded
	 * machine can stretch over most of an interval) */
	a->from_mono = mono_ns();
	a->from_real = real_ns();
	/*
	 * --metrics, --max-overhead: the kernel times each BPF program while this
	 * fd is open (host-wide, counted by the kernel: closing it, or the agent
	 * ending, turns the timing off unless someone else holds it on)
	 */
	a->stats_fd = !err && (a->metrics || a->o.max_overhead) ?
			      bpf_enable_stats(BPF_STATS_RUN_TIME) :
			      -1;
	if (!err && a->o.max_overhead && a->stats_fd < 0)
		pr_warn("the kernel does not time BPF programs (BPF_ENABLE_STATS: %s): "
			"--max-overhead counts the agent's own CPU only\n",
			strerror(errno));
	if (!err)
		agent_budget__init(&a->budget, a->o.max_overhead, agent_sampling_hz(&a->o),
				   bpf_run_ns(a), own_cpu_ns(), mono_ns());
	if (err)
		pr_err("%s\n", a->why[0] ? a->why : strerror(-err));
	else
		agent__loop(a);
	agent__free(a);
	curl_global_cleanup();
	free(a);
	return err ? 1 : 0;
}
