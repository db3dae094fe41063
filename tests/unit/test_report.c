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
#include "fixture_profile.h"
#include "golden.h"

static void check_golden(const struct report_writer *w, const char *name)
{
	struct report_opts o = { .top_functions = 20, .top_lines = 20, .line_report = 5,
				 .tool_version = "0.1.0" };
	struct profile p;

	build(&p);
	golden_check(w, &p, &o, name);
	profile__free(&p);
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
		cmocka_unit_test(test_source_line),
		cmocka_unit_test(test_source_in_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
