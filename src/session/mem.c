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
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "proc/elf_file.h"
#include "proc/procfs.h"
#include "util/log.h"
#include "session/mem.h"
#include "util/mono.h"
#include "pybpfprof.skel.h"

void mem__prepare(struct session *s, enum pyprof_mem_mode mode)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	bool faults = mode != PYPROF_MEM_OFF, alloc = mode == PYPROF_MEM_ALLOC;

	bpf_program__set_autoload(skel->progs.on_page_fault, faults);
	bpf_program__set_autoload(skel->progs.on_sys_enter, faults);
	bpf_program__set_autoload(skel->progs.on_sys_exit, faults);
	bpf_program__set_autoload(skel->progs.on_malloc, alloc);
	bpf_program__set_autoload(skel->progs.on_calloc, alloc);
	bpf_program__set_autoload(skel->progs.on_realloc, alloc);
	bpf_program__set_autoload(skel->progs.on_memalign, alloc);
	bpf_program__set_autoload(skel->progs.on_posix_memalign, alloc);
	bpf_program__set_autoload(skel->progs.on_alloc_return, alloc);
	bpf_program__set_autoload(skel->progs.on_free, alloc);
}

/* path opened non-blocking, if it is the regular file of this device and inode; else -1. */
static int open_same_file(const char *path, unsigned maj, unsigned min, uint64_t ino)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != ino || major(st.st_dev) != maj ||
	    minor(st.st_dev) != min) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The mapping itself (map_files: needs CAP_SYS_ADMIN), else the file as the
 * process sees it (through /proc/PID/root: right for containers and
 * chroots), each checked by device and inode on the descriptor opened.
 */
int mem__find_libc(int pid, char *shown, size_t len, int *fd)
{
	char maps[64], path[PATH_MAX + 64], *line = NULL;
	struct map_entry e;
	size_t cap = 0;
	FILE *f;

	*fd = -1;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (*fd < 0 && maps_next(f, &line, &cap, &e)) {
		const char *base = strrchr(e.path, '/');
		unsigned maj, min;

		if (!base || !e.inode || sscanf(line, "%*s %*s %*s %x:%x", &maj, &min) != 2)
			continue;
		base++;
		/* libc.so.6, or libc-2.31.so on older glibc; not libcrypto, libcap... */
		if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid,
			 e.start, e.end);
		*fd = open_same_file(path, maj, min, e.inode);
		if (*fd < 0) {
			snprintf(path, sizeof(path), "/proc/%d/root%s", pid, e.path);
			*fd = open_same_file(path, maj, min, e.inode);
		}
		if (*fd >= 0)
			snprintf(shown, len, "%s", e.path);
	}
	free(line);
	fclose(f);
	return *fd >= 0 ? 0 : -ENOENT;
}

/* The allocator entry points probed, with their programs; free is the last (attach_alloc). */
static const char *const alloc_funcs[] = {
	"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "free",
};

static struct bpf_program *alloc_entry_prog(struct pybpfprof_bpf *skel, size_t i)
{
	struct bpf_program *progs[] = {
		skel->progs.on_malloc,	       skel->progs.on_calloc,	skel->progs.on_realloc,
		skel->progs.on_posix_memalign, skel->progs.on_memalign, skel->progs.on_memalign,
		skel->progs.on_free,
	};

	return progs[i];
}

/*
 * By file offset, found by our own reader: given a function name, libbpf
 * would map the file to find it, and a target that truncates its own libc
 * copy meanwhile would give us SIGBUS.
 */
static int add_uprobe(struct mem *m, struct bpf_program *prog, int pid, const char *path,
		      uint64_t offset, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *link;

	if (vec_grow((void **)&m->uprobes, &m->cap_uprobes, m->nuprobes + 1, sizeof(*m->uprobes)))
		return -ENOMEM;
	link = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &opts);
	if (!link)
		return -errno;
	m->uprobes[m->nuprobes++] = link;
	return 0;
}

/* Probes one target's allocator: entry of each function, and the return of allocating ones. */
static int attach_alloc(struct mem *m, struct pybpfprof_bpf *skel, int pid, char *why,
			size_t whylen)
{
	char libc[PATH_MAX], held[64];
	struct elf_file *ef;
	const size_t n = sizeof(alloc_funcs) / sizeof(alloc_funcs[0]);
	uint64_t off;
	size_t i, k;
	int err, fd;

	err = mem__find_libc(pid, libc, sizeof(libc), &fd);
	if (err) {
		snprintf(why, whylen, "--mem=alloc: no C library found in pid %d's memory map (%s)",
			 pid, strerror(-err));
		return err;
	}
	/* the descriptor names the file checked, whatever is at its path by now */
	snprintf(held, sizeof(held), "/proc/self/fd/%d", fd);
	ef = elf_file__open(held);
	if (!ef) {
		err = -errno;
		close(fd);
		snprintf(why, whylen, "--mem=alloc: cannot read pid %d's C library %s: %s", pid,
			 libc, strerror(-err));
		return err;
	}
	/*
	 * free first: every allocation seen from then on has its free seen too.
	 * Attaching the probes can take 1-2 s, and with free last the blocks a
	 * target churned meanwhile could only be counted live, for good.
	 */
	for (k = 0; k < n; k++) {
		bool is_free;

		i = (k + n - 1) % n;
		is_free = !strcmp(alloc_funcs[i], "free");

		err = elf_file__func_offset(ef, alloc_funcs[i], &off);
		if (err) {
			snprintf(why, whylen, "--mem=alloc: no %s in pid %d's C library %s",
				 alloc_funcs[i], pid, libc);
			break;
		}

		/*
		 * Return first: a call whose entry is seen then has its return
		 * seen too (the return probe is armed at entry), which the
		 * nesting count in the BPF program relies on.
		 */
		err = is_free ? 0 :
				add_uprobe(m, skel->progs.on_alloc_return, pid, held, off, true);
		if (!err)
			err = add_uprobe(m, alloc_entry_prog(skel, i), pid, held, off, false);
		if (err) {
			snprintf(why, whylen, "--mem=alloc: cannot probe %s in %s (pid %d): %s%s",
				 alloc_funcs[i], libc, pid, strerror(-err),
				 uprobe_privilege_hint(err));
			break;
		}
	}
	elf_file__close(ef);
	close(fd);
	if (!err)
		pr_info("pid %d: allocator probes on %s\n", pid, libc);
	return err;
}

int mem__attach(struct mem *m, struct session *s, struct collector *c, unsigned period,
		uint64_t alloc_period, char *why, size_t whylen)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.size = sizeof(attr),
		.sample_period = period,
	};
	int err;

	memset(m, 0, sizeof(*m));
	m->page_size = sysconf(_SC_PAGESIZE);
	skel->data->page_bytes = m->page_size;
	/* The allocator probes first: they take longest to attach (symbol lookups). */
	skel->data->alloc_period = alloc_period;
	for (size_t i = 0; alloc_period && i < c->ntargets; i++) {
		err = attach_alloc(m, skel, c->targets[i].t.pid, why, whylen);
		if (err)
			return err;
	}
	err = perf_sampler__open(&m->faults, &attr, skel->progs.on_page_fault, "page-faults",
				 MEM_REDRAW_NS, why, whylen);
	if (err)
		return err;
	m->period = period;
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

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	proc_read_small_file(path, buf, sizeof(buf), false);
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * page_size;
}

/* Whether the page-fault period is redrawn: a sampler is open, and a period of 1 stays 1. */
static bool redraws(const struct mem *m)
{
	return m->period > 1 && m->faults.fds;
}

int mem__timeout_ms(const struct mem *m, int idle_ms, long long now_ns)
{
	return redraws(m) ? mono_ms_until(m->faults.jitter.next_ns, now_ns, idle_ms) : idle_ms;
}

void mem__tick(struct mem *m, struct collector *c, long long now_ns)
{
	size_t i;

	/*
	 * The page-fault period (perf_sampler.h): within +-25% of the
	 * mean, in blocks of 10-30 ms. Each sample weighs the faults made
	 * since the last one (on_page_fault), so the bytes stay exact.
	 */
	if (redraws(m) && jitter__due(&m->faults.jitter, now_ns, MEM_REDRAW_NS))
		perf_sampler__set_period(&m->faults,
					 m->period * (1 + 0.25 * m->faults.jitter.offset) + 0.5);
	if (now_ns - m->last_rss_ns < MEM_RSS_INTERVAL_NS)
		return;
	m->last_rss_ns = now_ns;
	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];
		uint64_t rss;

		if (ts->exited)
			continue;
		rss = read_rss(ts->t.pid, m->page_size);
		if (rss)
			profile_target__add_rss(&c->prof->targets[ts->target_index],
						(now_ns - c->prof->start_ns) / 1e9, rss);
	}
}

void mem__detach(struct mem *m)
{
	size_t i;

	/* in the reverse of attach_alloc's order: free goes last, as it came first */
	for (i = m->nuprobes; i-- > 0;)
		bpf_link__destroy(m->uprobes[i]);
	free(m->uprobes);
	m->uprobes = NULL;
	m->nuprobes = m->cap_uprobes = 0;
	bpf_link__destroy(m->sys_enter);
	bpf_link__destroy(m->sys_exit);
	m->sys_enter = m->sys_exit = NULL;
	perf_sampler__close(&m->faults);
}

/* Adds the sampled allocations still in the kernel's live map to their stacks. */
static void collect_live(struct session *s, struct collector *c)
{
	int fd = bpf_map__fd(session__skel(s)->maps.live_allocs);
	struct py_live_key key, next, *prev = NULL;
	struct py_live_alloc v;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		struct collector_target *ts = collector__find(c, v.pid);
		uint64_t *stack = hashmap__find(&c->alloc_records,
						collector__alloc_key(v.pid, v.tid, v.ktime_ns));
		struct profile_target *pp;

		if (!ts)
			continue;
		pp = &c->prof->targets[ts->target_index];
		if (stack && *stack < pp->mem.nstacks)
			pp->mem.stacks[*stack].bytes[PROFILE_MEM_LIVE] += v.bytes;
		else
			pp->mem.live_lost += v.bytes;
	}
}

void mem__finish(struct mem *m, struct session *s, struct collector *c)
{
	int fd = bpf_map__fd(session__skel(s)->maps.rss_peak);
	size_t i;

	if (c->prof->mem_alloc) {
		collect_live(s, c);
		if (session__skel(s)->bss->live_full)
			pr_warn("--mem=alloc: %llu sampled allocations found the live map full and "
				"are missing from live_at_end\n",
				(unsigned long long)session__skel(s)->bss->live_full);
	}

	for (i = 0; i < c->ntargets; i++) {
		struct profile_target *pp = &c->prof->targets[c->targets[i].target_index];
		__u32 pid = c->targets[i].t.pid;
		__u64 pages;

		if (!bpf_map_lookup_elem(fd, &pid, &pages) &&
		    pages * m->page_size > pp->mem.peak_rss)
			pp->mem.peak_rss = pages * m->page_size;
		/*
		 * still mapped at the end of sampling, or when the process exited
		 * (nothing came after: its last memory call stands for its end)
		 */
		profile_target__mem_retain(pp,
					   pp->exited && pp->mem.last_call_ns ?
						   pp->mem.last_call_ns :
						   (uint64_t)(c->prof->end_ns ? c->prof->end_ns :
										mono_ns()));
	}
	c->prof->mem_ranges_lost = session__skel(s)->bss->ranges_lost;
	if (c->prof->mem_ranges_lost)
		pr_warn("--mem: %llu memory calls' address records were lost (ring buffer full); "
			"their releases are not matched to lines\n",
			(unsigned long long)c->prof->mem_ranges_lost);
}
