/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The cheap verdict on a new executable (src/cpython/target.c py_exe_kind and
 * elf_file's DT_NEEDED lookup): a non-Python program is OTHER, Debian's
 * static python is STATIC, a shared build's small executable is SHARED.
 * Real files only; an interpreter that is not installed is skipped.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/elf_file.h"
#include "cpython/target.h"

/* Runs exe (as `exe -c 'import time; time.sleep(5)'`, or sleep) and returns its verdict. */
static int kind_of_running(const char *exe, char *const argv[])
{
	pid_t pid = fork();
	int kind, i;

	assert_true(pid >= 0);
	if (pid == 0) {
		execv(exe, argv);
		_exit(127);
	}
	/* until the exec has happened, /proc/PID/exe is still this test */
	for (i = 0; i < 200; i++) {
		char path[64], link[256];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			if (!strcmp(link, exe))
				break;
		}
		usleep(5000);
	}
	kind = py_exe_kind(pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return kind;
}

static void test_self_is_other(void **state)
{
	(void)state;
	assert_int_equal(py_exe_kind(getpid()), PY_EXE_OTHER);
	/* asked again: the cached verdict */
	assert_int_equal(py_exe_kind(getpid()), PY_EXE_OTHER);
}

static void test_gone(void **state)
{
	(void)state;
	assert_true(py_exe_kind(999999999) < 0);
}

static void test_debian_static(void **state)
{
	char *argv[] = { "/usr/bin/python3.11", "-c", "import time; time.sleep(5)", NULL };
	struct elf_file *ef;

	(void)state;
	if (access(argv[0], X_OK))
		skip();
	ef = elf_file__open(argv[0]);
	assert_non_null(ef);
	assert_int_equal(elf_file__needs(ef, "libpython3"), 0);
	assert_int_equal(elf_file__needs(ef, "libc.so"), 1);
	elf_file__close(ef);
	assert_int_equal(kind_of_running(argv[0], argv), PY_EXE_STATIC);
}

static void test_pyenv_shared(void **state)
{
	char exe[512];
	const char *root = getenv("PYENV_ROOT");
	char *argv[] = { exe, "-c", "import time; time.sleep(5)", NULL };
	struct elf_file *ef;

	(void)state;
	snprintf(exe, sizeof(exe), "%s/versions/3.11.7/bin/python3.11",
		 root ? root : "/root/.pyenv");
	if (access(exe, X_OK))
		skip();
	ef = elf_file__open(exe);
	assert_non_null(ef);
	if (!elf_file__needs(ef, "libpython3")) {
		elf_file__close(ef);
		skip(); /* a static pyenv build */
	}
	elf_file__close(ef);
	assert_int_equal(kind_of_running(exe, argv), PY_EXE_SHARED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_is_other),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_debian_static),
		cmocka_unit_test(test_pyenv_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
