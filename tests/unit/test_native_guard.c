/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What --native hands libdw of a target's files (native_guard.c and
 * native_unwind.c's report), on fuzz_native_elf's seeds and finds in
 * tests/fuzz/corpus/native_elf/: real small libraries pass and are named;
 * a file whose compressed parts would expand past the bounds is refused,
 * counted and named by offset; a file libdw refuses does not keep its fd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "target/native_guard.h"
#include "target/native_unwind_file.h"

#define CORPUS "tests/fuzz/corpus/native_elf/"
/* Where the files are placed: never mapped, only named. */
#define BASE 0x7f0000000000ULL

static int open_input(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), CORPUS "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("missing %s (run the tests from the repository root)", path);
	return fd;
}

static int guard(const char *name, char *why, size_t whylen)
{
	int fd = open_input(name), ret;

	why[0] = 0;
	ret = native_guard__check(fd, why, whylen);
	close(fd);
	return ret;
}

static void test_guard_passes_real_files(void **state)
{
	static const char *const ok[] = { "stripped-so",   "minidebug-so",	"ehframe-only-so",
					  "debugframe-so", "clang-stripped-so", "no-phdrs" };
	char why[96];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(guard(ok[i], why, sizeof(why)), 0);
	assert_int_equal(guard("not-elf", why, sizeof(why)), -ENOEXEC);
}

/* 40 MB of zeros xz'd into an 11 KB file's .gnu_debugdata; a Chdr declaring 1 TB. */
static void test_guard_refuses_expansion(void **state)
{
	char why[96];

	(void)state;
	assert_int_equal(guard("debugdata-bomb", why, sizeof(why)), -EFBIG);
	assert_string_equal(why, ".gnu_debugdata expanding past 32 MB");
	assert_int_equal(guard("chdr-huge", why, sizeof(why)), -EFBIG);
	assert_string_equal(why, "compressed sections expanding past 256 MB");
}

/*
 * The name of BASE + off in name's file as the unwinder gives it (rc: what
 * naming returns), and the refused count.
 */
static unsigned long name_in(const char *name, uint64_t off, int rc, char *out, size_t outlen)
{
	struct native_unwinder *u;
	char file[256];
	unsigned long refused;
	struct stat st;
	int fd = open_input(name);

	assert_int_equal(fstat(fd, &st), 0);
	u = native_unwinder__new_file(fd, BASE, st.st_size);
	assert_non_null(u);
	assert_int_equal(native_unwinder__name(u, BASE + off, out, outlen, file, sizeof(file)), rc);
	refused = native_unwinder__refused(u);
	native_unwinder__free(u);
	/* the descriptor went with the module, or was closed at once */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	return refused;
}

static void test_refused_named_by_offset(void **state)
{
	char name[256];

	(void)state;
	/* hidden_leaf (0x1f4) is in minidebug-so's .gnu_debugdata only; seed_entry at 0x21a */
	assert_int_equal(name_in("minidebug-so", 0x200, 0, name, sizeof(name)), 0);
	assert_string_equal(name, "hidden_leaf");
	assert_int_equal(name_in("stripped-so", 0x21a, 0, name, sizeof(name)), 0);
	assert_string_equal(name, "seed_entry");
	assert_int_equal(name_in("debugdata-bomb", 0x21a, 0, name, sizeof(name)), 1);
	assert_string_equal(name, "[fuzz]+0x21a");
	assert_int_equal(name_in("chdr-huge", 0x10, 0, name, sizeof(name)), 1);
	assert_string_equal(name, "[fuzz]+0x10");
}

/* libdw refuses a file without program headers, leaving its fd to the caller (it used to leak). */
static void test_refused_by_libdw_fd_closed(void **state)
{
	char name[256];

	(void)state;
	assert_int_equal(name_in("no-phdrs", 0x10, -ENOENT, name, sizeof(name)), 0);
	assert_string_equal(name, "0x7f0000000010");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard_passes_real_files),
		cmocka_unit_test(test_guard_refuses_expansion),
		cmocka_unit_test(test_refused_named_by_offset),
		cmocka_unit_test(test_refused_by_libdw_fd_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
