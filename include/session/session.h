/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF session: skeleton lifecycle in explicit phases (open, load,
 * register targets, attach one cpu-clock perf event per CPU, poll the ring
 * buffers, read counters, tear down). It knows nothing of the modes
 * (--mem, --calls, --gc, --imports): they use it, and size and choose their
 * programs between open and load (modes.h). Links are file descriptors, so
 * a killed pybpfprof leaves nothing attached.
 */
#ifndef PYBPFPROF_SESSION_H
#define PYBPFPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf_abi.h"
#include "cpython/target.h"

/* The most pids one run takes (-p), and its highest sampling rate (-F). */
#define SESSION_MAX_PIDS 1024
#define SESSION_MAX_HZ 20000

/*
 * --max-cache-mb: what is kept of the targets' code objects (names, decoded
 * line tables, frame memos), for all of them together. 64 MiB holds about
 * 400000 ordinary functions; a target that makes more (or huge line tables)
 * only gets its least recently used ones evicted and read again.
 */
#define PYPROF_DEFAULT_MAX_CACHE_MB 64
#define PYPROF_MAX_CACHE_MB 65536

struct session;

typedef int (*sample_fn_t)(void *ctx, void *data, size_t size);

/*
 * Opens the BPF object, walking at most max_depth frames per sample, and
 * does not load it yet: the modes size its maps and choose its programs
 * first (session__skel). NULL with a reason in why.
 */
struct session *session__open(unsigned max_depth, char *why, size_t whylen);
/*
 * Loads the BPF programs and opens the ring buffer of the samples, which
 * session__poll delivers to on_sample. 0, or -errno with a reason in why.
 */
int session__load(struct session *s, sample_fn_t on_sample, void *ctx, char *why, size_t whylen);
/* Makes the kernel sample this target. 0 or -errno. */
int session__add_target(struct session *s, const struct target *t);
/*
 * Process tracking: attaches the fork/exec/exit tracepoints and delivers
 * their notices (struct py_proc_event) to on_event from the same polls as
 * the samples. all: report every exec on the host (-a). 0, or -errno with a
 * reason in why.
 */
int session__track(struct session *s, bool all, sample_fn_t on_event, void *ctx, char *why,
		   size_t whylen);
/* Watches pid's execs (and with PY_FOLLOW_CHILDREN its descendants'). 0 or -errno. */
int session__follow(struct session *s, pid_t pid, unsigned flags);
/*
 * Whether a followed process still runs (a shell or server that is not
 * Python, whose Python descendants may come yet). The kernel forgets a
 * followed process when it exits; one followed too late to be forgotten so
 * (gone before it was followed) is forgotten here.
 */
bool session__followed_alive(struct session *s);
/*
 * --signatures: CPU samples carry their innermost frames' argument types
 * (bpf/signatures.h) for the targets added from now on whose build can be
 * read that way (not free-threaded ones).
 */
void session__signatures(struct session *s);
/* Signature records sent and lost (ring buffer full) so far. */
void session__sig_counts(struct session *s, uint64_t *sent, uint64_t *dropped);
/*
 * Before load: whether CPU samples carry their innermost frame's
 * instruction (--opcodes) and their thread's exception state
 * (--exceptions, --mode exception).
 */
void session__prepare_ticks(struct session *s, bool opcodes, bool exceptions);
/* Stops sampling pid (an image that is gone or was replaced). */
void session__remove_target(struct session *s, pid_t pid);
/* Starts sampling every CPU at hz. 0, or -errno with a reason in why. */
int session__attach(struct session *s, unsigned hz, char *why, size_t whylen);
/*
 * The CPU sampler's mean rate from now on (the agent's --max-overhead): a
 * new pair of random periods starts at once. After session__attach only.
 */
void session__set_hz(struct session *s, unsigned hz);
/* The skeleton, for the modes: --calls, --gc, --imports (usdt.h) and --mem (mem.h). */
struct pybpfprof_bpf *session__skel(struct session *s);
/* Polls one more ring buffer map with the samples. 0 or -errno. */
int session__add_ringbuf(struct session *s, int map_fd, sample_fn_t fn, void *ctx);
/* Delivers pending samples to on_sample; waits up to timeout_ms. Returns count or -errno. */
int session__poll(struct session *s, int timeout_ms);
/* Stops the timers (no new samples) so the remaining ones can be drained. */
void session__detach(struct session *s);
/* Kernel counters summed over CPUs, indexed by PYPROF_CNT_INDEX(kind, counter). */
int session__counters(struct session *s, uint64_t out[PYPROF_CNT_SLOTS]);
void session__close(struct session *s);

/*
 * Checks what pybpfprof needs before anything is loaded: privileges
 * (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; CAP_SYS_PTRACE to read other
 * users' processes) and kernel features (BTF, BPF ring buffer, perf_event
 * programs). 0, or -errno with a sentence naming what is missing.
 */
int check_privileges(char *why, size_t whylen);
/*
 * The uprobes of --calls, --gc, --imports and --mem=alloc need more: their
 * perf events are refused (EACCES) without CAP_SYS_ADMIN, even with
 * CAP_PERFMON (measured on Linux 6.18). For err from such an attach: a
 * clause naming CAP_SYS_ADMIN when that is the cause, else "".
 */
const char *uprobe_privilege_hint(int err);
int check_kernel(const char *btf_path, char *why, size_t whylen);

#endif
