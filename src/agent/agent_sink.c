// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's sinks. Each one has its own thread and bounded queue: the
 * sampling loop only pushes a reference (never waits for a write or a
 * network), a full queue drops a job (counted: the oldest of the process
 * whose jobs hold the most bytes), and a failed send
 * is retried with exponential backoff and jitter until it succeeds, the
 * sink refuses it for good (an HTTP 4xx other than 429), or the queue
 * pushes it out. A sink that is down for hours costs one queue of memory.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/log.h"
#include "util/mono.h"
#include "util/vec.h"
#include "agent.h"

void agent_job__put(struct agent_job *j)
{
	if (j && __atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(j->body);
		free(j->otlp);
		free(j);
	}
}

uint64_t agent_job__bytes(const struct agent_job *j)
{
	return sizeof(*j) + j->len + j->otlp_len;
}

uint64_t agent_job__owner(const struct agent_job *j)
{
	if (j->pid > 0)
		return (uint64_t)j->pid;
	/* above every pid: a service's jobs are their own owner */
	return 1ULL << 63 | hash_bytes(j->service, strnlen(j->service, sizeof(j->service)), 0);
}

/*
 * An owner's jobs in the queue, packed in one word: their count above bit
 * 40, their bytes below (a queue holds at most 65537 jobs, and far less
 * than 2^40 bytes).
 */
#define OWNER_ONE (1ULL << 40)
#define OWNER_BYTES(v) ((v) & (OWNER_ONE - 1))
#define OWNER_JOBS(v) ((v) >> 40)

/* Job j came into the queue (in) or left it: its owner's figures follow. */
static void owner_add(struct agent_queue *q, const struct agent_job *j, bool in)
{
	uint64_t key = agent_job__owner(j), v = OWNER_ONE + agent_job__bytes(j);
	uint64_t *sum = hashmap__find(&q->owner_bytes, key);

	if (in) {
		/* out of memory: the owner is not known, and goes last (fairness only) */
		if (sum)
			*sum += v;
		else
			hashmap__set(&q->owner_bytes, key, v);
	} else if (sum) {
		if (OWNER_JOBS(*sum) > 1)
			*sum -= v;
		else
			hashmap__del(&q->owner_bytes, key);
	}
}

int agent_queue__init(struct agent_queue *q, size_t cap, uint64_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->cap = cap ? cap : 1;
	q->max_bytes = max_bytes;
	hashmap__init(&q->owner_bytes);
	q->jobs = calloc(q->cap + 1, sizeof(*q->jobs));
	return q->jobs ? 0 : -ENOMEM;
}

void agent_queue__free(struct agent_queue *q)
{
	while (q->len)
		agent_job__put(agent_queue__pop(q));
	free(q->jobs);
	q->jobs = NULL;
	hashmap__free(&q->owner_bytes);
}

size_t agent_queue__waiting(const struct agent_queue *q, uint64_t *bytes)
{
	bool busy = q->len && q->sending == q->jobs[q->head];

	if (bytes)
		*bytes = q->bytes - (busy ? agent_job__bytes(q->sending) : 0);
	return q->len - busy;
}

/*
 * The job to push out, by its place from the head: the oldest waiting one
 * of the owner whose jobs are the most (by_bytes: hold the most bytes),
 * the limit the queue is over; ties: the oldest job of all. One pass: the
 * queue holds at most 65537 jobs.
 */
static size_t victim_at(const struct agent_queue *q, bool by_bytes)
{
	size_t slots = q->cap + 1, i = q->sending == q->jobs[q->head], at = i;
	uint64_t most = 0;

	for (; i < q->len; i++) {
		const uint64_t *sum =
			hashmap__find(&q->owner_bytes,
				      agent_job__owner(q->jobs[(q->head + i) % slots]));
		uint64_t v = !sum ? 0 : by_bytes ? OWNER_BYTES(*sum) : OWNER_JOBS(*sum);

		if (v > most) {
			most = v;
			at = i;
		}
	}
	return at;
}

/* The chosen waiting job out of the queue (the later ones move up), put and counted. */
static void drop_one(struct agent_queue *q, bool by_bytes)
{
	size_t slots = q->cap + 1, at = victim_at(q, by_bytes), i;
	struct agent_job *victim = q->jobs[(q->head + at) % slots];

	for (i = at; i + 1 < q->len; i++)
		q->jobs[(q->head + i) % slots] = q->jobs[(q->head + i + 1) % slots];
	q->len--;
	q->bytes -= agent_job__bytes(victim);
	owner_add(q, victim, false);
	agent_job__put(victim);
	q->dropped++;
}

/* Waiting jobs dropped (drop_one) until n more jobs of bytes more fit. */
static void make_room(struct agent_queue *q, size_t n, uint64_t bytes)
{
	uint64_t waiting;
	size_t jobs;

	while ((jobs = agent_queue__waiting(q, &waiting)) &&
	       (jobs + n > q->cap || waiting + bytes > q->max_bytes))
		drop_one(q, jobs + n <= q->cap);
}

void agent_queue__done_sending(struct agent_queue *q)
{
	q->sending = NULL;
	make_room(q, 0, 0);
}

bool agent_queue__push(struct agent_queue *q, struct agent_job *j)
{
	uint64_t jb = agent_job__bytes(j);

	if (jb > q->max_bytes) {
		q->dropped++;
		q->dropped_big++;
		return false;
	}
	make_room(q, 1, jb);
	__atomic_add_fetch(&j->refs, 1, __ATOMIC_ACQ_REL);
	q->jobs[(q->head + q->len) % (q->cap + 1)] = j;
	q->len++;
	q->bytes += jb;
	owner_add(q, j, true);
	return true;
}

struct agent_job *agent_queue__peek(const struct agent_queue *q)
{
	return q->len ? q->jobs[q->head] : NULL;
}

struct agent_job *agent_queue__pop(struct agent_queue *q)
{
	struct agent_job *j;

	if (!q->len)
		return NULL;
	j = q->jobs[q->head];
	q->head = (q->head + 1) % (q->cap + 1);
	q->len--;
	q->bytes -= agent_job__bytes(j);
	owner_add(q, j, false);
	if (q->sending == j)
		q->sending = NULL;
	return j;
}

/* What one send did: done, worth a retry, or refused for good. */
enum send_result { SEND_OK, SEND_RETRY, SEND_REFUSED };

struct agent_sink {
	const char *name;
	enum send_result (*send)(struct agent_sink *s, const struct agent_job *j, char *why,
				 size_t whylen);
	void (*free)(struct agent_sink *s);
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a job came, or stop */
	struct agent_queue q;
	struct agent_sink_stats st;
	bool stopping;
	long long deadline_ns;		    /* when stopping: give up then */
	void (*idle)(struct agent_sink *s); /* its queue is empty (NULL: nothing to do) */
	struct agent_dir *dir;		    /* --output-dir */
	/* --push */
	char *url;
	char *otlp_url; /* --otlp: the whole URL; NULL for --push */
	CURL *curl;
	struct curl_slist *headers;
	struct curl_slist *mime_headers; /* --push of --mem: the auth only (curl sets the type) */
	char *userpwd;
};

/* Waits until until_ns (CLOCK_MONOTONIC); false when the sink stops first. */
static bool sink_wait(struct agent_sink *s, long long until_ns)
{
	struct timespec ts;

	for (;;) {
		long long t = mono_ns(), end = until_ns;

		if (s->stopping) {
			if (t >= s->deadline_ns)
				return false;
			if (end > s->deadline_ns)
				end = s->deadline_ns;
		}
		if (t >= end)
			return true;
		ts.tv_sec = end / 1000000000LL;
		ts.tv_nsec = end % 1000000000LL;
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
}

/* Sends the head job until done, refused, pushed out of the queue, or the sink stops. */
static void sink_send_head(struct agent_sink *s, struct agent_job *j)
{
	char why[256];
	unsigned attempt = 0;
	uint64_t rnd;

	for (;;) {
		enum send_result r;

		/* pushed out meanwhile, it would be dropped and yet sent: it stays */
		s->q.sending = j;
		pthread_mutex_unlock(&s->lock);
		r = s->send(s, j, why, sizeof(why));
		pthread_mutex_lock(&s->lock);
		s->q.sending = NULL;
		if (r == SEND_OK) {
			s->st.sent++;
			break;
		}
		s->st.errors++;
		if (r == SEND_REFUSED) {
			pr_warn("%s: %s; this profile is dropped\n", s->name, why);
			s->st.rejected++;
			break;
		}
		/* waiting again, to be retried: it may be what no longer fits */
		agent_queue__done_sending(&s->q);
		if (agent_queue__peek(&s->q) != j)
			return;
		if (!attempt)
			pr_warn("%s: %s; retrying\n", s->name, why);
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
			rnd = (uint64_t)mono_ns() * 0x9e3779b97f4a7c15ULL;
		if (!sink_wait(s, mono_ns() + agent_backoff_ns(++attempt, rnd))) {
			s->st.dropped++; /* stopping, and out of time */
			break;
		}
		/* while waiting, the queue may have pushed this job out */
		if (agent_queue__peek(&s->q) != j)
			return;
		s->st.retries++;
	}
	if (agent_queue__peek(&s->q) == j)
		agent_job__put(agent_queue__pop(&s->q));
}

static void *sink_thread(void *arg)
{
	struct agent_sink *s = arg;
	struct agent_job *j;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		j = agent_queue__peek(&s->q);
		if (s->stopping && (!j || mono_ns() >= s->deadline_ns))
			break;
		if (!j) {
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		/* hold a reference of our own while the lock is let go */
		__atomic_add_fetch(&j->refs, 1, __ATOMIC_ACQ_REL);
		sink_send_head(s, j);
		agent_job__put(j);
		if (!s->q.len && s->idle) {
			pthread_mutex_unlock(&s->lock);
			s->idle(s);
			pthread_mutex_lock(&s->lock);
		}
	}
	/* what could not be sent before the deadline */
	s->st.dropped += s->q.len;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void agent_sink__submit(struct agent_sink *s, struct agent_job *j)
{
	bool warn;

	pthread_mutex_lock(&s->lock);
	warn = !agent_queue__push(&s->q, j) && s->q.dropped_big == 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (warn)
		pr_warn("%s: a profile of %.1f MiB is more than the queue holds (--queue-mb %.1f): "
			"dropped; such profiles are counted as dropped from now on\n",
			s->name, agent_job__bytes(j) / 1048576.0, s->q.max_bytes / 1048576.0);
}

void agent_sink__stats(struct agent_sink *s, struct agent_sink_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	out->dropped += s->q.dropped;
	out->depth = agent_queue__waiting(&s->q, &out->bytes);
	pthread_mutex_unlock(&s->lock);
}

const char *agent_sink__name(const struct agent_sink *s)
{
	return s->name;
}

static void sink_free(struct agent_sink *s)
{
	if (s->free)
		s->free(s);
	agent_queue__free(&s->q);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}

void agent_sink__stop(struct agent_sink *s, long long deadline_ns)
{
	struct agent_sink_stats st;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	/* (read without the lock by a push in progress: push_progress) */
	__atomic_store_n(&s->deadline_ns, deadline_ns, __ATOMIC_RELEASE);
	__atomic_store_n(&s->stopping, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	agent_sink__stats(s, &st);
	pr_info("%s: %llu profiles sent, %llu dropped, %llu refused, %llu errors, %llu retries\n",
		s->name, (unsigned long long)st.sent, (unsigned long long)st.dropped,
		(unsigned long long)st.rejected, (unsigned long long)st.errors,
		(unsigned long long)st.retries);
	sink_free(s);
}

static struct agent_sink *sink_new(const char *name, size_t queue, uint64_t queue_bytes)
{
	struct agent_sink *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	s->name = name;
	pthread_mutex_init(&s->lock, NULL);
	/* the backoff waits on the monotonic clock: a clock step does not stretch them */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (agent_queue__init(&s->q, queue, queue_bytes)) {
		sink_free(s);
		return NULL;
	}
	return s;
}

static struct agent_sink *sink_start(struct agent_sink *s, char *why, size_t whylen)
{
	int err = pthread_create(&s->thread, NULL, sink_thread, s);

	if (err) {
		snprintf(why, whylen, "cannot start the %s thread: %s", s->name, strerror(err));
		sink_free(s);
		return NULL;
	}
	return s;
}

/* --output-dir (agent_dir.c) */

static enum send_result dir_send(struct agent_sink *s, const struct agent_job *j, char *why,
				 size_t whylen)
{
	int err = agent_dir__write(s->dir, j, why, whylen);

	return !err ? SEND_OK : err == -EAGAIN ? SEND_RETRY : SEND_REFUSED;
}

static void dir_idle(struct agent_sink *s)
{
	agent_dir__sync(s->dir);
}

static void dir_free(struct agent_sink *s)
{
	agent_dir__close(s->dir);
}

struct agent_sink *agent_sink__dir(const char *dir, uint64_t max_bytes, size_t queue,
				   uint64_t queue_bytes, char *why, size_t whylen)
{
	struct agent_sink *s = sink_new("--output-dir", queue, queue_bytes);

	if (!s) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	s->send = dir_send;
	s->idle = dir_idle;
	s->free = dir_free;
	s->dir = agent_dir__open(dir, max_bytes, why, whylen);
	if (!s->dir) {
		sink_free(s);
		return NULL;
	}
	return sink_start(s, why, whylen);
}

/* --push */

static enum send_result push_once(struct agent_sink *s, const struct agent_job *j, char *why,
				  size_t whylen);

static size_t discard(char *ptr, size_t size, size_t n, void *arg)
{
	(void)ptr;
	(void)arg;
	return size * n;
}

/*
 * Pyroscope's sample types of a --mem profile, for its multipart ingest
 * (sample_type_config): the flows sum over time (a line's mapped minus
 * released over any span is its growth there), inuse averages (a level);
 * all are exact bytes or already scaled (touched), not to be scaled again.
 */
static const char mem_type_config[] =
	"{\"touched_space\":{\"units\":\"bytes\",\"aggregation\":\"sum\","
	"\"display-name\":\"touched_space_bytes\",\"sampled\":false},"
	"\"mapped_space\":{\"units\":\"bytes\",\"aggregation\":\"sum\","
	"\"display-name\":\"mapped_space_bytes\",\"sampled\":false},"
	"\"released_space\":{\"units\":\"bytes\",\"aggregation\":\"sum\","
	"\"display-name\":\"released_space_bytes\",\"sampled\":false},"
	"\"inuse_space\":{\"units\":\"bytes\",\"aggregation\":\"average\","
	"\"display-name\":\"inuse_space_bytes\",\"sampled\":false}}";

/* --push of --mem: the body as the form's profile file, with its sample type config. */
static curl_mime *mem_form(CURL *c, const struct agent_job *j)
{
	curl_mime *m = curl_mime_init(c);
	curl_mimepart *p;

	if (!m)
		return NULL;
	p = curl_mime_addpart(m);
	if (!p || curl_mime_name(p, "profile") || curl_mime_filename(p, "profile.pb.gz") ||
	    curl_mime_data(p, (const char *)j->body, j->len))
		goto fail;
	p = curl_mime_addpart(m);
	if (!p || curl_mime_name(p, "sample_type_config") ||
	    curl_mime_filename(p, "sample_type_config.json") ||
	    curl_mime_data(p, mem_type_config, sizeof(mem_type_config) - 1))
		goto fail;
	return m;
fail:
	curl_mime_free(m);
	return NULL;
}

static enum send_result push_send(struct agent_sink *s, const struct agent_job *j, char *why,
				  size_t whylen)
{
	enum send_result r;
	curl_mime *form;

	if (!j->mem || s->otlp_url)
		return push_once(s, j, why, whylen);
	form = mem_form(s->curl, j);
	if (!form) {
		snprintf(why, whylen, "out of memory for the memory profile's form");
		return SEND_RETRY;
	}
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->mime_headers);
	curl_easy_setopt(s->curl, CURLOPT_MIMEPOST, form);
	r = push_once(s, j, why, whylen);
	/* back to plain bodies: the next POSTFIELDS takes over from the form */
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(s->curl, CURLOPT_MIMEPOST, NULL);
	curl_mime_free(form);
	return r;
}

/* One POST of the job (a form already set for --mem); what came of it. */
static enum send_result push_once(struct agent_sink *s, const struct agent_job *j, char *why,
				  size_t whylen)
{
	char url[16384];
	long code = 0;
	CURLcode rc;

	if (s->otlp_url) {
		snprintf(url, sizeof(url), "%s", s->otlp_url);
		curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, (const char *)j->otlp);
		curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->otlp_len);
	} else if (agent_push_url(url, sizeof(url), s->url, j)) {
		snprintf(why, whylen, "the ingest URL is too long");
		return SEND_REFUSED;
	} else if (!j->mem) {
		curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, (const char *)j->body);
		curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->len);
	}
	if (!j->otlp && s->otlp_url) {
		snprintf(why, whylen, "no OTLP encoding of this profile");
		return SEND_REFUSED;
	}
	curl_easy_setopt(s->curl, CURLOPT_URL, url);
	rc = curl_easy_perform(s->curl);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "cannot push to %s: %s", s->url, curl_easy_strerror(rc));
		return SEND_RETRY;
	}
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return SEND_OK;
	snprintf(why, whylen, "%s answered HTTP %ld", s->url, code);
	return code >= 400 && code < 500 && code != 429 && code != 408 ? SEND_REFUSED : SEND_RETRY;
}

static void push_free(struct agent_sink *s)
{
	if (s->curl)
		curl_easy_cleanup(s->curl);
	curl_slist_free_all(s->headers);
	curl_slist_free_all(s->mime_headers);
	if (s->userpwd)
		explicit_bzero(s->userpwd, strlen(s->userpwd));
	free(s->userpwd);
	free(s->url);
	free(s->otlp_url);
}

/* The secret in file: its first line, at most 4 KiB. */
static char *read_secret(const char *file, char *why, size_t whylen)
{
	char buf[4097];
	FILE *f = fopen(file, "re");
	size_t n;

	if (!f) {
		snprintf(why, whylen, "cannot read %s: %s", file, strerror(errno));
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!buf[0]) {
		snprintf(why, whylen, "%s is empty: put the credential on its first line", file);
		return NULL;
	}
	return strdup(buf);
}

static int push_auth(struct agent_sink *s, const char *file, bool bearer, char *why, size_t whylen)
{
	char *secret = read_secret(file, why, whylen);
	char *hdr;

	if (!secret)
		return -EINVAL;
	if (!bearer) {
		s->userpwd = secret;
		curl_easy_setopt(s->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(s->curl, CURLOPT_USERPWD, secret);
		return 0;
	}
	if (asprintf(&hdr, "Authorization: Bearer %s", secret) < 0)
		hdr = NULL;
	explicit_bzero(secret, strlen(secret));
	free(secret);
	s->headers = hdr ? curl_slist_append(s->headers, hdr) : NULL;
	if (hdr)
		explicit_bzero(hdr, strlen(hdr));
	free(hdr);
	return s->headers ? 0 : -ENOMEM;
}

/*
 * A push in progress, every second or so: given up once the agent stops
 * and its deadline has passed, so that a server that takes the request and
 * never answers cannot hold the exit for the whole CURLOPT_TIMEOUT.
 */
static int push_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			 curl_off_t ulnow)
{
	struct agent_sink *s = arg;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE) &&
	       mono_ns() >= __atomic_load_n(&s->deadline_ns, __ATOMIC_ACQUIRE);
}

static void push_options(struct agent_sink *s)
{
	CURL *c = s->curl;

	s->headers = curl_slist_append(s->headers,
				       s->otlp_url ? "Content-Type: application/x-protobuf" :
						     "Content-Type: application/octet-stream");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 15000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, push_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "pybpfprof/" PYBPFPROF_VERSION);
}

/* The headers of a --mem form: s->headers but the Content-Type (curl's, with its boundary). */
static int mime_headers(struct agent_sink *s)
{
	struct curl_slist *h;

	for (h = s->headers; h; h = h->next) {
		struct curl_slist *n;

		if (!strncasecmp(h->data, "Content-Type:", 13))
			continue;
		n = curl_slist_append(s->mime_headers, h->data);
		if (!n)
			return -ENOMEM;
		s->mime_headers = n;
	}
	/* no 100-continue round trip before the form: it is small */
	h = curl_slist_append(s->mime_headers, "Expect:");
	if (!h)
		return -ENOMEM;
	s->mime_headers = h;
	return 0;
}

/* --push, or --otlp with otlp_path the path the OTLP/HTTP signal posts to. */
static struct agent_sink *http_sink(const char *name, const char *url, const char *otlp_path,
				    const char *auth_file, bool bearer, size_t queue,
				    uint64_t queue_bytes, char *why, size_t whylen)
{
	struct agent_sink *s = sink_new(name, queue, queue_bytes);
	size_t n = strlen(url), m = otlp_path ? strlen(otlp_path) : 0;

	if (!s) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	s->send = push_send;
	s->free = push_free;
	s->url = strdup(url);
	s->curl = curl_easy_init();
	if (otlp_path) {
		while (n && url[n - 1] == '/')
			n--;
		/* a URL that already names the signal's path is taken as is */
		if (n >= m && !strncmp(url + n - m, otlp_path, m))
			s->otlp_url = strndup(url, n);
		else if (asprintf(&s->otlp_url, "%.*s%s", (int)n, url, otlp_path) < 0)
			s->otlp_url = NULL;
	}
	if (!s->url || !s->curl || (otlp_path && !s->otlp_url)) {
		snprintf(why, whylen, "cannot set up the HTTP client");
		sink_free(s);
		return NULL;
	}
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		snprintf(why, whylen, "%s takes an http:// or https:// URL, not %s", name, url);
		sink_free(s);
		return NULL;
	}
	push_options(s);
	if (auth_file && push_auth(s, auth_file, bearer, why, whylen)) {
		sink_free(s);
		return NULL;
	}
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
	if (!otlp_path && mime_headers(s)) {
		snprintf(why, whylen, "out of memory");
		sink_free(s);
		return NULL;
	}
	return sink_start(s, why, whylen);
}

struct agent_sink *agent_sink__push(const char *url, const char *auth_file, bool bearer,
				    size_t queue, uint64_t queue_bytes, char *why, size_t whylen)
{
	return http_sink("--push", url, NULL, auth_file, bearer, queue, queue_bytes, why, whylen);
}

struct agent_sink *agent_sink__otlp(const char *url, const char *auth_file, bool bearer,
				    size_t queue, uint64_t queue_bytes, char *why, size_t whylen)
{
	return http_sink("--otlp", url, "/v1development/profiles", auth_file, bearer, queue,
			 queue_bytes, why, whylen);
}
