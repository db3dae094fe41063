/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Output files created safely as root in directories other users can write
 * (/tmp): never through a symbolic link, never into a file another user
 * planted in a sticky directory, never left half written.
 *
 * outfile__open() runs before profiling: it opens the destination's directory
 * (held until outfile__close, so the write lands in that same directory even
 * if its path is swapped meanwhile) and checks the destination can be
 * created. outfile__write() runs at the end: the content goes to a new
 * temporary file beside the destination, is flushed to disk, and is renamed
 * over it; rename() replaces a link instead of following it. The temporary
 * file has no name while it is written (O_TMPFILE, where the file system
 * has them): a run killed meanwhile, even by SIGKILL, leaves nothing. On
 * any failure the temporary file is removed and an existing destination is
 * left as it was.
 */
#ifndef PYBPFPROF_OUTFILE_H
#define PYBPFPROF_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile {
	const char *path;	 /* as given, for messages */
	char name[NAME_MAX + 1]; /* its final component */
	int dir_fd;		 /* its directory (O_PATH), or -1 */
	char tmp[NAME_MAX + 1];	 /* the temporary file's name in it, once it has one */
	int tmp_fd;		 /* and its fd */
	int write_err;		 /* the first write(2) error while writing (-errno) */
	bool no_replace;	 /* set by the caller: never replace a file (-EEXIST) */
	dev_t dev;		 /* the file outfile__write made (0, 0: none, or a device) */
	ino_t ino;
};

/*
 * Opens path's directory and checks that path can be written: the directory
 * exists and takes a new file, and path, if it exists, is a regular file we
 * may replace (not a link, a FIFO, a device; not another user's in a sticky
 * directory). Leaves nothing behind. 0, or -errno with the reason in why (a
 * sentence about the file, without its name).
 */
int outfile__open(struct outfile *of, const char *path, char *why, size_t whylen);
/*
 * The same for the file name (one component, no '/') in the directory
 * dir_fd (an O_PATH descriptor is enough), which the caller keeps: nothing
 * is looked up by path, so the file lands in that very directory wherever
 * it has been moved. path names the file in messages.
 */
int outfile__openat(struct outfile *of, int dir_fd, const char *name, const char *path, char *why,
		    size_t whylen);
/*
 * Writes the file: fill(f, arg) writes the content, returning 0 or -errno;
 * then the file is flushed, synced and renamed into place. 0, or -errno with
 * the reason in why; nothing is left behind on failure.
 */
int outfile__write(struct outfile *of, int (*fill)(FILE *f, void *arg), void *arg, char *why,
		   size_t whylen);
/* Closes the directory; of is one outfile__open was called on, whatever it returned. */
void outfile__close(struct outfile *of);

#endif
