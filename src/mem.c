// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mem attachment and the resident-size timeline. Page faults are sampled
 * like CPU time is: one software perf event per CPU for every process
 * (pid -1), the BPF program keeping only profiled ones, so a process's new
 * threads and a process started later under the same pid need nothing new.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "mem.h"
#include "pybpfprof.skel.h"

int mem__attach(struct mem_session *m, struct session *s, unsigned period, char *why,
		size_t whylen)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.size = sizeof(attr),
		.sample_period = period,
	};
	int cpu, attached = 0;

	memset(m, 0, sizeof(*m));
	m->page_size = sysconf(_SC_PAGESIZE);
	skel->data->fault_bytes = (uint64_t)period * m->page_size;
	m->ncpus = libbpf_num_possible_cpus();
	if (m->ncpus <= 0) {
		snprintf(why, whylen, "cannot count CPUs: %s", strerror(-m->ncpus));
		return m->ncpus ? m->ncpus : -EINVAL;
	}
	m->links = calloc(m->ncpus, sizeof(*m->links));
	m->pefds = malloc(m->ncpus * sizeof(*m->pefds));
	if (!m->links || !m->pefds) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (cpu = 0; cpu < m->ncpus; cpu++)
		m->pefds[cpu] = -1;
	for (cpu = 0; cpu < m->ncpus; cpu++) {
		m->pefds[cpu] = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (m->pefds[cpu] < 0) {
			if (errno == ENODEV)	/* possible but offline CPU */
				continue;
			snprintf(why, whylen, "perf_event_open(page-faults) failed on CPU %d: %s",
				 cpu, strerror(errno));
			return -errno;
		}
		m->links[cpu] = bpf_program__attach_perf_event(skel->progs.on_page_fault,
							       m->pefds[cpu]);
		if (!m->links[cpu]) {
			snprintf(why, whylen, "cannot attach the page-fault sampler to CPU %d: %s",
				 cpu, strerror(errno));
			return -errno;
		}
		attached++;
	}
	if (!attached) {
		snprintf(why, whylen, "no online CPU could sample page faults");
		return -ENODEV;
	}
	/* Exit first: an exit with no recorded entry is ignored, so nothing is half seen. */
	m->sys_exit = bpf_program__attach_raw_tracepoint(skel->progs.on_sys_exit, "sys_exit");
	if (m->sys_exit)
		m->sys_enter = bpf_program__attach_raw_tracepoint(skel->progs.on_sys_enter,
								  "sys_enter");
	if (!m->sys_enter) {
		snprintf(why, whylen, "cannot attach to the sys_enter/sys_exit raw tracepoints: %s",
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/* Resident bytes of pid from /proc/PID/statm (second field, in pages); 0 if gone. */
static uint64_t read_rss(int pid, long page_size)
{
	char path[64], buf[128];
	unsigned long long size, resident;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * page_size;
}

void mem__tick(struct mem_session *m, struct collector *c, long long now_ns)
{
	size_t i;

	if (now_ns - m->last_rss_ns < MEM_RSS_INTERVAL_NS)
		return;
	m->last_rss_ns = now_ns;
	for (i = 0; i < c->ntargets; i++) {
		struct target_state *ts = &c->targets[i];
		uint64_t rss;

		if (ts->exited)
			continue;
		rss = read_rss(ts->t.pid, m->page_size);
		if (rss)
			profile_proc__add_rss(&c->prof->procs[ts->proc_index],
					      (now_ns - c->prof->start_ns) / 1e9, rss);
	}
}

void mem__detach(struct mem_session *m)
{
	int cpu;

	bpf_link__destroy(m->sys_enter);
	bpf_link__destroy(m->sys_exit);
	m->sys_enter = m->sys_exit = NULL;
	for (cpu = 0; m->links && cpu < m->ncpus; cpu++) {
		bpf_link__destroy(m->links[cpu]);
		m->links[cpu] = NULL;
		if (m->pefds[cpu] >= 0)
			close(m->pefds[cpu]);
		m->pefds[cpu] = -1;
	}
	free(m->links);
	free(m->pefds);
	m->links = NULL;
	m->pefds = NULL;
}

void mem__finish(struct mem_session *m, struct session *s, struct collector *c)
{
	int fd = bpf_map__fd(session__skel(s)->maps.rss_peak);
	size_t i;

	for (i = 0; i < c->ntargets; i++) {
		struct profile_proc *pp = &c->prof->procs[c->targets[i].proc_index];
		__u32 pid = c->targets[i].t.pid;
		__u64 pages;

		if (!bpf_map_lookup_elem(fd, &pid, &pages) && pages * m->page_size > pp->mem.peak_rss)
			pp->mem.peak_rss = pages * m->page_size;
	}
}
