/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Output files: what outfile__open refuses before a run (links, FIFOs,
 * another user's file in a sticky directory), and what outfile__write leaves
 * when it fails (nothing new: no temporary file, the old file unchanged) or
 * succeeds (a new file renamed over the old one, never written through).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/outfile.h"

struct tmpdir {
	char dir[64];
	char path[128]; /* dir/out.json, the destination */
};

static struct tmpdir tmpdir_make(void)
{
	struct tmpdir t = { .dir = "/tmp/pybpfprof-outfile-XXXXXX" };

	assert_non_null(mkdtemp(t.dir));
	snprintf(t.path, sizeof(t.path), "%s/out.json", t.dir);
	return t;
}

static void tmpdir_remove(struct tmpdir *t)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
}

/* The names in dir, sorted, space-separated: what a run left there. */
static char *listing(const char *dir, char *buf, size_t len)
{
	struct dirent **ents;
	int n, i;
	size_t at = 0;

	n = scandir(dir, &ents, NULL, alphasort);
	assert_true(n >= 0);
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, ".."))
			at += snprintf(buf + at, len - at, "%s%s", at ? " " : "", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *get(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static mode_t st_mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode;
}

static int fill_text(FILE *f, void *arg)
{
	fputs(arg, f);
	return 0;
}

/* Writes half its content, then fails as a writer can (out of memory). */
static int fill_fails(FILE *f, void *arg)
{
	fputs(arg, f);
	fflush(f);
	return -ENOMEM;
}

static int fill_big(FILE *f, void *arg)
{
	size_t i;

	for (i = 0; i < 100000; i++)
		fputs("0123456789", f);
	return 0;
}

static void test_open_checks(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], ls[256];

	(void)state;
	assert_int_equal(outfile__open(&of, "/nonexistent-dir/x.json", why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "/nonexistent-dir"));
	assert_int_equal(of.dir_fd, -1);
	outfile__close(&of);
	assert_int_equal(outfile__open(&of, t.dir, why, sizeof(why)), -EISDIR);
	outfile__close(&of);
	assert_int_equal(outfile__open(&of, "/", why, sizeof(why)), -EISDIR);
	outfile__close(&of);
	/* Checking tries a file in the directory, and leaves nothing there. */
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "");
	outfile__close(&of);
	tmpdir_remove(&t);
}

static void test_symlink_refused(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], target[160], buf[64], ls[256];

	(void)state;
	snprintf(target, sizeof(target), "%s/victim", t.dir);
	put(target, "precious\n");
	assert_int_equal(symlink(target, t.path), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), -ELOOP);
	assert_non_null(strstr(why, "symbolic link"));
	outfile__close(&of);
	assert_string_equal(get(target, buf, sizeof(buf)), "precious\n");
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "out.json victim");
	tmpdir_remove(&t);
}

static void test_dangling_symlink_refused(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], target[160], ls[256];

	(void)state;
	snprintf(target, sizeof(target), "%s/would-be-created", t.dir);
	assert_int_equal(symlink(target, t.path), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), -ELOOP);
	outfile__close(&of);
	assert_int_equal(access(target, F_OK), -1);
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "out.json");
	tmpdir_remove(&t);
}

/* A link that appears during the run is refused at the end, and left as it is. */
static void test_symlink_planted_during_run(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], target[160], buf[64], ls[256], lnk[256];
	ssize_t n;

	(void)state;
	snprintf(target, sizeof(target), "%s/victim", t.dir);
	put(target, "precious\n");
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(symlink(target, t.path), 0);
	assert_int_equal(outfile__write(&of, fill_text, "report\n", why, sizeof(why)), -ELOOP);
	outfile__close(&of);
	assert_non_null(strstr(why, "symbolic link"));
	assert_string_equal(get(target, buf, sizeof(buf)), "precious\n");
	n = readlink(t.path, lnk, sizeof(lnk) - 1);
	assert_true(n > 0);
	lnk[n] = '\0';
	assert_string_equal(lnk, target);
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "out.json victim");
	tmpdir_remove(&t);
}

static void test_fifo_refused(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400];

	(void)state;
	assert_int_equal(mkfifo(t.path, 0600), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "FIFO"));
	outfile__close(&of);
	/* Only root makes devices: /dev/null is written in place, never replaced. */
	assert_int_equal(outfile__open(&of, "/dev/null", why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_text, "discarded\n", why, sizeof(why)), 0);
	outfile__close(&of);
	assert_true(S_ISCHR(st_mode_of("/dev/null")));
	tmpdir_remove(&t);
}

static void test_failure_leaves_nothing(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], buf[64], ls[256];

	(void)state;
	/* A new file: none is left. */
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_fails, "half a rep", why, sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "not created"));
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "");
	/* An existing file: kept as it was. */
	put(t.path, "old report\n");
	assert_int_equal(outfile__write(&of, fill_fails, "half a rep", why, sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "left unchanged"));
	outfile__close(&of);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "old report\n");
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "out.json");
	tmpdir_remove(&t);
}

/*
 * A write(2) error mid-stream is caught with its exact reason. File-size
 * limit (EFBIG) stands in for a full disk (ENOSPC): both fail write() itself.
 */
static void test_write_error_caught(void **state)
{
	struct rlimit old, lim;
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], buf[64], ls[256];
	int err;

	(void)state;
	put(t.path, "old report\n");
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = (struct rlimit){ .rlim_cur = 65536, .rlim_max = old.rlim_max };
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = outfile__write(&of, fill_big, NULL, why, sizeof(why));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	outfile__close(&of);
	assert_int_equal(err, -EFBIG);
	assert_non_null(strstr(why, strerror(EFBIG)));
	assert_string_equal(get(t.path, buf, sizeof(buf)), "old report\n");
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "out.json");
	tmpdir_remove(&t);
}

/*
 * Replaced, not written into: a new inode renamed over the old one. A hard
 * link to the old file (one planted to /etc/shadow, say) keeps its content.
 */
static void test_replaced_atomically(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	struct stat before, after;
	char why[400], buf[64], ls[256], lnk[160];
	mode_t mask;

	(void)state;
	put(t.path, "old report\n");
	snprintf(lnk, sizeof(lnk), "%s/hardlink", t.dir);
	assert_int_equal(link(t.path, lnk), 0);
	assert_int_equal(stat(t.path, &before), 0);
	mask = umask(022);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_text, "new report\n", why, sizeof(why)), 0);
	/* The same outfile may be written again (one -o, one write, but nothing forbids it). */
	assert_int_equal(outfile__write(&of, fill_text, "newer report\n", why, sizeof(why)), 0);
	outfile__close(&of);
	umask(mask);
	assert_int_equal(stat(t.path, &after), 0);
	assert_true(after.st_ino != before.st_ino);
	assert_int_equal(after.st_mode & 07777, 0644);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "newer report\n");
	assert_string_equal(get(lnk, buf, sizeof(buf)), "old report\n");
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "hardlink out.json");
	/* A file kept private stays private. */
	assert_int_equal(chmod(t.path, 0600), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_text, "private\n", why, sizeof(why)), 0);
	outfile__close(&of);
	assert_int_equal(stat(t.path, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0600);
	tmpdir_remove(&t);
}

/* In a sticky directory, another user's file is refused; ours is not. */
static void test_sticky_foreign_owner_refused(void **state)
{
	struct tmpdir t;
	struct outfile of;
	char why[400], buf[64];

	(void)state;
	if (geteuid())
		skip();
	t = tmpdir_make();
	assert_int_equal(chmod(t.dir, 01777), 0);
	put(t.path, "planted\n");
	assert_int_equal(chown(t.path, 12345, 12345), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "uid 12345"));
	assert_non_null(strstr(why, "sticky"));
	outfile__close(&of);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "planted\n");
	/* Planted during the run: refused at the end too. */
	assert_int_equal(chown(t.path, 0, 0), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(chown(t.path, 12345, 12345), 0);
	assert_int_equal(outfile__write(&of, fill_text, "report\n", why, sizeof(why)), -EPERM);
	outfile__close(&of);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "planted\n");
	/* Owned by the directory's owner: the rule allows it (as the kernel's does). */
	assert_int_equal(chown(t.dir, 12345, 12345), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_text, "report\n", why, sizeof(why)), 0);
	outfile__close(&of);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "report\n");
	/* Not sticky: another user's file in our own directory is ours to replace. */
	assert_int_equal(chown(t.dir, 0, 0), 0);
	assert_int_equal(chmod(t.dir, 0755), 0);
	assert_int_equal(chown(t.path, 12345, 12345), 0);
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	outfile__close(&of);
	tmpdir_remove(&t);
}

/* The directory is held from the check: swapping its path for a link does not redirect. */
static void test_directory_swap(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], sub[128], moved[128], elsewhere[128], path[192], ls[256], buf[64];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/sub", t.dir);
	snprintf(moved, sizeof(moved), "%s/moved", t.dir);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", t.dir);
	snprintf(path, sizeof(path), "%s/out.json", sub);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(mkdir(elsewhere, 0755), 0);
	assert_int_equal(outfile__open(&of, path, why, sizeof(why)), 0);
	assert_int_equal(rename(sub, moved), 0);
	assert_int_equal(symlink(elsewhere, sub), 0);
	assert_int_equal(outfile__write(&of, fill_text, "report\n", why, sizeof(why)), 0);
	outfile__close(&of);
	assert_string_equal(listing(elsewhere, ls, sizeof(ls)), "");
	snprintf(path, sizeof(path), "%s/out.json", moved);
	assert_string_equal(get(path, buf, sizeof(buf)), "report\n");
	tmpdir_remove(&t);
}

/* Lists the directory (arg) from inside the write, into the file: what a run killed now leaves. */
static int fill_listing(FILE *f, void *arg)
{
	char ls[256];

	fprintf(f, "[%s]", listing(arg, ls, sizeof(ls)));
	return 0;
}

/*
 * While the content is written, the directory shows no file for it, not
 * even a hidden one: a run killed then (SIGKILL, a second stop signal)
 * leaves nothing behind. Then the file is in place, whole.
 */
static void test_nothing_named_while_writing(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], buf[64], ls[256];

	(void)state;
	assert_int_equal(outfile__open(&of, t.path, why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_listing, t.dir, why, sizeof(why)), 0);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "[]");
	/* over an existing file too: only that file is there meanwhile */
	assert_int_equal(outfile__write(&of, fill_listing, t.dir, why, sizeof(why)), 0);
	outfile__close(&of);
	assert_string_equal(get(t.path, buf, sizeof(buf)), "[out.json]");
	assert_string_equal(listing(t.dir, ls, sizeof(ls)), "out.json");
	tmpdir_remove(&t);
}

/*
 * outfile__openat: a name in a directory the caller holds; the file lands
 * there whatever its path names meanwhile. Names with a '/' are refused.
 * no_replace: a file already there is kept, and the write says -EEXIST.
 */
static void test_openat_held(void **state)
{
	struct tmpdir t = tmpdir_make();
	struct outfile of;
	char why[400], sub[128], moved[128], path[192], ls[256], buf[64];
	struct stat st;
	int fd;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/sub", t.dir);
	snprintf(moved, sizeof(moved), "%s/moved", t.dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	fd = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(outfile__openat(&of, fd, "../x", "x", why, sizeof(why)), -EINVAL);
	assert_int_equal(outfile__openat(&of, fd, "..", "x", why, sizeof(why)), -EINVAL);
	assert_int_equal(rename(sub, moved), 0);
	assert_int_equal(symlink("/nonexistent", sub), 0);
	assert_int_equal(outfile__openat(&of, fd, "a.pb", "sub/a.pb", why, sizeof(why)), 0);
	assert_int_equal(outfile__write(&of, fill_text, "one\n", why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/a.pb", moved);
	assert_int_equal(stat(path, &st), 0);
	assert_true(of.dev == st.st_dev && of.ino == st.st_ino);
	outfile__close(&of);
	assert_int_equal(outfile__openat(&of, fd, "a.pb", "sub/a.pb", why, sizeof(why)), 0);
	of.no_replace = true;
	assert_int_equal(outfile__write(&of, fill_text, "two\n", why, sizeof(why)), -EEXIST);
	assert_true(of.dev == 0 && of.ino == 0);
	outfile__close(&of);
	assert_string_equal(get(path, buf, sizeof(buf)), "one\n");
	assert_string_equal(listing(moved, ls, sizeof(ls)), "a.pb");
	close(fd);
	tmpdir_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_checks),
		cmocka_unit_test(test_symlink_refused),
		cmocka_unit_test(test_dangling_symlink_refused),
		cmocka_unit_test(test_symlink_planted_during_run),
		cmocka_unit_test(test_fifo_refused),
		cmocka_unit_test(test_failure_leaves_nothing),
		cmocka_unit_test(test_write_error_caught),
		cmocka_unit_test(test_replaced_atomically),
		cmocka_unit_test(test_sticky_foreign_owner_refused),
		cmocka_unit_test(test_directory_swap),
		cmocka_unit_test(test_nothing_named_while_writing),
		cmocka_unit_test(test_openat_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
