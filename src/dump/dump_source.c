// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump: the source line of each frame, read with the process's own
 * rights inside its root (proc/source.c), within the process's time and
 * byte budget.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dump.h"
#include "proc/source.h"
#include "util/mono.h"

#define DUMP_SOURCE_MS 2000
#define DUMP_FILES_MAX 256

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The budget ran out: the source lines not read yet stay so (and that is said). */
static bool sources_spent(struct dump_process *dp)
{
	if (!dump_budget_spent(dp))
		return false;
	dp->cut.sources = true;
	return true;
}

/* The files and lines to read: each file once, its lines ascending and unique. */
static size_t source_requests(struct dump_process *dp, struct source_file *files, int **lines,
			      bool relative)
{
	size_t nf = 0, i, j, k;

	for (i = 0; i < dp->nthreads && !sources_spent(dp); i++)
		for (j = 0; j < dp->threads[i].nframes; j++) {
			const struct dump_frame *df = &dp->threads[i].frames[j];
			int *l;

			if (!df->file || !df->file[0] || (df->file[0] != '/') != relative ||
			    df->line <= 0)
				continue;
			for (k = 0; k < nf && strcmp(files[k].name, df->file); k++)
				;
			if (k == nf && nf == DUMP_FILES_MAX)
				continue;
			if (k == nf) {
				files[nf].name = df->file;
				lines[nf++] = NULL;
			}
			l = realloc(lines[k], (files[k].nlines + 1) * sizeof(int));
			if (!l)
				continue;
			lines[k] = l;
			l[files[k].nlines++] = df->line;
		}
	for (k = 0; k < nf; k++) {
		qsort(lines[k], files[k].nlines, sizeof(int), cmp_int);
		for (i = j = 0; i < files[k].nlines; i++)
			if (!j || lines[k][j - 1] != lines[k][i])
				lines[k][j++] = lines[k][i];
		files[k].nlines = j;
		files[k].lines = lines[k];
	}
	return nf;
}

/* Gives each frame the text of its line from what was read, charged to the budget. */
static void source_attach(struct dump_process *dp, struct source_file *files, size_t nf)
{
	size_t i, j, k, m;

	for (i = 0; i < dp->nthreads && !sources_spent(dp); i++)
		for (j = 0; j < dp->threads[i].nframes; j++) {
			struct dump_frame *df = &dp->threads[i].frames[j];
			const char *s;

			for (k = 0; k < nf && (!df->file || strcmp(files[k].name, df->file)); k++)
				;
			if (k < nf && files[k].err == -SOURCE_ETIMEDOUT)
				dp->cut.sources = true;
			if (k == nf || files[k].err || !files[k].texts)
				continue;
			for (m = 0; m < files[k].nlines && files[k].lines[m] != df->line; m++)
				;
			if (m == files[k].nlines || !files[k].texts[m])
				continue;
			for (s = files[k].texts[m]; *s == ' ' || *s == '\t'; s++)
				;
			if (!dump_budget_take(dp, strlen(s) + 16)) {
				dp->cut.sources = true;
				return;
			}
			df->source = strdup(s);
		}
}

/* The time sources may take: DUMP_SOURCE_MS, or what is left before the deadline. */
static int source_ms(const struct dump_process *dp)
{
	long long left = dp->budget.deadline ? dp->budget.deadline - mono_ns() : 0;

	if (!dp->budget.deadline || left >= DUMP_SOURCE_MS * 1000000LL)
		return DUMP_SOURCE_MS;
	return left > 0 ? (int)(left / 1000000) : 0;
}

/*
 * The files named from dir: absolute names inside the process's root,
 * relative ones (a 3.8 __main__ started as "python3 app.py") inside its
 * current directory, which is where it found them if it has not moved since.
 */
static void read_from(pid_t pid, const char *dir, bool relative, int status_fd,
		      struct dump_process *dp)
{
	struct source_file files[DUMP_FILES_MAX] = { 0 };
	int *lines[DUMP_FILES_MAX] = { 0 };
	struct source_creds creds = { 0 };
	char path[64];
	int dir_fd;
	size_t nf, k;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, dir);
	dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	nf = source_requests(dp, files, lines, relative);
	/* with the process's own rights, or not at all */
	if (nf && source_ms(dp) <= 0)
		dp->cut.sources = true;
	else if (nf && status_fd >= 0 && dir_fd >= 0 && !source_creds__read(status_fd, &creds)) {
		source_read(dir_fd, &creds, files, nf, source_ms(dp));
		source_attach(dp, files, nf);
		source_creds__free(&creds);
	}
	source_files_free(files, nf);
	for (k = 0; k < nf; k++)
		free(lines[k]);
	if (dir_fd >= 0)
		close(dir_fd);
}

void dump_read_sources(pid_t pid, struct dump_process *dp)
{
	char path[64];
	int status_fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status_fd = open(path, O_RDONLY | O_CLOEXEC);
	read_from(pid, "root", false, status_fd, dp);
	read_from(pid, "cwd", true, status_fd, dp);
	if (status_fd >= 0)
		close(status_fd);
}
