// SPDX-License-Identifier: GPL-2.0-only
/*
 * --metrics ADDR:PORT: the agent's own figures in Prometheus' text format at
 * /metrics. The main loop publishes a snapshot (agent_metrics__publish)
 * five times a second; a thread of its own answers the scrapes, one at a
 * time, each with a short timeout, so a slow or hostile client costs a
 * scrape, never a sample. Counters are 64-bit and printed as they are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
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

struct agent_metrics {
	int fd;
	int stop_pipe[2];
	pthread_t thread;
	pthread_mutex_t lock;
	struct agent_metrics_snapshot snap;
	struct agent_sink **sinks;
	size_t nsinks;
	uint64_t scrapes;
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
	fprintf(f, "# HELP pybpfprof_sink_queue_depth Profiles waiting in each sink's queue\n"
		   "# TYPE pybpfprof_sink_queue_depth gauge\n");
	for (i = 0; i < m->nsinks && i < 4; i++)
		fprintf(f, "pybpfprof_sink_queue_depth{sink=\"%s\"} %zu\n",
			agent_sink__name(m->sinks[i]) + 2, st[i].depth);
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
	put_sinks(f, m);
	put_seconds(f, "pybpfprof_cpu_seconds_total", "CPU time of the agent", s.cpu_s);
	put_gauge(f, "pybpfprof_resident_memory_bytes", "Resident memory of the agent", s.rss);
	put_gauge(f, "pybpfprof_code_cache_bytes", "Memory the targets' code objects take",
		  s.cache_bytes);
	put_programs(f, &s);
	put_counter(f, "pybpfprof_scrapes_total", "Answers to /metrics", m->scrapes);
}

/* One connection: a bounded request, one answer. */
static void serve(struct agent_metrics *m, int c)
{
	struct timeval tv = { .tv_sec = 1 };
	char req[4096], *page = NULL, head[256];
	size_t plen = 0, n = 0;
	ssize_t r;
	FILE *f;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (n < sizeof(req) - 1 && (r = read(c, req + n, sizeof(req) - 1 - n)) > 0) {
		n += r;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[n] = '\0';
	f = open_memstream(&page, &plen);
	if (!f)
		return;
	if (!strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13)) {
		m->scrapes++;
		render(f, m);
		fclose(f);
		snprintf(head, sizeof(head),
			 "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 plen);
	} else {
		fputs("pybpfprof agent: the metrics are at /metrics\n", f);
		fclose(f);
		snprintf(head, sizeof(head),
			 "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 plen);
	}
	if (write(c, head, strlen(head)) > 0 && plen && write(c, page, plen) < 0)
		n = 0;
	free(page);
}

static void *metrics_thread(void *arg)
{
	struct agent_metrics *m = arg;
	struct pollfd p[2] = { { .fd = m->fd, .events = POLLIN },
			       { .fd = m->stop_pipe[0], .events = POLLIN } };
	int c;

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve(m, c);
		close(c);
	}
	return NULL;
}

/* A listening socket on host:port; -errno with the reason in why. */
static int listen_on(const char *spec, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res = NULL,
			*ai;
	char host[256], port[8];
	int fd = -1, one = 1, rc;

	if (agent_parse_hostport(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, whylen,
			 "--metrics takes ADDR:PORT (127.0.0.1:9464, [::1]:9464, "
			 ":9464 for every address), not %s",
			 spec);
		return -EINVAL;
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(why, whylen, "--metrics %s: %s", spec, gai_strerror(rc));
		return -EINVAL;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
			rc = -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(why, whylen, "cannot listen on %s for --metrics: %s", spec,
			 strerror(rc ? -rc : EADDRNOTAVAIL));
	return fd;
}

struct agent_metrics *agent_metrics__start(const char *spec, struct agent_sink **sinks,
					   size_t nsinks, char *why, size_t whylen)
{
	struct agent_metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	m->sinks = sinks;
	m->nsinks = nsinks;
	m->stop_pipe[0] = m->stop_pipe[1] = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->fd = listen_on(spec, why, whylen);
	if (m->fd >= 0 && pipe2(m->stop_pipe, O_CLOEXEC)) {
		snprintf(why, whylen, "cannot start --metrics: %s", strerror(errno));
	} else if (m->fd >= 0 && pthread_create(&m->thread, NULL, metrics_thread, m)) {
		snprintf(why, whylen, "cannot start the --metrics thread");
	} else if (m->fd >= 0) {
		return m;
	}
	if (m->fd >= 0)
		close(m->fd);
	if (m->stop_pipe[0] >= 0) {
		close(m->stop_pipe[0]);
		close(m->stop_pipe[1]);
	}
	pthread_mutex_destroy(&m->lock);
	free(m);
	return NULL;
}

void agent_metrics__publish(struct agent_metrics *m, const struct agent_metrics_snapshot *s)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->snap = *s;
	pthread_mutex_unlock(&m->lock);
}

void agent_metrics__stop(struct agent_metrics *m)
{
	if (!m)
		return;
	if (write(m->stop_pipe[1], "x", 1) != 1)
		pthread_cancel(m->thread);
	pthread_join(m->thread, NULL);
	close(m->fd);
	close(m->stop_pipe[0]);
	close(m->stop_pipe[1]);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
