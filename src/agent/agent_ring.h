/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's flight recorder (--recorder): the last seconds of CPU samples,
 * every one, resolved (frame ids of the profile's table, whose names were
 * read when the sample came), in a ring bounded by bytes. Pure, private to
 * the agent; unit-tested (tests/unit/test_agent_ring.c).
 */
#ifndef PYBPFPROF_AGENT_RING_H
#define PYBPFPROF_AGENT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One sample as the ring holds it; its nframes frame ids follow it. */
struct agent_ring_rec {
	int64_t mono_ns; /* CLOCK_MONOTONIC: the kernel's time of the tick */
	int32_t pid;
	uint32_t tid;
	uint32_t nframes;
	uint32_t pad;
};

struct agent_ring {
	uint8_t *buf; /* records back to back, wrapping: a record never straddles the end */
	size_t cap;   /* bytes of buf */
	size_t head, tail, used; /* the oldest record at head, the next write at tail */
	size_t wrap;		 /* where the records before tail end (0: not wrapped) */
	uint64_t n;		 /* records held */
	long long window_ns;	 /* records older than the newest by more are let go */
	uint64_t recorded;	 /* records taken */
	uint64_t aged;		 /* let go for their age (the window's normal course) */
	uint64_t evicted;	 /* pushed out by the byte bound while in the window */
	uint64_t refused;	 /* larger than the ring alone: not taken */
};

/* max_bytes: the bound (at least one record of a deep stack); window_ns: what a capture covers. */
int agent_ring__init(struct agent_ring *r, size_t max_bytes, long long window_ns);
void agent_ring__free(struct agent_ring *r);
/* The bytes a record of n frames takes in the ring. */
size_t agent_ring_rec_bytes(uint32_t n);
/*
 * Takes a sample (frames innermost first). The oldest go first: those out of
 * the window (aged), then, to make room, those still in it (evicted); a record
 * larger than the whole ring is refused. false: not taken.
 */
bool agent_ring__push(struct agent_ring *r, long long mono_ns, int pid, uint32_t tid,
		      const uint32_t *frames, uint32_t n);
/*
 * Calls fn for each record with mono_ns >= since_ns, oldest first (the
 * frames right after the record). The ring is not changed.
 */
void agent_ring__each(const struct agent_ring *r, long long since_ns,
		      void (*fn)(void *ctx, const struct agent_ring_rec *rec,
				 const uint32_t *frames),
		      void *ctx);

/*
 * The rate logic of --recorder, in one place: sampling runs at rate_hz; an
 * interval profile (at hz, hz <= rate_hz) keeps each sample with probability
 * hz / rate_hz, by a draw of *state (xorshift64, never 0). Unbiased whatever
 * the threads' interleaving: a deterministic 1 in k over the merged stream of
 * samples aliases (two threads alternating, k = 2: one of them never kept).
 */
bool agent_rate_keep(uint64_t *state, unsigned hz, unsigned rate_hz);

/*
 * --trigger-cpu: one process's samples by quarter second, the last 64 s
 * (enough for --trigger-for's 60 and a bucket in progress). Bucket b holds
 * the samples taken in [b, b + 1) x AGENT_CPU_BUCKET_NS after the agent's
 * start. Zeroed memory is a valid empty window.
 */
#define AGENT_CPU_BUCKETS 256
#define AGENT_CPU_BUCKET_NS 250000000LL
struct agent_cpu_window {
	long long last; /* the newest bucket counted in */
	bool above;	/* over the threshold at the last look (a trigger is the crossing) */
	uint32_t n[AGENT_CPU_BUCKETS];
};

/* One sample in bucket b (one older than the window is not counted). */
void agent_cpu_window__add(struct agent_cpu_window *w, long long b);
/* The samples of buckets [upto - k, upto). */
uint64_t agent_cpu_window__sum(const struct agent_cpu_window *w, long long upto, unsigned k);

struct profile;
struct profile_target;

/*
 * A capture (agent_recorder.c): one section per process with a sample in
 * the window, each sample a stack of its own (count 1) with its time. The
 * sections borrow their names and threads from the profile's (all), valid
 * until the profile changes: the capture is encoded before then.
 */
struct agent_capture {
	struct profile_target *targets;
	uint64_t **times; /* [section][stack]: CLOCK_REALTIME ns of each sample */
	size_t n, cap;
	uint64_t samples, left_out; /* taken; of processes left out (keep said no) */
	long long first_ns;	    /* CLOCK_MONOTONIC of the oldest sample taken; 0: none */
};

/*
 * The ring's samples since since_ns (CLOCK_MONOTONIC) into c; real_off:
 * CLOCK_REALTIME - CLOCK_MONOTONIC. keep(ctx, section): whether the
 * samples of the process of all->targets[section] go in (a process without
 * a section any more goes in with its pid alone). 0 or -ENOMEM (c freed).
 */
int agent_capture__build(struct agent_capture *c, const struct agent_ring *r,
			 const struct profile *all, long long since_ns, long long real_off,
			 bool (*keep)(void *ctx, size_t section), void *ctx);
/*
 * c's samples as a gzip'd Perfetto trace (report_perfetto) into *out (*len
 * bytes; the caller frees it): each a CPU sample on its thread's track, at
 * its time since the window's start. v: the capture's view (targets c's,
 * their frame ids v's, start_ns and start_unix_ns the window's); its
 * timeline is filled and let go here, and c's sections get their tl_proc.
 * 0 or -errno (*out NULL).
 */
int agent_capture__timeline(struct profile *v, struct agent_capture *c, uint8_t **out, size_t *len);
void agent_capture__free(struct agent_capture *c);

#endif
