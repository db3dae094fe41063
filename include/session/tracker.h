/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * New processes: turns the kernel's fork/exec/exit notices into profile
 * sections. A forked child of a profiled process is already sampled by the
 * kernel (its entry was copied); here it gets its own section. An exec'd
 * image is checked cheaply (the executable's identity is cached, so a
 * non-Python exec costs a stat) and, when it is CPython, registered at once
 * (its ELF says where _PyRuntime is), so its first bytecode is sampled; the
 * layout check against its live interpreter follows as soon as that exists,
 * retried on a short timer for a bounded time.
 */
#ifndef PYBPFPROF_TRACKER_H
#define PYBPFPROF_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "session/collector.h"
#include "session/session.h"

/* How long a new image may take to show an initialised interpreter. */
#define TRACKER_GIVE_UP_NS 3000000000LL

struct tracker_pending {
	pid_t pid;
	long long since_ns, next_ns, delay_ns;
	long long exec_ns;     /* when it exec'd (CLOCK_MONOTONIC, = bpf_ktime_get_ns), or 0 */
	bool validating;       /* registered before its interpreter existed: layout check due */
	bool held;	       /* stopped at its exec (PY_PROC_HELD): SIGCONT once looked at */
	size_t target;	       /* then: its index in the collector */
	unsigned mismatches;   /* layout checks in a row that did not match */
	long long mismatch_ns; /* when the first of them was made */
};

/*
 * A layout mismatch drops a target only when checks see it this many times
 * in a row over this long: a thread descheduled while it returns from a frame
 * whose code object it has just freed shows a mismatch until it runs again.
 */
#define TRACKER_MISMATCH_CHECKS 3
#define TRACKER_MISMATCH_NS 20000000LL

/* A forked child the kernel samples; its section opens at its first sample. */
struct tracker_forked {
	pid_t pid;
	size_t parent; /* index of the parent's target in the collector */
	/*
	 * Its exit (or exec) was seen in this poll round, or -1. It is
	 * forgotten two rounds later: the samples it took before exiting may
	 * still be in the sample ring until the next full read of it.
	 */
	long long gone_round;
};

/* How a new section's process came to be profiled (tracker.on_section). */
enum tracker_origin {
	TRACKER_FORKED,	      /* a forked child: its parent's entry, from its first tick */
	TRACKER_HELD,	      /* an exec of a held pid: registered before it ran */
	TRACKER_BEFORE_INIT,  /* an exec, registered before its interpreter existed */
	TRACKER_EXEC_RUNNING, /* an exec, registered once its interpreter existed */
	TRACKER_RUNNING,      /* found running (-a's scan, --subprocesses' adoption) */
};

struct tracker {
	/*
	 * Called for each new section, after it is registered (a held
	 * process still stopped); parent: a forked child's parent's section.
	 * NULL: nothing to do.
	 */
	void (*on_section)(void *ctx, struct collector_target *ts,
			   const struct collector_target *parent, enum tracker_origin origin);
	void *on_section_ctx;
	struct collector *c;
	struct session *s;
	bool all;   /* -a: every CPython on the host */
	pid_t self; /* our own pid: never a target */
	struct tracker_pending *pending;
	size_t npending, cap_pending;
	struct tracker_forked *forked;
	size_t nforked, cap_forked;
	uint64_t forks, execs, exits; /* notices received */
	uint64_t registered;	      /* new images profiled */
	uint64_t gave_up;	      /* CPython images never initialised in time */
	long long round;	      /* poll rounds so far (tracker__tick calls) */
};

void tracker__init(struct tracker *tr, struct collector *c, struct session *s, bool all);
void tracker__free(struct tracker *tr);

/* Ring-buffer callback for struct py_proc_event records; ctx is the tracker. */
int tracker__on_event(void *ctx, void *data, size_t size);

/* collector->on_unknown: opens the section of a forked child at its first sample. */
struct collector_target *tracker__forked_section(void *ctx, int pid);

/*
 * Processes on their way to a section: new images not registered yet, and
 * live forked children not sampled yet. While any remain, -p runs go on.
 */
size_t tracker__starting(struct tracker *tr);

/* -a: registers every CPython process running now. Returns how many. */
size_t tracker__scan(struct tracker *tr);

/* Watches pid's image from now on (exec_ns: when it exec'd, 0 if unknown). */
void tracker__watch(struct tracker *tr, pid_t pid, long long exec_ns);

/*
 * Counts one more layout check of p that did not match, made at now: true
 * when the mismatch is settled (see TRACKER_MISMATCH_CHECKS), or when p's
 * time to start is over.
 */
bool tracker__mismatch_settled(struct tracker_pending *p, long long now_ns);

/*
 * --subprocesses with -p: the targets' descendants that exist already are
 * followed (flags, enum py_follow_flags) and profiled when they run CPython.
 * Returns how many were registered.
 */
size_t tracker__adopt(struct tracker *tr, const pid_t *roots, size_t nroots, unsigned flags);

/*
 * After each poll round: retries pending registrations that are due (now_ns
 * is CLOCK_MONOTONIC) and forgets exited children and parked samples that
 * their two rounds of grace have not claimed.
 */
void tracker__tick(struct tracker *tr, long long now_ns);

/*
 * After collector__compact: the collector indices held (a pending layout
 * check, a forked child's parent) follow map; those of forgotten targets
 * are dropped (their processes are gone).
 */
void tracker__remap(struct tracker *tr, const size_t *map);

/* The poll timeout to use: short while a registration is pending. */
int tracker__timeout_ms(const struct tracker *tr, int idle_ms, long long now_ns);

#endif
