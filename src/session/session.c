// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF skeleton lifecycle and perf events. Sampling uses the cpu-clock
 * software event, which works on VMs without a hardware PMU. Its period is
 * redrawn at random every few samples (session_redraw_period, perf_sampler.h), so
 * that on average a sample stands for 1/hz of CPU time but the sampling clock
 * cannot fall into step with a program that does the same thing every 10 ms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "session/perf_sampler.h"
#include "cpython/py_objects.h"
#include "cpython/py_signature.h"
#include "proc/procfs.h"
#include "session/session.h"
#include "util/mono.h"
#include "util/log.h"
#include "pybpfprof.skel.h"

_Static_assert(sizeof(struct py_offsets) == 72, "py_offsets layout changed");
_Static_assert(sizeof(struct py_target) == 112, "py_target layout changed");
_Static_assert(sizeof(struct py_frame) == 16, "py_frame layout changed");
_Static_assert(sizeof(struct py_live_key) == 16, "py_live_key layout changed");
_Static_assert(__builtin_offsetof(struct py_sample, frames) == PY_SAMPLE_HEADER_SIZE,
	       "py_sample header size changed");

struct session {
	struct pybpfprof_bpf *skel;
	struct ring_buffer *rb;
	struct perf_sampler cpu_clock;
	struct bpf_link *track_links[3];
	unsigned hz;	 /* 0 until attached */
	bool signatures; /* --signatures: targets get their argument offsets */
};

struct session *session__open(unsigned max_depth, char *why, size_t whylen)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	s->skel = pybpfprof_bpf__open();
	if (!s->skel) {
		snprintf(why, whylen, "cannot open the BPF object: %s", strerror(errno));
		session__close(s);
		return NULL;
	}
	s->skel->rodata->max_depth = max_depth;
	return s;
}

int session__load(struct session *s, sample_fn_t on_sample, void *ctx, char *why, size_t whylen)
{
	int err = pybpfprof_bpf__load(s->skel);

	if (err) {
		snprintf(why, whylen,
			 "cannot load the BPF programs: %s (run with -vv for the "
			 "verifier log)",
			 strerror(-err));
		return err;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.samples), on_sample, ctx, NULL);
	if (!s->rb) {
		err = -errno;
		snprintf(why, whylen, "cannot open the ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

int session__add_target(struct session *s, const struct target *t)
{
	struct py_target v = { .runtime_addr = t->runtime_addr,
			       .off = t->layout.bpf,
			       .interp_text_start = t->text_start,
			       .interp_text_end = t->text_end,
			       .none_addr = t->none_addr };
	struct py_sig_offsets so;
	__u32 pid = t->pid;
	bool via_interp;

	/* --mode wall, --gil only: on 3.13+ it reads the target's debug offsets */
	v.gil_off = PYPROF_NO_OFFSET;
	if (s->skel->rodata->gil_follow && !py_gil_place(t, &v.gil_off, &via_interp))
		v.gil_via_interp = via_interp;
	if (bpf_map__update_elem(s->skel->maps.targets, &pid, sizeof(pid), &v, sizeof(v), BPF_ANY))
		return -errno;
	/* a build it cannot read (free-threaded) is sampled without signatures */
	if (s->signatures && !py_sig_offsets__for(t->version, t->layout.free_threaded, &so) &&
	    bpf_map__update_elem(s->skel->maps.sig_offsets, &pid, sizeof(pid), &so, sizeof(so),
				 BPF_ANY))
		return -errno;
	return 0;
}

void session__signatures(struct session *s)
{
	s->signatures = true;
	s->skel->bss->signatures_on = 1;
}

void session__sig_counts(struct session *s, uint64_t *sent, uint64_t *dropped)
{
	*sent = s->skel->bss->sig_sent;
	*dropped = s->skel->bss->sig_dropped;
}

void session__prepare_ticks(struct session *s, bool opcodes, bool exceptions)
{
	s->skel->rodata->opcodes_on = opcodes;
	s->skel->rodata->exc_on = exceptions;
}

int session__track(struct session *s, bool all, sample_fn_t on_event, void *ctx, char *why,
		   size_t whylen)
{
	struct bpf_program *progs[] = { s->skel->progs.on_fork, s->skel->progs.on_exec,
					s->skel->progs.on_exit };
	size_t i;
	int err;

	s->skel->bss->track_all = all;
	err = ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.proc_events), on_event, ctx);
	if (err) {
		snprintf(why, whylen, "cannot open the process event ring buffer: %s",
			 strerror(-err));
		return err;
	}
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		s->track_links[i] = bpf_program__attach(progs[i]);
		if (!s->track_links[i]) {
			err = -errno;
			snprintf(why, whylen, "cannot attach the %s tracepoint: %s",
				 bpf_program__section_name(progs[i]) + strlen("raw_tp/"),
				 strerror(-err));
			return err;
		}
	}
	return 0;
}

int session__follow(struct session *s, pid_t pid, unsigned flags)
{
	__u32 key = pid, val = flags;

	if (bpf_map__update_elem(s->skel->maps.followed, &key, sizeof(key), &val, sizeof(val),
				 BPF_ANY))
		return -errno;
	return 0;
}

bool session__followed_alive(struct session *s)
{
	const struct bpf_map *map = s->skel->maps.followed;
	__u32 key, next, gone[64];
	size_t ngone = 0, i;
	bool alive = false;
	void *prev = NULL;

	/* the first one alive answers; the dead ones met on the way are forgotten */
	while (!alive && !bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		alive = proc_alive((pid_t)next);
		if (!alive && ngone < sizeof(gone) / sizeof(gone[0]))
			gone[ngone++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < ngone; i++)
		bpf_map__delete_elem(map, &gone[i], sizeof(gone[i]), 0);
	return alive;
}

void session__remove_target(struct session *s, pid_t pid)
{
	__u32 key = pid;

	bpf_map__delete_elem(s->skel->maps.targets, &key, sizeof(key), 0);
	bpf_map__delete_elem(s->skel->maps.sig_offsets, &key, sizeof(key), 0);
}

/*
 * The CPU sampler's period (perf_sampler.h): a rate within +-20% of hz, for
 * blocks of about REDRAW_PERIODS periods (at least REDRAW_MIN_NS). Changing
 * the period restarts the kernel's timer and loses the part of the period
 * that had run: half a period per block on average, which the rate makes up
 * for (0.5 / block).
 */
#define REDRAW_PERIODS 8
#define REDRAW_MIN_NS 100000000.0

static double redraw_block_ns(unsigned hz)
{
	double block = REDRAW_PERIODS * 1e9 / hz;

	return block < REDRAW_MIN_NS ? REDRAW_MIN_NS : block;
}

static void session_redraw_period(struct session *s)
{
	double rate = s->hz * (1 + 0.2 * s->cpu_clock.jitter.offset);

	perf_sampler__set_period(&s->cpu_clock, 1e9 / (rate + 0.5e9 / redraw_block_ns(s->hz)));
}

int session__attach(struct session *s, unsigned hz, char *why, size_t whylen)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = 1000000000ULL / hz,
	};
	int err;

	err = perf_sampler__open(&s->cpu_clock, &attr, s->skel->progs.on_sample, "cpu-clock",
				 REDRAW_MIN_NS, why, whylen);
	if (err)
		return err;
	s->hz = hz;
	return 0;
}

void session__set_hz(struct session *s, unsigned hz)
{
	struct jitter *j = &s->cpu_clock.jitter;

	if (!s->hz || !hz || hz == s->hz)
		return;
	s->hz = hz;
	/*
	 * A new pair of draws starts now, both at the new rate: a pair whose
	 * halves had two rates would not average to either (the rate is exact
	 * over time only pair by pair, perf_sampler.h).
	 */
	j->second = true;
	j->next_ns = 0;
	jitter__due(j, mono_ns(), redraw_block_ns(hz));
	session_redraw_period(s);
}

struct pybpfprof_bpf *session__skel(struct session *s)
{
	return s->skel;
}

int session__add_ringbuf(struct session *s, int map_fd, sample_fn_t fn, void *ctx)
{
	return ring_buffer__add(s->rb, map_fd, fn, ctx);
}

int session__poll(struct session *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms);

	/* The kernel side wakes us only when the buffer fills up: read what is there anyway. */
	if (n >= 0)
		n = ring_buffer__consume(s->rb);
	if (s->hz && jitter__due(&s->cpu_clock.jitter, mono_ns(), redraw_block_ns(s->hz)))
		session_redraw_period(s);
	return n;
}

void session__detach(struct session *s)
{
	size_t i;

	for (i = 0; i < sizeof(s->track_links) / sizeof(s->track_links[0]); i++) {
		bpf_link__destroy(s->track_links[i]);
		s->track_links[i] = NULL;
	}
	perf_sampler__close(&s->cpu_clock);
}

int session__counters(struct session *s, uint64_t out[PYPROF_CNT_SLOTS])
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.counters);
	__u64 *vals;
	__u32 k;
	int c;

	memset(out, 0, PYPROF_CNT_SLOTS * sizeof(out[0]));
	if (ncpus <= 0)
		return -EINVAL;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (k = 0; k < PYPROF_CNT_SLOTS; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

void session__close(struct session *s)
{
	if (!s)
		return;
	session__detach(s);
	ring_buffer__free(s->rb);
	pybpfprof_bpf__destroy(s->skel);
	free(s);
}

/* Effective capability bits through capget(2), without libcap. */
static int effective_caps(uint64_t *caps)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*caps = data[0].effective | ((uint64_t)data[1].effective << 32);
	return 0;
}

#define HAS(caps, c) (((caps) >> (c)) & 1)

/*
 * Each capability pybpfprof needs, named on its own when it is missing.
 * CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON (as the kernel lets
 * it), not for CAP_SYS_PTRACE: reading another user's memory needs that.
 */
int check_privileges(char *why, size_t whylen)
{
	static const struct {
		int cap;
		const char *name;
		bool admin_will_do;
	} need[] = {
		{ 39 /* CAP_BPF */, "CAP_BPF", true },
		{ 38 /* CAP_PERFMON */, "CAP_PERFMON", true },
		{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE", false },
	};
	char missing[64] = "";
	uint64_t caps = 0;
	size_t i, len = 0;
	int n = 0;

	if (effective_caps(&caps)) {
		snprintf(why, whylen, "cannot read this process's capabilities: %s",
			 strerror(errno));
		return -EPERM;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (HAS(caps, need[i].cap) || (need[i].admin_will_do && HAS(caps, CAP_SYS_ADMIN)))
			continue;
		len += snprintf(missing + len, sizeof(missing) - len, "%s%s", n++ ? ", " : "",
				need[i].name);
	}
	if (n) {
		snprintf(why, whylen,
			 "not enough privilege: pybpfprof needs %s, which this "
			 "process lacks (it runs as root, or with CAP_BPF, CAP_PERFMON and "
			 "CAP_SYS_PTRACE); run it with sudo",
			 missing);
		return -EPERM;
	}
	return 0;
}

const char *uprobe_privilege_hint(int err)
{
	uint64_t caps = 0;

	if ((err != -EACCES && err != -EPERM) || effective_caps(&caps) || HAS(caps, CAP_SYS_ADMIN))
		return "";
	return " (attaching a uprobe needs CAP_SYS_ADMIN, which this process lacks; run it as "
	       "root)";
}

int check_kernel(const char *btf_path, char *why, size_t whylen)
{
	if (access(btf_path, R_OK)) {
		snprintf(why, whylen,
			 "kernel feature missing: BTF type information (%s not "
			 "readable; the kernel needs CONFIG_DEBUG_INFO_BTF=y)",
			 btf_path);
		return -ENOTSUP;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1) {
		snprintf(why, whylen,
			 "kernel feature missing: BPF ring buffer maps (Linux 5.8 or "
			 "newer)");
		return -ENOTSUP;
	}
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL) != 1) {
		snprintf(why, whylen,
			 "kernel feature missing: BPF programs on perf events "
			 "(CONFIG_BPF_EVENTS)");
		return -ENOTSUP;
	}
	/* The frame walk is a bpf_loop: verified once, whatever the depth limit. */
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) != 1) {
		snprintf(why, whylen,
			 "kernel feature missing: the bpf_loop helper (Linux 5.17 or "
			 "newer)");
		return -ENOTSUP;
	}
	return 0;
}
