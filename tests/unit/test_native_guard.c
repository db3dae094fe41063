/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What --native hands libdw of a target's files (native_guard.c and
 * native_unwind.c's report), on fuzz_native_elf's seeds and finds in
 * tests/fuzz/corpus/native_elf/: real small libraries pass and are named;
 * a file whose compressed parts would expand past the bounds is refused,
 * counted and named by offset; a file libdw refuses does not keep its fd; a
 * file truncated under libdw does not kill us.
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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/native_guard.h"
#include "proc/native_unwind_file.h"

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
	bool whole;

	why[0] = 0;
	ret = native_guard__check(fd, &whole, why, whylen);
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

/* Whether this process maps path (/proc/self/maps names it, " (deleted)" or not). */
static bool mapped(const char *path)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, path) != NULL;
	fclose(f);
	return found;
}

/*
 * A file the target can truncate after libdw was given it: libdw read a
 * mapped file's lost pages as a SIGBUS (this test died so while libdw mapped
 * it). Read with pread, the symbols past the new end are short reads: the pc
 * is named by offset, and nothing dies.
 */
static void test_truncated_after_report(void **state)
{
	static uint8_t buf[64 << 10];
	char path[] = "/tmp/test_native_guard.XXXXXX", name[256], file[256];
	struct native_unwinder *u;
	size_t n;
	int fd, in = open_input("minidebug-so");

	(void)state;
	n = read(in, buf, sizeof(buf));
	close(in);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	/* writable by others: any user could truncate it */
	assert_int_equal(fchmod(fd, 0666), 0);
	u = native_unwinder__new_file(fd, BASE, n);
	assert_non_null(u);
	assert_int_equal(truncate(path, 0x100), 0);
	unlink(path);
	assert_int_equal(native_unwinder__name(u, BASE + 0x1f8, name, sizeof(name), file,
					       sizeof(file)),
			 0);
	assert_string_equal(name, "[fuzz]+0x1f8");
	/* libdw was given the file: it never mapped it */
	assert_false(mapped(path));
	native_unwinder__free(u);
}

/* What the guard says of the file at path: its return, and *whole. */
static int guard_path(const char *path, bool *whole, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	assert_true(fd >= 0);
	ret = native_guard__check(fd, whole, why, whylen);
	close(fd);
	return ret;
}

/*
 * libdw takes a file with no section named .eh_frame whole (elf_rawfile)
 * when it looks for its CFI; libelf, reading with pread, then no longer
 * freed what it had read before (the fuzzer's find: the name table, at each
 * report). Such a file is read whole first, so an unwind in it leaks nothing
 * (SANITIZE=1's leak check fails this test otherwise); real libraries, which
 * have the section, are not read whole.
 */
static void test_whole_file_first(void **state)
{
	static const char *const parts[] = { "stripped-so", "minidebug-so", "ehframe-only-so",
					     "debugframe-so", "clang-stripped-so" };
	uint64_t stack[64] = { 0 }, pcs[NATIVE_MAX_FRAMES];
	struct native_regs r = { 0 };
	struct native_unwinder *u;
	bool complete = false, whole;
	char path[256], why[96];
	struct stat st;
	size_t i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(path, sizeof(path), CORPUS "%s", parts[i]);
		assert_int_equal(guard_path(path, &whole, why, sizeof(why)), 0);
		assert_false(whole);
	}
	assert_int_equal(guard_path(CORPUS "not-elf", &whole, why, sizeof(why)), -ENOEXEC);
	assert_false(whole);
	assert_int_equal(guard_path(CORPUS "regress-readall-leak", &whole, why, sizeof(why)), 0);
	assert_true(whole);
	fd = open_input("regress-readall-leak");
	assert_int_equal(fstat(fd, &st), 0);
	u = native_unwinder__new_file(fd, BASE, st.st_size);
	assert_non_null(u);
	r.ip = BASE + 0x200;
	r.sp = (uint64_t)(uintptr_t)stack;
	r.bp = r.sp + 16;
	assert_true(native_unwinder__unwind(u, getpid(), &r, (const uint8_t *)stack, sizeof(stack),
					    pcs, NATIVE_MAX_FRAMES, &complete) >= 0);
	assert_int_equal(native_unwinder__refused(u), 0);
	native_unwinder__free(u);
}

/*
 * A hostile target's file that libdw would take whole, grown (sparse) past
 * what may be read so: refused, named by offset, counted.
 */
static void test_whole_file_too_large(void **state)
{
	static uint8_t buf[16 << 10];
	char path[] = "/tmp/test_native_guard.XXXXXX", name[256], file[256], why[96];
	struct native_unwinder *u;
	bool whole;
	ssize_t n;
	int fd, in = open_input("regress-readall-leak");

	(void)state;
	n = read(in, buf, sizeof(buf));
	close(in);
	assert_true(n > 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), n);
	assert_int_equal(ftruncate(fd, NATIVE_GUARD_MAX_WHOLE + 1), 0);
	assert_int_equal(guard_path(path, &whole, why, sizeof(why)), -EFBIG);
	assert_string_equal(why, "no .eh_frame section, and more than 64 MB to read whole");
	u = native_unwinder__new_file(fd, BASE, NATIVE_GUARD_MAX_WHOLE + 1);
	unlink(path);
	assert_non_null(u);
	assert_int_equal(native_unwinder__refused(u), 1);
	assert_int_equal(native_unwinder__name(u, BASE + 0x200, name, sizeof(name), file,
					       sizeof(file)),
			 0);
	assert_string_equal(name, "[fuzz]+0x200");
	native_unwinder__free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard_passes_real_files),
		cmocka_unit_test(test_guard_refuses_expansion),
		cmocka_unit_test(test_refused_named_by_offset),
		cmocka_unit_test(test_refused_by_libdw_fd_closed),
		cmocka_unit_test(test_truncated_after_report),
		cmocka_unit_test(test_whole_file_first),
		cmocka_unit_test(test_whole_file_too_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
