// SPDX-License-Identifier: GPL-2.0-only
/*
 * USDT (issue 7): --gc and --imports, CPython's own probes (provider
 * "python"), attached per process by src/session/usdt.c like --calls
 * (calls.bpf.c).
 *
 * --gc: gc__start(generation) notes the start per thread; gc__done(collected)
 * sends the thread's Python stack (the code that triggered the collection,
 * still current while the collector runs) with the figures packed in value.
 */
#include "emit_stack.h"
#include <bpf/usdt.bpf.h>

struct gc_start {
	__u64 start_ns;
	__u32 gen;
	__u32 pid;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gc_start);
} gc_starts SEC(".maps");

SEC("usdt")
int BPF_USDT(on_gc_start, int generation)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct gc_start g = { .gen = generation, .pid = pid };

	if (!bpf_map_lookup_elem(&targets, &pid))
		return 0;
	g.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&gc_starts, &tid, &g, BPF_ANY);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_gc_done, long collected)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), value;
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	/* the header of struct py_sample, without its frames */
	struct {
		__u32 pid, tid;
		__u64 ktime_ns;
		__u16 nframes;
		__u8 flags, kind;
		__u32 cpu;
		__u64 value;
	} hdr = {};
	struct gc_start *g;

	g = bpf_map_lookup_elem(&gc_starts, &tid);
	if (!g || g->pid != pid) {
		if (bpf_map_lookup_elem(&targets, &pid))
			count(PYPROF_CNT_GC_UNMATCHED);
		return 0;
	}
	value = PY_GC_VALUE(now - g->start_ns, g->gen, collected < 0 ? 0 : (__u64)collected);
	bpf_map_delete_elem(&gc_starts, &tid);
	if (emit_stack(PY_KIND_GC, value) <= 0)
		return 0;
	/* no Python frame (interpreter start or end): the collection still counts */
	hdr.pid = pid;
	hdr.tid = tid;
	hdr.ktime_ns = now;
	hdr.kind = PY_KIND_GC;
	hdr.value = value;
	hdr.cpu = bpf_get_smp_processor_id();
	if (bpf_ringbuf_output(&samples, &hdr, sizeof(hdr), BPF_RB_FORCE_WAKEUP))
		count_kind(PY_KIND_GC, PYPROF_CNT_DROPPED);
	return 0;
}

/* --imports: start/done events with the module name; userspace nests them per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} events SEC(".maps");

static __always_inline void send_import(__u8 kind, const char *name, int found)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32;
	struct py_event *e;

	if (!bpf_map_lookup_elem(&targets, &pid))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PYPROF_CNT_EVENTS_DROPPED);
		return;
	}
	e->pid = pid;
	e->tid = (__u32)pid_tgid;
	e->ktime_ns = bpf_ktime_get_ns();
	e->kind = kind;
	e->found = found != 0;
	if (bpf_probe_read_user_str(e->name, sizeof(e->name), name) < 0)
		e->name[0] = '\0';
	bpf_ringbuf_submit(e, 0);
}

SEC("usdt")
int BPF_USDT(on_import_start, const char *name)
{
	send_import(PY_EVENT_IMPORT_START, name, 0);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_import_done, const char *name, int found)
{
	send_import(PY_EVENT_IMPORT_DONE, name, found);
	return 0;
}
