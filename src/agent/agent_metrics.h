/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's --metrics server (agent_metrics.c): Prometheus' text format at
 * /metrics, from a snapshot the main loop publishes. Private to cli/.
 */
#ifndef PYBPFPROF_AGENT_METRICS_H
#define PYBPFPROF_AGENT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/socket.h>

struct agent_sink;

#define AGENT_METRICS_PROGS 32

struct agent_metrics_prog {
	char name[32];
	uint64_t run_ns, runs;
};

/* --mem: the processes with the most bytes in use get a gauge each (bounded cardinality). */
#define AGENT_METRICS_MEM_PROCS 64

struct agent_metrics_mem_proc {
	int pid;
	char service[64];
	uint64_t touched, retained; /* the last interval's touched, in use at its end */
};

/* What set off a flight recorder capture (--recorder). */
enum agent_trigger { AGENT_TRIGGER_SIGNAL, AGENT_TRIGGER_HTTP, AGENT_TRIGGER_CPU, AGENT_TRIGGER_N };

/*
 * --recorder's triggers, from the loop (SIGUSR1) and the --metrics thread
 * (/capture): at most one capture per cooldown, whichever asks; those
 * refused counted. Its own lock.
 */
struct agent_gate {
	pthread_mutex_t lock;
	long long cooldown_ns;
	long long last_ns; /* CLOCK_MONOTONIC of the last trigger taken; 0: none yet */
	bool http_due;	   /* a /capture taken, for the loop to make */
	uint64_t refused[AGENT_TRIGGER_N]; /* within the cooldown */
	uint64_t not_loopback;		   /* /capture from another host: 403 */
};

void agent_gate__init(struct agent_gate *g, long long cooldown_ns);
/* Whether a trigger at now_ns is taken (it starts the cooldown); else counted refused. */
bool agent_gate__try(struct agent_gate *g, long long now_ns, enum agent_trigger t);
/* The loop: whether a /capture was taken since the last call. */
bool agent_gate__take_http(struct agent_gate *g);

struct agent_metrics_snapshot {
	uint64_t samples, events, intervals, processes_seen, records;
	uint64_t intervals_empty, mem_intervals_empty; /* not made: nothing in them */
	uint64_t dropped[3]; /* ring buffer full, unknown process, malformed */
	uint64_t partial[4]; /* truncated, unreadable, read error, no Python frame */
	double processes, cpu_s, rss, cache_bytes;
	struct agent_metrics_prog progs[AGENT_METRICS_PROGS];
	size_t nprogs;
	/* --mem */
	bool mem;
	uint64_t mem_intervals, mem_ranges, mem_untracked, mem_released_unknown, mem_unmatched,
		mem_records_lost;
	struct agent_metrics_mem_proc mem_procs[AGENT_METRICS_MEM_PROCS];
	size_t nmem_procs;
	/* --recorder: captures handed to --output-dir, failed (out of memory), refused */
	bool recorder;
	uint64_t captures, capture_failed, capture_refused[AGENT_TRIGGER_N], not_loopback;
	uint64_t ring_bytes, ring_cap, ring_samples, ring_evicted, ring_refused;
	/* the sampling rate now and the one asked; --max-overhead's budget, last cost, changes */
	unsigned rate_hz, max_hz;
	double budget_pct, cost_pct; /* % of one CPU; budget_pct 0: off */
	const char *budget_state;    /* agent_budget_state_name's (static) */
	uint64_t rate_lowered, rate_raised;
};

struct agent_metrics;

/*
 * Who a --metrics client is (agent_clients.c), for its limit of
 * connections: a local user by the uid that made its socket, else an IPv4
 * address or an IPv6 /64.
 */
enum agent_client_kind { AGENT_CLIENT_UID = 1, AGENT_CLIENT_IPV4, AGENT_CLIENT_IPV6 };

struct agent_client_key {
	enum agent_client_kind kind;
	uint8_t bytes[8]; /* the uid (host order), the IPv4 address or the IPv6 /64 */
};

/* A NETLINK_SOCK_DIAG socket for agent_client_key, or -1 (then clients are addresses). */
int agent_client_diag_open(void);
/* The client at the other end of the connected TCP socket fd. 0 or -errno. */
int agent_client_key(int diag_fd, int fd, struct agent_client_key *k);
/* Pure: the key of a client elsewhere, by its address. 0 or -EAFNOSUPPORT. */
int agent_client_key_addr(const struct sockaddr *sa, socklen_t len, struct agent_client_key *k);
bool agent_client_key_equal(const struct agent_client_key *a, const struct agent_client_key *b);
/* Pure: whether the address is the host's own loopback (127.0.0.0/8, ::1, ::ffff:127.x.y.z). */
bool agent_addr_loopback(const struct sockaddr *sa, socklen_t len);

/*
 * Pure: "127.0.0.1:9464", "[::1]:9464", ":9464" (host "" for every address)
 * into host and port. 0 or -EINVAL.
 */
int agent_parse_hostport(const char *s, char *host, size_t hostlen, char *port, size_t portlen);
/* Listens and starts the thread; the sinks are read at each scrape. NULL with why. */
struct agent_metrics *agent_metrics__start(const char *spec, struct agent_sink **sinks,
					   size_t nsinks, char *why, size_t whylen);
void agent_metrics__publish(struct agent_metrics *m, const struct agent_metrics_snapshot *s);
/* --recorder: POST (or GET) /capture from the loopback asks gate for a capture. */
void agent_metrics__set_gate(struct agent_metrics *m, struct agent_gate *gate);
void agent_metrics__stop(struct agent_metrics *m);

#endif
