// SPDX-License-Identifier: GPL-2.0-only
/*
 * --metrics ADDR:PORT: the agent's own figures in Prometheus' text format at
 * /metrics. The main loop publishes a snapshot (agent_metrics__publish)
 * five times a second; a thread of ours runs libmicrohttpd (its external
 * polling mode, so that what we do to its connections happens between its
 * own steps) and answers the scrapes: GET /metrics only, one request per
 * connection. A slow or hostile client costs a scrape, never a sample, and
 * never another client's scrape: every connection is closed at most
 * METRICS_DEADLINE_NS after it was accepted, whatever it sends (one byte a
 * second kept an idle timeout from ever firing); each client (a local user,
 * or an address: agent_clients.c) holds at most METRICS_PER_CLIENT at once,
 * more are closed at once; all together at most METRICS_CONNECTIONS. Both
 * are counted. Counters are 64-bit and printed as they are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "util/mono.h"
#include "agent.h"
#include "agent_metrics.h"

int agent_parse_hostport(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon, *h = s;
	size_t n;

	if (s[0] == '[') { /* [v6]:port */
		colon = strstr(s, "]:");
		if (!colon)
			return -EINVAL;
		h = s + 1;
		n = colon - h;
		colon++;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', colon - s))
			return -EINVAL;
		n = colon - s;
	}
	if (n >= hostlen || !colon[1] || strlen(colon + 1) >= portlen ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) || atoi(colon + 1) < 1 ||
	    atoi(colon + 1) > 65535)
		return -EINVAL;
	memcpy(host, h, n);
	host[n] = '\0';
	snprintf(port, portlen, "%s", colon + 1);
	return 0;
}

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
/*
 * Connections held at once, one client's of them, how long one lives from
 * its accept (a scrape takes milliseconds; Prometheus' own timeout is 10 s),
 * the seconds one may stay idle, and its buffer.
 */
#define METRICS_CONNECTIONS 256
#define METRICS_PER_CLIENT 8
#define METRICS_DEADLINE_NS 3000000000LL
#define METRICS_TIMEOUT_S 5
#define METRICS_CONNECTION_MEMORY (16 * 1024)
/* The longest the thread waits for libmicrohttpd: how late a deadline or a stop may be seen. */
#define METRICS_TICK_MS 100

/* A connection libmicrohttpd holds: whose it is, and since when. */
struct metrics_conn {
	struct MHD_Connection *c;
	int fd; /* libmicrohttpd's: valid until its close notice (in our thread) */
	struct agent_client_key key;
	long long start_ns;
	bool cut; /* shut down: it closes at libmicrohttpd's next step */
};

struct agent_metrics {
	struct MHD_Daemon *daemon;
	pthread_t thread;
	bool stop, started;
	pthread_mutex_t lock;
	struct agent_metrics_snapshot snap;
	struct agent_sink **sinks;
	size_t nsinks;
	/* the thread's own, as the connections are */
	uint64_t scrapes, refused, timed_out;
	int diag_fd;
	struct metrics_conn conns[METRICS_CONNECTIONS];
	size_t nconns;
	struct agent_gate *gate; /* --recorder: /capture's */
};

static void put_counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
		(unsigned long long)v);
}

static void put_seconds(FILE *f, const char *name, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %.6f\n", name, help, name, name, v);
}

static void put_gauge(FILE *f, const char *name, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name, v);
}

/* One metric family, one sample per cause. */
static void put_causes(FILE *f, const char *name, const char *help, const char *const *causes,
		       const uint64_t *v, size_t n)
{
	size_t i;

	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (i = 0; i < n; i++)
		fprintf(f, "%s{cause=\"%s\"} %llu\n", name, causes[i], (unsigned long long)v[i]);
}

static void put_sinks(FILE *f, struct agent_metrics *m)
{
	static const char *const what[] = { "sent", "dropped", "refused", "errors", "retries" };
	struct agent_sink_stats st[4] = {};
	size_t i, k;

	for (i = 0; i < m->nsinks && i < 4; i++)
		agent_sink__stats(m->sinks[i], &st[i]);
	for (k = 0; k < 5; k++) {
		fprintf(f,
			"# HELP pybpfprof_sink_%s_total Profiles %s by each sink (errors: failed "
			"attempts)\n# TYPE pybpfprof_sink_%s_total counter\n",
			what[k], what[k], what[k]);
		for (i = 0; i < m->nsinks && i < 4; i++) {
			uint64_t v[] = { st[i].sent, st[i].dropped, st[i].rejected, st[i].errors,
					 st[i].retries };

			fprintf(f, "pybpfprof_sink_%s_total{sink=\"%s\"} %llu\n", what[k],
				agent_sink__name(m->sinks[i]) + 2, (unsigned long long)v[k]);
		}
	}
	fprintf(f, "# HELP pybpfprof_sink_queue_depth Profiles waiting in each sink's queue (the "
		   "one being sent aside)\n"
		   "# TYPE pybpfprof_sink_queue_depth gauge\n");
	for (i = 0; i < m->nsinks && i < 4; i++)
		fprintf(f, "pybpfprof_sink_queue_depth{sink=\"%s\"} %zu\n",
			agent_sink__name(m->sinks[i]) + 2, st[i].depth);
	fprintf(f, "# HELP pybpfprof_sink_queue_bytes Bytes of the profiles waiting in each sink's "
		   "queue\n# TYPE pybpfprof_sink_queue_bytes gauge\n");
	for (i = 0; i < m->nsinks && i < 4; i++)
		fprintf(f, "pybpfprof_sink_queue_bytes{sink=\"%s\"} %llu\n",
			agent_sink__name(m->sinks[i]) + 2, (unsigned long long)st[i].bytes);
}

static void put_programs(FILE *f, const struct agent_metrics_snapshot *s)
{
	size_t i;

	fprintf(f, "# HELP pybpfprof_bpf_run_seconds_total Time the kernel spent in each BPF "
		   "program\n# TYPE pybpfprof_bpf_run_seconds_total counter\n");
	for (i = 0; i < s->nprogs; i++)
		fprintf(f, "pybpfprof_bpf_run_seconds_total{program=\"%s\"} %.9f\n",
			s->progs[i].name, s->progs[i].run_ns / 1e9);
	fprintf(f, "# HELP pybpfprof_bpf_runs_total Runs of each BPF program\n"
		   "# TYPE pybpfprof_bpf_runs_total counter\n");
	for (i = 0; i < s->nprogs; i++)
		fprintf(f, "pybpfprof_bpf_runs_total{program=\"%s\"} %llu\n", s->progs[i].name,
			(unsigned long long)s->progs[i].runs);
}

/* One gauge family with a sample per process (pid and service labels). */
static void put_mem_procs(FILE *f, const struct agent_metrics_snapshot *s, const char *name,
			  const char *help, bool retained)
{
	size_t i;

	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < s->nmem_procs; i++)
		fprintf(f, "%s{pid=\"%d\",service=\"%s\"} %llu\n", name, s->mem_procs[i].pid,
			s->mem_procs[i].service,
			(unsigned long long)(retained ? s->mem_procs[i].retained :
							s->mem_procs[i].touched));
}

/* --mem's figures: per process (the AGENT_METRICS_MEM_PROCS holding most), the range tables. */
static void put_mem(FILE *f, const struct agent_metrics_snapshot *s)
{
	if (!s->mem)
		return;
	put_counter(f, "pybpfprof_memory_intervals_total",
		    "Memory profiles closed (one per process or service)", s->mem_intervals);
	put_counter(f, "pybpfprof_memory_intervals_empty_total",
		    "Memory profiles not made: no byte touched, mapped, released or in use",
		    s->mem_intervals_empty);
	put_mem_procs(f, s, "pybpfprof_memory_touched_bytes",
		      "Bytes of new pages touched in the last interval (sampled page faults)",
		      false);
	put_mem_procs(f, s, "pybpfprof_memory_retained_bytes",
		      "Bytes mapped since the agent started and still mapped at the last "
		      "interval's end",
		      true);
	put_gauge(f, "pybpfprof_memory_ranges",
		  "Address ranges the range tables follow, all processes together", s->mem_ranges);
	put_counter(f, "pybpfprof_memory_ranges_untracked_total",
		    "Mappings a full range table could not follow (their release is unmatched)",
		    s->mem_untracked);
	put_counter(f, "pybpfprof_memory_released_unknown_bytes_total",
		    "Bytes released that no followed mapping covered (mapped before the agent)",
		    s->mem_released_unknown);
	put_counter(f, "pybpfprof_memory_ranges_unmatched_total",
		    "Range records whose stack record never came", s->mem_unmatched);
	put_counter(f, "pybpfprof_memory_range_records_lost_total",
		    "Memory calls' address records lost (ring buffer full)", s->mem_records_lost);
}

/* --recorder's figures: its captures, the triggers it refused, its ring. */
static void put_recorder(FILE *f, const struct agent_metrics_snapshot *s)
{
	static const char *const refused[AGENT_TRIGGER_N] = { "signal", "http", "cpu" };
	size_t i;

	if (!s->recorder)
		return;
	put_counter(f, "pybpfprof_recorder_captures_total",
		    "Flight recorder captures handed to --output-dir (its sink counts the writes)",
		    s->captures);
	put_counter(f, "pybpfprof_recorder_captures_failed_total",
		    "Flight recorder captures not made: out of memory", s->capture_failed);
	fprintf(f, "# HELP pybpfprof_recorder_triggers_refused_total Triggers refused within "
		   "--recorder-cooldown of the last capture, by trigger\n"
		   "# TYPE pybpfprof_recorder_triggers_refused_total counter\n");
	for (i = 0; i < AGENT_TRIGGER_N; i++)
		fprintf(f,
			"pybpfprof_recorder_triggers_refused_total{trigger=\"%s\",cause=\"cooldown\"} "
			"%llu\n",
			refused[i], (unsigned long long)s->capture_refused[i]);
	fprintf(f,
		"pybpfprof_recorder_triggers_refused_total{trigger=\"http\",cause=\"not_loopback\"} "
		"%llu\n",
		(unsigned long long)s->not_loopback);
	put_gauge(f, "pybpfprof_recorder_ring_bytes", "Bytes the flight recorder's samples take",
		  s->ring_bytes);
	put_gauge(f, "pybpfprof_recorder_ring_max_bytes", "Its bound (--recorder-max-mb)",
		  s->ring_cap);
	put_gauge(f, "pybpfprof_recorder_ring_samples", "Samples it holds", s->ring_samples);
	put_counter(f, "pybpfprof_recorder_ring_evicted_total",
		    "Samples pushed out by the bound while still in the window", s->ring_evicted);
	put_counter(f, "pybpfprof_recorder_ring_refused_total",
		    "Samples larger than the whole ring: not kept", s->ring_refused);
}

/* The sampling rate, and --max-overhead's budget and what it did. */
static void put_budget(FILE *f, const struct agent_metrics_snapshot *s)
{
	put_gauge(f, "pybpfprof_sampling_rate_hz",
		  "Samples per second per CPU now (under -F when --max-overhead lowered it)",
		  s->rate_hz);
	put_gauge(f, "pybpfprof_sampling_rate_max_hz", "The rate asked (-F, or --recorder-rate)",
		  s->max_hz);
	if (!s->budget_pct)
		return;
	put_gauge(f, "pybpfprof_overhead_budget_percent", "--max-overhead, % of one CPU",
		  s->budget_pct);
	put_gauge(f, "pybpfprof_overhead_percent",
		  "The last interval's cost: BPF programs' run time and the agent's CPU, % of one "
		  "CPU",
		  s->cost_pct);
	fprintf(f,
		"# HELP pybpfprof_overhead_budget_state Where the rate stands: full (-F), limited "
		"(under it), over (at 1 Hz and over the budget)\n"
		"# TYPE pybpfprof_overhead_budget_state gauge\n");
	fprintf(f, "pybpfprof_overhead_budget_state{state=\"%s\"} 1\n",
		s->budget_state ? s->budget_state : "off");
	put_counter(f, "pybpfprof_sampling_rate_lowered_total", "Intervals whose rate was lowered",
		    s->rate_lowered);
	put_counter(f, "pybpfprof_sampling_rate_raised_total", "Intervals whose rate was raised",
		    s->rate_raised);
}

/* The page, from the snapshot under the lock (sinks have their own). */
static void render(FILE *f, struct agent_metrics *m)
{
	static const char *const dropped[] = { "ring_buffer_full", "unknown_process", "malformed" };
	static const char *const partial[] = { "truncated", "unreadable", "read_error",
					       "no_python" };
	struct agent_metrics_snapshot s;

	pthread_mutex_lock(&m->lock);
	s = m->snap;
	pthread_mutex_unlock(&m->lock);
	put_counter(f, "pybpfprof_samples_total", "Samples in the profiles closed so far",
		    s.samples);
	put_counter(f, "pybpfprof_kernel_events_total", "Timer ticks that hit a profiled process",
		    s.events);
	put_causes(f, "pybpfprof_samples_dropped_total", "Samples lost, by cause", dropped,
		   s.dropped, 3);
	put_causes(f, "pybpfprof_samples_incomplete_total",
		   "Ticks with no full Python stack, by cause", partial, s.partial, 4);
	put_gauge(f, "pybpfprof_processes", "Processes being profiled", s.processes);
	put_counter(f, "pybpfprof_processes_seen_total", "Processes profiled since the start",
		    s.processes_seen);
	put_gauge(f, "pybpfprof_process_records",
		  "Processes the agent holds a record of (running, or not yet forgotten)",
		  s.records);
	put_counter(f, "pybpfprof_intervals_total", "Profiles closed (one per process or service)",
		    s.intervals);
	put_counter(f, "pybpfprof_intervals_empty_total",
		    "Profiles not made: the process (or service) had no sample in the interval",
		    s.intervals_empty);
	put_sinks(f, m);
	put_seconds(f, "pybpfprof_cpu_seconds_total", "CPU time of the agent", s.cpu_s);
	put_gauge(f, "pybpfprof_resident_memory_bytes", "Resident memory of the agent", s.rss);
	put_gauge(f, "pybpfprof_code_cache_bytes", "Memory the targets' code objects take",
		  s.cache_bytes);
	put_programs(f, &s);
	put_budget(f, &s);
	put_mem(f, &s);
	put_recorder(f, &s);
	put_counter(f, "pybpfprof_scrapes_total", "Answers to /metrics", m->scrapes);
	put_counter(f, "pybpfprof_metrics_connections_refused_total",
		    "Connections to /metrics closed at once: their client held its limit already",
		    m->refused);
	put_counter(f, "pybpfprof_metrics_connections_timed_out_total",
		    "Connections to /metrics closed at their deadline, unanswered or unread",
		    m->timed_out);
}

/* The page for one scrape, in a buffer MHD frees once it is sent. */
static struct MHD_Response *metrics_page(struct agent_metrics *m)
{
	struct MHD_Response *r;
	char *page = NULL;
	size_t plen = 0;
	FILE *f = open_memstream(&page, &plen);

	if (!f)
		return NULL;
	m->scrapes++;
	render(f, m);
	if (fclose(f)) {
		free(page);
		return NULL;
	}
	r = MHD_create_response_from_buffer(plen, page, MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(page);
	return r;
}

/* A text answer of ours (a static string). */
static struct MHD_Response *text(const char *s)
{
	return MHD_create_response_from_buffer(strlen(s), (void *)s, MHD_RESPMEM_PERSISTENT);
}

/*
 * --recorder's /capture (POST or GET): from the host's own loopback only
 * (403 otherwise: another host may read the metrics, not fill the disk),
 * 202 when the gate takes it (the loop writes the capture), 429 within the
 * cooldown.
 */
static struct MHD_Response *capture_request(struct agent_metrics *m, struct MHD_Connection *c,
					    unsigned int *status)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	if (!info || !agent_addr_loopback(info->client_addr, sizeof(struct sockaddr_in6))) {
		pthread_mutex_lock(&m->gate->lock);
		m->gate->not_loopback++;
		pthread_mutex_unlock(&m->gate->lock);
		*status = MHD_HTTP_FORBIDDEN;
		return text("pybpfprof agent: /capture is taken from this host's loopback only\n");
	}
	if (!agent_gate__try(m->gate, mono_ns(), AGENT_TRIGGER_HTTP)) {
		*status = MHD_HTTP_TOO_MANY_REQUESTS;
		return text("pybpfprof agent: a capture was made within --recorder-cooldown; "
			    "ask again later\n");
	}
	*status = MHD_HTTP_ACCEPTED;
	return text("pybpfprof agent: capture taken; it is written in --output-dir\n");
}

/*
 * Called once per request, before any body is read: the answer is queued at
 * once, so a body is never read and a request that sent one is closed after.
 */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	static char not_found[] = "pybpfprof agent: the metrics are at /metrics\n";
	static char not_allowed[] = "pybpfprof agent: /metrics answers GET only\n";
	struct agent_metrics *m = cls;
	struct MHD_Response *r;
	unsigned int status = MHD_HTTP_OK;
	enum MHD_Result ret;

	(void)version, (void)upload, (void)upload_size, (void)req_cls;
	if (__atomic_load_n(&m->gate, __ATOMIC_ACQUIRE) && !strcmp(url, "/capture") &&
	    (!strcmp(method, MHD_HTTP_METHOD_POST) || !strcmp(method, MHD_HTTP_METHOD_GET))) {
		r = capture_request(m, c, &status);
	} else if (strcmp(method, MHD_HTTP_METHOD_GET)) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		r = MHD_create_response_from_buffer(strlen(not_allowed), not_allowed,
						    MHD_RESPMEM_PERSISTENT);
		if (r)
			MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, MHD_HTTP_METHOD_GET);
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		r = MHD_create_response_from_buffer(strlen(not_found), not_found,
						    MHD_RESPMEM_PERSISTENT);
	} else {
		r = metrics_page(m);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ? METRICS_TYPE : "text/plain; charset=utf-8");
	/* one request per connection: its deadline is that request's */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * A connection opened or closed (libmicrohttpd's notice, in our thread): a
 * new one is its client's, and closed at once when that client holds its
 * limit already.
 */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct agent_metrics *m = cls;
	const union MHD_ConnectionInfo *info;
	struct metrics_conn *mc;
	size_t i, same = 0;

	(void)socket_context;
	for (i = 0; code == MHD_CONNECTION_NOTIFY_CLOSED && i < m->nconns; i++)
		if (m->conns[i].c == c) {
			m->conns[i] = m->conns[--m->nconns];
			return;
		}
	info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (code != MHD_CONNECTION_NOTIFY_STARTED || !info || m->nconns == METRICS_CONNECTIONS)
		return;
	mc = &m->conns[m->nconns];
	memset(mc, 0, sizeof(*mc));
	mc->c = c;
	mc->fd = info->connect_fd;
	mc->start_ns = mono_ns();
	agent_client_key(m->diag_fd, mc->fd, &mc->key);
	for (i = 0; i < m->nconns; i++)
		same += agent_client_key_equal(&m->conns[i].key, &mc->key) && !m->conns[i].cut;
	if (same >= METRICS_PER_CLIENT) {
		shutdown(mc->fd, SHUT_RDWR);
		mc->cut = true;
		m->refused++;
	}
	m->nconns++;
}

/* The connections past their deadline shut down: libmicrohttpd then closes them. */
static void cut_late(struct agent_metrics *m)
{
	long long now = mono_ns();
	size_t i;

	for (i = 0; i < m->nconns; i++)
		if (!m->conns[i].cut && now - m->conns[i].start_ns >= METRICS_DEADLINE_NS) {
			shutdown(m->conns[i].fd, SHUT_RDWR);
			m->conns[i].cut = true;
			m->timed_out++;
		}
}

static void *metrics_thread(void *arg)
{
	struct agent_metrics *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		MHD_run_wait(m->daemon, METRICS_TICK_MS);
		cut_late(m);
	}
	return NULL;
}

/*
 * libmicrohttpd on the first of spec's addresses it can bind, polled by our
 * thread; NULL with the reason in why. The agent's only listener: the limits
 * above bound what clients hold, and sampling never waits for it (publish
 * takes the lock for one copy).
 */
static struct MHD_Daemon *listen_on(struct agent_metrics *m, const char *spec, char *why,
				    size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res = NULL,
			*ai;
	struct MHD_Daemon *d = NULL;
	char host[256], port[8];
	int rc, err = 0;

	if (agent_parse_hostport(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, whylen,
			 "--metrics takes ADDR:PORT (127.0.0.1:9464, [::1]:9464, "
			 ":9464 for every address), not %s",
			 spec);
		return NULL;
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(why, whylen, "--metrics %s: %s", spec, gai_strerror(rc));
		return NULL;
	}
	for (ai = res; ai && !d; ai = ai->ai_next) {
		errno = 0;
		d = MHD_start_daemon(MHD_USE_AUTO | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     0, NULL, NULL, answer, m, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_CONNECTIONS,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_TIMEOUT_S,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				     (size_t)METRICS_CONNECTION_MEMORY,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
				     MHD_OPTION_END);
		if (!d && errno)
			err = errno;
	}
	freeaddrinfo(res);
	/* libmicrohttpd does not promise errno on failure: without one, say what to check. */
	if (!d && err)
		snprintf(why, whylen, "cannot listen on %s for --metrics: %s", spec, strerror(err));
	else if (!d)
		snprintf(why, whylen,
			 "cannot listen on %s for --metrics: give a free port on an address of "
			 "this host",
			 spec);
	return d;
}

static void metrics_free(struct agent_metrics *m)
{
	if (m->daemon)
		MHD_stop_daemon(m->daemon);
	if (m->diag_fd >= 0)
		close(m->diag_fd);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

struct agent_metrics *agent_metrics__start(const char *spec, struct agent_sink **sinks,
					   size_t nsinks, char *why, size_t whylen)
{
	struct agent_metrics *m = calloc(1, sizeof(*m));
	int err;

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	m->sinks = sinks;
	m->nsinks = nsinks;
	pthread_mutex_init(&m->lock, NULL);
	/* without it (no AF_NETLINK, as in a locked-down unit), local clients are addresses */
	m->diag_fd = agent_client_diag_open();
	m->daemon = listen_on(m, spec, why, whylen);
	if (!m->daemon) {
		metrics_free(m);
		return NULL;
	}
	err = pthread_create(&m->thread, NULL, metrics_thread, m);
	if (err) {
		snprintf(why, whylen, "cannot start the --metrics thread: %s", strerror(err));
		metrics_free(m);
		return NULL;
	}
	m->started = true;
	return m;
}

void agent_metrics__publish(struct agent_metrics *m, const struct agent_metrics_snapshot *s)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->snap = *s;
	pthread_mutex_unlock(&m->lock);
}

void agent_metrics__set_gate(struct agent_metrics *m, struct agent_gate *gate)
{
	if (m)
		__atomic_store_n(&m->gate, gate, __ATOMIC_RELEASE);
}

void agent_metrics__stop(struct agent_metrics *m)
{
	if (!m)
		return;
	__atomic_store_n(&m->stop, true, __ATOMIC_RELEASE);
	if (m->started)
		pthread_join(m->thread, NULL);
	metrics_free(m);
}
