/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Source files read with a target's rights: the /proc/PID/status parser on
 * hostile text, the helper's reply decoder on hostile bytes, and the helper
 * itself on real files: lines, the root directory as a jail, magic links,
 * FIFOs, and (as root) the rights of another user and of a root without
 * capabilities.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/report_source.h"
#include "proc/source.h"

#define STATUS_HEAD "Name:\tpython3\nUmask:\t0022\nState:\tR (running)\n"
#define STATUS_IDS "Uid:\t1000\t1001\t1002\t1003\nGid:\t100\t101\t102\t103\n"
#define STATUS_TAIL "NStgid:\t42\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n"

static int parse(const char *text, struct source_creds *c)
{
	return source_creds__parse(text, strlen(text), c);
}

static void test_creds_parse(void **state)
{
	struct source_creds c;

	(void)state;
	assert_int_equal(parse(STATUS_HEAD STATUS_IDS
			       "FDSize:\t64\nGroups:\t4 24 27 \n" STATUS_TAIL,
			       &c),
			 0);
	assert_int_equal(c.kind, SOURCE_CREDS_PROC);
	assert_int_equal(c.uid[0], 1000);
	assert_int_equal(c.uid[3], 1003);
	assert_int_equal(c.gid[1], 101);
	assert_int_equal(c.gid[3], 103);
	assert_int_equal(c.ngroups, 3);
	assert_int_equal(c.groups[0], 4);
	assert_int_equal(c.groups[2], 27);
	assert_true(c.cap_eff == 0x1ffffffffffULL);
	source_creds__free(&c);

	/* no groups at all, and no line break at the very end */
	assert_int_equal(parse(STATUS_IDS "Groups:\t\nCapEff:\t0", &c), 0);
	assert_int_equal(c.ngroups, 0);
	assert_null(c.groups);
	assert_true(c.cap_eff == 0);
	source_creds__free(&c);
}

/* Anything that is not the kernel's text is refused, never half taken. */
static void test_creds_parse_hostile(void **state)
{
	static const char *const bad[] = {
		"",
		STATUS_IDS "CapEff:\t0\n",					  /* no Groups */
		"Uid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",			  /* no Gid */
		STATUS_IDS "Groups:\t\n",					  /* no CapEff */
		STATUS_IDS "Uid:\t0\t0\t0\t0\nGroups:\t\nCapEff:\t0\n",		  /* Uid twice */
		STATUS_IDS "Groups:\t1\nGroups:\t0\nCapEff:\t0\n",		  /* Groups twice */
		"Uid:\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",	  /* 3 ids */
		"Uid:\t1\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n", /* 5 ids */
		"Uid:\t-1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
		"Uid:\t4294967296\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
		"Uid:\t4294967295\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
		"Uid:\t99999999999999999999999\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
		"Uid:\t12a\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
		"Uid:\t1,1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
		STATUS_IDS "Groups:\t1 x\nCapEff:\t0\n",
		STATUS_IDS "Groups:\t1\nCapEff:\t00000000000000000\n", /* 17 digits */
		STATUS_IDS "Groups:\t1\nCapEff:\t0000g00000000000\n",
		STATUS_IDS "Groups:\t1\nCapEff:\t\n",
		STATUS_IDS "Groups:\t1\nCapEff:\t1 2\n",
		/* a key inside another line is not the key */
		"Name:\tUid:\t0\t0\t0\t0\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n",
	};
	static const char nul[] = "Uid:\t1\t1\t1\t1\0\nGid:\t1\t1\t1\t1\nGroups:\t\nCapEff:\t0\n";
	struct source_creds c;
	char *many;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = strlen(bad[i]);
		if (source_creds__parse(bad[i], len, &c) != -EINVAL)
			fail_msg("status %zu accepted: %s", i, bad[i]);
		assert_int_equal(c.kind, SOURCE_CREDS_UNKNOWN);
		assert_null(c.groups);
	}
	assert_int_equal(source_creds__parse(nul, sizeof(nul) - 1, &c), -EINVAL); /* a NUL in it */
	/* 65536 groups are the most a process may have; one more is not real */
	many = malloc(8 * 65537 + 200);
	assert_non_null(many);
	len = sprintf(many, STATUS_IDS "CapEff:\t0\nGroups:");
	for (i = 0; i < 65536; i++)
		len += sprintf(many + len, " %zu", i + 1);
	strcpy(many + len, "\n");
	assert_int_equal(parse(many, &c), 0);
	assert_int_equal(c.ngroups, 65536);
	assert_int_equal(c.groups[65535], 65536);
	source_creds__free(&c);
	strcpy(many + len, " 7\n");
	assert_int_equal(parse(many, &c), -EINVAL);
	free(many);
}

/* Our own /proc/self/status, through an fd as pybpfprof holds it. */
static void test_creds_read_self(void **state)
{
	struct source_creds c;
	int fd = open("/proc/self/status", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(source_creds__read(fd, &c), 0);
	assert_int_equal(c.uid[3], getuid());
	assert_int_equal(c.gid[3], getgid());
	/* read again from the start: the same */
	source_creds__free(&c);
	assert_int_equal(source_creds__read(fd, &c), 0);
	assert_int_equal(c.uid[0], getuid());
	source_creds__free(&c);
	close(fd);
}

static const int lines3[] = { 1, 2, 3 };

/* Replies made by the encoder decode to the same files. */
static void test_reply_roundtrip(void **state)
{
	char *texts[3] = { "first", NULL, "third" }, *buf = NULL, *longer;
	struct source_file in[2] = {
		{ .name = "/a.py", .lines = lines3, .nlines = 3, .mtime = 1234, .texts = texts },
		{ .name = "/b.py", .lines = lines3, .nlines = 3, .err = -EACCES },
	};
	struct source_file out[2] = {
		{ .name = "/a.py", .lines = lines3, .nlines = 3 },
		{ .name = "/b.py", .lines = lines3, .nlines = 3 },
	};
	size_t len = 0, done;

	(void)state;
	assert_int_equal(source_reply_encode(&buf, &len, 0, &in[0]), 0);
	assert_int_equal(source_reply_encode(&buf, &len, 1, &in[1]), 0);
	assert_int_equal(source_reply_decode(buf, len, out, 2, &done), 2);
	assert_int_equal(done, 2);
	assert_int_equal(out[0].err, 0);
	assert_int_equal(out[0].mtime, 1234);
	assert_string_equal(out[0].texts[0], "first");
	assert_null(out[0].texts[1]);
	assert_string_equal(out[0].texts[2], "third");
	assert_int_equal(out[1].err, -EACCES);
	assert_null(out[1].texts);
	source_files_free(out, 2);

	/* cut anywhere, only the whole records are taken */
	for (size_t cut = 0; cut < len; cut++) {
		int r = source_reply_decode(buf, cut, out, 2, &done);

		assert_int_equal(r, (int)done);
		assert_true(done < 2);
		if (done)
			assert_string_equal(out[0].texts[2], "third");
		source_files_free(out, done);
	}
	/* no reply at all: the helper died before writing (UBSan: NULL + 0) */
	assert_int_equal(source_reply_decode(NULL, 0, out, 2, &done), 0);
	assert_int_equal(done, 0);
	/* bytes beyond the last file asked for */
	longer = realloc(buf, len + 1);
	assert_non_null(longer);
	buf = longer;
	buf[len] = 0;
	assert_int_equal(source_reply_decode(buf, len + 1, out, 2, &done), -EINVAL);
	assert_int_equal(done, 2);
	source_files_free(out, 2);
	free(buf);
}

struct raw {
	uint32_t index;
	int32_t err;
	int64_t mtime;
	uint32_t count;
	uint32_t line;
	uint16_t len;
	char text[8];
} __attribute__((packed));

/* A record that breaks a rule: refused, and nothing of it kept. */
static void test_reply_hostile(void **state)
{
	const struct raw good = { .index = 0,
				  .count = 1,
				  .line = 1,
				  .len = 8,
				  .text = "x = 1\nzz" };
	struct source_file f = { .name = "/a.py", .lines = lines3, .nlines = 3 };
	struct raw r;
	size_t done;

	(void)state;
	/* the good one, whose text holds a line break: cut there */
	assert_int_equal(source_reply_decode(&good, sizeof(good), &f, 1, &done), 1);
	assert_string_equal(f.texts[1], "x = 1");
	source_files_free(&f, 1);

	r = good;
	r.index = 1; /* not the file asked next */
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), -EINVAL);
	assert_int_equal(done, 0);
	assert_null(f.texts);
	r = good;
	r.count = 4; /* more lines than asked */
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), -EINVAL);
	r = good;
	r.line = 3; /* a line index past the request */
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), -EINVAL);
	r = good;
	r.err = EACCES; /* an error with lines */
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), -EINVAL);
	r = good;
	r.len = SOURCE_TEXT_MAX + 1; /* longer than any text kept */
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), -EINVAL);
	r = good;
	r.len = 0xffff; /* longer than the reply: incomplete, not read past */
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), -EINVAL);
	/* an error code no helper sends becomes EIO; a NUL ends a text */
	r = good;
	r.err = 0x7fffffff;
	r.count = 0;
	assert_int_equal(source_reply_decode(&r, 20, &f, 1, &done), 1);
	assert_int_equal(f.err, -EIO);
	r = good;
	memcpy(r.text, "ab\0cdefg", 8);
	assert_int_equal(source_reply_decode(&r, sizeof(r), &f, 1, &done), 1);
	assert_int_equal(f.err, 0);
	assert_string_equal(f.texts[1], "ab");
	source_files_free(&f, 1);
}

static char tmpdir[64];

static void write_file(const char *name, const char *text, mode_t mode)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/pybpfprof-source-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	chmod(tmpdir, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}

static const struct source_creds self = { .kind = SOURCE_CREDS_SELF };

/* Lines trimmed; a line break missing at the end; a long line cut; the mtime. */
static void test_read_lines(void **state)
{
	static const int want[] = { 2, 4, 5, 6 };
	struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
	struct source_file f = { .lines = want, .nlines = 4 };
	char path[256], *text = malloc(20000);
	size_t len;
	int i;

	(void)state;
	assert_non_null(text);
	len = sprintf(text, "a = 1\n    if x in y:   \n\n\t");
	for (i = 0; i < 10000; i++)
		text[len++] = 'x';
	strcpy(text + len, "\r\n\nlast");
	write_file("lines.py", text, 0644);
	free(text);
	snprintf(path, sizeof(path), "%s/lines.py", tmpdir);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	f.name = path;
	assert_true(source_read(-1, &self, &f, 1, 2000) >= 0);
	assert_int_equal(f.err, 0);
	assert_int_equal(f.mtime, 1000000000);
	assert_string_equal(f.texts[0], "if x in y:");
	assert_int_equal(strlen(f.texts[1]), SOURCE_TEXT_MAX); /* cut */
	assert_string_equal(f.texts[2], "");		       /* empty, but there */
	assert_string_equal(f.texts[3], "last");
	source_files_free(&f, 1);
}

/* A process's root is a jail: no link, ".." or magic link leads out of it. */
static void test_read_in_root(void **state)
{
	static const int one[] = { 1 };
	struct source_file f[5] = {
		{ .name = "/app.py", .lines = one, .nlines = 1 },
		{ .name = "/escape.py", .lines = one, .nlines = 1 },
		{ .name = "/../../../etc/passwd", .lines = one, .nlines = 1 },
		{ .name = "/fifo", .lines = one, .nlines = 1 },
		{ .name = "/", .lines = one, .nlines = 1 },
	};
	char path[256];
	int root_fd;

	(void)state;
	write_file("app.py", "inside = True\n", 0644);
	snprintf(path, sizeof(path), "%s/escape.py", tmpdir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(path, 0644), 0);
	root_fd = open(tmpdir, O_PATH | O_DIRECTORY);
	assert_true(root_fd >= 0);
	assert_true(source_read(root_fd, &self, f, 5, 2000) >= 0);
	close(root_fd);
	assert_int_equal(f[0].err, 0);
	assert_string_equal(f[0].texts[0], "inside = True");
	/* /etc/passwd exists on the host, not inside the root */
	assert_int_equal(f[1].err, -ENOENT);
	assert_int_equal(f[2].err, -ENOENT);
	/* a FIFO is opened without blocking and not read */
	assert_int_equal(f[3].err, -SOURCE_ENOTREG);
	assert_int_equal(f[4].err, -SOURCE_ENOTREG);
	source_files_free(f, 5);
}

/* /proc/PID/root and /proc/self/fd/N are magic links: never followed. */
static void test_magic_links(void **state)
{
	static const int one[] = { 1 };
	struct source_file f[2] = { { .lines = one, .nlines = 1 }, { .lines = one, .nlines = 1 } };
	char a[300], b[64];
	int root_fd = open("/", O_PATH | O_DIRECTORY), fd;

	(void)state;
	write_file("magic.py", "secret = 1\n", 0644);
	snprintf(a, sizeof(a), "/proc/%d/root%s/magic.py", getpid(), tmpdir);
	fd = open(a, O_RDONLY);
	assert_true(fd >= 0); /* the path works for an ordinary open */
	snprintf(b, sizeof(b), "/proc/self/fd/%d", fd);
	f[0].name = a;
	f[1].name = b;
	assert_true(source_read(root_fd, &self, f, 2, 2000) >= 0);
	assert_int_equal(f[0].err, -ELOOP);
	assert_true(f[1].err == -ELOOP || f[1].err == -ENOENT); /* the helper closed fd */
	source_files_free(f, 2);
	close(fd);
	close(root_fd);
}

/* Unknown rights read nothing, without a helper. */
static void test_unknown_creds(void **state)
{
	static const int one[] = { 1 };
	struct source_creds none = { .kind = SOURCE_CREDS_UNKNOWN };
	struct source_file f = { .name = "/etc/hostname", .lines = one, .nlines = 1 };

	(void)state;
	assert_int_equal(source_read(-1, &none, &f, 1, 2000), 0);
	assert_int_equal(f.err, -SOURCE_ENOCREDS);
	assert_non_null(strstr(source_strerror(f.err), "unknown"));
}

/*
 * As root: a file only root may read is refused to another user's process,
 * and to a root process without capabilities when another user owns it.
 */
static void test_other_users_rights(void **state)
{
	static const int one[] = { 1 };
	gid_t groups[1] = { 12346 };
	struct source_creds nobody = { .kind = SOURCE_CREDS_PROC,
				       .uid = { 65534, 65534, 65534, 65534 },
				       .gid = { 65534, 65534, 65534, 65534 } };
	struct source_creds grouped = nobody, root_nocaps = { .kind = SOURCE_CREDS_PROC },
			    root = { .kind = SOURCE_CREDS_PROC, .cap_eff = ~0ULL };
	struct source_file f[3];
	char p0[256], p1[256], p2[256];

	(void)state;
	if (geteuid())
		skip();
	grouped.groups = groups;
	grouped.ngroups = 1;
	write_file("secret.py", "root only\n", 0600);
	write_file("public.py", "anyone\n", 0644);
	write_file("group.py", "group\n", 0640);
	snprintf(p0, sizeof(p0), "%s/secret.py", tmpdir);
	snprintf(p1, sizeof(p1), "%s/public.py", tmpdir);
	snprintf(p2, sizeof(p2), "%s/group.py", tmpdir);
	assert_int_equal(chown(p2, 12345, 12346), 0);
	for (int i = 0; i < 3; i++)
		f[i] = (struct source_file){ .lines = one, .nlines = 1 };
	f[0].name = p0;
	f[1].name = p1;
	f[2].name = p2;

	assert_true(source_read(-1, &nobody, f, 3, 2000) >= 0);
	assert_int_equal(f[0].err, -EACCES);
	assert_null(f[0].texts);
	assert_int_equal(f[1].err, 0);
	assert_string_equal(f[1].texts[0], "anyone");
	assert_int_equal(f[2].err, -EACCES);
	source_files_free(f, 3);

	/* its supplementary group opens group.py */
	assert_true(source_read(-1, &grouped, f, 3, 2000) >= 0);
	assert_int_equal(f[0].err, -EACCES);
	assert_int_equal(f[2].err, 0);
	assert_string_equal(f[2].texts[0], "group");
	source_files_free(f, 3);

	/* uid 0 without CAP_DAC_OVERRIDE: root's own file yes, uid 12345's 0640 file no */
	assert_int_equal(chmod(p2, 0600), 0);
	assert_true(source_read(-1, &root_nocaps, f, 3, 2000) >= 0);
	assert_int_equal(f[0].err, 0);
	assert_int_equal(f[2].err, -EACCES);
	source_files_free(f, 3);
	assert_true(source_read(-1, &root, f, 3, 2000) >= 0);
	assert_int_equal(f[2].err, 0);
	source_files_free(f, 3);
}

/* The cost of a report's sources: 50 files of 200 lines, 10 lines each, one helper. */
static void test_read_cost(void **state)
{
	static int want[10] = { 3, 20, 40, 60, 80, 100, 120, 140, 160, 199 };
	struct source_file f[50];
	char names[50][256], text[200 * 40];
	struct timespec t0, t1;
	size_t len = 0;
	int i, ms;

	(void)state;
	for (i = 0; i < 200; i++)
		len += sprintf(text + len, "    value_%03d = compute(%d)\n", i, i);
	for (i = 0; i < 50; i++) {
		char name[32];

		snprintf(name, sizeof(name), "mod%02d.py", i);
		write_file(name, text, 0644);
		snprintf(names[i], sizeof(names[i]), "%s/%s", tmpdir, name);
		f[i] = (struct source_file){ .name = names[i], .lines = want, .nlines = 10 };
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ms = source_read(-1, &self, f, 50, 2000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(ms >= 0);
	for (i = 0; i < 50; i++) {
		assert_int_equal(f[i].err, 0);
		assert_string_equal(f[i].texts[9], "value_198 = compute(198)");
	}
	source_files_free(f, 50);
	print_message("50 files, 500 lines: %.2f ms\n",
		      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
}

/* The same credentials seen twice count once; a fifth different set marks too many. */
static void test_seen(void **state)
{
	struct proc_sources *s = proc_sources__new();
	struct source_creds c = { .kind = SOURCE_CREDS_PROC };
	int i;

	(void)state;
	assert_non_null(s);
	assert_int_equal(s->status_fd, -1);
	assert_int_equal(proc_sources__look(s), -EBADF);
	for (i = 0; i < 4; i++) {
		c.uid[3] = 1000 + i;
		assert_int_equal(proc_sources__seen(s, &c), 0);
		assert_int_equal(proc_sources__seen(s, &c), 0);
	}
	assert_int_equal(s->ncreds, 4);
	assert_false(s->too_many);
	c.uid[3] = 2000;
	assert_int_equal(proc_sources__seen(s, &c), 0);
	assert_int_equal(s->ncreds, 4);
	assert_true(s->too_many);
	proc_sources__free(s);
}

/*
 * The report's view: a process seen as root and as nobody gets, of a file
 * only root may read, no text and the reason; of a public file, its text.
 * One helper per set of credentials, the strictest answer kept.
 */
static void test_report_strictest(void **state)
{
	struct source_creds nobody = { .kind = SOURCE_CREDS_PROC,
				       .uid = { 65534, 65534, 65534, 65534 },
				       .gid = { 65534, 65534, 65534, 65534 } };
	struct profile_target *pp;
	struct profile p;
	char secret[256], pub[256], buf[64];
	uint32_t fs, fp;

	(void)state;
	if (geteuid())
		skip();
	write_file("strict_secret.py", "hidden = 1\n", 0600);
	write_file("strict_public.py", "shown = 1\n", 0644);
	snprintf(secret, sizeof(secret), "%s/strict_secret.py", tmpdir);
	snprintf(pub, sizeof(pub), "%s/strict_public.py", tmpdir);
	profile__init(&p, "cpu", 100);
	pp = profile__add_target(&p, 1, "/usr/bin/python3", "python3", "python3", "3.11.2");
	fs = profile__frame(&p, profile__func(&p, "s", secret, 1, false), 1);
	fp = profile__frame(&p, profile__func(&p, "p", pub, 1, false), 1);
	profile_target__add_stack(pp, 1, &fs, 1, 5);
	profile_target__add_stack(pp, 1, &fp, 1, 5);
	assert_int_equal(proc_sources__seen(pp->sources, &self), 0);
	assert_int_equal(proc_sources__seen(pp->sources, &nobody), 0);
	assert_int_equal(report_source_line(&p, pp, secret, 1, buf, sizeof(buf)), -EACCES);
	assert_int_equal(report_source_line(&p, pp, pub, 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "shown = 1");
	assert_int_equal(report_source_changed(&p, pp, secret), -EACCES);
	/* a file of no frame of the process is not read at all */
	assert_int_equal(report_source_line(&p, pp, "/etc/hostname", 1, buf, sizeof(buf)), -ENOENT);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creds_parse),	 cmocka_unit_test(test_creds_parse_hostile),
		cmocka_unit_test(test_creds_read_self),	 cmocka_unit_test(test_reply_roundtrip),
		cmocka_unit_test(test_reply_hostile),	 cmocka_unit_test(test_read_lines),
		cmocka_unit_test(test_read_in_root),	 cmocka_unit_test(test_magic_links),
		cmocka_unit_test(test_unknown_creds),	 cmocka_unit_test(test_other_users_rights),
		cmocka_unit_test(test_read_cost),	 cmocka_unit_test(test_seen),
		cmocka_unit_test(test_report_strictest),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
