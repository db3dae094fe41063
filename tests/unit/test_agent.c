/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's pure parts (src/agent/agent.h): interval boundaries, service
 * names from command lines, /proc/PID/cgroup as hostile text, labels, file
 * names, the Pyroscope ingest URL, the disk budget, the queue and backoff;
 * and one output-dir sink on a real directory, with a tiny --max-disk.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include "agent/agent.h"
#include "agent/agent_metrics.h"
#include "proc/procfs.h"
#include "util/mono.h"

static void test_boundaries(void **state)
{
	const long long s = 1000, iv = 2000000000LL;

	(void)state;
	assert_true(agent_next_boundary(s, iv, s) == s + iv);
	assert_true(agent_next_boundary(s, iv, s + iv - 1) == s + iv);
	assert_true(agent_next_boundary(s, iv, s + iv) == s + 2 * iv);
	/* a late tick skips ahead to the next boundary, on the grid (no drift) */
	assert_true(agent_next_boundary(s, iv, s + 5 * iv + 7) == s + 6 * iv);
	assert_true(agent_next_boundary(s, iv, s - 5) == s + iv);
}

static void expect_service(const char *cmdline, const char *comm, const char *want)
{
	char out[AGENT_SERVICE_MAX];

	agent_service_name(cmdline, comm, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_service_names(void **state)
{
	(void)state;
	expect_service("python3 app.py --port 80", "python3", "app");
	expect_service("/usr/bin/python3.11 -u /srv/www/app.py", "python3.11", "app");
	expect_service("python -m pkg.mod arg", "python", "pkg.mod");
	expect_service("python3 -mhttp.server 8000", "python3", "http.server");
	expect_service("python3 -X dev -W error tool.py", "python3", "tool");
	expect_service("/usr/bin/python3 /usr/local/bin/gunicorn app:wsgi", "python3", "gunicorn");
	expect_service("gunicorn: worker [app]", "gunicorn", "gunicorn");
	expect_service("/usr/local/bin/celery -A proj worker", "celery", "celery");
	expect_service("python3 -c print(1)", "python3", "python");
	expect_service("", "myproc", "myproc");
	expect_service(NULL, "", "python");
	/* hostile: braces, commas, quotes and controls cannot reach Pyroscope's name */
	expect_service("python3 a{b=c},d\"\x1b.py", "python3", "a_b_c__d__");
}

static void test_cgroup(void **state)
{
	static const char docker[] =
		"0::/system.slice/docker-"
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n";
	static const char k8s[] =
		"12:memory:/kubepods/burstable/pod1/"
		"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\n0::/\n";
	char out[AGENT_LABEL_MAX], big[10000];

	(void)state;
	assert_int_equal(agent_cgroup_parse(docker, out, sizeof(out)), 1);
	assert_string_equal(out,
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_int_equal(agent_cgroup_parse(k8s, out, sizeof(out)), 1);
	assert_string_equal(out,
			    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	assert_int_equal(agent_cgroup_parse("0::/user.slice/user-0.slice/session-3.scope\n", out,
					    sizeof(out)),
			 2);
	assert_string_equal(out, "/user.slice/user-0.slice/session-3.scope");
	assert_int_equal(agent_cgroup_parse("0::/\n", out, sizeof(out)), 0);
	assert_int_equal(agent_cgroup_parse("", out, sizeof(out)), 0);
	assert_int_equal(agent_cgroup_parse("garbage without colons", out, sizeof(out)), 0);
	/* 65 hex digits are no container id; a path of any length is cut, reduced */
	memset(big, 'a', sizeof(big));
	memcpy(big, "0::/", 4);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(agent_cgroup_parse(big, out, sizeof(out)), 2);
	assert_int_equal(strlen(out), sizeof(out) - 1);
	assert_int_equal(agent_cgroup_parse("0::/a{b}=c,\"x\"\n", out, sizeof(out)), 2);
	assert_string_equal(out, "/a_b__c__x_");
}

static void test_pod_uid(void **state)
{
	char out[AGENT_LABEL_MAX], small[36];

	(void)state;
	/* the systemd driver's slice, '_' between the groups */
	assert_true(agent_cgroup_pod_uid(
		"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod3e6c8f6e_"
		"1a2b_4c3d_8e9f_0123456789ab.slice/cri-containerd-x.scope\n",
		out, sizeof(out)));
	assert_string_equal(out, "3e6c8f6e-1a2b-4c3d-8e9f-0123456789ab");
	/* cgroupfs's directories, on a v1 line after others */
	assert_true(agent_cgroup_pod_uid("12:pids:/\n4:memory:/kubepods/burstable/"
					 "pod3e6c8f6e-1a2b-4c3d-8e9f-0123456789AB/abc\n",
					 out, sizeof(out)));
	assert_string_equal(out, "3e6c8f6e-1a2b-4c3d-8e9f-0123456789AB");
	/* not a kubelet's path, a short or long uid, a cut line: none */
	assert_false(agent_cgroup_pod_uid(
		"0::/user.slice/pod3e6c8f6e-1a2b-4c3d-8e9f-0123456789ab\n", out, sizeof(out)));
	assert_string_equal(out, "");
	assert_false(agent_cgroup_pod_uid("0::/kubepods/pod3e6c8f6e-1a2b-4c3d-8e9f-0123456789abc\n",
					  out, sizeof(out)));
	assert_false(agent_cgroup_pod_uid("0::/kubepods/pod3e6c8f6e-1a2b-4c3d-8e9f-0123456789a\n",
					  out, sizeof(out)));
	assert_false(agent_cgroup_pod_uid("0::/kubepods/pod3e6c8f6e-1a2b\n4c3d-8e9f-0123456789ab",
					  out, sizeof(out)));
	assert_false(agent_cgroup_pod_uid("0::/kubepods/pod3e6c8f6e-1a2b-4c3d-8e9f-0123456789ab",
					  small, sizeof(small)));
	assert_false(agent_cgroup_pod_uid("", out, sizeof(out)));
}

static void test_labels(void **state)
{
	struct agent_label l[AGENT_MAX_LABELS];
	size_t n;

	(void)state;
	n = agent_labels(l, "host-1", "app", 42, "python3 app.py x", "3.11.2",
			 "0::/system.slice/x.service\n");
	assert_int_equal(n, 6);
	assert_string_equal(l[0].key, "hostname");
	assert_string_equal(l[0].value, "host-1");
	assert_string_equal(l[2].key, "pid");
	assert_string_equal(l[2].value, "42");
	assert_string_equal(l[3].value, "python3_app.py_x");
	assert_string_equal(l[4].value, "3.11.2");
	assert_string_equal(l[5].key, "cgroup");
	assert_string_equal(l[5].value, "/system.slice/x.service");
	assert_int_equal(agent_labels(l, "h", "s", 1, "", "", "0::/\n"), 5);
	/* in a pod: its container and its uid */
	n = agent_labels(l, "h", "s", 1, "", "",
			 "0::/kubepods/besteffort/pod3e6c8f6e-1a2b-4c3d-8e9f-0123456789ab/"
			 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
	assert_int_equal(n, 7);
	assert_string_equal(l[5].key, "container_id");
	assert_string_equal(l[6].key, "k8s_pod_uid");
	assert_string_equal(l[6].value, "3e6c8f6e-1a2b-4c3d-8e9f-0123456789ab");
	assert_string_equal(agent_label_otel(&l[6]), "k8s.pod.uid");
	/* OTLP: the same labels by their OpenTelemetry names */
	assert_string_equal(agent_otel_key("hostname"), "host.name");
	assert_string_equal(agent_otel_key("service_name"), "service.name");
	assert_string_equal(agent_otel_key("pid"), "process.pid");
	assert_string_equal(agent_otel_key("container_id"), "container.id");
	assert_string_equal(agent_otel_key("cgroup"), "process.linux.cgroup");
	assert_string_equal(agent_otel_key("uid"), "process.user.id");
	assert_string_equal(agent_otel_key("user"), "process.user.name");
	assert_string_equal(agent_otel_key("other"), "other");
	/* whose: the uid always, the name when the user database has one */
	n = agent_labels(l, "h", "s", 1, "", "", "");
	assert_int_equal(agent_labels_user(l, n, 1000, "alice"), n + 2);
	assert_string_equal(l[n].key, "uid");
	assert_string_equal(l[n].value, "1000");
	assert_string_equal(l[n + 1].key, "user");
	assert_string_equal(l[n + 1].value, "alice");
	assert_int_equal(agent_labels_user(l, n, 4294967294LL, ""), n + 1);
	assert_string_equal(l[n].value, "4294967294");
	assert_int_equal(agent_labels_user(l, n, 0, NULL), n + 1);
	assert_string_equal(l[n].value, "0");
	/* unknown: no label; a name is made a label value like any other */
	assert_int_equal(agent_labels_user(l, n, -1, "x"), n);
	assert_int_equal(agent_labels_user(l, n, 1, "a{b}=c,d"), n + 2);
	assert_string_equal(l[n + 1].value, "a_b__c_d");
	/* never past the array */
	assert_int_equal(agent_labels_user(l, AGENT_MAX_LABELS - 1, 1, "x"), AGENT_MAX_LABELS - 1);
}

/* An environ of the NUL-separated entries given (each a C string), into buf: its length. */
static size_t environ_of(char *buf, size_t cap, const char *const *vars, size_t n)
{
	size_t len = 0, i, k;

	for (i = 0; i < n; i++) {
		k = strlen(vars[i]) + 1;
		assert_true(len + k <= cap);
		memcpy(buf + len, vars[i], k);
		len += k;
	}
	return len;
}

static const struct agent_label *env_label(const struct agent_env *e, const char *key)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (!strcmp(e->labels[i].key, key))
			return &e->labels[i];
	return NULL;
}

static void test_env_labels(void **state)
{
	static const char *const vars[] = {
		"PATH=/usr/bin",
		"OTEL_RESOURCE_ATTRIBUTES= service.name=ignored, service.version = 1.2%2E3 ,"
		"deployment.environment=prod%20eu,team.name=pay%ZZ,other=x,bad key=1,novalue,"
		"k8s.pod.name=",
		"OTEL_SERVICE_NAME=checkout{x}",
		"OTEL_SERVICE_NAME=second",
		"PYROSCOPE_TAGS=region=eu-west,zone=b,a.b=1,team_name=dup",
	};
	const char *keys[] = { "team.name" };
	char buf[4096];
	struct agent_env e;
	const struct agent_label *l;
	size_t len = environ_of(buf, sizeof(buf), vars, 5);

	(void)state;
	agent_env_parse(buf, len, keys, 1, &e);
	/* OTEL_SERVICE_NAME (its first) over service.name, reduced */
	assert_string_equal(e.service, "checkout_x_");
	l = env_label(&e, "service_version");
	assert_non_null(l);
	assert_string_equal(l->otel, "service.version");
	assert_string_equal(l->value, "1.2.3");
	/* the older name, under the current one; a decoded space reduced */
	l = env_label(&e, "deployment_environment_name");
	assert_non_null(l);
	assert_string_equal(l->otel, "deployment.environment.name");
	assert_string_equal(l->value, "prod_eu");
	/* a listed key; a malformed escape kept as is (then reduced) */
	l = env_label(&e, "team_name");
	assert_non_null(l);
	assert_string_equal(l->value, "pay_ZZ");
	assert_null(env_label(&e, "other")); /* not asked for */
	assert_string_equal(env_label(&e, "region")->value, "eu-west");
	assert_string_equal(env_label(&e, "zone")->otel, "zone");
	assert_int_equal(e.n, 5);
	/* refused: "bad key", "novalue", k8s.pod.name empty, a.b (a dot in a tag), team_name again */
	assert_int_equal(e.refused, 5);
	assert_int_equal(e.cut, 0);
	/* nothing set: nothing; an environ cut mid-entry is read as far as it goes */
	agent_env_parse(NULL, 0, NULL, 0, &e);
	assert_int_equal(e.n + e.refused + e.service[0], 0);
	agent_env_parse("OTEL_SERVICE_NAME=abcdef", 20, NULL, 0, &e);
	assert_string_equal(e.service, "ab");
	/* service.name when OTEL_SERVICE_NAME is not set; no '/' (it names files) */
	agent_env_parse("OTEL_RESOURCE_ATTRIBUTES=service.name=a%2Fb", 44, NULL, 0, &e);
	assert_string_equal(e.service, "a_b");
}

static void test_env_caps(void **state)
{
	char tags[8192], big[1024], buf[16384];
	const char *vars[1] = { tags };
	struct agent_label l[AGENT_MAX_LABELS];
	struct agent_env e;
	size_t n, m, i;

	(void)state;
	/* 20 tags: the first AGENT_ENV_LABELS taken, the rest refused */
	n = snprintf(tags, sizeof(tags), "PYROSCOPE_TAGS=");
	for (i = 0; i < 20; i++)
		n += snprintf(tags + n, sizeof(tags) - n, "k%zu=v%zu,", i, i);
	/* a huge value of control bytes and invalid UTF-8: cut and reduced */
	memset(big, '\x01', sizeof(big) - 1);
	big[0] = 'O';
	big[1] = '\xff';
	big[sizeof(big) - 1] = '\0';
	snprintf(buf, sizeof(buf), "OTEL_RESOURCE_ATTRIBUTES=service.version=%%C3%%28%s", big + 1);
	agent_env_parse(buf, strlen(buf) + 1, NULL, 0, &e);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.cut, 1);
	assert_int_equal(strlen(e.labels[0].value), AGENT_LABEL_MAX - 1);
	for (i = 0; e.labels[0].value[i]; i++)
		assert_true(e.labels[0].value[i] == '_');
	n = environ_of(buf, sizeof(buf), vars, 1);
	agent_env_parse(buf, n, NULL, 0, &e);
	assert_int_equal(e.n, AGENT_ENV_LABELS);
	assert_int_equal(e.refused, 20 - AGENT_ENV_LABELS);
	/* after ours: the environment's, then its count of the refused */
	m = agent_labels(l, "h", "s", 1, "", "3.11", "");
	n = agent_labels_env(l, m, &e);
	assert_int_equal(n, m + AGENT_ENV_LABELS + 1);
	assert_string_equal(l[n - 1].key, "env_labels_refused");
	assert_string_equal(l[n - 1].value, "12");
	assert_string_equal(agent_label_otel(&l[m]), "k0");
	assert_string_equal(agent_label_otel(&l[0]), "host.name");
	/* room left for uid and user */
	assert_int_equal(agent_labels_user(l, n, 1, "x"), n + 2);
}

static void test_env_ours_win(void **state)
{
	static const char env[] = "PYROSCOPE_TAGS=uid=0,user=root,hostname=x,pid=1,cgroup=y\0"
				  "OTEL_RESOURCE_ATTRIBUTES=container.id=abc,host.name=h2,"
				  "process.runtime.name=X";
	const char *keys[] = { "host.name", "process.runtime.name" };
	struct agent_label l[AGENT_MAX_LABELS];
	struct agent_env e;
	size_t n, m, i;

	(void)state;
	agent_env_parse(env, sizeof(env), keys, 2, &e);
	/* a cgroup named a container: its id, not the environment's */
	m = agent_labels(l, "h", "s", 1, "", "3.11",
			 "0::/docker/0123456789abcdef0123456789abcdef"
			 "0123456789abcdef0123456789abcdef\n");
	n = agent_labels_env(l, m, &e);
	assert_int_equal(n, m + 1);
	assert_string_equal(l[m].key, "env_labels_refused");
	assert_string_equal(l[m].value, "8");
	for (i = 0; i < m; i++)
		assert_string_not_equal(l[i].value, "abc");
	/* no container from the cgroup: the environment's container.id */
	m = agent_labels(l, "h", "s", 1, "", "3.11", "");
	n = agent_labels_env(l, m, &e);
	assert_string_equal(l[m].key, "container_id");
	assert_string_equal(agent_label_otel(&l[m]), "container.id");
	assert_string_equal(l[m].value, "abc");
	assert_string_equal(l[n - 1].value, "7");
}

/*
 * proc_read_environ on a real process: a child exec'ed with a 9000-byte
 * environment (past a page: /proc reads stop at one) is read whole, or up
 * to the cap; a pid that is gone reads nothing.
 */
static void test_read_environ(void **state)
{
	static char big[9003], env_bytes[9100], buf[16384];
	char *const argv[] = { "sleep", "30", NULL };
	char *const envp[] = { big, "B=1", NULL };
	struct timespec nap = { 0, 10000000 };
	size_t want, n = 0;
	int i, st;
	pid_t pid;

	(void)state;
	memcpy(big, "A=", 2);
	memset(big + 2, 'x', sizeof(big) - 3);
	want = sizeof(big) + 4;
	memcpy(env_bytes, big, sizeof(big));
	memcpy(env_bytes + sizeof(big), "B=1", 4);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	/* until the exec: before it, the child's environment is ours */
	for (i = 0; i < 500 && n != want; i++, nanosleep(&nap, NULL))
		n = proc_read_environ(pid, buf, sizeof(buf));
	assert_int_equal(n, want);
	assert_memory_equal(buf, env_bytes, want);
	assert_int_equal(proc_read_environ(pid, buf, 6000), 6000);
	assert_int_equal(proc_read_environ(pid, buf, 1), 1);
	assert_int_equal(buf[0], 'A');
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(proc_read_environ(pid, buf, sizeof(buf)), 0);
}

static void test_file_names(void **state)
{
	char name[128];

	(void)state;
	/* 2026-11-24 08:15:00 UTC */
	assert_int_equal(agent_file_name(name, sizeof(name), 1795508100123456789LL, "app", 42), 0);
	assert_string_equal(name, "20261124T081500Z-app-42.pb.gz");
	assert_true(agent_file_ours(name));
	assert_int_equal(agent_file_name(name, sizeof(name), 1795508100LL * 1000000000, "s", 0), 0);
	assert_string_equal(name, "20261124T081500Z-s-all.pb.gz");
	assert_true(agent_file_ours(name));
	assert_int_equal(agent_file_name(name, 10, 0, "app", 1), -ENAMETOOLONG);
	/* the longest: a 63-byte service and a 10-digit pid fit struct agent_file's name */
	assert_int_equal(
		agent_file_name(name, sizeof(((struct agent_file *)0)->name), 0,
				"sssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss",
				2147483647),
		0);
	assert_true(agent_file_ours(name));
	assert_false(agent_file_ours("notes.txt"));
	assert_false(agent_file_ours("2026112xT081500Z-app-1.pb.gz"));
	assert_false(agent_file_ours("20261124T081500Z-app-1.pb"));
	/* a capture's timeline beside its pprof; no other Perfetto file */
	assert_true(agent_file_ours("20261124T081500Z-recorder-1.capture.perfetto-trace.gz"));
	assert_true(agent_file_ours("20261124T081500Z-recorder-1.2.capture.perfetto-trace.gz"));
	assert_false(agent_file_ours("20261124T081500Z-app-1.perfetto-trace.gz"));
	assert_false(agent_file_ours(".capture.perfetto-trace.gz"));
	assert_false(agent_file_ours("2026112xT081500Z-recorder-1.capture.perfetto-trace.gz"));
}

static void test_push_url(void **state)
{
	struct agent_job j = { .hz = 99,
			       .from_ns = 1795508100999999999LL,
			       .until_ns = 1795508102000000000LL };
	char url[1024];

	(void)state;
	strcpy(j.service, "app");
	j.nlabels = agent_labels(j.labels, "h", "app", 7, "python3 app.py", "3.11.2", "");
	assert_int_equal(agent_push_url(url, sizeof(url), "http://127.0.0.1:4040/", &j), 0);
	assert_string_equal(url, "http://127.0.0.1:4040/ingest?name=app%7Bhostname%3Dh%2C"
				 "service_name%3Dapp%2Cpid%3D7%2Ccommand%3Dpython3_app.py%2C"
				 "python_version%3D3.11.2%7D&from=1795508100&until=1795508102&"
				 "sampleRate=99&spyName=pybpfprof&format=pprof");
	assert_int_equal(agent_push_url(url, 60, "http://127.0.0.1:4040", &j), -ENAMETOOLONG);
}

static void test_disk_victims(void **state)
{
	const struct agent_file f[] = { { .name = "a", .bytes = 100 },
					{ .name = "b", .bytes = 100 },
					{ .name = "c", .bytes = 100 },
					{ .name = "d", .bytes = 500 } };

	(void)state;
	assert_int_equal(agent_disk_victims(f, 4, 800), 0);
	assert_int_equal(agent_disk_victims(f, 4, 799), 1);
	assert_int_equal(agent_disk_victims(f, 4, 600), 2);
	assert_int_equal(agent_disk_victims(f, 4, 500), 3);
	/* the newest stays, even alone over the budget */
	assert_int_equal(agent_disk_victims(f, 4, 10), 3);
	assert_int_equal(agent_disk_victims(f, 0, 10), 0);
}

static void test_backoff(void **state)
{
	unsigned a;

	(void)state;
	assert_true(agent_backoff_ns(1, 0) == AGENT_BACKOFF_BASE_NS * 3 / 4);
	assert_true(agent_backoff_ns(1, UINT64_MAX) < AGENT_BACKOFF_BASE_NS * 5 / 4);
	assert_true(agent_backoff_ns(2, 0) == AGENT_BACKOFF_BASE_NS * 3 / 2);
	assert_true(agent_backoff_ns(3, 1ULL << 63) == AGENT_BACKOFF_BASE_NS * 4);
	for (a = 1; a < 1000; a += 37) {
		assert_true(agent_backoff_ns(a, UINT64_MAX) <= AGENT_BACKOFF_CAP_NS * 5 / 4);
		assert_true(agent_backoff_ns(a, 0) >= AGENT_BACKOFF_BASE_NS * 3 / 4);
	}
	assert_true(agent_backoff_ns(UINT32_MAX, 0) == AGENT_BACKOFF_CAP_NS * 3 / 4);
}

static void test_hostport(void **state)
{
	char host[64], port[8];

	(void)state;
	assert_int_equal(agent_parse_hostport("127.0.0.1:9464", host, sizeof(host), port,
					      sizeof(port)),
			 0);
	assert_string_equal(host, "127.0.0.1");
	assert_string_equal(port, "9464");
	assert_int_equal(agent_parse_hostport("[::1]:80", host, sizeof(host), port, sizeof(port)),
			 0);
	assert_string_equal(host, "::1");
	assert_int_equal(agent_parse_hostport(":9464", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "");
	assert_int_equal(agent_parse_hostport("localhost:65535", host, sizeof(host), port,
					      sizeof(port)),
			 0);
	assert_int_equal(agent_parse_hostport("9464", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(agent_parse_hostport("::1:9464", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(agent_parse_hostport("h:0", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(agent_parse_hostport("h:65536", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(agent_parse_hostport("h:9x", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(agent_parse_hostport("h:", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(agent_parse_hostport("[::1]9464", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
}

static struct agent_job *new_job(int pid)
{
	struct agent_job *j = calloc(1, sizeof(*j));

	j->refs = 1;
	j->pid = pid;
	return j;
}

static void test_queue(void **state)
{
	struct agent_queue q;
	struct agent_job *j[5];
	int i;

	(void)state;
	assert_int_equal(agent_queue__init(&q, 3, UINT64_MAX), 0);
	assert_null(agent_queue__peek(&q));
	for (i = 0; i < 5; i++) {
		j[i] = new_job(i);
		agent_queue__push(&q, j[i]);
		if (i >= 3) /* j[i - 3] was pushed out: only our reference is left */
			assert_int_equal(j[i - 3]->refs, 1);
	}
	assert_int_equal(q.dropped, 2);
	assert_int_equal(q.len, 3);
	assert_ptr_equal(agent_queue__peek(&q), j[2]);
	assert_ptr_equal(agent_queue__pop(&q), j[2]);
	agent_job__put(j[2]);
	for (i = 0; i < 5; i++)
		agent_job__put(j[i]);
	/* the queue's references to j[3] and j[4] are freed with it (ASan checks) */
	agent_queue__free(&q);
}

/* By bytes: the oldest waiting go; the one being sent never; one too big alone, at once. */
static void test_queue_bytes(void **state)
{
	const uint64_t unit = sizeof(struct agent_job) + 1000;
	struct agent_queue q;
	struct agent_job *j[6];
	uint64_t bytes;
	int i;

	(void)state;
	assert_int_equal(agent_queue__init(&q, 100, 3 * unit), 0);
	for (i = 0; i < 6; i++) {
		j[i] = new_job(i);
		j[i]->len = 1000;
	}
	j[5]->otlp_len = 3 * unit; /* alone more than the queue holds */
	for (i = 0; i < 3; i++)
		assert_true(agent_queue__push(&q, j[i]));
	assert_int_equal(agent_queue__waiting(&q, &bytes), 3);
	assert_true(bytes == 3 * unit);
	/* the head is being sent: it waits no more, so j[3] fits; then j[1], the
	 * oldest waiting, makes room for j[4], not the head */
	q.sending = j[0];
	assert_true(agent_queue__push(&q, j[3]));
	assert_int_equal(q.dropped, 0);
	assert_true(agent_queue__push(&q, j[4]));
	assert_int_equal(q.dropped, 1);
	assert_int_equal(j[1]->refs, 1);
	assert_ptr_equal(agent_queue__peek(&q), j[0]);
	assert_int_equal(agent_queue__waiting(&q, &bytes), 3);
	assert_true(bytes == 3 * unit && q.bytes == 4 * unit);
	assert_false(agent_queue__push(&q, j[5]));
	assert_int_equal(q.dropped, 2);
	assert_int_equal(q.dropped_big, 1);
	assert_int_equal(j[5]->refs, 1);
	/* sent: the head leaves; what waits is j[2], j[3], j[4], in order */
	assert_ptr_equal(agent_queue__pop(&q), j[0]);
	assert_null(q.sending);
	agent_job__put(j[0]);
	assert_ptr_equal(agent_queue__peek(&q), j[2]);
	assert_int_equal(agent_queue__waiting(&q, &bytes), 3);
	assert_true(bytes == 3 * unit);
	for (i = 0; i < 6; i++)
		agent_job__put(j[i]);
	agent_queue__free(&q);
}

/*
 * Per-process shares (issue 33.4): a busy process flooding a full queue
 * pushes out its own oldest profiles, never the others' waiting ones;
 * between two processes holding as much, the older job goes; a --merge'd
 * service (pid 0) is its own owner, by name.
 */
static void test_queue_fair(void **state)
{
	const uint64_t unit = sizeof(struct agent_job) + 1000;
	struct agent_queue q;
	struct agent_job *small[3], *busy[10], *merged;
	int i;

	(void)state;
	assert_int_equal(agent_queue__init(&q, 100, 5 * unit), 0);
	for (i = 0; i < 3; i++) {
		small[i] = new_job(100 + i);
		small[i]->len = 1000;
		assert_true(agent_queue__push(&q, small[i]));
	}
	for (i = 0; i < 10; i++) {
		busy[i] = new_job(7);
		busy[i]->len = 1000;
		assert_true(agent_queue__push(&q, busy[i]));
	}
	/* room for 5: the three others' profiles and the busy one's newest two */
	assert_int_equal(q.len, 5);
	assert_int_equal(q.dropped, 8);
	for (i = 0; i < 3; i++)
		assert_int_equal(small[i]->refs, 2);
	for (i = 0; i < 10; i++)
		assert_int_equal(busy[i]->refs, i >= 8 ? 2 : 1);
	assert_ptr_equal(agent_queue__peek(&q), small[0]);
	/* a merged service's profile, the size of two: first the busy process's
	 * older one goes (it holds the most), then every owner holds as much and
	 * the oldest job of all goes */
	merged = new_job(0);
	strcpy(merged->service, "web");
	merged->len = 2 * 1000 + sizeof(struct agent_job);
	assert_true(agent_queue__push(&q, merged));
	assert_int_equal(q.dropped, 10);
	assert_int_equal(busy[8]->refs, 1);
	assert_int_equal(small[0]->refs, 1);
	assert_int_equal(busy[9]->refs, 2);
	assert_int_equal(merged->refs, 2);
	assert_true(agent_job__owner(merged) != agent_job__owner(small[0]));
	assert_ptr_equal(agent_queue__peek(&q), small[1]);
	for (i = 0; i < 3; i++)
		agent_job__put(small[i]);
	for (i = 0; i < 10; i++)
		agent_job__put(busy[i]);
	agent_job__put(merged);
	agent_queue__free(&q);
}

/*
 * Over its count (not its bytes), a full queue drops by the number of jobs:
 * a process with profiles larger than another's still keeps its newest.
 */
static void test_queue_fair_count(void **state)
{
	struct agent_queue q;
	struct agent_job *big[3], *small[3];
	int i;

	(void)state;
	assert_int_equal(agent_queue__init(&q, 2, UINT64_MAX), 0);
	for (i = 0; i < 3; i++) {
		big[i] = new_job(7);
		big[i]->len = 100000;
		small[i] = new_job(8);
		agent_queue__push(&q, big[i]);
		agent_queue__push(&q, small[i]);
	}
	/* each interval's pair pushed out the one before: one each, the newest */
	assert_int_equal(q.len, 2);
	assert_ptr_equal(agent_queue__peek(&q), big[2]);
	assert_int_equal(small[2]->refs, 2);
	for (i = 0; i < 3; i++) {
		agent_job__put(big[i]);
		agent_job__put(small[i]);
	}
	agent_queue__free(&q);
}

/* A real directory: tiny budget, files written and the oldest deleted. */
static void test_dir_sink_budget(void **state)
{
	char dir[] = "/tmp/pybpfprof-agent-XXXXXX", why[256], path[400];
	struct agent_sink_stats st;
	struct agent_sink *s;
	long long deadline;
	struct dirent *e;
	DIR *d;
	int i, n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a file of another program is never deleted */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	fclose(fopen(path, "w"));
	s = agent_sink__dir(dir, 3 * 4096, 8, UINT64_MAX, why, sizeof(why));
	assert_non_null(s);
	for (i = 0; i < 6; i++) {
		struct agent_job *j = new_job(100);

		j->len = 4000;
		j->body = calloc(1, j->len);
		strcpy(j->service, "svc");
		j->from_ns = (1795508100LL + i) * 1000000000LL;
		agent_sink__submit(s, j);
		agent_job__put(j);
	}
	deadline = mono_ns() + 5000000000LL;
	do {
		agent_sink__stats(s, &st);
		usleep(10000);
	} while (st.sent + st.dropped < 6 && mono_ns() < deadline);
	agent_sink__stop(s, mono_ns() + 1000000000LL);
	assert_int_equal(st.sent + st.dropped, 6);
	d = opendir(dir);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (strcmp(e->d_name, "notes.txt"))
			/* the newest three of the six seconds */
			assert_true(strcmp(e->d_name, "20261124T081503Z") > 0);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
	assert_int_equal(n, 4);
}

static void test_manifest(void **state)
{
	static const char good[] =
		"pybpfprof-agent-files 1\n"
		"20261124T081500Z-app-42.pb.gz 2049 1234 1795508100 123456789 4096\n"
		"20261124T081501Z-app-42.mem.pb.gz 2049 1235 1795508101 0 8192\n";
	static const char *const bad[] = {
		"../20261124T081500Z-app-42.pb.gz 1 2 3 4 5\n",	      /* not a name of ours */
		"20261124T081500Z-a/../../x.pb.gz 1 2 3 4 5\n",	      /* a path */
		"20261124T081500Z-app-42.pb.gz 1 2 3 1000000000 5\n", /* ns out of range */
		"20261124T081500Z-app-42.pb.gz 1 2 3 4\n",	      /* a field short */
		"20261124T081500Z-app-42.pb.gz 1 2 3 4 5 6\n",	      /* one too many */
		"20261124T081500Z-app-42.pb.gz 1 2 3 4 99999999999999999999\n", /* overflow */
		"20261124T081500Z-app-42.pb.gz  1 2 3 4 5\n",			/* two spaces */
		"20261124T081500Z-app-42.pb.gz 1 -2 3 4 5\n",
		"20261124T081500Z-app-42.pb.gz 1 2 9223372036854775808 4 5\n",
	};
	struct agent_file *f;
	char *text = NULL, buf[512];
	size_t n, len = 0, i;
	FILE *mf;

	(void)state;
	assert_int_equal(agent_manifest_parse(good, sizeof(good) - 1, &f, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].name, "20261124T081500Z-app-42.pb.gz");
	assert_true(f[0].dev == 2049 && f[0].ino == 1234 && f[0].ctime_s == 1795508100 &&
		    f[0].ctime_ns == 123456789 && f[0].bytes == 4096);
	assert_string_equal(f[1].name, "20261124T081501Z-app-42.mem.pb.gz");
	/* written and read back: the same entries */
	mf = open_memstream(&text, &len);
	assert_int_equal(agent_manifest_write(mf, f, n), 0);
	fclose(mf);
	assert_int_equal(len, sizeof(good) - 1);
	assert_memory_equal(text, good, len);
	free(text);
	free(f);
	/* a line being written when the run ended (no newline) is not an entry */
	assert_int_equal(agent_manifest_parse(good, sizeof(good) - 3, &f, &n), 0);
	assert_int_equal(n, 1);
	free(f);
	assert_int_equal(agent_manifest_parse("", 0, &f, &n), -EINVAL);
	assert_int_equal(agent_manifest_parse("pybpfprof-agent-files 2\n", 24, &f, &n), -EINVAL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "pybpfprof-agent-files 1\n%s", bad[i]);
		assert_int_equal(agent_manifest_parse(buf, strlen(buf), &f, &n), 1);
		assert_int_equal(n, 0);
		free(f);
	}
}

static struct agent_job *file_job(int second)
{
	struct agent_job *j = new_job(7);

	j->len = 3000;
	j->body = calloc(1, j->len);
	strcpy(j->service, "svc");
	j->from_ns = (1795508100LL + second) * 1000000000LL;
	return j;
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

/*
 * The directory held by descriptor: renamed, and a link to another put in
 * its place, the files go on into the renamed one. Files of an earlier run
 * (its manifest) count and go first; a file of the same name as ours, made
 * by someone else, is never deleted nor replaced.
 */
static void test_dir_held(void **state)
{
	char top[] = "/tmp/pybpfprof-agent-XXXXXX", dir[300], moved[300], other[300], why[256];
	char cmd[1024];
	struct agent_dir *d;
	struct agent_job *j;
	FILE *f;
	int i;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(dir, sizeof(dir), "%s/out", top);
	snprintf(moved, sizeof(moved), "%s/moved", top);
	snprintf(other, sizeof(other), "%s/other", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(other, 0755), 0);
	/* three files of 4 KiB fit */
	d = agent_dir__open(dir, 3 * 4096, why, sizeof(why));
	assert_non_null(d);
	j = file_job(0);
	assert_int_equal(agent_dir__write(d, j, why, sizeof(why)), 0);
	agent_job__put(j);
	assert_int_equal(rename(dir, moved), 0);
	assert_int_equal(symlink(other, dir), 0);
	for (i = 1; i < 3; i++) {
		j = file_job(i);
		assert_int_equal(agent_dir__write(d, j, why, sizeof(why)), 0);
		agent_job__put(j);
	}
	agent_dir__close(d);
	assert_true(exists(moved, "20261124T081502Z-svc-7.pb.gz"));
	assert_true(exists(moved, ".pybpfprof-agent-files"));
	assert_false(exists(other, "20261124T081502Z-svc-7.pb.gz"));
	assert_false(exists(other, ".pybpfprof-agent-files"));
	/* a later run in it: another file of the names it wants, then more than fit */
	snprintf(cmd, sizeof(cmd), "%s/20261124T081503Z-svc-7.pb.gz", moved);
	f = fopen(cmd, "w");
	fputs("not the agent's\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/20261124T081500Z-svc-6.pb.gz", moved);
	fclose(fopen(cmd, "w"));
	d = agent_dir__open(moved, 3 * 4096, why, sizeof(why));
	assert_non_null(d);
	/* a second agent with --max-disk is kept out */
	assert_null(agent_dir__open(moved, 3 * 4096, why, sizeof(why)));
	assert_non_null(strstr(why, "another pybpfprof agent"));
	for (i = 3; i < 5; i++) {
		j = file_job(i);
		assert_int_equal(agent_dir__write(d, j, why, sizeof(why)), 0);
		agent_job__put(j);
	}
	agent_dir__close(d);
	/* the earlier run's oldest two went first; the planted ones stay, untouched */
	assert_false(exists(moved, "20261124T081500Z-svc-7.pb.gz"));
	assert_false(exists(moved, "20261124T081501Z-svc-7.pb.gz"));
	assert_true(exists(moved, "20261124T081502Z-svc-7.pb.gz"));
	assert_true(exists(moved, "20261124T081500Z-svc-6.pb.gz"));
	assert_true(exists(moved, "20261124T081503Z-svc-7.1.pb.gz"));
	assert_true(exists(moved, "20261124T081504Z-svc-7.pb.gz"));
	snprintf(cmd, sizeof(cmd), "%s/20261124T081503Z-svc-7.pb.gz", moved);
	f = fopen(cmd, "r");
	assert_non_null(fgets(why, sizeof(why), f));
	fclose(f);
	assert_string_equal(why, "not the agent's\n");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
}

/* Who a --metrics client is: a local one by its uid, one elsewhere by its address or /64. */
static void test_client_keys(void **state)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET }, b4 = a4;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 }, b6 = a6, m6 = a6;
	struct agent_client_key ka, kb, km;
	socklen_t len = sizeof(a4);
	int lfd, cfd, sfd, diag;
	uint32_t uid;

	(void)state;
	inet_pton(AF_INET, "192.0.2.1", &a4.sin_addr);
	inet_pton(AF_INET, "192.0.2.2", &b4.sin_addr);
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&a4, sizeof(a4), &ka), 0);
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&b4, sizeof(b4), &kb), 0);
	assert_false(agent_client_key_equal(&ka, &kb));
	/* an IPv4 address mapped into IPv6 is that address */
	inet_pton(AF_INET6, "::ffff:192.0.2.1", &m6.sin6_addr);
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&m6, sizeof(m6), &km), 0);
	assert_true(agent_client_key_equal(&ka, &km));
	/* IPv6: one /64 is one client, whatever address in it */
	inet_pton(AF_INET6, "2001:db8:1:2::1", &a6.sin6_addr);
	inet_pton(AF_INET6, "2001:db8:1:2:ffff::9", &b6.sin6_addr);
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&a6, sizeof(a6), &ka), 0);
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&b6, sizeof(b6), &kb), 0);
	assert_true(agent_client_key_equal(&ka, &kb));
	inet_pton(AF_INET6, "2001:db8:1:3::1", &b6.sin6_addr);
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&b6, sizeof(b6), &kb), 0);
	assert_false(agent_client_key_equal(&ka, &kb));
	assert_int_equal(agent_client_key_addr((struct sockaddr *)&a4, 2, &ka), -EAFNOSUPPORT);
	/* a loopback connection of ours: its client is our uid (without the netlink socket, 127.0.0.1) */
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a4.sin_port = 0;
	assert_int_equal(bind(lfd, (struct sockaddr *)&a4, sizeof(a4)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a4, &len), 0);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&a4, sizeof(a4)), 0);
	sfd = accept(lfd, NULL, NULL);
	assert_true(sfd >= 0);
	diag = agent_client_diag_open();
	assert_true(diag >= 0);
	assert_int_equal(agent_client_key(diag, sfd, &ka), 0);
	assert_int_equal(ka.kind, AGENT_CLIENT_UID);
	memcpy(&uid, ka.bytes, sizeof(uid));
	assert_int_equal(uid, geteuid());
	assert_int_equal(agent_client_key(-1, sfd, &kb), 0);
	assert_int_equal(kb.kind, AGENT_CLIENT_IPV4);
	assert_int_equal(kb.bytes[0], 127);
	close(diag);
	close(sfd);
	close(cfd);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boundaries),	cmocka_unit_test(test_service_names),
		cmocka_unit_test(test_cgroup),		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_file_names),	cmocka_unit_test(test_push_url),
		cmocka_unit_test(test_disk_victims),	cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_queue),		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_dir_sink_budget), cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_dir_held),	cmocka_unit_test(test_queue_bytes),
		cmocka_unit_test(test_queue_fair),	cmocka_unit_test(test_queue_fair_count),
		cmocka_unit_test(test_client_keys),	cmocka_unit_test(test_env_labels),
		cmocka_unit_test(test_env_caps),	cmocka_unit_test(test_env_ours_win),
		cmocka_unit_test(test_pod_uid),		cmocka_unit_test(test_read_environ),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
