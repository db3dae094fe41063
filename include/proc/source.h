/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a target's source files as the target itself would: the file names
 * are the target's (co_filename is whatever it says), so they are opened in a
 * short-lived helper process that has taken on the target's fsuid, fsgid and
 * groups (never more capabilities than it has), inside the target's root
 * directory, non-blocking, with no magic links. The parent bounds the time
 * and the size of the reply: a FUSE file whose read never returns costs at
 * most the timeout.
 */
#ifndef PYBPFPROF_SOURCE_H
#define PYBPFPROF_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Errors of a file beyond errno's (as -SOURCE_E*, like -errno); see source_strerror. */
enum {
	SOURCE_ENOTREG = 0x10000, /* a FIFO, a device, a directory: not read */
	SOURCE_ETIMEDOUT,	  /* the helper did not answer in time */
	SOURCE_ELOST,		  /* the helper died or answered garbage before it */
	SOURCE_ENOCREDS,	  /* the process's user is unknown: nothing is read */
	SOURCE_ESWITCH,		  /* the helper could not take on the process's user */
	SOURCE_EBUDGET,		  /* the report's time for sources was spent */
	SOURCE_EMIXED,		  /* seen with more than SOURCE_CREDS_SEEN credentials */
};

/* Source text kept per line, bytes (the report shows less). */
#define SOURCE_TEXT_MAX 255
/* Bytes read of one file at most: 64 MiB, far beyond any real source file. */
#define SOURCE_FILE_MAX (64u << 20)
/* Reply of one helper at most. */
#define SOURCE_REPLY_MAX (8u << 20)
/* Supplementary groups at most (the kernel's NGROUPS_MAX). */
#define SOURCE_GROUPS_MAX 65536

enum source_creds_kind {
	SOURCE_CREDS_UNKNOWN, /* read nothing */
	SOURCE_CREDS_SELF,    /* our own rights (tests, and profiles made here) */
	SOURCE_CREDS_PROC,    /* a process's, from its /proc/PID/status */
};

/* Whose rights files are read with. */
struct source_creds {
	enum source_creds_kind kind;
	uid_t uid[4]; /* real, effective, saved, filesystem */
	gid_t gid[4];
	gid_t *groups; /* supplementary groups */
	size_t ngroups;
	uint64_t cap_eff; /* effective capabilities */
};

/*
 * Parses the Uid:, Gid:, Groups: and CapEff: lines of a /proc/PID/status
 * text (len bytes, no NUL needed). Each must be there exactly once and well
 * formed; anything else is -EINVAL. On success c is SOURCE_CREDS_PROC (free
 * it with source_creds__free).
 */
int source_creds__parse(const char *text, size_t len, struct source_creds *c);
/* Reads and parses an open /proc/PID/status (from offset 0). 0 or -errno. */
int source_creds__read(int status_fd, struct source_creds *c);
void source_creds__free(struct source_creds *c);
int source_creds__copy(struct source_creds *dst, const struct source_creds *src);
/* Whether two sets of credentials give the same file access. */
bool source_creds__equal(const struct source_creds *a, const struct source_creds *b);

/* One file to read: which lines, and (after source_read) what was found. */
struct source_file {
	const char *name; /* as the process names it; absolute */
	const int *lines; /* ascending, unique, > 0 */
	size_t nlines;
	/* results */
	int err;       /* 0, -errno or -SOURCE_E* */
	int64_t mtime; /* seconds since the epoch */
	char **texts;  /* nlines entries (malloc'ed), NULL: the file has no such line */
};

/*
 * Reads files (in this order: the first ones are the most wanted) with the
 * rights of creds, inside root_fd (a process's root directory; -1: the host's
 * root), in one helper process. Gives up after timeout_ms: the files not
 * read by then get -SOURCE_ETIMEDOUT. Fills each file's err, mtime and texts.
 * Returns the milliseconds spent, or -errno if no helper could be started
 * (then every file has that error).
 */
int source_read(int root_fd, const struct source_creds *creds, struct source_file *files, size_t n,
		int timeout_ms);
/* Frees the texts of files. */
void source_files_free(struct source_file *files, size_t n);

/*
 * The helper's reply, a sequence of per-file records in request order:
 *   u32 index, i32 err (0 or a positive errno or SOURCE_E* code), i64 mtime,
 *   u32 count, then count times: u32 line index (ascending), u16 length, text.
 * Decoding takes the records that are complete and valid, and stops at the
 * first that is not. The number of files decoded (files[0..k) got their
 * results), or -EINVAL if a record is malformed (those before it are kept,
 * and *done says how many).
 */
int source_reply_decode(const void *buf, size_t len, struct source_file *files, size_t n,
			size_t *done);
/*
 * Appends one file's record to *buf (malloc'ed, *len bytes, grows). The texts
 * are those of f (NULL: not found). 0 or -ENOMEM.
 */
int source_reply_encode(char **buf, size_t *len, uint32_t index, const struct source_file *f);

/* Different credentials a process is seen with, at most (more: nothing is read). */
#define SOURCE_CREDS_SEEN 4

/*
 * A process's source files as the reports use them (report.c): whose rights
 * they are read with, and once read (all at the first need), the lines of
 * every frame of its stacks. A process seen with different credentials
 * during the run (a server dropping root, a program exec'ing a set-user-ID
 * one) has its files read with each, and a file is shown only if every one
 * of them may read it: never more than the process could at any moment seen.
 */
struct proc_sources {
	struct source_creds creds[SOURCE_CREDS_SEEN];
	size_t ncreds;
	bool too_many; /* more different ones than that were seen */
	int status_fd; /* its /proc/PID/status, to see them again; or -1 */
	bool loaded;
	int load_err;		   /* every file's error when none could be read */
	struct source_file *files; /* in reading order: the most sampled first */
	size_t nfiles;
	size_t *byname; /* indices into files, by name */
	int *lines;	/* the files' line numbers, one array */
};

/* A new one: nothing read yet, and no credentials (nothing will be read). NULL: no memory. */
struct proc_sources *proc_sources__new(void);
void proc_sources__free(struct proc_sources *s);
/* Adds c to the credentials seen, unless it is one of them. 0 or -ENOMEM. */
int proc_sources__seen(struct proc_sources *s, const struct source_creds *c);
/* Reads the process's credentials now (status_fd) and adds them; 0 or -errno (it is gone). */
int proc_sources__look(struct proc_sources *s);

/* A file error in words, for "cannot read FILE: reason". */
const char *source_strerror(int err);

#endif
