// SPDX-License-Identifier: GPL-2.0-only
/*
 * --output-dir: the directory is opened once, at the start, and held by
 * descriptor; every file is created relative to it (outfile__openat: a new
 * temporary name, O_EXCL and O_NOFOLLOW, renamed within it) and every
 * deletion is an unlinkat on it. Nothing is looked up by the path again, so
 * a user who can rename the directory or a parent, and puts a link in its
 * place, cannot send root's files (or deletions) anywhere else: they go on
 * into the directory the agent opened, wherever it now is. If that
 * directory is deleted, its files cannot be made: each profile is refused
 * with a sentence saying so.
 *
 * --max-disk deletes only the files the agent wrote. It keeps them in a
 * list: name, device, inode and change time (taken after the rename), the
 * bytes they take. A file is deleted only while it is still that very
 * file: a regular file of our user with that inode and change time. A file
 * someone else made under such a name, a copy, a file renamed or linked
 * since (both change its ctime), is never touched. The list outlives the
 * run in a manifest in the directory (MANIFEST, written like any output:
 * a temporary file renamed over it), which a later run trusts only if it is
 * a regular file of our user that no one else may write; its entries are
 * checked one by one as above. So files of earlier runs count in the budget
 * and go first; a manifest lost or not trusted costs only that: their files
 * stay. A lock file keeps a second agent with --max-disk out of the
 * directory, which would otherwise rewrite the manifest.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/log.h"
#include "util/outfile.h"
#include "util/vec.h"
#include "agent.h"

#define MANIFEST ".pybpfprof-agent-files"
#define MANIFEST_HEADER "pybpfprof-agent-files 1\n"
#define LOCK_FILE ".pybpfprof-agent.lock"
/* Bytes of a manifest read at most: AGENT_MANIFEST_MAX lines of at most ~200 bytes. */
#define MANIFEST_MAX_BYTES (AGENT_MANIFEST_MAX * 200 + 64)
/* Writes between two passes over the list for what others did to the files. */
#define RESTAT_EVERY 1024

struct agent_dir {
	char *path;
	int fd;	     /* the directory (O_PATH), held for the run */
	int lock_fd; /* --max-disk: the lock that keeps a second agent out, or -1 */
	uint64_t max_bytes;
	struct agent_file *files; /* ours, oldest first from first */
	size_t nfiles, cap, first;
	uint64_t bytes, writes;
	bool dirty;	      /* the manifest lags the list */
	bool warned_manifest; /* said once: the manifest cannot be written */
	bool warned_moved;    /* said once: the path names another directory now */
	dev_t dev;	      /* of the directory */
	ino_t ino;
};

/* A decimal number of at most 20 digits, up to a space or the end; its end, or NULL. */
static const char *parse_u64(const char *s, const char *end, uint64_t *v)
{
	const char *p = s;

	*v = 0;
	while (p < end && *p >= '0' && *p <= '9' && p - s < 20) {
		if (*v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return NULL;
		*v = *v * 10 + (uint64_t)(*p++ - '0');
	}
	return p > s && (p == end || *p == ' ') ? p : NULL;
}

/* One line "NAME DEV INO CTIME_S CTIME_NS BYTES" (no newline) into f; 0 or -EINVAL. */
static int parse_line(const char *s, const char *end, struct agent_file *f)
{
	const char *sp = memchr(s, ' ', end - s);
	uint64_t v[5];
	size_t i, n;

	n = sp ? (size_t)(sp - s) : 0;
	if (!n || n >= sizeof(f->name))
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	memcpy(f->name, s, n);
	if (memchr(f->name, '/', n) || memchr(f->name, '\0', n) || !agent_file_ours(f->name))
		return -EINVAL;
	for (i = 0, s = sp; i < 5; i++) {
		if (s == end || *s != ' ')
			return -EINVAL;
		s = parse_u64(s + 1, end, &v[i]);
		if (!s)
			return -EINVAL;
	}
	if (s != end || v[3] >= 1000000000ULL || v[2] > INT64_MAX)
		return -EINVAL;
	f->dev = v[0];
	f->ino = v[1];
	f->ctime_s = (int64_t)v[2];
	f->ctime_ns = (long)v[3];
	f->bytes = v[4];
	return 0;
}

int agent_manifest_parse(const char *text, size_t len, struct agent_file **out, size_t *n)
{
	const char *s = text, *end = text + len;
	struct agent_file *files = NULL;
	size_t cap = 0, hl = strlen(MANIFEST_HEADER);
	int bad = 0;

	*out = NULL;
	*n = 0;
	if (len < hl || memcmp(text, MANIFEST_HEADER, hl))
		return -EINVAL;
	for (s += hl; s < end && *n < AGENT_MANIFEST_MAX;) {
		const char *nl = memchr(s, '\n', end - s);

		/* a line cut short (the file was being written) is not an entry */
		if (!nl)
			break;
		if (vec_grow((void **)&files, &cap, *n + 1, sizeof(*files))) {
			free(files);
			*n = 0;
			return -ENOMEM;
		}
		if (parse_line(s, nl, &files[*n]))
			bad++;
		else
			(*n)++;
		s = nl + 1;
	}
	*out = files;
	return bad;
}

int agent_manifest_write(FILE *f, const struct agent_file *files, size_t n)
{
	size_t i;

	fputs(MANIFEST_HEADER, f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRId64 " %ld %" PRIu64 "\n",
			files[i].name, files[i].dev, files[i].ino, files[i].ctime_s,
			files[i].ctime_ns, files[i].bytes);
	return ferror(f) ? -EIO : 0;
}

/* Whether name in the directory is still the file f recorded (and its stat in *st). */
static bool still_ours(const struct agent_dir *d, const struct agent_file *f, struct stat *st)
{
	return !fstatat(d->fd, f->name, st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st->st_mode) &&
	       st->st_uid == geteuid() && (uint64_t)st->st_dev == f->dev &&
	       (uint64_t)st->st_ino == f->ino && st->st_ctim.tv_sec == f->ctime_s &&
	       st->st_ctim.tv_nsec == f->ctime_ns;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct agent_file *)a)->name, ((const struct agent_file *)b)->name);
}

/*
 * The list's files checked again (what others did to the directory): those
 * no longer ours are dropped from it, never deleted; the others' bytes
 * updated. Then sorted by name, which is by time.
 */
static void restat(struct agent_dir *d)
{
	size_t i, k = 0;
	struct stat st;

	d->bytes = 0;
	if (!d->files)
		return;
	for (i = d->first; i < d->nfiles; i++) {
		if (!still_ours(d, &d->files[i], &st)) {
			pr_debug("--output-dir: %s is no longer the file the agent wrote: it is "
				 "left alone\n",
				 d->files[i].name);
			d->dirty = true;
			continue;
		}
		d->files[k] = d->files[i];
		d->files[k].bytes = (uint64_t)st.st_blocks * 512;
		d->bytes += d->files[k++].bytes;
	}
	d->first = 0;
	d->nfiles = k;
	qsort(d->files, d->nfiles, sizeof(*d->files), cmp_file);
}

/*
 * The manifest's text, if it can be trusted: a regular file (not a link, not
 * a FIFO) of our user that no other user may write, at most
 * MANIFEST_MAX_BYTES. NULL and *why otherwise ("" when there is none).
 */
static char *manifest_read(struct agent_dir *d, size_t *len, const char **why)
{
	int fd = openat(d->fd, MANIFEST, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	ssize_t r;

	*why = "";
	*len = 0;
	if (fd < 0) {
		if (errno != ENOENT)
			*why = errno == ELOOP ? "it is a symbolic link" : strerror(errno);
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		*why = "it is not a regular file";
	else if (st.st_uid != geteuid())
		*why = "another user owns it";
	else if (st.st_mode & 022)
		*why = "other users may write it";
	else if (st.st_size > MANIFEST_MAX_BYTES)
		*why = "it is too long";
	else if (!(buf = malloc(st.st_size + 1)))
		*why = "out of memory";
	for (; buf && *len < (size_t)st.st_size; *len += r) {
		r = pread(fd, buf + *len, st.st_size - *len, *len);
		if (r <= 0)
			break;
	}
	close(fd);
	return buf;
}

/* --max-disk: the files of earlier runs the manifest names, those still ours adopted. */
static void manifest_load(struct agent_dir *d)
{
	struct agent_file *files;
	const char *why;
	size_t len, n, i;
	char *text = manifest_read(d, &len, &why);
	int bad;

	if (!text) {
		if (why[0])
			pr_warn("--output-dir: %s/%s is not the agent's (%s): ignored; files of "
				"earlier runs are not deleted\n",
				d->path, MANIFEST, why);
		return;
	}
	bad = agent_manifest_parse(text, len, &files, &n);
	free(text);
	if (bad < 0) {
		pr_warn("--output-dir: %s/%s is not a manifest of the agent: ignored; files of "
			"earlier runs are not deleted\n",
			d->path, MANIFEST);
		return;
	}
	d->files = files;
	d->nfiles = d->cap = n;
	restat(d);
	/* one name twice (a manifest no agent wrote): once in the list */
	for (i = 1; i < d->nfiles; i++)
		if (!strcmp(d->files[i].name, d->files[i - 1].name)) {
			d->bytes -= d->files[i].bytes;
			memmove(&d->files[i], &d->files[i + 1],
				(d->nfiles - i - 1) * sizeof(*d->files));
			d->nfiles--;
			i--;
		}
	pr_info("--output-dir: %zu files of earlier runs (%.1f MiB) in the budget; %zu entries "
		"of the manifest no longer name the agent's files, %d unreadable\n",
		d->nfiles, d->bytes / 1048576.0, n - d->nfiles, bad);
}

/* The oldest of our files deleted until the rest fit (the newest always stays). */
static void trim(struct agent_dir *d)
{
	struct stat st;
	size_t k;

	if (!d->files)
		return;
	k = agent_disk_victims(d->files + d->first, d->nfiles - d->first, d->max_bytes);

	for (; k; k--, d->first++) {
		struct agent_file *f = &d->files[d->first];

		d->bytes -= f->bytes;
		d->dirty = true;
		if (!still_ours(d, f, &st)) {
			pr_debug("--output-dir: %s is no longer the file the agent wrote: left "
				 "alone\n",
				 f->name);
			continue;
		}
		if (unlinkat(d->fd, f->name, 0) && errno != ENOENT)
			pr_warn("--output-dir: cannot delete %s/%s: %s\n", d->path, f->name,
				strerror(errno));
	}
	if (d->first > d->nfiles / 2) {
		memmove(d->files, d->files + d->first, (d->nfiles - d->first) * sizeof(*d->files));
		d->nfiles -= d->first;
		d->first = 0;
	}
}

/* The file just written (of's) into the list, if it is still that file. */
static void record(struct agent_dir *d, const struct outfile *of)
{
	struct agent_file *f;
	struct stat st;

	if (fstatat(d->fd, of->name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_dev != of->dev || st.st_ino != of->ino ||
	    strlen(of->name) >= sizeof(f->name) ||
	    vec_grow((void **)&d->files, &d->cap, d->nfiles + 1, sizeof(*d->files)))
		return;
	f = &d->files[d->nfiles++];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, of->name);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->ctime_s = st.st_ctim.tv_sec;
	f->ctime_ns = st.st_ctim.tv_nsec;
	f->bytes = (uint64_t)st.st_blocks * 512;
	d->bytes += f->bytes;
	d->dirty = true;
	/* names sort by time; a clock set back puts one out of order */
	if (d->nfiles - d->first > 1 && strcmp(d->files[d->nfiles - 2].name, f->name) > 0)
		qsort(d->files + d->first, d->nfiles - d->first, sizeof(*d->files), cmp_file);
}

/* Says once when the path no longer names the directory the agent holds. */
static void check_moved(struct agent_dir *d)
{
	struct stat st;
	bool moved = stat(d->path, &st) || st.st_dev != d->dev || st.st_ino != d->ino;

	if (moved && !d->warned_moved)
		pr_warn("--output-dir: %s no longer names the directory the agent opened at its "
			"start (moved, or replaced): the files go on into that directory, "
			"wherever it is now\n",
			d->path);
	d->warned_moved = moved;
}

static int fill_body(FILE *f, void *arg)
{
	const struct agent_job *j = arg;

	return fwrite(j->body, 1, j->len, f) == j->len ? 0 : -EIO;
}

/*
 * The job's file name; k > 0: with ".k" before ".pb.gz" (a file already has
 * the plain name). --mem: NAME.mem.pb.gz; a capture's timeline:
 * NAME.capture.perfetto-trace.gz. All are agent_file_ours, and
 * sort by time.
 */
static int job_file_name(const struct agent_job *j, unsigned k, char *name, size_t len)
{
	const char *kind, *ext = j->timeline ? ".perfetto-trace.gz" : ".pb.gz";
	char tail[64], num[16] = "";
	size_t n;

	if (agent_file_name(name, len, j->from_ns, j->service, j->pid))
		return -ENAMETOOLONG;
	n = strlen(name) - 6; /* ".pb.gz" */
	/* no interval's name ends so: ".capture" follows no pid but a capture's number */
	kind = j->mem ? ".mem" : j->capture ? ".capture" : "";
	if (k)
		snprintf(num, sizeof(num), ".%u", k);
	snprintf(tail, sizeof(tail), "%s%s%s", num, kind, ext);
	if (n + strlen(tail) + 1 > len)
		return -ENAMETOOLONG;
	strcpy(name + n, tail);
	return 0;
}

/* Names tried for one file before it is refused: files there already keep theirs. */
#define NAME_TRIES 10

/*
 * The job's file, under the first of its names that no file has: the agent
 * never replaces a file (one of an earlier run, or planted). 0 or -errno.
 */
static int write_new(struct agent_dir *d, const struct agent_job *j, struct outfile *of, char *path,
		     size_t pathlen, char *why, size_t whylen)
{
	char name[NAME_MAX];
	struct stat st;
	unsigned k;
	int err = -EEXIST;

	for (k = 0; k < NAME_TRIES && err == -EEXIST; k++) {
		if (job_file_name(j, k, name, sizeof(name))) {
			snprintf(why, whylen, "no file name for service %s", j->service);
			return -EINVAL;
		}
		snprintf(path, pathlen, "%s/%s", d->path, name);
		if (!fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		err = outfile__openat(of, d->fd, name, path, why, whylen);
		of->no_replace = true;
		if (!err)
			err = outfile__write(of, fill_body, (void *)j, why, whylen);
		if (err)
			outfile__close(of);
	}
	if (err == -EEXIST)
		snprintf(why, whylen, "%u files of its names are there already", NAME_TRIES);
	return err;
}

int agent_dir__write(struct agent_dir *d, const struct agent_job *j, char *why, size_t whylen)
{
	struct outfile of = { .dir_fd = -1, .tmp_fd = -1 };
	char path[PATH_MAX + NAME_MAX + 2], reason[200];
	struct stat st;
	int err;

	check_moved(d);
	err = write_new(d, j, &of, path, sizeof(path), reason, sizeof(reason));
	if (err == -EINVAL) {
		snprintf(why, whylen, "%s", reason);
		return err;
	}
	if (err && !fstat(d->fd, &st) && !st.st_nlink) {
		outfile__close(&of);
		snprintf(why, whylen,
			 "the output directory %s was deleted while the agent ran: its profiles "
			 "cannot be written; restart the agent with an existing --output-dir",
			 d->path);
		return -ENOENT;
	}
	if (err) {
		outfile__close(&of);
		snprintf(why, whylen, "cannot write %s: %s", path, reason);
		return -EAGAIN;
	}
	if (d->max_bytes) {
		record(d, &of);
		if (!(++d->writes % RESTAT_EVERY))
			restat(d);
		trim(d);
	}
	outfile__close(&of);
	return 0;
}

static int fill_manifest(FILE *f, void *arg)
{
	const struct agent_dir *d = arg;

	return agent_manifest_write(f, d->files ? d->files + d->first : NULL, d->nfiles - d->first);
}

void agent_dir__sync(struct agent_dir *d)
{
	struct outfile of;
	char path[PATH_MAX + 32], why[200];
	int err;

	if (!d || !d->max_bytes || !d->dirty)
		return;
	snprintf(path, sizeof(path), "%s/%s", d->path, MANIFEST);
	err = outfile__openat(&of, d->fd, MANIFEST, path, why, sizeof(why));
	if (!err)
		err = outfile__write(&of, fill_manifest, d, why, sizeof(why));
	outfile__close(&of);
	if (err && !d->warned_manifest)
		pr_warn("--output-dir: cannot write %s: %s; this run's files will not be deleted "
			"by the next run\n",
			path, why);
	d->warned_manifest |= err != 0;
	d->dirty = err != 0;
}

/*
 * --max-disk: the lock file held for the run, so that a second agent does
 * not share the manifest. -EBUSY when another holds it; a lock file that is
 * not ours (planted) is said and run without.
 */
static int take_lock(struct agent_dir *d, char *why, size_t whylen)
{
	struct stat st;

	d->lock_fd = openat(d->fd, LOCK_FILE,
			    O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (d->lock_fd < 0 || fstat(d->lock_fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		pr_warn("--output-dir: %s/%s is not the agent's lock file: a second agent in the "
			"directory would not be noticed\n",
			d->path, LOCK_FILE);
		if (d->lock_fd >= 0)
			close(d->lock_fd);
		d->lock_fd = -1;
		return 0;
	}
	if (!flock(d->lock_fd, LOCK_EX | LOCK_NB))
		return 0;
	snprintf(why, whylen,
		 "another pybpfprof agent with --max-disk writes into %s: give each agent its own "
		 "--output-dir",
		 d->path);
	return -EBUSY;
}

struct agent_dir *agent_dir__open(const char *path, uint64_t max_bytes, char *why, size_t whylen)
{
	struct agent_dir *d = calloc(1, sizeof(*d));
	struct stat st;

	if (!d || !(d->path = strdup(path))) {
		free(d);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	d->max_bytes = max_bytes;
	d->lock_fd = -1;
	/* a link as the directory itself is refused, as outfile refuses one as a file */
	d->fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0 || fstat(d->fd, &st)) {
		snprintf(why, whylen,
			 "cannot use %s as the output directory: %s; give an existing directory "
			 "(not a symbolic link)",
			 path, strerror(errno));
		agent_dir__close(d);
		return NULL;
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	if (max_bytes && take_lock(d, why, whylen)) {
		agent_dir__close(d);
		return NULL;
	}
	if (max_bytes) {
		manifest_load(d);
		trim(d);
		agent_dir__sync(d);
	}
	return d;
}

void agent_dir__close(struct agent_dir *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		agent_dir__sync(d);
	if (d->fd >= 0)
		close(d->fd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d->files);
	free(d->path);
	free(d);
}
