/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `pybpfprof agent` (cmd_agent.c): a long run that closes one profile per
 * process (or per service with --merge) every interval and hands it, as gzip
 * pprof, to its sinks. Private to cli/. The pure parts (interval boundaries,
 * labels, names, URLs, the disk budget, the queue and its backoff) are here
 * for the unit tests; the sinks run on their own threads (agent_sink.c).
 */
#ifndef PYBPFPROF_AGENT_H
#define PYBPFPROF_AGENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "util/hashmap.h"

#define AGENT_ENV_LABELS 8 /* labels from a target's environment, at most */
/* ours (9), the environment's, and its two counts (refused, cut) */
#define AGENT_MAX_LABELS (9 + AGENT_ENV_LABELS + 2)
#define AGENT_LABEL_MAX 128 /* bytes of one label value, NUL included */
#define AGENT_KEY_MAX 48    /* bytes of one label key, NUL included */
#define AGENT_SERVICE_MAX 64
#define AGENT_ENVIRON_MAX 65536 /* bytes of a target's /proc/PID/environ read */
#define AGENT_LABEL_ENV_MAX 8	/* --label-env keys */

struct agent_label {
	char key[AGENT_KEY_MAX];  /* pprof's and Pyroscope's: [A-Za-z_][A-Za-z0-9_]* */
	char otel[AGENT_KEY_MAX]; /* OTLP's attribute name; "": agent_otel_key(key) */
	char value[AGENT_LABEL_MAX];
};

/* One closed interval of one process (or service): what every sink is given. */
struct agent_job {
	int refs;      /* one per sink holding it (atomic) */
	uint8_t *body; /* gzip pprof */
	size_t len;
	uint8_t *otlp; /* an OTLP ExportProfilesServiceRequest, when an --otlp sink wants one */
	size_t otlp_len;
	char service[AGENT_SERVICE_MAX];
	int pid; /* 0: a --merge'd service */
	struct agent_label labels[AGENT_MAX_LABELS];
	size_t nlabels;
	size_t npairs;		     /* of them, on every pprof sample (all but the pid) */
	long long from_ns, until_ns; /* CLOCK_REALTIME */
	unsigned hz;
	uint64_t samples;
	bool mem; /* --mem: a memory profile (mem-pprof's sample types), not CPU */
	/* a flight recorder capture (--recorder): service "recorder", pid its number */
	bool capture;
	/* of a capture: its Perfetto trace, gzip'd (body), beside its pprof */
	bool timeline;
};

void agent_job__put(struct agent_job *j);

/* The next interval boundary after now: start + k * interval, never drifting. */
long long agent_next_boundary(long long start_ns, long long interval_ns, long long now_ns);

/*
 * The service a command line names: `python3 app.py` -> app, `python -m
 * pkg.mod` -> pkg.mod, a launcher script (`python3 /usr/bin/gunicorn ...`,
 * or a title such as "gunicorn: worker [app]") -> its name; comm if none.
 * Made a label value (agent_label_value).
 */
void agent_service_name(const char *cmdline, const char *comm, char *out, size_t len);
/*
 * Pure: what /proc/PID/cgroup (untrusted text, any length) says of the
 * container: a 64-hex-digit id in the path -> 1 and the id; else a cgroup
 * path other than "/" -> 2 and the path; else 0.
 */
int agent_cgroup_parse(const char *text, char *out, size_t len);
/*
 * Pure: the Kubernetes pod's uid a kubelet's cgroup path in that text names
 * ("pod" then 8-4-4-4-12 hex digits, '-' or systemd's '_' between them, in a
 * line that says "kubepods"), into out with '-' (at most 36 bytes and the
 * NUL); false, out "", if none.
 */
bool agent_cgroup_pod_uid(const char *text, char *out, size_t len);
/* A label value safe in Pyroscope's name{k=v}: other bytes become '_', cut to len - 1. */
void agent_label_value(const char *in, char *out, size_t len);
/*
 * The labels of one process: host, service, pid, command, python, container
 * or cgroup, and the Kubernetes pod's uid when the cgroup names one.
 */
size_t agent_labels(struct agent_label *l, const char *host, const char *service, int pid,
		    const char *cmdline, const char *python, const char *cgroup_text);
/*
 * After the n labels of agent_labels, whose the process is: uid (its
 * effective uid; none when uid < 0) and user (its name, when user is not
 * NULL or ""). The new count.
 */
size_t agent_labels_user(struct agent_label *l, size_t n, long long uid, const char *user);
/*
 * What a target's environment (/proc/PID/environ: NUL-separated, any bytes,
 * the target's to rewrite at any time) says of it: OTEL_SERVICE_NAME (else
 * service.name of OTEL_RESOURCE_ATTRIBUTES) as service; of
 * OTEL_RESOURCE_ATTRIBUTES's pairs (values percent-decoded),
 * service.version, deployment.environment.name (or the older
 * deployment.environment), container.id, k8s.pod.name, k8s.namespace.name
 * and the keys the operator listed (--label-env); then PYROSCOPE_TAGS's
 * k=v pairs. Keys as the OpenTelemetry names them (otel) and as pprof and
 * Pyroscope can carry them (key: '.' and '-' made '_'); values reduced by
 * agent_label_value. At most AGENT_ENV_LABELS; the first of a key wins.
 */
struct agent_env {
	char service[AGENT_SERVICE_MAX]; /* "": none */
	struct agent_label labels[AGENT_ENV_LABELS];
	size_t n;
	unsigned refused; /* pairs not taken: key invalid, a duplicate, beyond the cap */
	unsigned cut;	  /* values cut to AGENT_LABEL_MAX - 1 bytes */
};
void agent_env_parse(const char *env, size_t len, const char *const *keys, size_t nkeys,
		     struct agent_env *out);
/*
 * The environment's labels after the n of agent_labels: those whose key is
 * none of the n (ours win) nor one agent_labels_user or the pprof samples
 * use; then env_labels_refused and env_values_cut when not 0. The new count.
 */
size_t agent_labels_env(struct agent_label *l, size_t n, const struct agent_env *env);
/* The OpenTelemetry resource attribute for one of our label keys (semantic conventions). */
const char *agent_otel_key(const char *key);
/* A label's OpenTelemetry name: its own, else agent_otel_key's. */
const char *agent_label_otel(const struct agent_label *l);
/* 20261124T081500Z-SERVICE-PID.pb.gz (PID "all" for 0): sorts by time. -ENAMETOOLONG or 0. */
int agent_file_name(char *out, size_t len, long long from_ns, const char *service, int pid);
/*
 * Whether name is one agent_file_name makes, or a capture's timeline
 * (...capture.perfetto-trace.gz): the only files --max-disk deletes.
 */
bool agent_file_ours(const char *name);
/*
 * Pyroscope's ingest URL for a job: BASE/ingest?name=SERVICE{labels}&from=
 * &until=&sampleRate=&spyName=pybpfprof&format=pprof, percent-encoded.
 * -ENAMETOOLONG or 0.
 */
int agent_push_url(char *out, size_t len, const char *base, const struct agent_job *j);

struct agent_file {
	char name[128]; /* agent_file_name's are at most 17 + 63 + 1 + 10 + 10 bytes */
	uint64_t bytes;
	/* which file it is: a file of that name is deleted only while all three match */
	uint64_t dev, ino;
	int64_t ctime_s;
	long ctime_ns;
};

/* Lines of a manifest read at most (the files beyond are never deleted). */
#define AGENT_MANIFEST_MAX 262144
/*
 * Pure: the manifest --max-disk keeps in --output-dir (its header line, then
 * "NAME DEV INO CTIME_S CTIME_NS BYTES" per file), text of any bytes. The
 * entries whose line is well formed and whose name agent_file_ours takes
 * (no '/') into *files (malloc'ed, *n of them, at most AGENT_MANIFEST_MAX); a
 * last line without its newline is ignored. The number of lines refused, or
 * -EINVAL (no header) or -ENOMEM, with nothing in *files.
 */
int agent_manifest_parse(const char *text, size_t len, struct agent_file **files, size_t *n);
/* Writes the manifest of files[0..n) to f. 0 or -EIO. */
int agent_manifest_write(FILE *f, const struct agent_file *files, size_t n);

/*
 * --output-dir (agent_dir.c): the directory opened once and held; files made
 * and (--max-disk, max_bytes > 0) deleted by descriptor, only those the agent
 * wrote, in this run or an earlier one (its manifest). NULL with a sentence.
 */
struct agent_dir;
struct agent_dir *agent_dir__open(const char *path, uint64_t max_bytes, char *why, size_t whylen);
/*
 * The job's file. 0; -EAGAIN (worth a retry); or another -errno: refused for
 * good (the directory was deleted, no name for it); why says which.
 */
int agent_dir__write(struct agent_dir *d, const struct agent_job *j, char *why, size_t whylen);
/* The manifest written, if the list changed since (called when the queue is empty). */
void agent_dir__sync(struct agent_dir *d);
/* The manifest written (if it changed), the directory let go. */
void agent_dir__close(struct agent_dir *d);

/*
 * files sorted by name (oldest first): how many of the oldest to delete so
 * that the rest fit in budget bytes (the newest is kept whatever its size).
 */
size_t agent_disk_victims(const struct agent_file *files, size_t n, uint64_t budget);

/* Backoff before retry attempt (1, 2, ...): base doubling to cap, jitter in [-25 %, +25 %]. */
#define AGENT_BACKOFF_BASE_NS 250000000LL
#define AGENT_BACKOFF_CAP_NS 8000000000LL
long long agent_backoff_ns(unsigned attempt, uint64_t rnd);

/* The memory a job holds: itself and its bodies. */
uint64_t agent_job__bytes(const struct agent_job *j);

/*
 * A bounded queue of jobs: at most cap of them and max_bytes (agent_job__bytes)
 * waiting, besides the head while a send of it runs (sending), which is never
 * pushed out: its memory is held by the send until it returns anyway. Full:
 * the oldest waiting job of the process with the most jobs in it (over
 * max_bytes: whose jobs hold the most bytes) is dropped: the newest
 * profiles matter most, and one busy process's profiles push out its own
 * before any other's (issue 33.4). A job larger than max_bytes alone is
 * dropped at once.
 */
struct agent_queue {
	struct agent_job **jobs; /* a ring of cap + 1 slots */
	size_t cap, head, len;
	uint64_t bytes, max_bytes; /* of the jobs in it, the one being sent included */
	const struct agent_job *sending;
	uint64_t dropped, dropped_big; /* pushed out, or refused for their size (also in dropped) */
	struct hashmap owner_bytes; /* agent_job__owner -> its jobs in the queue and their bytes */
};

/* Whose a job is: its pid, or for a --merge'd service (pid 0) its name's hash. */
uint64_t agent_job__owner(const struct agent_job *j);

int agent_queue__init(struct agent_queue *q, size_t cap, uint64_t max_bytes);
void agent_queue__free(struct agent_queue *q);
/* Takes a reference; jobs pushed out are put and counted. false: j itself was too big. */
bool agent_queue__push(struct agent_queue *q, struct agent_job *j);
struct agent_job *agent_queue__peek(const struct agent_queue *q);
/* Removes the head (the caller owns its reference). */
struct agent_job *agent_queue__pop(struct agent_queue *q);
/* The send of the head has returned: it waits again, and the oldest go if they do not fit. */
void agent_queue__done_sending(struct agent_queue *q);
/* The jobs waiting (the one being sent aside), and their bytes. */
size_t agent_queue__waiting(const struct agent_queue *q, uint64_t *bytes);

/* Counters every sink keeps (read by the main thread under the lock). */
struct agent_sink_stats {
	uint64_t sent, dropped, rejected, errors, retries;
	size_t depth;	/* profiles waiting, the one being sent aside */
	uint64_t bytes; /* and their bytes */
};

struct agent_sink;

/* The sinks: their threads start at once. NULL, with a sentence in why. */
/* queue: at most that many profiles and queue_bytes waiting (agent_queue). */
struct agent_sink *agent_sink__dir(const char *dir, uint64_t max_bytes, size_t queue,
				   uint64_t queue_bytes, char *why, size_t whylen);
struct agent_sink *agent_sink__push(const char *url, const char *auth_file, bool bearer,
				    size_t queue, uint64_t queue_bytes, char *why, size_t whylen);
/* OTLP/HTTP profiles: POST URL/v1development/profiles (URL as is if it ends so). */
struct agent_sink *agent_sink__otlp(const char *url, const char *auth_file, bool bearer,
				    size_t queue, uint64_t queue_bytes, char *why, size_t whylen);
/* Hands the job over (never blocks on the sink's work). */
void agent_sink__submit(struct agent_sink *s, struct agent_job *j);
void agent_sink__stats(struct agent_sink *s, struct agent_sink_stats *out);
const char *agent_sink__name(const struct agent_sink *s);
/* Lets the sink finish its queue until deadline_ns (CLOCK_MONOTONIC), then stops and frees it. */
void agent_sink__stop(struct agent_sink *s, long long deadline_ns);

#endif
