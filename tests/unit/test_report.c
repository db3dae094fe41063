/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writers against golden files: a hand-built profile (two processes, one of
 * them exited, an unresolved frame, a name that needs JSON escaping) is
 * written by each writer and compared byte for byte with tests/golden/.
 * Run with UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate
 * format change, then review the diff.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "report.h"

#define GOLDEN_DIR "tests/golden/"

static void build(struct profile *p)
{
	struct profile_proc *a, *b;
	uint32_t fmain, fhot, fq, fun, s1[2], s2[2], s3[2], s4[1];

	profile__init(p, "cpu", 100);
	p->duration_s = 2.0;
	p->first_sample_ms = 42.5;
	p->counts.dropped = 3;
	p->counts.no_python = 4;
	/* no root directory and no such files: source lines read as unavailable */
	a = profile__add_proc(p, 0, "/usr/bin/python3.11", "python3 app.py", "python3", "3.11.2");
	fmain = profile__func(p, "main", "/nonexistent/app.py", 10, false);
	fhot = profile__func(p, "Klass.hot", "/nonexistent/app.py", 3, false);
	fq = profile__func(p, "say \"hi\"\\", "/nonexistent/odd\tname.py", 1, false);
	fun = profile__func(p, "[unresolved]", "", 0, true);
	s1[0] = profile__frame(p, fhot, 5);
	s1[1] = profile__frame(p, fmain, 12);
	s2[0] = profile__frame(p, fhot, 6);
	s2[1] = s1[1];
	s3[0] = profile__frame(p, fq, 2);
	s3[1] = s1[1];
	s4[0] = profile__frame(p, fun, -1);
	profile_proc__add_stack(a, 0, s1, 2, 150);
	profile_proc__add_stack(a, 0, s2, 2, 30);
	profile_proc__add_stack(a, 1, s3, 2, 20);
	a->samples = 200;
	a->truncated = 1;
	profile_proc__thread(a, 0)->samples = 180;
	strcpy(profile_proc__thread(a, 0)->name, "python3");
	profile_proc__thread(a, 1)->samples = 20;
	strcpy(profile_proc__thread(a, 1)->name, "worker");
	b = profile__add_proc(p, 0, "/opt/py/bin/python3.11", "python3 -c pass", "python3", "3.11.7");
	b->exited = true;
	profile_proc__add_stack(b, 0, s4, 1, 2);
	b->samples = 2;
	b->unresolved = 2;
	profile_proc__thread(b, 0)->samples = 2;
}

static char *slurp(FILE *f, size_t *len)
{
	char *buf;
	long n;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void check_golden(const struct report_writer *w, const char *name)
{
	struct report_opts o = { .top_functions = 20, .top_lines = 20, .line_report = 5,
				 .tool_version = "0.1.0" };
	char path[256];
	struct profile p;
	size_t got_len, want_len;
	char *got, *want;
	FILE *out, *gold;

	build(&p);
	out = tmpfile();
	assert_non_null(out);
	assert_int_equal(w->write(out, &p, &o), 0);
	got = slurp(out, &got_len);
	fclose(out);
	profile__free(&p);
	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("UPDATE_GOLDEN")) {
		gold = fopen(path, "w");
		assert_non_null(gold);
		fwrite(got, 1, got_len, gold);
		fclose(gold);
	}
	gold = fopen(path, "r");
	if (!gold)
		fail_msg("missing %s (run with UPDATE_GOLDEN=1 from the repo root)", path);
	want = slurp(gold, &want_len);
	fclose(gold);
	if (got_len != want_len || memcmp(got, want, got_len))
		fail_msg("%s differs from the writer's output:\n%s", path, got);
	free(got);
	free(want);
}

static void test_text_golden(void **state)
{
	(void)state;
	check_golden(&report_text, "report.txt");
}

static void test_json_golden(void **state)
{
	(void)state;
	check_golden(&report_json, "report.json");
}

static void test_registry(void **state)
{
	(void)state;
	assert_ptr_equal(report_find("json"), &report_json);
	assert_ptr_equal(report_find("text"), &report_text);
	assert_null(report_find("xml"));
	assert_ptr_equal(report_for_path("/tmp/x.json"), &report_json);
	assert_null(report_for_path("/tmp/x"));
	assert_null(report_for_path(NULL));
}

static void test_writable(void **state)
{
	char why[256], dir[] = "/tmp/pybpfprof-test-XXXXXX", file[300];

	(void)state;
	assert_int_equal(report_check_writable(NULL, why, sizeof(why)), 0);
	assert_int_equal(report_check_writable("-", why, sizeof(why)), 0);
	assert_int_equal(report_check_writable("/nonexistent-dir/x.json", why, sizeof(why)),
			 -ENOENT);
	assert_non_null(strstr(why, "/nonexistent-dir/x.json"));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(report_check_writable(dir, why, sizeof(why)), -EISDIR);
	snprintf(file, sizeof(file), "%s/new.json", dir);
	assert_int_equal(report_check_writable(file, why, sizeof(why)), 0);
	assert_int_equal(access(file, F_OK), -1);	/* checking creates nothing */
	rmdir(dir);
}

static void test_source_line(void **state)
{
	char path[] = "/tmp/pybpfprof-src-XXXXXX", buf[64];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a = 1\n    if x in y:   \n\nlast", 30), 30);
	close(fd);
	assert_int_equal(report_source_line(-1, path, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "if x in y:");
	assert_int_equal(report_source_line(-1, path, 4, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "last");
	assert_int_equal(report_source_line(-1, path, 5, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(report_source_line(-1, path, 0, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(report_source_line(-1, "relative.py", 1, buf, sizeof(buf)), -ENOENT);
	unlink(path);
}

/* A process's root is a jail for source paths: no link or ".." leads out of it. */
static void test_source_in_root(void **state)
{
	char dir[] = "/tmp/pybpfprof-root-XXXXXX", path[300], buf[64];
	int root_fd, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/app.py", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "inside = True\n", 14), 14);
	close(fd);
	snprintf(path, sizeof(path), "%s/escape.py", dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	root_fd = open(dir, O_PATH | O_DIRECTORY);
	assert_true(root_fd >= 0);

	assert_int_equal(report_source_line(root_fd, "/app.py", 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "inside = True");
	/* /etc/passwd exists on the host, not inside the root */
	assert_int_equal(report_source_line(root_fd, "/escape.py", 1, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(report_source_line(root_fd, "/../../../etc/passwd", 1, buf, sizeof(buf)),
			 -ENOENT);
	close(root_fd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/app.py", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_writable),
		cmocka_unit_test(test_source_line),
		cmocka_unit_test(test_source_in_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
