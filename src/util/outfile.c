// SPDX-License-Identifier: GPL-2.0-only
/*
 * Output files created safely: checked by the directory descriptor held from
 * the start of the run, written to a new temporary file beside the
 * destination (unnamed, O_TMPFILE, where the file system has them; else
 * named, O_EXCL and O_NOFOLLOW), and renamed into place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util/outfile.h"

/* Bytes of the destination's name kept in the temporary file's: room for the rest. */
#define TMP_NAME_KEEP 200

/* Splits path into its directory (allocated, in *dir) and final component. */
static int split_path(const char *path, char **dir, char *name, size_t namelen)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (strlen(base) >= namelen)
		return -ENAMETOOLONG;
	strcpy(name, base);
	if (!slash)
		*dir = strdup(".");
	else if (slash == path)
		*dir = strdup("/");
	else
		*dir = strndup(path, slash - path);
	return *dir ? 0 : -ENOMEM;
}

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

/*
 * Whether the destination as it is now may be replaced: absent, or a regular
 * file that is not another user's in a sticky directory. The sticky rule is
 * the kernel's protected_regular one: in /tmp, a file owned by neither us nor
 * the directory's owner was put there by someone else, for us to write into.
 * Root would otherwise write through it; refusing is the only safe answer.
 */
static int check_dest(const struct outfile *of, char *why, size_t whylen)
{
	struct stat st, dir;

	if (fstatat(of->dir_fd, of->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "%s", strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, whylen,
			 "it is a symbolic link, and pybpfprof never writes through "
			 "one; name the file it points to, or use -o - for stdout");
		return -ELOOP;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "it is a directory; name a file in it");
		return -EISDIR;
	}
	/*
	 * Only root makes device nodes (CAP_MKNOD), so one found here was not
	 * planted by another user: writing into it (-o /dev/null) is the
	 * caller's choice, and outfile__write does so without a rename.
	 */
	if (S_ISCHR(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen,
			 "it is %s, not a regular file; name a regular file, or "
			 "use -o - for stdout",
			 file_kind(st.st_mode));
		return -EINVAL;
	}
	if (fstat(of->dir_fd, &dir)) {
		snprintf(why, whylen, "cannot read its directory: %s", strerror(errno));
		return -errno;
	}
	if ((dir.st_mode & S_ISVTX) && st.st_uid != geteuid() && st.st_uid != dir.st_uid) {
		snprintf(why, whylen,
			 "it belongs to uid %u in a sticky directory owned by uid %u "
			 "(anyone can plant a file there); remove it or name another file",
			 (unsigned)st.st_uid, (unsigned)dir.st_uid);
		return -EPERM;
	}
	return 0;
}

/* Six random letters or digits: the temporary name must not be guessable ahead. */
static void random_suffix(char *out)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[6];
	struct timespec ts;
	int i;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < 6; i++)
			r[i] = (unsigned char)((ts.tv_nsec >> (i * 5)) ^ (getpid() >> i));
	}
	for (i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

/*
 * Creates a new file ".NAME.XXXXXX" beside the destination: O_EXCL and
 * O_NOFOLLOW, so nothing already there (a planted link) is ever opened.
 * The fd, or -errno.
 */
static int create_tmp(struct outfile *of)
{
	char suffix[7];
	int fd, tries;

	for (tries = 0; tries < 100; tries++) {
		random_suffix(suffix);
		snprintf(of->tmp, sizeof(of->tmp), ".%.*s.%s", TMP_NAME_KEEP, of->name, suffix);
		fd = openat(of->dir_fd, of->tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	of->tmp[0] = '\0';
	return errno == EEXIST ? -EEXIST : -errno;
}

static void drop_tmp(struct outfile *of)
{
	if (of->tmp[0])
		unlinkat(of->dir_fd, of->tmp, 0);
	of->tmp[0] = '\0';
}

/*
 * A new file in the destination's directory that has no name yet
 * (O_TMPFILE): whatever ends the run while it is written (SIGKILL, a crash,
 * a second stop signal) leaves nothing behind, and a long write (dump -a)
 * shows no half-written file. The fd, or -errno (-EOPNOTSUPP and the like
 * where the file system has no unnamed files).
 */
static int create_unnamed(struct outfile *of)
{
	int fd = openat(of->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);

	of->tmp[0] = '\0';
	return fd >= 0 ? fd : -errno;
}

/*
 * Gives the unnamed file at fd a temporary name beside the destination, for
 * the rename: linkat never replaces what is there (a planted link or file
 * makes it EEXIST), and through /proc/self/fd it needs no capability. 0, or
 * -errno.
 */
static int name_unnamed(struct outfile *of, int fd)
{
	char suffix[7], proc[64];
	int tries;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (tries = 0; tries < 100; tries++) {
		random_suffix(suffix);
		snprintf(of->tmp, sizeof(of->tmp), ".%.*s.%s", TMP_NAME_KEEP, of->name, suffix);
		if (!linkat(AT_FDCWD, proc, of->dir_fd, of->tmp, AT_SYMLINK_FOLLOW) ||
		    (errno == ENOENT && !linkat(fd, "", of->dir_fd, of->tmp, AT_EMPTY_PATH)))
			return 0;
		if (errno != EEXIST)
			break;
	}
	of->tmp[0] = '\0';
	return -errno;
}

/* The checks of outfile__open and outfile__openat, of->dir_fd and of->name set. */
static int open_checks(struct outfile *of, char *why, size_t whylen)
{
	struct stat st;
	int err, fd;

	err = check_dest(of, why, whylen);
	/*
	 * Permission bits do not stop root, but an immutable or append-only
	 * file does stop the rename: better said now than after the run.
	 */
	if (!err && faccessat(of->dir_fd, of->name, W_OK, AT_EACCESS) && errno != ENOENT) {
		err = -errno;
		snprintf(why, whylen, "it cannot be replaced: %s", strerror(-err));
	}
	/* A device is written in place: its directory (/dev) need not take files. */
	if (!err && !fstatat(of->dir_fd, of->name, &st, AT_SYMLINK_NOFOLLOW) && S_ISCHR(st.st_mode))
		return 0;
	if (!err) {
		/* The directory must take a new file: the write creates one there. */
		fd = create_tmp(of);
		if (fd < 0) {
			err = fd;
			snprintf(why, whylen, "cannot create a file in its directory: %s",
				 strerror(-err));
		} else {
			close(fd);
			drop_tmp(of);
		}
	}
	if (err)
		outfile__close(of);
	return err;
}

int outfile__open(struct outfile *of, const char *path, char *why, size_t whylen)
{
	char *dir = NULL;
	int err;

	memset(of, 0, sizeof(*of));
	of->dir_fd = -1;
	of->tmp_fd = -1;
	of->path = path;
	err = split_path(path, &dir, of->name, sizeof(of->name));
	if (err) {
		snprintf(why, whylen, "%s",
			 err == -EISDIR ? "it is a directory; name a file in it" : strerror(-err));
		return err;
	}
	of->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (of->dir_fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open its directory %s: %s", dir, strerror(-err));
		free(dir);
		return err;
	}
	free(dir);
	return open_checks(of, why, whylen);
}

int outfile__openat(struct outfile *of, int dir_fd, const char *name, const char *path, char *why,
		    size_t whylen)
{
	int err;

	memset(of, 0, sizeof(*of));
	of->dir_fd = -1;
	of->tmp_fd = -1;
	of->path = path;
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		snprintf(why, whylen, "it is not a file name in its directory");
		return -EINVAL;
	}
	if (strlen(name) >= sizeof(of->name)) {
		snprintf(why, whylen, "%s", strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	strcpy(of->name, name);
	/* our own copy of the caller's descriptor: outfile__close closes it */
	of->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
	if (of->dir_fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot use its directory: %s", strerror(-err));
		return err;
	}
	return open_checks(of, why, whylen);
}

/*
 * Every write(2) of the stream, so that its first error is known exactly
 * (stdio keeps only a flag): ENOSPC when the disk fills up mid-report.
 */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct outfile *of = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < size) {
		n = write(of->tmp_fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!of->write_err)
				of->write_err = n < 0 ? -errno : -EIO;
			errno = -of->write_err;
			return 0;
		}
		done += n;
	}
	return size;
}

/*
 * Runs fill over a stream on of->tmp_fd and flushes it. The first write(2)
 * error comes first (a writer may see only its effects); then fill's, then
 * the stream's. 0 or -errno.
 */
static int fill_fd(struct outfile *of, int (*fill)(FILE *f, void *arg), void *arg)
{
	cookie_io_functions_t io = { .write = cookie_write };
	FILE *f = fopencookie(of, "w", io);
	int err;

	of->write_err = 0;
	err = f ? fill(f, arg) : -errno;
	if (f && fflush(f) && !err)
		err = -errno;
	if (f && ferror(f) && !err)
		err = -EIO;
	if (f)
		fclose(f);
	return of->write_err ? of->write_err : err;
}

/*
 * A character device (/dev/null, a terminal) is written in place: there is
 * nothing to rename over, and fsync does not apply to it. Opened without
 * following a link, and checked to be a device still.
 */
static int write_device(struct outfile *of, int (*fill)(FILE *f, void *arg), void *arg, char *why,
			size_t whylen)
{
	struct stat st;
	int err = 0;

	of->tmp_fd = openat(of->dir_fd, of->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (of->tmp_fd < 0)
		err = -errno;
	else if (fstat(of->tmp_fd, &st))
		err = -errno;
	else if (!S_ISCHR(st.st_mode))
		err = -EINVAL;
	if (!err)
		err = fill_fd(of, fill, arg);
	if (of->tmp_fd >= 0)
		close(of->tmp_fd);
	of->tmp_fd = -1;
	if (err)
		snprintf(why, whylen, "%s",
			 err == -EINVAL ? "it is no longer a character device" : strerror(-err));
	return err;
}

/* The temporary file the content goes to: unnamed if the file system has them. */
static int open_tmp(struct outfile *of, bool *named)
{
	int fd = create_unnamed(of);

	*named = fd < 0;
	return fd >= 0 ? fd : create_tmp(of);
}

/*
 * no_replace: the temporary file takes the name only if no file has it
 * (renameat2's RENAME_NOREPLACE; on a file system without it, a hard link
 * made with that name, which fails the same way, and the temporary name
 * dropped). 0 or -errno, -EEXIST when the name is taken.
 */
static int place_new(struct outfile *of, char *why, size_t whylen)
{
	int err = 0;

	if (renameat2(of->dir_fd, of->tmp, of->dir_fd, of->name, RENAME_NOREPLACE)) {
		err = -errno;
		if (err == -EINVAL)
			err = linkat(of->dir_fd, of->tmp, of->dir_fd, of->name, 0) ? -errno : 0;
		if (!err)
			unlinkat(of->dir_fd, of->tmp, 0);
	}
	if (err == -EEXIST)
		snprintf(why, whylen, "a file of that name exists, and is not replaced");
	else if (err)
		snprintf(why, whylen, "%s; the file was not created", strerror(-err));
	return err;
}

/*
 * The written temporary file takes the destination's place: checked again
 * (a link or a foreign file may have appeared during the run), then renamed
 * over it. 0, or -errno with the reason in why.
 */
static int put_in_place(struct outfile *of, const char *kept, char *why, size_t whylen)
{
	int err = check_dest(of, why, whylen);

	if (!err && of->no_replace)
		err = place_new(of, why, whylen);
	else if (!err && renameat(of->dir_fd, of->tmp, of->dir_fd, of->name)) {
		err = -errno;
		snprintf(why, whylen, "%s; %s", strerror(-err), kept);
	}
	return err;
}

int outfile__write(struct outfile *of, int (*fill)(FILE *f, void *arg), void *arg, char *why,
		   size_t whylen)
{
	struct stat st, tmp;
	const char *kept;
	bool existed, named;
	int err;

	if (of->dir_fd < 0) {
		snprintf(why, whylen, "%s", strerror(EBADF));
		return -EBADF;
	}
	of->dev = of->ino = 0;
	/* What a failure leaves, for its message: the file as it was, or none. */
	existed = !fstatat(of->dir_fd, of->name, &st, AT_SYMLINK_NOFOLLOW);
	kept = existed ? "the file already there was left unchanged" : "the file was not created";
	if (existed && S_ISCHR(st.st_mode))
		return write_device(of, fill, arg, why, whylen);
	of->tmp_fd = open_tmp(of, &named);
	if (of->tmp_fd < 0) {
		err = of->tmp_fd;
		snprintf(why, whylen, "cannot create a temporary file beside it: %s; %s",
			 strerror(-err), kept);
		return err;
	}
	/*
	 * Never readable by more than the file it replaces: a report someone
	 * kept private (0600) stays so. The temporary file is 0644 less umask.
	 */
	err = 0;
	if (existed && S_ISREG(st.st_mode) && !fstat(of->tmp_fd, &tmp) &&
	    (tmp.st_mode & ~st.st_mode & 0777) &&
	    fchmod(of->tmp_fd, tmp.st_mode & st.st_mode & 0777))
		err = -errno;
	if (!err)
		err = fill_fd(of, fill, arg);
	/* Some file systems (NFS, quotas) report a full disk only here. */
	if (!err && fsync(of->tmp_fd))
		err = -errno;
	if (!err && !fstat(of->tmp_fd, &tmp)) {
		of->dev = tmp.st_dev;
		of->ino = tmp.st_ino;
	}
	/* the unnamed file gets its temporary name only now, complete */
	if (!err && !named)
		err = name_unnamed(of, of->tmp_fd);
	if (close(of->tmp_fd) && !err)
		err = -errno;
	of->tmp_fd = -1;
	if (err)
		snprintf(why, whylen, "%s; %s", strerror(-err), kept);
	else
		err = put_in_place(of, kept, why, whylen);
	if (err) {
		drop_tmp(of);
		of->dev = of->ino = 0;
	}
	of->tmp[0] = '\0';
	return err;
}

void outfile__close(struct outfile *of)
{
	if (of->dir_fd >= 0)
		close(of->dir_fd);
	of->dir_fd = -1;
}
