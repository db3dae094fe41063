// SPDX-License-Identifier: GPL-2.0-only
/*
 * Orchestration only: parse the command line, check everything that can fail
 * before profiling starts (output file, targets, privileges, kernel), sample
 * until the duration ends, Ctrl-C/SIGTERM, or every target exits, then write
 * the report from everything collected.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collect.h"
#include "config.h"
#include "loader.h"
#include "log.h"
#include "mem.h"
#include "report.h"

#define POLL_MS 50
#define ALIVE_CHECK_NS 200000000LL
#define BTF_PATH "/sys/kernel/btf/vmlinux"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	collector__sample(ctx, data, size);
	return 0;
}

/* Every check that needs no BPF: a bad pid or a bad path fails before anything loads. */
static int preflight(const struct pyprof_config *cfg, struct collector *c)
{
	char why[512];
	size_t i;
	int err;

	err = 0;
	for (i = 0; i < cfg->noutputs && !err; i++)
		err = report_check_writable(cfg->outputs[i], why, sizeof(why));
	if (!err && cfg->mem_timeline)
		err = report_check_writable(cfg->mem_timeline, why, sizeof(why));
	if (!err && cfg->mem_folded)
		err = report_check_writable(cfg->mem_folded, why, sizeof(why));
	if (!err)
		for (i = 0; i < cfg->npids && !err; i++)
			if (kill(cfg->pids[i], 0) && errno == ESRCH) {
				snprintf(why, sizeof(why), "no such process: pid %d", cfg->pids[i]);
				err = -ESRCH;
			}
	if (!err)
		err = check_privileges(why, sizeof(why));
	if (!err)
		err = check_kernel(BTF_PATH, why, sizeof(why));
	for (i = 0; i < cfg->npids && !err; i++) {
		struct py_target t;

		if (collector__find(c, cfg->pids[i]))
			continue;	/* the same pid given twice */
		err = py_target__open(cfg->pids[i], &t, why, sizeof(why));
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

/* Samples until the duration ends, a signal arrives or every target is gone. */
static void run(const struct pyprof_config *cfg, struct session *s, struct collector *c,
		struct mem_session *mem)
{
	long long start = now_ns(), last_check = start;
	long long end = cfg->duration_s > 0 ? start + (long long)(cfg->duration_s * 1e9) : 0;

	while (!stop_requested) {
		long long t;

		session__poll(s, POLL_MS);
		t = now_ns();
		if (mem)
			mem__tick(mem, c, t);
		if (end && t >= end)
			break;
		if (t - last_check >= ALIVE_CHECK_NS) {
			last_check = t;
			if (!collector__check_alive(c)) {
				pr_info("every target has exited\n");
				break;
			}
		}
	}
	session__detach(s);
	if (mem)
		mem__detach(mem);
	/* Samples already in the ring buffer still count. */
	while (session__poll(s, 0) > 0)
		;
	collector__check_alive(c);
	c->prof->duration_s = (now_ns() - start) / 1e9;
}

static void record_counters(struct session *s, struct collector *c)
{
	uint64_t k[PYPROF_CNT_MAX];

	session__counters(s, k);
	c->prof->counts.events = k[PYPROF_CNT_EVENTS];
	c->prof->counts.dropped = k[PYPROF_CNT_DROPPED] + c->unknown_pid + c->malformed;
	c->prof->counts.no_python = k[PYPROF_CNT_NO_TSTATE] + k[PYPROF_CNT_NO_FRAME];
	c->prof->counts.read_errors = k[PYPROF_CNT_READ_ERROR];
	c->prof->counts.truncated = k[PYPROF_CNT_TRUNCATED];
	pr_info("kernel counters: events %llu sent %llu no-tstate %llu no-frame %llu read-error "
		"%llu truncated %llu dropped %llu scans %llu\n", (unsigned long long)k[0],
		(unsigned long long)k[1], (unsigned long long)k[2], (unsigned long long)k[3],
		(unsigned long long)k[4], (unsigned long long)k[5], (unsigned long long)k[6],
		(unsigned long long)k[7]);
}

int main(int argc, char **argv)
{
	struct pyprof_config cfg = PYPROF_CONFIG_DEFAULTS;
	struct sigaction sa = { .sa_handler = on_signal };
	const struct report_writer *w, *fallback;
	struct report_opts ro;
	struct mem_session mem = {};
	struct session *s = NULL;
	struct collector c;
	struct profile prof;
	char why[512];
	size_t i;
	int err;

	/* From the start: a Ctrl-C at any point ends the run with a report, never a kill. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	argp_err_exit_status = 2;
	if (cli_parse(argc, argv, &cfg, 0))
		return 2;
	log_set_level(LOG_WARN + cfg.verbose);
	log_hook_libbpf();
	fallback = cfg.format ? report_find(cfg.format) : &report_text;
	ro = (struct report_opts){ .top_functions = cfg.top_functions, .top_lines = cfg.top_lines,
				   .line_report = cfg.line_report,
				   .tool_version = PYBPFPROF_VERSION };

	profile__init(&prof, cfg.mem ? "cpu+mem" : "cpu", cfg.frequency_hz);
	prof.start_ns = now_ns();
	prof.mem = cfg.mem != PYPROF_MEM_OFF;
	prof.mem_period = cfg.mem_period;
	prof.mem_alloc = cfg.mem == PYPROF_MEM_ALLOC;
	prof.alloc_period = cfg.alloc_period;
	prof.page_size = sysconf(_SC_PAGESIZE);
	err = collector__init(&c, &prof);
	if (!err)
		err = preflight(&cfg, &c);
	if (err)
		goto out;

	mem__set_mode(cfg.mem);
	s = session__open(cfg.max_depth, on_ringbuf, &c, why, sizeof(why));
	err = s ? 0 : -EINVAL;
	for (i = 0; s && i < c.ntargets && !err; i++) {
		err = session__add_target(s, &c.targets[i].t);
		snprintf(why, sizeof(why), "cannot register pid %d: %s", c.targets[i].t.pid,
			 strerror(-err));
	}
	if (!err)
		err = session__attach(s, cfg.frequency_hz, why, sizeof(why));
	if (!err && cfg.mem)
		err = mem__attach(&mem, s, &c, cfg.mem_period,
				  prof.mem_alloc ? cfg.alloc_period : 0, why, sizeof(why));
	if (err) {
		pr_err("%s\n", why);
		goto out;
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "pybpfprof: sampling %zu process%s at %u Hz%s\n", c.ntargets,
			c.ntargets == 1 ? "" : "es", cfg.frequency_hz,
			cfg.duration_s > 0 ? "" : "; Ctrl-C to stop and report");
	run(&cfg, s, &c, cfg.mem ? &mem : NULL);
	record_counters(s, &c);
	if (cfg.mem)
		mem__finish(&mem, s, &c);

	/* Every output is attempted, whatever happened to the ones before. */
	for (i = 0; i < (cfg.noutputs ? cfg.noutputs : 1); i++) {
		const char *path = cfg.noutputs ? cfg.outputs[i] : NULL;
		int werr;

		w = report_for_path(path);
		werr = report_write(w ? w : fallback, path, &prof, &ro);
		if (werr)
			pr_err("cannot write the report to %s: %s\n", path ? path : "stdout",
			       strerror(-werr));
		if (werr && !err)
			err = werr;
	}
	if (cfg.mem_timeline) {
		int werr = report_write(&report_mem_svg, cfg.mem_timeline, &prof, &ro);

		if (werr)
			pr_err("cannot write the memory timeline to %s: %s\n", cfg.mem_timeline,
			       strerror(-werr));
		if (werr && !err)
			err = werr;
	}
	if (cfg.mem_folded) {
		int werr = report_write(&report_mem_folded, cfg.mem_folded, &prof, &ro);

		if (werr)
			pr_err("cannot write the folded memory stacks to %s: %s\n", cfg.mem_folded,
			       strerror(-werr));
		if (werr && !err)
			err = werr;
	}
out:
	mem__detach(&mem);
	session__close(s);
	collector__free(&c);
	profile__free(&prof);
	return err ? 1 : 0;
}
