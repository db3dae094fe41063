// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's labels from what a target controls: its command line (the
 * service name) and its /proc/PID/cgroup (the container id or cgroup path),
 * both of any bytes and length. Whatever comes in, every label value is
 * NUL-terminated within its buffer and holds only the bytes that pass
 * through Pyroscope's name{k=v,...}, file names and OTLP strings; the file
 * name has no '/'; the ingest URL is percent-encoded (no brace, comma, equals
 * sign, space or control byte in its query).
 *
 * The same bytes are also a target's /proc/PID/environ (NUL-separated, not
 * terminated, any bytes): its labels and service name hold only those bytes
 * too, keys only [A-Za-z0-9_] (and the OpenTelemetry names [A-Za-z0-9._-]),
 * never more than the caps, never a key of ours, and the service no '/'.
 *
 * Input: the command line, a NUL byte, then the cgroup file's text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(const char *v, size_t cap)
{
	size_t n = strnlen(v, cap);

	if (n == cap)
		abort();
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("_-./:@+", *v))
			abort();
}

static void check_url(const char *url)
{
	const char *q = strchr(url, '?');

	for (; q && *q; q++)
		if (strchr("{},\" ", *q) || (unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			abort();
}

static void check_key(const char *k, const char *allowed)
{
	if (strnlen(k, AGENT_KEY_MAX) == AGENT_KEY_MAX || !k[0])
		abort();
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && !strchr(allowed, *k))
			abort();
}

/* data as a target's environ, in a buffer of its own size (ASan sees a read past it) */
static void check_environ(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "team.name", "a", "k8s.cluster.name" };
	struct agent_job j = { .hz = 99, .pid = 1 };
	char *env = malloc(size ? size : 1), url[16384];
	struct agent_env e;
	size_t i, n;

	if (!env)
		return;
	memcpy(env, data, size);
	agent_env_parse(env, size, keys, 3, &e);
	free(env);
	check_value(e.service, sizeof(e.service));
	if (strchr(e.service, '/') || e.n > AGENT_ENV_LABELS)
		abort();
	snprintf(j.service, sizeof(j.service), "%s", e.service[0] ? e.service : "s");
	n = agent_labels(j.labels, "h", j.service, 1, "c", "3.11", "0::/x\n");
	j.nlabels = agent_labels_env(j.labels, n, &e);
	j.nlabels = agent_labels_user(j.labels, j.nlabels, 0, "root");
	if (j.nlabels > AGENT_MAX_LABELS)
		abort();
	for (i = 0; i < j.nlabels; i++) {
		check_key(j.labels[i].key, "_");
		check_key(agent_label_otel(&j.labels[i]), "._-");
		check_value(j.labels[i].value, sizeof(j.labels[i].value));
		/* ours only where ours put them */
		if (i >= n && i + 2 < j.nlabels &&
		    (!strcmp(j.labels[i].key, "uid") || !strcmp(j.labels[i].key, "hostname")))
			abort();
	}
	if (!agent_push_url(url, sizeof(url), "http://127.0.0.1:4040", &j))
		check_url(url);
	else if (j.nlabels < AGENT_MAX_LABELS)
		abort(); /* every label set fits the URL */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 2), *cgroup, name[256], url[16384];
	struct agent_job j = { .hz = 99, .pid = 1 };
	size_t i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = text[size + 1] = '\0';
	cgroup = text + strlen(text) + 1;
	agent_service_name(text, cgroup, j.service, sizeof(j.service));
	check_value(j.service, sizeof(j.service));
	j.nlabels = agent_labels(j.labels, text, j.service, 1, text, cgroup, cgroup);
	/* a user name from the user database: the administrator's, bounded and reduced all the same */
	j.nlabels = agent_labels_user(j.labels, j.nlabels, (long long)size - 1, cgroup);
	if (j.nlabels > AGENT_MAX_LABELS)
		abort();
	for (i = 0; i < j.nlabels; i++)
		check_value(j.labels[i].value, sizeof(j.labels[i].value));
	if (!agent_file_name(name, sizeof(name), 0, j.service, 1) && strchr(name, '/'))
		abort();
	if (!agent_push_url(url, sizeof(url), "http://127.0.0.1:4040", &j))
		check_url(url);
	if (agent_cgroup_pod_uid(cgroup, name, sizeof(name)) &&
	    (strlen(name) != 36 || strspn(name, "0123456789abcdefABCDEF-") != 36))
		abort();
	free(text);
	check_environ(data, size);
	return 0;
}
