// SPDX-License-Identifier: GPL-2.0-only
/*
 * A target's source files, read with the target's rights (see source.h). The
 * helper is a fork of pybpfprof that keeps only two descriptors (the root
 * directory and the reply pipe), takes on the target's credentials, reads,
 * writes one record per file and leaves with _exit. The parent trusts
 * nothing in the reply: it is decoded with every length checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "proc/source.h"
#include "util/vec.h"

/* /proc/PID/status at most: 65536 groups of 10 digits fit. */
#define STATUS_MAX (1u << 20)

/* --- credentials ------------------------------------------------------------ */

/* An unsigned decimal of at most 32 bits; *p advances past it. 0 or -EINVAL. */
static int parse_u32(const char **p, const char *end, uint32_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s == end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/*
 * The ids of one line (s..end, its key already skipped): exactly want of
 * them (want 0: any number up to SOURCE_GROUPS_MAX, into a malloc'ed *many).
 * (uid_t)-1 is no id: it means "unchanged" to the set*id calls.
 */
static int parse_ids(const char *s, const char *end, uint32_t *ids, size_t want, uint32_t **many,
		     size_t *count)
{
	size_t n = 0, cap = 0;
	uint32_t v, *arr = NULL;

	for (s = skip_blanks(s, end); s < end; s = skip_blanks(s, end)) {
		if (parse_u32(&s, end, &v) || v == UINT32_MAX ||
		    (s < end && *s != ' ' && *s != '\t'))
			goto bad;
		if (want) {
			if (n == want)
				goto bad;
			ids[n++] = v;
			continue;
		}
		if (n == SOURCE_GROUPS_MAX)
			goto bad;
		if (vec_grow((void **)&arr, &cap, n + 1, sizeof(*arr))) {
			free(arr);
			return -ENOMEM;
		}
		arr[n++] = v;
	}
	if (want && n != want)
		goto bad;
	if (!want) {
		*many = arr;
		*count = n;
	}
	return 0;
bad:
	free(arr);
	return -EINVAL;
}

/* Up to 16 hex digits and nothing else. */
static int parse_caps(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	for (s = skip_blanks(s, end); s < end && *s != ' ' && *s != '\t'; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 :
						 -1;

		if (d < 0 || digits == 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || skip_blanks(s, end) != end)
		return -EINVAL;
	*out = v;
	return 0;
}

int source_creds__parse(const char *text, size_t len, struct source_creds *c)
{
	const char *s = text, *end = text + len;
	enum { UID = 1, GID = 2, GROUPS = 4, CAPS = 8 };
	unsigned seen = 0, bit;
	uint32_t *groups = NULL;
	int err = 0;

	memset(c, 0, sizeof(*c));
	while (s < end && !err) {
		const char *nl = memchr(s, '\n', end - s), *eol = nl ? nl : end;
		size_t n = eol - s;

		bit = 0;
		if (n >= 4 && !memcmp(s, "Uid:", 4)) {
			bit = UID;
			err = parse_ids(s + 4, eol, c->uid, 4, NULL, NULL);
		} else if (n >= 4 && !memcmp(s, "Gid:", 4)) {
			bit = GID;
			err = parse_ids(s + 4, eol, c->gid, 4, NULL, NULL);
		} else if (n >= 7 && !memcmp(s, "Groups:", 7)) {
			bit = GROUPS;
			if (!(seen & GROUPS))
				err = parse_ids(s + 7, eol, NULL, 0, &groups, &c->ngroups);
		} else if (n >= 7 && !memcmp(s, "CapEff:", 7)) {
			bit = CAPS;
			err = parse_caps(s + 7, eol, &c->cap_eff);
		}
		if (seen & bit)
			err = -EINVAL; /* twice: not the kernel's text */
		seen |= bit;
		s = nl ? nl + 1 : end;
	}
	if (!err && seen != (UID | GID | GROUPS | CAPS))
		err = -EINVAL;
	if (err) {
		free(groups);
		memset(c, 0, sizeof(*c));
		return err;
	}
	c->groups = groups; /* gid_t is 32 bits, as the parser's ids */
	c->kind = SOURCE_CREDS_PROC;
	return 0;
}

int source_creds__read(int status_fd, struct source_creds *c)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap), *grown;
	ssize_t r;
	int err;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		r = pread(status_fd, buf + len, cap - len, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += r;
		if (len == cap) {
			if (cap >= STATUS_MAX) {
				r = -1;
				errno = EFBIG;
				break;
			}
			grown = realloc(buf, cap * 2);
			if (!grown) {
				r = -1;
				errno = ENOMEM;
				break;
			}
			buf = grown;
			cap *= 2;
		}
	}
	err = r < 0 ? -errno : source_creds__parse(buf, len, c);
	free(buf);
	return err;
}

void source_creds__free(struct source_creds *c)
{
	free(c->groups);
	memset(c, 0, sizeof(*c));
}

int source_creds__copy(struct source_creds *dst, const struct source_creds *src)
{
	*dst = *src;
	dst->groups = NULL;
	if (src->ngroups) {
		dst->groups = malloc(src->ngroups * sizeof(*src->groups));
		if (!dst->groups) {
			memset(dst, 0, sizeof(*dst));
			return -ENOMEM;
		}
		memcpy(dst->groups, src->groups, src->ngroups * sizeof(*src->groups));
	}
	return 0;
}

bool source_creds__equal(const struct source_creds *a, const struct source_creds *b)
{
	return a->kind == b->kind && !memcmp(a->uid, b->uid, sizeof(a->uid)) &&
	       !memcmp(a->gid, b->gid, sizeof(a->gid)) && a->ngroups == b->ngroups &&
	       (!a->ngroups || !memcmp(a->groups, b->groups, a->ngroups * sizeof(*a->groups))) &&
	       a->cap_eff == b->cap_eff;
}

/* --- the reply ---------------------------------------------------------------- */

struct rec_head {
	uint32_t index;
	int32_t err;
	int64_t mtime;
	uint32_t count;
} __attribute__((packed));

struct rec_line {
	uint32_t index;
	uint16_t len;
} __attribute__((packed));

static int append(char **buf, size_t *len, const void *data, size_t n)
{
	char *grown = realloc(*buf, *len + n);

	if (!grown)
		return -ENOMEM;
	memcpy(grown + *len, data, n);
	*buf = grown;
	*len += n;
	return 0;
}

int source_reply_encode(char **buf, size_t *len, uint32_t index, const struct source_file *f)
{
	struct rec_head h = { .index = index, .err = -f->err, .mtime = f->mtime };
	size_t i;

	for (i = 0; f->texts && i < f->nlines; i++)
		h.count += f->texts[i] != NULL;
	if (append(buf, len, &h, sizeof(h)))
		return -ENOMEM;
	for (i = 0; f->texts && i < f->nlines; i++) {
		struct rec_line l = { .index = i };
		size_t n;

		if (!f->texts[i])
			continue;
		n = strnlen(f->texts[i], SOURCE_TEXT_MAX);
		l.len = n;
		if (append(buf, len, &l, sizeof(l)) || append(buf, len, f->texts[i], n))
			return -ENOMEM;
	}
	return 0;
}

/* The error code of a record, as the file's err; a value no helper sends is EIO. */
static int reply_err(int32_t e)
{
	if (e == 0 || (e > 0 && e < 4096) || e == SOURCE_ENOTREG || e == SOURCE_ESWITCH ||
	    e == SOURCE_ENOCREDS)
		return -e;
	return -EIO;
}

/* One record at buf (len bytes) for f: its size, 0 if incomplete, -EINVAL if malformed. */
static ssize_t decode_one(const char *buf, size_t len, uint32_t index, struct source_file *f)
{
	struct rec_head h;
	struct rec_line l;
	size_t off = sizeof(h), i;
	int64_t last = -1;
	char **texts;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, buf, sizeof(h));
	if (h.index != index || h.count > f->nlines || (h.err && h.count))
		return -EINVAL;
	/* the whole record first: nothing is kept of a record cut short */
	for (i = 0; i < h.count; i++) {
		if (len - off < sizeof(l))
			return 0;
		memcpy(&l, buf + off, sizeof(l));
		if ((int64_t)l.index <= last || l.index >= f->nlines || l.len > SOURCE_TEXT_MAX)
			return -EINVAL;
		last = l.index;
		off += sizeof(l);
		if (len - off < l.len)
			return 0;
		off += l.len;
	}
	texts = h.count ? calloc(f->nlines, sizeof(*texts)) : NULL;
	if (h.count && !texts)
		return -ENOMEM;
	for (i = 0, off = sizeof(h); i < h.count; i++) {
		size_t n;

		memcpy(&l, buf + off, sizeof(l));
		off += sizeof(l);
		/* one line of text: it ends at a line break or a NUL, whatever the reply says */
		for (n = 0;
		     n < l.len && buf[off + n] && buf[off + n] != '\n' && buf[off + n] != '\r'; n++)
			;
		texts[l.index] = strndup(buf + off, n);
		if (!texts[l.index]) {
			while (i--)
				free(texts[i]);
			free(texts);
			return -ENOMEM;
		}
		off += l.len;
	}
	f->err = reply_err(h.err);
	f->mtime = h.mtime;
	f->texts = texts;
	return off;
}

int source_reply_decode(const void *buf, size_t len, struct source_file *files, size_t n,
			size_t *done)
{
	const char *p = buf;
	size_t k = 0, off = 0;
	ssize_t r = 0;

	/* no reply at all (the helper died first): nothing decoded */
	while (p && k < n) {
		r = decode_one(p + off, len - off, k, &files[k]);
		if (r <= 0)
			break;
		off += r;
		k++;
	}
	if (done)
		*done = k;
	if (r < 0)
		return r == -ENOMEM ? -ENOMEM : -EINVAL;
	if (k == n && off != len)
		return -EINVAL; /* more than was asked for */
	return k;
}

void source_files_free(struct source_file *files, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; files[i].texts && j < files[i].nlines; j++)
			free(files[i].texts[j]);
		free(files[i].texts);
		files[i].texts = NULL;
	}
}

const char *source_strerror(int err)
{
	switch (-err) {
	case SOURCE_ENOTREG:
		return "not a regular file";
	case SOURCE_ETIMEDOUT:
		return "timed out (opening or reading it did not finish in time)";
	case SOURCE_ELOST:
		return "the reader stopped before this file";
	case SOURCE_ENOCREDS:
		return "the process's user is unknown, so it is not read";
	case SOURCE_ESWITCH:
		return "cannot take on the process's user and groups to read it";
	case SOURCE_EBUDGET:
		return "not read: the time for reading source files was spent";
	case SOURCE_EMIXED:
		return "not read: the process was seen with too many different users and groups";
	case ELOOP: /* RESOLVE_NO_MAGICLINKS says so too */
		return "a link not followed (a /proc magic link, or too many levels of links)";
	}
	return strerror(-err);
}

/* --- the helper -------------------------------------------------------------- */

static int capget_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d);
}

/*
 * Keeps at most the capabilities in allowed (effective and permitted;
 * nothing inheritable), and checks that nothing else remains.
 */
static int limit_caps(uint64_t allowed)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	uint64_t perm, eff;

	if (capget_self(d))
		return -errno;
	perm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & allowed;
	d[0].permitted = d[0].effective = perm;
	d[1].permitted = d[1].effective = perm >> 32;
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d) || capget_self(d))
		return -errno;
	eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	perm = (uint64_t)d[1].permitted << 32 | d[0].permitted;
	return (eff | perm) & ~allowed ? -EPERM : 0;
}

static bool have_cap(int cap)
{
	struct __user_cap_data_struct d[2];

	return !capget_self(d) && (d[cap / 32].effective >> (cap % 32) & 1);
}

static int cmp_gid(const void *a, const void *b)
{
	gid_t x = *(const gid_t *)a, y = *(const gid_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether our fsuid, fsgid and groups are already the target's. */
static bool same_as_ours(const struct source_creds *c)
{
	gid_t *ours, *theirs;
	int n = getgroups(0, NULL);
	bool same;

	if ((uid_t)setfsuid(-1) != c->uid[3] || (gid_t)setfsgid(-1) != c->gid[3] || n < 0 ||
	    (size_t)n != c->ngroups)
		return false;
	ours = calloc(n + 1, sizeof(*ours));
	theirs = calloc(n + 1, sizeof(*theirs));
	same = ours && theirs && getgroups(n, ours) == n;
	if (same && n) {
		memcpy(theirs, c->groups, n * sizeof(*theirs));
		qsort(ours, n, sizeof(*ours), cmp_gid);
		qsort(theirs, n, sizeof(*theirs), cmp_gid);
		same = !memcmp(ours, theirs, n * sizeof(*ours));
	}
	free(ours);
	free(theirs);
	return same;
}

/*
 * Takes on the target's filesystem ids and groups (all of real, effective,
 * saved and filesystem ids become its fsuid/fsgid), keeping no capability
 * it lacks. Without CAP_SETUID and CAP_SETGID (pybpfprof run by a user with
 * only the capabilities it needs), the helper keeps that user's ids and
 * drops every capability: it reads what that user may read, which is never
 * more than root's; but root never reads as itself for another user.
 */
static int take_creds(const struct source_creds *c)
{
	uid_t u = c->uid[3], ru, eu, su;
	gid_t g = c->gid[3], rg, eg, sg;
	uint64_t allowed = 0;

	if (c->kind == SOURCE_CREDS_UNKNOWN)
		return -SOURCE_ENOCREDS;
	if (c->kind == SOURCE_CREDS_SELF)
		return 0;
	if (same_as_ours(c)) {
		allowed = c->cap_eff;
	} else if (!have_cap(CAP_SETUID) || !have_cap(CAP_SETGID)) {
		if (!geteuid() || !setfsuid(-1))
			return -SOURCE_ESWITCH;
	} else {
		if (setgroups(c->ngroups, c->groups) || setresgid(g, g, g) || setresuid(u, u, u))
			return -SOURCE_ESWITCH;
		if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg) || ru != u || eu != u ||
		    su != u || rg != g || eg != g || sg != g || (uid_t)setfsuid(-1) != u ||
		    (gid_t)setfsgid(-1) != g)
			return -SOURCE_ESWITCH;
		/* a target with uid 0 keeps at most its own capabilities; others have none left */
		allowed = c->cap_eff;
	}
	if (limit_caps(allowed) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -SOURCE_ESWITCH;
	return 0;
}

static int open_in_root(int root_fd, const char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_NO_MAGICLINKS | (root_fd >= 0 ? RESOLVE_IN_ROOT : 0),
	};
	int fd = syscall(SYS_openat2, root_fd >= 0 ? root_fd : AT_FDCWD, name, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* Line reader state: the text of the wanted line being collected. */
struct scan {
	char text[SOURCE_TEXT_MAX + 1];
	size_t len;
	bool any;	   /* a byte of the current line was read */
	bool leading, cut; /* still in its indentation; past a '\r' or NUL */
};

/* Keeps the text collected for the wanted line, without trailing blanks. */
static void keep(struct scan *sc, char **out)
{
	while (sc->len && sc->text[sc->len - 1] == ' ')
		sc->len--;
	sc->text[sc->len] = 0;
	*out = strdup(sc->text);
}

/*
 * Reads the wanted lines of an open regular file into f->texts: the text of a
 * line without its indentation, trailing blanks and line break, at most
 * SOURCE_TEXT_MAX bytes of it (a NUL or '\r' ends it).
 */
static int read_lines(int fd, struct source_file *f)
{
	static char chunk[65536];
	struct scan sc = { .leading = true };
	size_t want = 0, total = 0;
	int cur = 1;
	ssize_t r;

	f->texts = calloc(f->nlines ? f->nlines : 1, sizeof(*f->texts));
	if (!f->texts)
		return -ENOMEM;
	while (want < f->nlines && f->lines[want] < cur)
		want++;
	while (want < f->nlines && total < SOURCE_FILE_MAX) {
		size_t i;

		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		total += r;
		for (i = 0; i < (size_t)r && want < f->nlines; i++) {
			char ch = chunk[i];

			if (ch == '\n') {
				if (cur == f->lines[want])
					keep(&sc, &f->texts[want++]);
				cur++;
				sc = (struct scan){ .leading = true };
				continue;
			}
			sc.any = true;
			if (cur != f->lines[want] || sc.cut)
				continue;
			if (sc.leading && (ch == ' ' || ch == '\t'))
				continue;
			sc.leading = false;
			if (ch == '\r' || ch == '\0')
				sc.cut = true;
			else if (sc.len < SOURCE_TEXT_MAX)
				sc.text[sc.len++] = ch;
		}
	}
	/* the last line may have no line break */
	if (want < f->nlines && cur == f->lines[want] && sc.any)
		keep(&sc, &f->texts[want]);
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= w;
	}
	return 0;
}

/* Closes every descriptor but a and b. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a, fd;

	if (lo < 0)
		lo = hi;
	if (lo > 0 && syscall(SYS_close_range, 0, lo - 1, 0))
		goto slow;
	if (hi > lo + 1 && syscall(SYS_close_range, lo + 1, hi - 1, 0))
		goto slow;
	if (!syscall(SYS_close_range, hi + 1, ~0U, 0))
		return;
slow:
	for (fd = 0; fd < 65536; fd++)
		if (fd != a && fd != b)
			close(fd);
}

static void __attribute__((noreturn)) helper(int wfd, int root_fd, const struct source_creds *c,
					     struct source_file *files, size_t n, pid_t parent)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	size_t i, len;
	char *rec;
	int sig, err;

	/* pybpfprof's handlers write reports: none of them here; Ctrl-C is the parent's */
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	signal(SIGINT, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close_others(wfd, root_fd);
	/* the target's user may signal the helper, never trace it or read its memory */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	err = take_creds(c);
	/* after the switch: a change of credentials clears the parent-death signal */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		_exit(1);
	for (i = 0; i < n; i++) {
		struct source_file *f = &files[i];
		struct stat st;
		int fd = -1;

		f->err = err;
		f->mtime = 0;
		f->texts = NULL;
		if (!f->err) {
			fd = open_in_root(root_fd, f->name);
			f->err = fd < 0 ? fd : 0;
		}
		if (!f->err && fstat(fd, &st))
			f->err = -errno;
		else if (!f->err && !S_ISREG(st.st_mode))
			f->err = -SOURCE_ENOTREG;
		if (!f->err) {
			f->mtime = st.st_mtim.tv_sec;
			f->err = read_lines(fd, f);
		}
		if (fd >= 0)
			close(fd);
		if (f->err) {
			source_files_free(f, 1);
			f->mtime = 0;
		}
		rec = NULL;
		len = 0;
		if (source_reply_encode(&rec, &len, i, f) || write_all(wfd, rec, len))
			_exit(1);
		free(rec);
		source_files_free(f, 1);
	}
	_exit(0);
}

/* --- the parent --------------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void fail_all(struct source_file *files, size_t from, size_t n, int err)
{
	size_t i;

	for (i = from; i < n; i++) {
		files[i].err = err;
		files[i].mtime = 0;
		files[i].texts = NULL;
	}
}

/* Waits (up to ms) for the helper to end, then reaps it if it did. */
static void reap(pid_t pid, int pidfd, int ms)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	if (pidfd >= 0)
		while (poll(&pfd, 1, ms) < 0 && errno == EINTR)
			;
	/*
	 * A helper stuck in a FUSE request is not reaped: the kernel finishes
	 * killing it when the file system answers; it holds nothing of ours.
	 */
	waitpid(pid, NULL, WNOHANG);
}

/* Forks the helper that reads files with creds: its pid (and *rfd, the replies), or -errno. */
static pid_t start_helper(int root_fd, const struct source_creds *creds, struct source_file *files,
			  size_t n, int *rfd)
{
	pid_t pid, self = getpid();
	int p[2], err;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (!pid)
		helper(p[1], root_fd, creds, files, n, self);
	close(p[1]);
	*rfd = p[0];
	return pid;
}

/* The helper's replies as they came, until it ends, the deadline, or SOURCE_REPLY_MAX bytes. */
struct replies {
	char *buf;
	size_t len, cap;
	bool timed_out, too_long;
};

static void read_replies(int rfd, long long deadline, struct replies *rp)
{
	char *grown;

	for (;;) {
		struct pollfd pfd = { .fd = rfd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0) {
			rp->timed_out = true;
			break;
		}
		r = poll(&pfd, 1, left);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		if (rp->len == rp->cap) {
			if (rp->cap >= SOURCE_REPLY_MAX) {
				rp->too_long = true;
				break;
			}
			rp->cap = rp->cap ? rp->cap * 2 : 65536;
			grown = realloc(rp->buf, rp->cap);
			if (!grown)
				break;
			rp->buf = grown;
		}
		r = read(rfd, rp->buf + rp->len, rp->cap - rp->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		rp->len += r;
	}
}

int source_read(int root_fd, const struct source_creds *creds, struct source_file *files, size_t n,
		int timeout_ms)
{
	long long start = now_ms(), deadline = start + timeout_ms;
	struct replies rp = { 0 };
	size_t done = 0;
	int rfd = -1, pidfd;
	pid_t pid;

	if (!n)
		return 0;
	if (creds->kind == SOURCE_CREDS_UNKNOWN) {
		fail_all(files, 0, n, -SOURCE_ENOCREDS);
		return 0;
	}
	pid = start_helper(root_fd, creds, files, n, &rfd);
	if (pid < 0) {
		fail_all(files, 0, n, pid);
		return pid;
	}
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	read_replies(rfd, deadline, &rp);
	close(rfd);
	if (rp.timed_out || rp.too_long) {
		kill(pid, SIGKILL);
		reap(pid, pidfd, 100);
	} else {
		long long left = deadline - now_ms();

		reap(pid, pidfd, left > 100 ? left : 100);
	}
	if (pidfd >= 0)
		close(pidfd);
	source_reply_decode(rp.buf, rp.len, files, n, &done);
	free(rp.buf);
	fail_all(files, done, n, rp.timed_out ? -SOURCE_ETIMEDOUT : -SOURCE_ELOST);
	return now_ms() - start;
}

struct proc_sources *proc_sources__new(void)
{
	struct proc_sources *s = calloc(1, sizeof(*s));

	if (s)
		s->status_fd = -1;
	return s;
}

void proc_sources__free(struct proc_sources *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ncreds; i++)
		source_creds__free(&s->creds[i]);
	if (s->status_fd >= 0)
		close(s->status_fd);
	source_files_free(s->files, s->nfiles);
	free(s->files);
	free(s->byname);
	free(s->lines);
	free(s);
}

int proc_sources__seen(struct proc_sources *s, const struct source_creds *c)
{
	size_t i;

	for (i = 0; i < s->ncreds; i++)
		if (source_creds__equal(&s->creds[i], c))
			return 0;
	if (s->ncreds == SOURCE_CREDS_SEEN) {
		s->too_many = true;
		return 0;
	}
	if (source_creds__copy(&s->creds[s->ncreds], c))
		return -ENOMEM;
	s->ncreds++;
	return 0;
}

int proc_sources__look(struct proc_sources *s)
{
	struct source_creds c;
	int err;

	if (s->status_fd < 0)
		return -EBADF;
	err = source_creds__read(s->status_fd, &c);
	if (err)
		return err;
	err = proc_sources__seen(s, &c);
	source_creds__free(&c);
	return err;
}
