// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's pure parts: interval boundaries, labels from what a target
 * shows (its command line, /proc/PID/cgroup and its environment, all the
 * target's to write, so every value is bounded and reduced to safe bytes),
 * file names, the ingest URL and the disk budget. See agent.h.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "agent.h"

long long agent_next_boundary(long long start_ns, long long interval_ns, long long now_ns)
{
	if (interval_ns <= 0 || now_ns < start_ns)
		return start_ns + (interval_ns > 0 ? interval_ns : 1);
	return start_ns + ((now_ns - start_ns) / interval_ns + 1) * interval_ns;
}

/* Bytes that pass through Pyroscope's name{k=v,...} and file names unchanged. */
static bool label_byte_ok(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '@' ||
	       c == '+';
}

void agent_label_value(const char *in, char *out, size_t len)
{
	size_t i;

	if (!len)
		return;
	for (i = 0; in && in[i] && i + 1 < len; i++)
		out[i] = label_byte_ok(in[i]) ? in[i] : '_';
	out[i] = '\0';
}

/* The word of cmdline at *p (space separated), into w; advances *p. */
static bool next_word(const char **p, char *w, size_t len)
{
	const char *s = *p;
	size_t n = 0;

	while (*s == ' ')
		s++;
	if (!*s)
		return false;
	while (*s && *s != ' ') {
		if (n + 1 < len)
			w[n++] = *s;
		s++;
	}
	w[n] = '\0';
	*p = s;
	return true;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* python, python3, python3.11, python3.11d: an interpreter, whose options come next. */
static bool is_python(const char *word)
{
	const char *b = base_name(word);

	return !strncmp(b, "python", 6) && strspn(b + 6, "0123456789.dmu") == strlen(b + 6);
}

/* The interpreter's options that take the next word as their argument. */
static bool option_takes_arg(const char *w)
{
	return !strcmp(w, "-W") || !strcmp(w, "-X") || !strcmp(w, "--check-hash-based-pycs");
}

/* The script or module an interpreter's words name, into name (a path or a module). */
static void python_target(const char *p, char *name, size_t len)
{
	char w[256];

	name[0] = '\0';
	while (next_word(&p, w, sizeof(w))) {
		if (!strcmp(w, "-m") || !strncmp(w, "-m", 2)) {
			if (w[2])
				snprintf(name, len, "%s", w + 2);
			else if (next_word(&p, w, sizeof(w)))
				snprintf(name, len, "%s", w);
			return;
		}
		if (!strcmp(w, "-c") || !strcmp(w, "-")) {
			snprintf(name, len, "python");
			return;
		}
		if (option_takes_arg(w)) {
			if (!next_word(&p, w, sizeof(w)))
				return;
			continue;
		}
		if (w[0] == '-')
			continue;
		snprintf(name, len, "%s", base_name(w));
		return;
	}
}

void agent_service_name(const char *cmdline, const char *comm, char *out, size_t len)
{
	const char *p = cmdline ? cmdline : "";
	char first[256], name[256];
	size_t n;

	name[0] = '\0';
	if (next_word(&p, first, sizeof(first))) {
		if (is_python(first)) {
			python_target(p, name, sizeof(name));
		} else {
			/* a launcher, or a process title ("gunicorn: worker [app]") */
			snprintf(name, sizeof(name), "%s", base_name(first));
			name[strcspn(name, ":[")] = '\0';
		}
	}
	n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, ".py"))
		name[n - 3] = '\0';
	if (!name[0])
		snprintf(name, sizeof(name), "%s", comm && comm[0] ? comm : "python");
	agent_label_value(name, out, len);
}

/* The first run of exactly 64 hex digits in s, bounded by non-hex bytes: a container id. */
static const char *container_id(const char *s)
{
	size_t run = 0;
	const char *q;

	for (q = s;; q++) {
		if (*q && isxdigit((unsigned char)*q)) {
			run++;
			continue;
		}
		if (run == 64)
			return q - 64;
		run = 0;
		if (!*q || *q == '\n')
			return NULL;
	}
}

int agent_cgroup_parse(const char *text, char *out, size_t len)
{
	const char *line, *path, *id;
	char buf[AGENT_LABEL_MAX];

	out[0] = '\0';
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		/* hierarchy-ID:controllers:path; the path may hold anything */
		path = strchr(line, ':');
		path = path ? strchr(path + 1, ':') : NULL;
		if (!path)
			continue;
		path++;
		id = container_id(path);
		if (id) {
			snprintf(buf, sizeof(buf), "%.64s", id);
			agent_label_value(buf, out, len);
			return 1;
		}
		/* the unified hierarchy's line (0::/path) names the cgroup */
		if (!strncmp(line, "0::", 3) && path[0] && path[0] != '\n' &&
		    strncmp(path, "/\n", 2) && strcmp(path, "/")) {
			snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(path, "\n"), path);
			agent_label_value(buf, out, len);
		}
	}
	return out[0] ? 2 : 0;
}

/* A pod's uid at s (after "pod"), then no hex digit, into out with '-'. */
static bool pod_uid_at(const char *s, char *out)
{
	int i;

	for (i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		/* a NUL or a newline fails either test: the scan ends there */
		if (dash ? s[i] != '-' && s[i] != '_' : !isxdigit((unsigned char)s[i]))
			return false;
		out[i] = dash ? '-' : s[i];
	}
	out[36] = '\0';
	return !isxdigit((unsigned char)s[36]);
}

bool agent_cgroup_pod_uid(const char *text, char *out, size_t len)
{
	const char *line, *end, *p;
	char uid[37];

	if (len)
		out[0] = '\0';
	for (line = text; line && *line; line = *end ? end + 1 : NULL) {
		end = line + strcspn(line, "\n");
		if (!memmem(line, end - line, "kubepods", 8))
			continue;
		for (p = line; end - p >= 3 + 36; p++)
			if (!memcmp(p, "pod", 3) && pod_uid_at(p + 3, uid)) {
				if (len > 36)
					memcpy(out, uid, sizeof(uid));
				return len > 36;
			}
	}
	return false;
}

static void label_set(struct agent_label *l, const char *key, const char *value)
{
	snprintf(l->key, sizeof(l->key), "%s", key);
	l->otel[0] = '\0';
	agent_label_value(value, l->value, sizeof(l->value));
}

size_t agent_labels(struct agent_label *l, const char *host, const char *service, int pid,
		    const char *cmdline, const char *python, const char *cgroup_text)
{
	char buf[AGENT_LABEL_MAX];
	size_t n = 0;
	int kind;

	label_set(&l[n++], "hostname", host);
	label_set(&l[n++], "service_name", service);
	snprintf(buf, sizeof(buf), "%d", pid);
	label_set(&l[n++], "pid", buf);
	label_set(&l[n++], "command", cmdline);
	label_set(&l[n++], "python_version", python);
	kind = cgroup_text ? agent_cgroup_parse(cgroup_text, buf, sizeof(buf)) : 0;
	if (kind)
		label_set(&l[n++], kind == 1 ? "container_id" : "cgroup", buf);
	if (cgroup_text && agent_cgroup_pod_uid(cgroup_text, buf, sizeof(buf)))
		label_set(&l[n++], "k8s_pod_uid", buf);
	return n;
}

size_t agent_labels_user(struct agent_label *l, size_t n, long long uid, const char *user)
{
	char buf[24];

	if (uid < 0 || uid > UINT32_MAX || n > AGENT_MAX_LABELS - 2)
		return n;
	snprintf(buf, sizeof(buf), "%lld", uid);
	label_set(&l[n++], "uid", buf);
	if (user && user[0])
		label_set(&l[n++], "user", user);
	return n;
}

const char *agent_otel_key(const char *key)
{
	static const char *const map[][2] = {
		{ "hostname", "host.name" },
		{ "service_name", "service.name" },
		{ "pid", "process.pid" },
		{ "command", "process.command_line" },
		{ "python_version", "process.runtime.version" },
		{ "container_id", "container.id" },
		{ "cgroup", "process.linux.cgroup" },
		{ "k8s_pod_uid", "k8s.pod.uid" },
		/* the effective user's: not process.owner, whose user the conventions leave open */
		{ "uid", "process.user.id" },
		{ "user", "process.user.name" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(key, map[i][0]))
			return map[i][1];
	return key;
}

const char *agent_label_otel(const struct agent_label *l)
{
	return l->otel[0] ? l->otel : agent_otel_key(l->key);
}

/* One NAME=value of the environment: its value, n its bytes. */
struct env_var {
	const char *v;
	size_t n;
};

/* The entries of an environment read at most (a count cap besides the byte one). */
#define ENV_VARS_MAX 4096

/* The first NAME= of env[0..len) (getenv's pick), or none (v NULL). */
static struct env_var env_find(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name), i = 0, k, e;

	for (k = 0; i < len && k < ENV_VARS_MAX; k++, i = e + 1) {
		const char *nul = memchr(env + i, '\0', len - i);

		e = nul ? (size_t)(nul - env) : len;
		if (e - i > nl && !memcmp(env + i, name, nl) && env[i + nl] == '=')
			return (struct env_var){ env + i + nl + 1, e - i - nl - 1 };
	}
	return (struct env_var){ NULL, 0 };
}

/* [*s, *e) without the spaces and tabs at either end. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* [s, e) percent-decoded (a malformed escape kept as is) into out; false: cut. */
static bool decode_value(const char *s, const char *e, bool percent, char *out, size_t len)
{
	size_t n = 0;

	for (; s < e; s++) {
		int hi = -1, lo = -1;

		if (n + 1 >= len) {
			out[n] = '\0';
			return false;
		}
		if (percent && *s == '%' && e - s >= 3) {
			hi = hex_digit(s[1]);
			lo = hex_digit(s[2]);
		}
		if (hi >= 0 && lo >= 0) {
			/* a decoded NUL ends nothing: agent_label_value reads to the first */
			out[n++] = (char)(hi << 4 | lo) ? (char)(hi << 4 | lo) : '_';
			s += 2;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return true;
}

/*
 * A key as OpenTelemetry may name it: a letter, then letters, digits, '.',
 * '-' and '_'; dots allowed only when dots is set (PYROSCOPE_TAGS's are
 * label names). Into otel, and key made pprof's and Pyroscope's.
 */
static bool env_key(const char *s, const char *e, bool dots, char *otel, char *key)
{
	size_t n = e - s, i;

	if (!n || n >= AGENT_KEY_MAX || !isalpha((unsigned char)*s))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (!isalnum(c) && c != '_' && !(dots && (c == '.' || c == '-')))
			return false;
		otel[i] = (char)c;
		key[i] = isalnum(c) ? (char)c : '_';
	}
	otel[i] = key[i] = '\0';
	return true;
}

/* Whether OTEL_RESOURCE_ATTRIBUTES's key is one the agent takes (*name: under which). */
static bool env_wanted(const char *otel, const char *const *keys, size_t nkeys, const char **name)
{
	static const char *const std[] = { "service.version", "deployment.environment.name",
					   "container.id", "k8s.pod.name", "k8s.namespace.name" };
	size_t i;

	*name = otel;
	/* the attribute's name before semantic conventions 1.27 */
	if (!strcmp(otel, "deployment.environment")) {
		*name = "deployment.environment.name";
		return true;
	}
	for (i = 0; i < sizeof(std) / sizeof(std[0]); i++)
		if (!strcmp(otel, std[i]))
			return true;
	for (i = 0; i < nkeys; i++)
		if (!strcmp(otel, keys[i]))
			return true;
	return false;
}

/* One k=v of [s, e) taken into out (or refused and counted). */
static void env_pair(const char *s, const char *e, bool otel_attrs, const char *const *keys,
		     size_t nkeys, struct agent_env *out)
{
	const char *eq = memchr(s, '=', e - s), *ks = s, *ke = eq, *name, *vs, *ve = e;
	char otel[AGENT_KEY_MAX], key[AGENT_KEY_MAX], val[AGENT_LABEL_MAX];
	struct agent_label *l;
	size_t i;

	trim(&s, &e);
	if (s == e)
		return; /* an empty member: "a=1,,b=2" */
	if (!eq) {
		out->refused++;
		return;
	}
	trim(&ks, &ke);
	vs = eq + 1;
	trim(&vs, &ve);
	if (!env_key(ks, ke, otel_attrs, otel, key)) {
		out->refused++;
		return;
	}
	if (otel_attrs && !strcmp(otel, "service.name")) {
		/* OTEL_SERVICE_NAME, read first, wins */
		if (!out->service[0]) {
			decode_value(vs, ve, true, val, AGENT_SERVICE_MAX);
			agent_label_value(val, out->service, sizeof(out->service));
		}
		return;
	}
	if (otel_attrs && !env_wanted(otel, keys, nkeys, &name))
		return;
	if (otel_attrs && name != otel)
		env_key(name, name + strlen(name), true, otel, key);
	for (i = 0; i < out->n; i++)
		if (!strcmp(out->labels[i].key, key))
			break;
	if (vs == ve || i < out->n || out->n == AGENT_ENV_LABELS) {
		out->refused++;
		return;
	}
	l = &out->labels[out->n++];
	memcpy(l->key, key, sizeof(key));
	memcpy(l->otel, otel, sizeof(otel));
	out->cut += !decode_value(vs, ve, otel_attrs, val, sizeof(val));
	agent_label_value(val, l->value, sizeof(l->value));
}

/* The comma-separated pairs of one variable's value. */
static void env_pairs(struct env_var v, bool otel_attrs, const char *const *keys, size_t nkeys,
		      struct agent_env *out)
{
	const char *s = v.v, *end, *c;

	if (!s)
		return;
	for (end = s + v.n; s < end; s = c + 1) {
		c = memchr(s, ',', end - s);
		if (!c)
			c = end;
		env_pair(s, c, otel_attrs, keys, nkeys, out);
	}
}

void agent_env_parse(const char *env, size_t len, const char *const *keys, size_t nkeys,
		     struct agent_env *out)
{
	struct env_var name = env_find(env, len, "OTEL_SERVICE_NAME");
	char val[AGENT_SERVICE_MAX];
	const char *s = name.v, *e;

	memset(out, 0, sizeof(*out));
	if (s) {
		e = s + name.n;
		trim(&s, &e);
		decode_value(s, e, false, val, sizeof(val));
		agent_label_value(val, out->service, sizeof(out->service));
	}
	env_pairs(env_find(env, len, "OTEL_RESOURCE_ATTRIBUTES"), true, keys, nkeys, out);
	env_pairs(env_find(env, len, "PYROSCOPE_TAGS"), false, keys, nkeys, out);
	/* the service names files (agent_file_name): no '/' */
	for (s = strchr(out->service, '/'); s; s = strchr(s, '/'))
		out->service[s - out->service] = '_';
}

/* Whether key (pprof's) or otel is taken by one of l[0..n) or by a label of ours. */
static bool label_taken(const struct agent_label *l, size_t n, const struct agent_label *e)
{
	static const char *const ours[] = {
		"hostname",	  "service_name", "pid",	 "command",
		"python_version", "container_id", "cgroup",	 "uid",
		"user",		  "tid",	  "thread_name", "env_labels_refused",
		"env_values_cut"
	};
	size_t i;

	if (!strcmp(e->otel, "process.runtime.name")) /* encode_otlp's */
		return true;
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!strcmp(e->key, ours[i]) || !strcmp(e->otel, agent_otel_key(ours[i])))
			break;
	/* container.id is ours only when the cgroup named one: below */
	if (i < sizeof(ours) / sizeof(ours[0]) && strcmp(e->key, "container_id"))
		return true;
	for (i = 0; i < n; i++)
		if (!strcmp(e->key, l[i].key) || !strcmp(e->otel, agent_label_otel(&l[i])))
			return true;
	return false;
}

size_t agent_labels_env(struct agent_label *l, size_t n, const struct agent_env *env)
{
	unsigned refused = env->refused;
	size_t i, base = n;
	char buf[16];

	for (i = 0; i < env->n; i++) {
		if (n + 4 > AGENT_MAX_LABELS || label_taken(l, base, &env->labels[i])) {
			refused++;
			continue;
		}
		l[n++] = env->labels[i];
	}
	if (refused && n + 2 < AGENT_MAX_LABELS) {
		snprintf(buf, sizeof(buf), "%u", refused);
		label_set(&l[n++], "env_labels_refused", buf);
	}
	if (env->cut && n + 2 < AGENT_MAX_LABELS) {
		snprintf(buf, sizeof(buf), "%u", env->cut);
		label_set(&l[n++], "env_values_cut", buf);
	}
	return n;
}

int agent_file_name(char *out, size_t len, long long from_ns, const char *service, int pid)
{
	time_t t = from_ns / 1000000000LL;
	char stamp[32], who[16];
	struct tm tm;
	int n;

	if (!gmtime_r(&t, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	if (pid)
		snprintf(who, sizeof(who), "%d", pid);
	else
		snprintf(who, sizeof(who), "all");
	/* service is a label value: no '/', but it may be "." or ".." alone */
	n = snprintf(out, len, "%s-%s-%s.pb.gz", stamp, service, who);
	if (n < 0 || (size_t)n >= len || strchr(service, '/'))
		return -ENAMETOOLONG;
	return 0;
}

bool agent_file_ours(const char *name)
{
	size_t n = strlen(name);
	size_t i;

	static const char timeline[] = ".capture.perfetto-trace.gz";
	bool tl = n > sizeof(timeline) && !strcmp(name + n - (sizeof(timeline) - 1), timeline);

	if (n < 25 || (strcmp(name + n - 6, ".pb.gz") && !tl) || name[8] != 'T' ||
	    name[15] != 'Z' || name[16] != '-')
		return false;
	for (i = 0; i < 15; i++)
		if (i != 8 && !isdigit((unsigned char)name[i]))
			return false;
	return true;
}

/* Appends s percent-encoded (all but unreserved bytes). false when out is full. */
static bool put_encoded(char *out, size_t len, size_t *n, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = *s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
			if (*n + 1 >= len)
				return false;
			out[(*n)++] = c;
		} else {
			if (*n + 3 >= len)
				return false;
			out[(*n)++] = '%';
			out[(*n)++] = hex[c >> 4];
			out[(*n)++] = hex[c & 15];
		}
	}
	out[*n] = '\0';
	return true;
}

int agent_push_url(char *out, size_t len, const char *base, const struct agent_job *j)
{
	char name[4096], tail[160];
	size_t i, n, used;
	int m;

	m = snprintf(name, sizeof(name), "%s{", j->service);
	for (i = 0, used = m; i < j->nlabels && used < sizeof(name); i++)
		used += snprintf(name + used, sizeof(name) - used, "%s%s=%s", i ? "," : "",
				 j->labels[i].key, j->labels[i].value);
	if (used + 2 > sizeof(name))
		return -ENAMETOOLONG;
	strcat(name, "}");
	n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	m = snprintf(out, len, "%.*s/ingest?name=", (int)n, base);
	if (m < 0 || (size_t)m >= len)
		return -ENAMETOOLONG;
	n = m;
	if (!put_encoded(out, len, &n, name))
		return -ENAMETOOLONG;
	snprintf(tail, sizeof(tail),
		 "&from=%lld&until=%lld&sampleRate=%u&spyName=pybpfprof&format=pprof",
		 j->from_ns / 1000000000LL, j->until_ns / 1000000000LL, j->hz);
	if (n + strlen(tail) + 1 > len)
		return -ENAMETOOLONG;
	strcpy(out + n, tail);
	return 0;
}

size_t agent_disk_victims(const struct agent_file *files, size_t n, uint64_t budget)
{
	uint64_t total = 0;
	size_t k;

	for (k = 0; k < n; k++)
		total += files[k].bytes;
	for (k = 0; k + 1 < n && total > budget; k++)
		total -= files[k].bytes;
	return k;
}

long long agent_backoff_ns(unsigned attempt, uint64_t rnd)
{
	long long d = AGENT_BACKOFF_BASE_NS;
	unsigned i;

	for (i = 1; i < attempt && d < AGENT_BACKOFF_CAP_NS; i++)
		d *= 2;
	if (d > AGENT_BACKOFF_CAP_NS)
		d = AGENT_BACKOFF_CAP_NS;
	/* jitter: d * (0.75 + 0.5 * rnd / 2^64), so that many agents do not retry in step */
	return d * 3 / 4 + (long long)((unsigned __int128)(d / 2) * rnd >> 64);
}
