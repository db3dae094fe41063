// SPDX-License-Identifier: GPL-2.0-only
/*
 * Orchestration only, in phases over one struct run: parse the command line
 * (run__parse); check everything that can fail before profiling starts:
 * output files, targets, privileges, kernel (run__prepare); open the session
 * and attach (run__start); sample until the duration ends, Ctrl-C/SIGTERM, or
 * every target exits (run__loop); then write the reports from everything
 * collected (run__record), close what was opened and exit (run__exit_code).
 */
#define _GNU_SOURCE
#include <argp.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "session/collector.h"
#include "cli/config.h"
#include "util/deadline.h"
#include "launch.h"
#include "session/session.h"
#include "util/log.h"
#include "session/mem.h"
#include "session/modes.h"
#include "util/mono.h"
#include "util/outfile.h"
#include "proc/procfs.h"
#include "pybpfprof.skel.h"
#include "report/report.h"
#include "top.h"
#include "commands.h"
#include "agent/cmd_agent.h"
#include "dump/cmd_dump.h"
#include "session/tracker.h"
#include "session/usdt.h"
#include "session/wall.h"

#define POLL_MS 50
/* A launched command's time to exit after a stop signal is passed on. */
#define STOP_GRACE_NS 5000000000LL
#define ALIVE_CHECK_NS 200000000LL
#define BTF_PATH "/sys/kernel/btf/vmlinux"

static volatile sig_atomic_t stop_requested;

/* A launched command decides when the run ends after a stop signal (stop_launched). */
static volatile sig_atomic_t launched;

/*
 * The first stop signal ends the run and has the report written, within a
 * second (deadline.h). A second one means now: nothing else is waited for,
 * not even the report; it is passed to a launched command, the terminal is
 * given back as top or the command's relay found it, and the exit status
 * says which signal it was (130, 143, 129).
 */
static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	static const char msg[] = "\npybpfprof: second stop signal: exiting at once, without a "
				  "report\n";

	(void)info;
	(void)uctx;
	if (stop_requested) {
		top__restore_terminal();
		launch_tty__restore_final();
		if (launched)
			launch__signal_now(sig);
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(128 + sig);
		_exit(128 + sig);
	}
	stop_requested = sig;
	if (!launched)
		deadline__stop();
}

/* Samples are converted as they come; past the run's end the callback yields to the loop. */
static int on_ringbuf(void *ctx, void *data, size_t size)
{
	collector__sample(ctx, data, size);
	return deadline__yield() ? -EINTR : 0;
}

/* Output files, opened before profiling: the -o files, then the memory files. */
#define OUT_TIMELINE CONFIG_MAX_OUTPUTS
#define OUT_FOLDED (CONFIG_MAX_OUTPUTS + 1)
#define OUT_RETAINED_FOLDED (CONFIG_MAX_OUTPUTS + 2)
#define OUT_MEM_PPROF (CONFIG_MAX_OUTPUTS + 3)
#define NOUTFILES (CONFIG_MAX_OUTPUTS + 4)

/* Everything one run holds, from the command line to the exit code. */
struct run {
	struct pyprof_config cfg;
	struct profile prof;
	struct collector c;
	struct session *s;
	struct tracker tr;
	struct launch launch;
	struct launch_user user;
	struct usdt u;
	struct mem mem;
	struct wall w;
	struct outfile outs[NOUTFILES];
	bool detached;	  /* the sampling is over (run__stop) */
	bool stop_passed; /* a stop signal went to the launched command */
	bool no_python;	  /* a launched run saw no CPython process: no report */
	char why[512];	  /* why the last phase failed */
};

/* Checks an output file and holds its directory until the end; "-" is stdout. */
static int output_open(struct outfile *of, const char *path, char *why, size_t whylen)
{
	char reason[400];
	int err;

	if (!strcmp(path, "-"))
		return 0;
	err = outfile__open(of, path, reason, sizeof(reason));
	if (err)
		snprintf(why, whylen, "cannot write the output file %s: %s", path, reason);
	return err;
}

/* Every check that needs no BPF: a bad pid or a bad path fails before anything loads. */
static int preflight(const struct pyprof_config *cfg, struct collector *c, struct outfile *outs)
{
	char why[512];
	size_t i;
	int err;

	err = 0;
	for (i = 0; i < cfg->noutputs && !err; i++)
		err = output_open(&outs[i], cfg->outputs[i], why, sizeof(why));
	if (!err && cfg->mem_timeline)
		err = output_open(&outs[OUT_TIMELINE], cfg->mem_timeline, why, sizeof(why));
	if (!err && cfg->mem_folded)
		err = output_open(&outs[OUT_FOLDED], cfg->mem_folded, why, sizeof(why));
	if (!err && cfg->mem_retained_folded)
		err = output_open(&outs[OUT_RETAINED_FOLDED], cfg->mem_retained_folded, why,
				  sizeof(why));
	if (!err && cfg->mem_pprof)
		err = output_open(&outs[OUT_MEM_PPROF], cfg->mem_pprof, why, sizeof(why));
	if (!err)
		for (i = 0; i < cfg->npids && !err; i++) {
			int fd = proc_pidfd_open(cfg->pids[i]);

			if (fd == -ESRCH) {
				snprintf(why, sizeof(why), "no such process: pid %d", cfg->pids[i]);
				err = -ESRCH;
			} else if (fd >= 0) {
				close(fd);
			}
		}
	if (!err)
		err = check_privileges(why, sizeof(why));
	if (!err)
		err = check_kernel(BTF_PATH, why, sizeof(why));
	for (i = 0; i < cfg->npids && !err; i++) {
		struct target t;

		if (collector__find(c, cfg->pids[i]))
			continue; /* the same pid given twice */
		err = target__open(cfg->pids[i], &t, why, sizeof(why));
		if (err == -ENOEXEC && cfg->subprocesses) {
			/* a shell, unshare, a server in C: only the way to its Python descendants */
			pr_info("pid %d is not CPython: its descendants are followed\n",
				cfg->pids[i]);
			err = 0;
			continue;
		}
		if (err == -ENOEXEC)
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 " (--subprocesses profiles its Python descendants)");
		if (!err && cfg->usdt_modes) {
			struct usdt_probes pr;

			err = usdt_probes__read(t.python_elf_host, &pr);
			if (err)
				snprintf(why, sizeof(why),
					 "cannot read the USDT notes of pid %d's "
					 "interpreter: %s",
					 t.pid, strerror(-err));
			else
				err = usdt__check(&t, &pr, cfg->usdt_modes, cfg->py311_line, why,
						  sizeof(why));
		}
		if (!err)
			err = collector__add_target(c, &t);
		if (!err)
			pr_info("pid %d: Python %s, _PyRuntime at 0x%llx in %s\n", t.pid,
				t.version_str, (unsigned long long)t.runtime_addr, t.python_elf);
	}
	if (err)
		pr_err("%s\n", why[0] ? why : strerror(-err));
	return err;
}

/*
 * Whether every target is gone (and marks the exited ones): -a never runs
 * out of targets, a launched command ends the run by its own exit, -p when
 * every target and every child still on its way to a section is gone.
 */
static bool targets_gone(const struct pyprof_config *cfg, struct collector *c, struct tracker *tr,
			 struct launch *l, struct session *s)
{
	size_t alive = collector__check_alive(c);

	/*
	 * Every run tracks processes: the kernel drops an exited target's pid
	 * itself, so a process that gets the pid next is never sampled as it.
	 */
	if (l->pid || cfg->all)
		return false;
	/* --subprocesses: a followed process (a shell, a server) may still start Python */
	return !alive && !tracker__starting(tr) &&
	       !(cfg->subprocesses && session__followed_alive(s));
}

/*
 * A stop signal in launch mode: the command decides when the run ends. It
 * is in a session of its own, so no signal of our terminal reaches it (a
 * Ctrl-C typed while its keys are relayed reaches it through its own
 * terminal, and never us): the signal is passed on, once, whether it came
 * during the run or after -d. It gets a few seconds, then the run ends
 * anyway (launch__finish ends what is left of it).
 */
static void stop_launched(struct run *r)
{
	long long give_up = mono_ns() + STOP_GRACE_NS;

	if (r->stop_passed || !r->launch.pid)
		return;
	r->stop_passed = true;
	launch__signal(&r->launch, stop_requested);
	while (!launch__reap(&r->launch, false) && mono_ns() < give_up) {
		if (r->s && !r->detached)
			session__poll(r->s, POLL_MS);
		else
			launch__wait(&r->launch, POLL_MS);
	}
	if (!launch__reap(&r->launch, false))
		pr_warn("the command (pid %d) has not exited %lld s after the signal\n",
			r->launch.pid, STOP_GRACE_NS / 1000000000LL);
}

/* Samples lost so far, as the report will count them. */
static uint64_t live_dropped(struct session *s, struct collector *c)
{
	uint64_t k[PYPROF_CNT_SLOTS];

	session__counters(s, k);
	return k[PYPROF_CNT_DROPPED] + c->unknown_pid + c->malformed;
}

/* Every report goes to a file (none to stdout): room for a status line. */
static bool records_to_files(const struct pyprof_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->noutputs; i++)
		if (!strcmp(cfg->outputs[i], "-"))
			return false;
	return cfg->noutputs > 0;
}

/*
 * While recording to a file on a terminal: one status line on stderr,
 * rewritten in place every second.
 */
static void show_status(struct session *s, struct collector *c, long long start, long long now)
{
	uint64_t samples = 0;
	size_t i, alive = 0;

	for (i = 0; i < c->prof->ntargets; i++) {
		samples += c->prof->targets[i].samples;
		alive += !c->prof->targets[i].exited;
	}
	fprintf(stderr,
		"\rpybpfprof: %.0f s, %llu samples, %zu process%s (%zu running), %llu "
		"dropped\033[K",
		(now - start) / 1e9, (unsigned long long)samples, c->prof->ntargets,
		c->prof->ntargets == 1 ? "" : "es", alive, (unsigned long long)live_dropped(s, c));
}

/*
 * A launched command stopped at an exec (PY_FOLLOW_HOLD) whose notice the
 * drain did not reach before its time ran out: continued, as the notice
 * would have had it. The hold ended with the tracking links, so none comes
 * after this. Our unreaped child: its pid is its own.
 */
static void unhold_launched(struct run *r)
{
	struct proc_stat st;
	char buf[512];

	if (!r->launch.pid || !r->cfg.usdt_modes || launch__reap(&r->launch, false))
		return;
	proc_stat_read(r->launch.pid, buf, sizeof(buf));
	if (!proc_stat_parse(buf, &st) && st.state == 'T')
		launch__signal(&r->launch, SIGCONT);
}

/*
 * The end of the sampling: a launched command's last seconds after a stop
 * signal, the probes detached, then what is left in the ring buffer.
 */
static void run__stop(struct run *r, long long start)
{
	/* the moment retained memory is measured at (--mem): the end of the run asked for */
	r->prof.end_ns = mono_ns();
	if (stop_requested)
		stop_launched(r);
	session__detach(r->s);
	r->detached = true;
	wall__detach(&r->w);
	usdt__detach(&r->u);
	if (r->cfg.mem)
		mem__detach(&r->mem);
	/*
	 * Samples already in the ring buffer still count, those converted within
	 * DEADLINE_DRAIN_NS of the end; the rest are counted as dropped.
	 */
	deadline__draining();
	while (session__poll(r->s, 0) > 0)
		;
	collector__flush_pending(&r->c);
	collector__name_threads(&r->c);
	collector__rename_threads(&r->c);
	unhold_launched(r);
	collector__check_alive(&r->c);
	r->prof.duration_s = (mono_ns() - start) / 1e9;
}

/* Samples until the duration ends, a signal arrives or every target is gone. */
static void run__loop(struct run *r, struct top_view *top)
{
	const struct pyprof_config *cfg = &r->cfg;
	struct mem *mem = cfg->mem ? &r->mem : NULL;
	struct collector *c = &r->c;
	long long start = mono_ns(), last_check = start, last_status = start;
	long long end = cfg->duration_s > 0 ? start + (long long)(cfg->duration_s * 1e9) : 0;
	bool status = !top && records_to_files(cfg) && isatty(STDERR_FILENO);

	deadline__set(end);
	while (!stop_requested) {
		long long t = mono_ns();
		int timeout = tracker__timeout_ms(&r->tr, POLL_MS, t);

		if (mem)
			timeout = mem__timeout_ms(mem, timeout, t);
		session__poll(r->s, timeout);
		collector__name_threads(c);
		t = mono_ns();
		tracker__tick(&r->tr, t);
		wall__tick(&r->w, r->s, c, t);
		if (mem)
			mem__tick(mem, c, t);
		if (top && top__tick(top, c->prof, live_dropped(r->s, c), t))
			break;
		if (status && t - last_status >= 1000000000LL) {
			last_status = t;
			show_status(r->s, c, start, t);
		}
		if (end && t >= end)
			break;
		/* the command's exit ends the run at once: waitpid costs nothing */
		if (r->launch.pid && launch__reap(&r->launch, false)) {
			pr_info("the command has exited\n");
			break;
		}
		if (t - last_check >= ALIVE_CHECK_NS) {
			last_check = t;
			if (targets_gone(cfg, c, &r->tr, &r->launch, r->s)) {
				pr_info("every target has exited\n");
				break;
			}
		}
	}
	if (status && last_status != start)
		log_tty("\n");
	run__stop(r, start);
}

/*
 * Each section holds its process's root directory open (sources are read
 * at the end, after it exited), so a long -a run over many short-lived
 * processes needs more descriptors than the usual soft limit of 1024.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A run that follows new processes: USDT probes go by interpreter file (usdt__follow). */
static bool follows(const struct pyprof_config *cfg)
{
	return cfg->all || cfg->command || cfg->subprocesses;
}

/* The USDT part of a new section's report: how it was traced, and why not from its start. */
static void usdt_section_trace(struct run *r, struct profile_target *pp,
			       enum profile_usdt_trace how, const char *note)
{
	r->prof.usdt.procs_late += how == PROFILE_USDT_LATE;
	r->prof.usdt.procs_untraced += how == PROFILE_USDT_NOT_TRACED;
	if (profile_target__usdt_trace(pp, how, note))
		pr_warn("out of memory: pid %d's USDT note is lost\n", pp->pid);
}

/*
 * tracker.on_section of a following run: a new process gets its interpreter
 * file's probes (attached on its first process), or is named with the
 * reason it has none and only sampled. A forked child shares its parent's
 * file and its fate. One found running, or whose probes came after its
 * interpreter existed, may have made calls before: said, not hidden.
 */
static void usdt_section(void *ctx, struct collector_target *ts,
			 const struct collector_target *parent, enum tracker_origin origin)
{
	struct run *r = ctx;
	struct profile_target *pp = &r->prof.targets[ts->target_index];
	const struct profile_target *from;
	char why[600];
	bool now;

	if (parent) {
		from = &r->prof.targets[parent->target_index];
		usdt_section_trace(r, pp, from->usdt_trace, from->usdt_note);
		return;
	}
	if (usdt__follow(&r->u, r->s, &ts->t, r->cfg.usdt_modes, r->cfg.py311_line, &now, why,
			 sizeof(why))) {
		pr_warn("%s\n", why);
		usdt_section_trace(r, pp, PROFILE_USDT_NOT_TRACED, why);
		return;
	}
	if (origin == TRACKER_RUNNING)
		snprintf(why, sizeof(why),
			 "pid %d was found running: its calls before its probes were attached "
			 "are not counted",
			 ts->t.pid);
	/* probes put on just now: still no interpreter then means no Python call was missed */
	else if (origin == TRACKER_EXEC_RUNNING ||
		 (now && origin == TRACKER_BEFORE_INIT && target__check(&ts->t) != -EAGAIN))
		snprintf(why, sizeof(why),
			 "pid %d's probes counted only once its interpreter was running: calls "
			 "it made before are not counted",
			 ts->t.pid);
	else
		return;
	pr_info("%s\n", why);
	usdt_section_trace(r, pp, PROFILE_USDT_LATE, why);
}

/*
 * Process tracking, for every run: the kernel notices feed the tracker;
 * profiled pids report their execs and exits, followed ones (-a, a launched
 * command, --subprocesses) their children's too.
 */
static int start_tracking(const struct pyprof_config *cfg, struct session *s, struct collector *c,
			  struct tracker *tr, const struct launch *l, void *usdt_ctx, char *why,
			  size_t whylen)
{
	unsigned flags = PY_FOLLOW_SELF | (cfg->subprocesses ? PY_FOLLOW_CHILDREN : 0);
	size_t i;
	int err;

	raise_fd_limit();
	tracker__init(tr, c, s, cfg->all);
	if (cfg->usdt_modes && follows(cfg)) {
		tr->on_section = usdt_section;
		tr->on_section_ctx = usdt_ctx;
	}
	err = session__track(s, cfg->all, tracker__on_event, tr, why, whylen);
	/* the command's own execs are held until its probes are on (PY_FOLLOW_HOLD) */
	if (!err && l->pid)
		err = session__follow(s, l->pid, flags | (cfg->usdt_modes ? PY_FOLLOW_HOLD : 0));
	/* every -p process, CPython or not: the way to its descendants */
	for (i = 0; !err && cfg->subprocesses && i < cfg->npids; i++)
		err = session__follow(s, cfg->pids[i], flags);
	/* followed first, then the scan: a child forked in between is caught either way */
	if (!err && cfg->subprocesses && cfg->npids)
		tracker__adopt(tr, cfg->pids, cfg->npids, flags);
	if (err && !why[0])
		snprintf(why, whylen, "cannot follow the targets' children: %s", strerror(-err));
	return err;
}

/*
 * Writes one output (of as output_open left it: stdout unless opened); a
 * failure is said and kept in *err, and the others are still written.
 */
static void write_output(const struct report_writer *w, struct outfile *of, const char *what,
			 const struct profile *p, const struct report_opts *o, int *err)
{
	bool file = of && of->dir_fd >= 0;
	char why[400];
	int werr = report_write(w, file ? of : NULL, p, o, why, sizeof(why));

	if (!werr)
		return;
	pr_err("cannot write %s to %s: %s\n", what, file ? of->path : "stdout", why);
	if (!*err)
		*err = werr;
}

/* One family's bank of stack counters (PYPROF_CNT_INDEX), as the report counts them. */
static void bank_counts(struct profile_counts *out, const uint64_t *bank)
{
	out->events = bank[PYPROF_CNT_EVENTS];
	out->dropped = bank[PYPROF_CNT_DROPPED];
	out->no_python = bank[PYPROF_CNT_NO_TSTATE] + bank[PYPROF_CNT_NO_FRAME];
	out->read_errors = bank[PYPROF_CNT_READ_ERROR];
	out->unreadable = bank[PYPROF_CNT_UNREADABLE];
	out->truncated = bank[PYPROF_CNT_TRUNCATED];
}

static void record_counters(struct session *s, struct collector *c)
{
	struct profile_counts off;
	uint64_t k[PYPROF_CNT_SLOTS];
	size_t i;

	session__counters(s, k);
	/* The first bank is CPU samples only: memory and USDT records have their own. */
	bank_counts(&c->prof->counts, k);
	c->prof->counts.dropped_ring = c->prof->counts.dropped;
	c->prof->counts.dropped_unknown = c->unknown_pid;
	c->prof->counts.dropped_malformed = c->malformed;
	c->prof->counts.dropped_late = c->late;
	c->prof->counts.dropped += c->unknown_pid + c->malformed + c->late;
	if (c->late)
		pr_warn("%llu samples came faster than they could be named before the end of "
			"the run: they are counted as dropped\n",
			(unsigned long long)c->late);
	c->prof->cache.budget_bytes = c->budget.limit;
	c->prof->cache.peak_bytes = c->budget.peak;
	c->prof->cache.evicted = c->budget.evicted;
	c->prof->cache.refused = c->budget.refused;
	for (i = 0; i < c->ntargets; i++)
		c->prof->cache.reads += c->targets[i].codes->reads;
	pr_info("code cache: %llu code objects read, %llu evicted, %llu line tables refused, "
		"%llu decoded already, peak %zu of %zu bytes, %llu frame memos emptied\n",
		(unsigned long long)c->prof->cache.reads, (unsigned long long)c->budget.evicted,
		(unsigned long long)c->budget.refused, (unsigned long long)c->budget.memo_hits,
		c->budget.peak, c->budget.limit, (unsigned long long)c->budget.memo_resets);
	bank_counts(&c->prof->mem_counts, k + PYPROF_CNT_INDEX(PY_KIND_PAGE_FAULT, 0));
	c->prof->usdt.calls_unmatched = k[PYPROF_CNT_CALLS_UNMATCHED];
	c->prof->usdt.calls_too_deep = k[PYPROF_CNT_CALLS_TOO_DEEP];
	c->prof->usdt.calls_no_code = k[PYPROF_CNT_CALLS_NO_CODE];
	c->prof->usdt.calls_mismatch = k[PYPROF_CNT_CALLS_MISMATCH];
	c->prof->usdt.calls_map_full = k[PYPROF_CNT_CALLS_MAP_FULL];
	c->prof->usdt.events_dropped = k[PYPROF_CNT_EVENTS_DROPPED];
	c->prof->usdt.gc_unmatched = k[PYPROF_CNT_GC_UNMATCHED];
	c->prof->usdt.records_dropped = k[PYPROF_CNT_INDEX(PY_KIND_GC, PYPROF_CNT_DROPPED)];
	c->prof->usdt.probe_misses = usdt__probe_misses(s);
	bank_counts(&off, k + PYPROF_CNT_INDEX(PY_KIND_OFFCPU_BLOCK, 0));
	c->prof->offcpu_dropped = off.dropped;
	c->prof->offcpu_no_python = off.no_python;
	c->prof->offcpu_unreadable = off.unreadable;
	pr_info("kernel counters (CPU): events %llu sent %llu no-tstate %llu no-frame %llu "
		"read-error %llu unreadable %llu truncated %llu dropped %llu scans %llu\n",
		(unsigned long long)k[PYPROF_CNT_EVENTS], (unsigned long long)k[PYPROF_CNT_SENT],
		(unsigned long long)k[PYPROF_CNT_NO_TSTATE],
		(unsigned long long)k[PYPROF_CNT_NO_FRAME],
		(unsigned long long)k[PYPROF_CNT_READ_ERROR],
		(unsigned long long)k[PYPROF_CNT_UNREADABLE],
		(unsigned long long)k[PYPROF_CNT_TRUNCATED],
		(unsigned long long)k[PYPROF_CNT_DROPPED],
		(unsigned long long)k[PYPROF_CNT_TSTATE_SCAN]);
	if (c->prof->wall || c->prof->gil) {
		const uint64_t *b = k + PYPROF_CNT_INDEX(PY_KIND_OFFCPU_BLOCK, 0);

		pr_info("kernel counters (off-CPU blocks): events %llu sent %llu no-tstate %llu "
			"no-frame %llu unreadable %llu dropped %llu\n",
			(unsigned long long)b[PYPROF_CNT_EVENTS],
			(unsigned long long)b[PYPROF_CNT_SENT],
			(unsigned long long)b[PYPROF_CNT_NO_TSTATE],
			(unsigned long long)b[PYPROF_CNT_NO_FRAME],
			(unsigned long long)b[PYPROF_CNT_UNREADABLE],
			(unsigned long long)b[PYPROF_CNT_DROPPED]);
	}
}

/*
 * Signals first, then the command line: a Ctrl-C at any point ends the run
 * with a report, never a kill. Nonzero: the command line was refused (argp
 * said why).
 */
static int run__parse(struct run *r, int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	size_t i;

	for (i = 0; i < NOUTFILES; i++)
		r->outs[i] = (struct outfile){ .dir_fd = -1, .tmp_fd = -1 };

	/* From the start: a Ctrl-C at any point ends the run with a report, never a kill. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed pipe on one output (-o - | head) must not kill the run: write() fails instead. */
	signal(SIGPIPE, SIG_IGN);
	argp_err_exit_status = 2;
	if (cli_parse(argc, argv, &r->cfg, 0))
		return -EINVAL;
	launched = r->cfg.command != NULL;
	/* our terminal hung up: the command's relayed terminal goes with it */
	if (launched)
		sigaction(SIGHUP, &sa, NULL);
	log_set_level(LOG_WARN + r->cfg.verbose);
	log_hook_libbpf();
	return 0;
}

/* --mode wall and --gil: what the sched_switch program follows. */
static enum wall_mode wall_mode(const struct pyprof_config *cfg)
{
	if (cfg->mode && !strcmp(cfg->mode, "wall"))
		return WALL_ON;
	return cfg->gil ? WALL_GIL_ONLY : WALL_OFF;
}

/* --mode exception: only the CPU samples of threads handling an exception are kept. */
static bool exception_mode(const struct pyprof_config *cfg)
{
	return cfg->mode && !strcmp(cfg->mode, "exception");
}

/* The profile's mode, as reports and saved profiles name it. */
static const char *run_mode_name(const struct pyprof_config *cfg)
{
	if (wall_mode(cfg) == WALL_ON)
		return cfg->mem ? "wall+mem" : "wall";
	if (exception_mode(cfg))
		return cfg->mem ? "exception+mem" : "exception";
	return cfg->mem ? "cpu+mem" : "cpu";
}

/*
 * --gil needs a GIL: refused, with the reason, for a free-threaded build or
 * one older than 3.8 among the targets known at the start.
 */
static int check_gil(const struct pyprof_config *cfg, const struct collector *c, char *why,
		     size_t whylen)
{
	size_t i;

	for (i = 0; cfg->gil && i < c->ntargets; i++) {
		const struct target *t = &c->targets[i].t;

		if (t->layout.free_threaded || t->version < 0x03080000) {
			snprintf(why, whylen,
				 "--gil needs CPython 3.8-3.15 with a GIL: pid %d runs %s, %s",
				 t->pid, t->version_str,
				 t->layout.free_threaded ? "which has no GIL to hold or wait for" :
							   "older than 3.8");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Everything before BPF: the profile and the collector, the --user, the
 * checks of preflight(), and the command started (held before its exec).
 */
static int run__prepare(struct run *r)
{
	const struct pyprof_config *cfg = &r->cfg;
	struct profile *prof = &r->prof;
	struct timespec now;
	int err;

	profile__init(prof, run_mode_name(cfg), cfg->frequency_hz);
	prof->wall = wall_mode(cfg) == WALL_ON;
	prof->gil = cfg->gil;
	prof->idle = cfg->idle;
	prof->start_ns = mono_ns();
	clock_gettime(CLOCK_REALTIME, &now);
	prof->start_unix_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
	if (cfg->timeline)
		profile__timeline_on(prof, cfg->timeline_events);
	prof->calls_mode = cfg->usdt_modes & USDT_CALLS;
	prof->gc_mode = cfg->usdt_modes & USDT_GC;
	prof->imports_mode = cfg->usdt_modes & USDT_IMPORTS;
	prof->signatures = cfg->signatures;
	prof->exc_known = cfg->exceptions || exception_mode(cfg);
	prof->exc_only = exception_mode(cfg);
	prof->opcodes = cfg->opcodes;
	prof->mem = cfg->mem != PYPROF_MEM_OFF;
	prof->mem_period = cfg->mem_period;
	prof->mem_alloc = cfg->mem == PYPROF_MEM_ALLOC;
	prof->mem_ages = prof->mem;
	prof->alloc_period = cfg->alloc_period;
	prof->page_size = sysconf(_SC_PAGESIZE);
	err = collector__init(&r->c, prof, (size_t)cfg->max_cache_mb << 20);
	r->c.async = cfg->async_aware;
	r->c.signatures = cfg->signatures;
	if (!err && cfg->user) {
		err = launch_user__resolve(cfg->user, &r->user, r->why, sizeof(r->why));
		if (err)
			pr_err("%s\n", r->why);
	}
	if (!err)
		err = preflight(cfg, &r->c, r->outs);
	if (!err && cfg->command) {
		err = launch__start(&r->launch, cfg->command, &r->user, !cfg->top, r->why,
				    sizeof(r->why));
		if (err)
			pr_err("%s\n", r->why);
	}
	return err;
}

/*
 * The BPF object opened, sized for the modes asked for, and loaded: every
 * call that makes the session, in this one phase.
 */
static int run__open_session(struct run *r)
{
	if (check_gil(&r->cfg, &r->c, r->why, sizeof(r->why)))
		return -EINVAL;
	r->c.native_modes = r->cfg.native_modes;
	r->s = modes__open_session(r->cfg.max_depth, r->cfg.mem, r->cfg.usdt_modes,
				   wall_mode(&r->cfg), r->cfg.native_modes, r->cfg.opcodes,
				   r->prof.exc_known, on_ringbuf, &r->c, r->why, sizeof(r->why));
	return r->s ? 0 : -EINVAL;
}

/* --signatures reads GIL builds only: a -p target it cannot read is refused. */
static int sig_refuse(const struct pyprof_config *cfg, const struct target *t, char *why,
		      size_t whylen)
{
	if (!cfg->signatures || !t->layout.free_threaded)
		return 0;
	snprintf(why, whylen,
		 "pid %d runs the free-threaded Python %s, whose frames --signatures cannot "
		 "read; profile it without --signatures",
		 t->pid, t->version_str);
	return -ENOTSUP;
}

/*
 * The targets registered and followed, then the probes: USDT first, so its
 * refusals and attach errors come before sampling starts. Last, the command
 * is let go to its exec.
 */
static int run__attach(struct run *r)
{
	const struct pyprof_config *cfg = &r->cfg;
	struct collector *c = &r->c;
	char *why = r->why;
	size_t i, whylen = sizeof(r->why);
	int err = 0;

	if (cfg->signatures)
		session__signatures(r->s);
	for (i = 0; i < c->ntargets && !err; i++) {
		err = sig_refuse(cfg, &c->targets[i].t, why, whylen);
		if (err)
			break;
		err = session__add_target(r->s, &c->targets[i].t);
		snprintf(why, whylen, "cannot register pid %d: %s", c->targets[i].t.pid,
			 strerror(-err));
	}
	/* Always: a -p target's exec or exit is noticed at once (its old layout is dropped). */
	if (!err) {
		why[0] = '\0';
		err = start_tracking(cfg, r->s, c, &r->tr, &r->launch, r, why, whylen);
	}
	if (!err && (cfg->usdt_modes & USDT_IMPORTS)) {
		err = session__add_ringbuf(r->s, bpf_map__fd(session__skel(r->s)->maps.events),
					   usdt__on_event, c);
		snprintf(why, whylen, "cannot open the event ring buffer: %s", strerror(-err));
	}
	for (i = 0; i < c->ntargets && !err && cfg->usdt_modes; i++) {
		bool now;

		if (follows(cfg))
			err = usdt__follow(&r->u, r->s, &c->targets[i].t, cfg->usdt_modes,
					   cfg->py311_line, &now, why, whylen);
		else
			err = usdt__attach(&r->u, r->s, &c->targets[i].t, cfg->usdt_modes,
					   cfg->py311_line, why, whylen);
	}
	if (!err)
		err = session__attach(r->s, cfg->frequency_hz, why, whylen);
	if (!err)
		err = wall__attach(&r->w, r->s, c, wall_mode(cfg), why, whylen);
	if (!err && cfg->mem)
		err = mem__attach(&r->mem, r->s, c, cfg->mem_period,
				  r->prof.mem_alloc ? cfg->alloc_period : 0, why, whylen);
	if (!err && cfg->all)
		pr_info("%zu CPython processes found\n", tracker__scan(&r->tr));
	if (!err && r->launch.pid)
		err = launch__release(&r->launch, why, whylen);
	if (!err)
		pr_info("attached: sampling %zu processes at %u Hz\n", c->ntargets,
			cfg->frequency_hz);
	return err;
}

/* The session opened and attached, or the reason why not said. */
static int run__start(struct run *r)
{
	int err = run__open_session(r);

	if (!err)
		err = run__attach(r);
	if (err)
		pr_err("%s\n", r->why);
	return err;
}

/*
 * The end of a launched command's run, when it has exited: what it left
 * running ended and its terminal's output written out before any report
 * is printed. True when no CPython process was seen: said in a sentence,
 * and no report is written (run__exit_code makes it a failure).
 */
static bool command_done(struct run *r)
{
	const char *cmd = r->launch.cmd;

	if (!r->launch.pid)
		return false;
	if (launch__reap(&r->launch, false))
		launch__finish(&r->launch);
	if (r->prof.ntargets)
		return false;
	r->no_python = true;
	if (r->cfg.subprocesses)
		pr_err("no CPython process was seen: neither the command (%s) nor any process it "
		       "started ran a CPython that pybpfprof can profile; no report written\n",
		       cmd);
	else
		pr_err("no CPython process was seen: the command (%s) did not run a CPython that "
		       "pybpfprof can profile; no report written (for Python it starts in a child "
		       "process, as a shell or a script does, add --subprocesses)\n",
		       cmd);
	return true;
}

/* `pybpfprof top`: the live view until the run ends, and no report. */
static void run__top(struct run *r)
{
	struct top_view view;

	top__init(&view, r->cfg.top_functions, mono_ns());
	run__loop(r, &view);
	top__end(&view);
	command_done(r);
}

/*
 * A launched command still running when the sampling ended (after -d, or
 * top's q) is waited for, a stop signal passed on as during the run; then
 * what it left behind and its terminal (launch__finish). Held before its
 * exec (a failure before the run): aborted.
 */
static void run__end_command(struct run *r)
{
	struct launch *l = &r->launch;

	while (l->released && !stop_requested && !launch__reap(l, false))
		launch__wait(l, POLL_MS);
	if (stop_requested)
		stop_launched(r);
	launch__finish(l);
}

/* Every output is attempted, whatever happened to the ones before. */
static int run__write_reports(struct run *r)
{
	const struct pyprof_config *cfg = &r->cfg;
	const struct report_writer *w, *fallback;
	const struct report_opts ro = { .top_functions = cfg->top_functions,
					.top_lines = cfg->top_lines,
					.line_report = cfg->line_report,
					.prune_pct = cfg->prune_pct,
					.merge_lines = cfg->merge_lines,
					.min_share = cfg->min_share,
					.tool_version = PYBPFPROF_VERSION,
					.threads = cfg->threads };
	size_t i;
	int err = 0;

	fallback = cfg->format ? report_find(cfg->format) : &report_text;
	for (i = 0; i < (cfg->noutputs ? cfg->noutputs : 1); i++) {
		const char *path = cfg->noutputs ? cfg->outputs[i] : NULL;

		w = report_for_path(path);
		write_output(w ? w : fallback, cfg->noutputs ? &r->outs[i] : NULL, "the report",
			     &r->prof, &ro, &err);
	}
	if (cfg->mem_timeline)
		write_output(&report_mem_svg, &r->outs[OUT_TIMELINE], "the memory timeline",
			     &r->prof, &ro, &err);
	if (cfg->mem_folded)
		write_output(&report_mem_folded, &r->outs[OUT_FOLDED], "the folded memory stacks",
			     &r->prof, &ro, &err);
	if (cfg->mem_retained_folded)
		write_output(&report_mem_retained_folded, &r->outs[OUT_RETAINED_FOLDED],
			     "the folded retained memory stacks", &r->prof, &ro, &err);
	if (cfg->mem_pprof)
		write_output(&report_mem_pprof, &r->outs[OUT_MEM_PPROF], "the memory pprof profile",
			     &r->prof, &ro, &err);
	return err;
}

/*
 * --match and --thread, then --merge: the profile cut and summed as asked
 * before any report is written (the same step as `report`'s).
 */
static int run__select_merge(struct run *r)
{
	const struct pyprof_config *cfg = &r->cfg;
	const struct profile_select sel = { .match = cfg->match, .thread = cfg->thread };
	char why[400];
	int err = profile__select(&r->prof, &sel, why, sizeof(why));

	if (err) {
		pr_err("%s\n", why);
		return err;
	}
	err = cfg->merge ? profile__merge(&r->prof) : 0;
	if (err)
		pr_err("cannot merge the processes' profiles: %s\n", strerror(-err));
	return err;
}

/* A recording: samples until the end, then what was counted, then the reports. */
static int run__record(struct run *r)
{
	const struct pyprof_config *cfg = &r->cfg;
	struct collector *c = &r->c;
	struct tracker *tr = &r->tr;
	int err;

	if (isatty(STDERR_FILENO))
		log_tty("pybpfprof: sampling %zu process%s at %u Hz%s\n", c->ntargets,
			c->ntargets == 1 ? "" : "es", cfg->frequency_hz,
			cfg->duration_s > 0 ? "" : "; Ctrl-C to stop and report");
	run__loop(r, NULL);
	if (command_done(r))
		return 0;
	wall__finish(&r->w, r->s, c);
	profile__tl_finish(&r->prof, (uint64_t)r->prof.end_ns);
	record_counters(r->s, c);
	if (cfg->mem)
		mem__finish(&r->mem, r->s, c);
	if ((cfg->usdt_modes & USDT_CALLS) && usdt__collect_calls(r->s, c))
		pr_warn("out of memory while reading the call statistics: they are incomplete\n");
	pr_info("processes: %llu forks, %llu execs, %llu exits seen; %llu new images profiled, "
		"%llu gave up\n",
		(unsigned long long)tr->forks, (unsigned long long)tr->execs,
		(unsigned long long)tr->exits, (unsigned long long)tr->registered,
		(unsigned long long)tr->gave_up);
	if (cfg->async_aware)
		pr_info("--async: %llu samples charged to task chains (%llu of them to the task "
			"running when read, among several running the same coroutine), %llu not "
			"in a task; %llu task graphs read\n",
			(unsigned long long)c->async_counts.in_task,
			(unsigned long long)c->async_counts.guessed,
			(unsigned long long)c->async_counts.not_in_task,
			(unsigned long long)c->async_counts.graph_reads);
	if (cfg->async_aware && c->async_counts.graph_cut)
		pr_warn("--async: %llu of %llu task graph reads were cut at %lld ms of CPU (tasks not read "
			"by then were not charged: their samples count as not in a task)\n",
			(unsigned long long)c->async_counts.graph_cut,
			(unsigned long long)c->async_counts.graph_reads, ASYNC_READ_NS / 1000000);

	err = run__select_merge(r);
	if (err)
		return err;
	/* a command running on after -d: its keys wait while the report is printed */
	launch__keys(&r->launch, false);
	err = run__write_reports(r);
	launch__keys(&r->launch, true);
	return err;
}

/* Whatever was opened or started, closed: outputs not written are left as they were. */
static void run__free(struct run *r)
{
	size_t i;

	for (i = 0; i < NOUTFILES; i++)
		outfile__close(&r->outs[i]);
	usdt__detach(&r->u);
	mem__detach(&r->mem);
	wall__detach(&r->w);
	launch__abort(&r->launch);
	session__close(r->s);
	tracker__free(&r->tr);
	collector__free(&r->c);
	profile__free(&r->prof);
}

/*
 * 2 for a refused command line (main), 1 for a failure, else 0 or a
 * launched command's own exit status (128 + N when killed by signal N,
 * also by launch__finish). A launched run that saw no CPython process
 * failed: the command's status if that says failure, else 1.
 */
static int run__exit_code(struct run *r, int err)
{
	int code;

	if (err || !r->launch.pid)
		return err ? 1 : 0;
	if (!launch__reap(&r->launch, false))
		return 1; /* it could not be ended: warned in launch__finish */
	code = launch__exit_code(&r->launch);
	return r->no_python && !code ? 1 : code;
}

/* One line per subcommand: `pybpfprof NAME ...` runs it instead of a profile. */
// clang-format off
const struct command commands[] = {
	{ "report", cmd_report },
	{ "diff", cmd_diff },
	{ "dump", cmd_dump },
	{ "agent", cmd_agent },
	{ NULL, NULL },
};
// clang-format on

/* The subcommand argv[1] names, or NULL for a run (options or `top` first). */
static const struct command *command_of(int argc, char **argv)
{
	const struct command *c;

	for (c = commands; argc > 1 && c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd = command_of(argc, argv);
	struct run r = { .cfg = PYPROF_CONFIG_DEFAULTS, .launch = { .pidfd = -1 } };
	int err;

	if (cmd)
		return cmd->run(argc - 1, argv + 1);
	if (run__parse(&r, argc, argv))
		return 2;
	err = run__prepare(&r);
	if (!err)
		err = run__start(&r);
	if (!err && r.cfg.top)
		run__top(&r);
	else if (!err)
		err = run__record(&r);
	run__end_command(&r);
	run__free(&r);
	return run__exit_code(&r, err);
}
