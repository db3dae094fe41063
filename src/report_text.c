// SPDX-License-Identifier: GPL-2.0-only
/*
 * The default report: a header with the honest counts, then per process the
 * functions by self time and the hottest lines with their source text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

struct totals {
	uint64_t samples, truncated, partial, unresolved;
};

static struct totals sum_procs(const struct profile *p)
{
	struct totals t = {};
	size_t i;

	for (i = 0; i < p->nprocs; i++) {
		t.samples += p->procs[i].samples;
		t.truncated += p->procs[i].truncated;
		t.partial += p->procs[i].partial;
		t.unresolved += p->procs[i].unresolved;
	}
	return t;
}

#define NAME_MIN 8
#define NAME_MAX 48

/* Widens the function column w to fit name, within bounds. */
static int fit_name(int w, const char *name)
{
	int len = strlen(name);

	return len <= w ? w : len > NAME_MAX ? NAME_MAX : len;
}

/* "file.py:12" with the path shortened from the left to fit width. */
static void print_location(FILE *f, const char *file, int line, int width)
{
	char loc[4096];
	int n;

	if (line > 0)
		n = snprintf(loc, sizeof(loc), "%s:%d", file, line);
	else if (file[0])
		n = snprintf(loc, sizeof(loc), "%s:?", file);	/* an instruction with no line */
	else
		n = snprintf(loc, sizeof(loc), "?");
	if (n > width && width > 3)
		fprintf(f, "...%-*s", width - 3, loc + n - (width - 3));
	else
		fprintf(f, "%-*s", width, loc);
}

static void print_functions(FILE *f, const struct profile *p, const struct profile_proc *pp,
			    const struct report_opts *o)
{
	struct func_stat *st;
	size_t n, i, shown;
	int w;

	if (profile_proc__func_stats(p, pp, &st, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_functions ? n : o->top_functions;
	for (i = 0, w = NAME_MIN; i < shown; i++)
		w = fit_name(w, p->funcs[st[i].func].qualname);
	fprintf(f, "\n  Functions by self time (top %zu of %zu)\n", shown, n);
	fprintf(f, "    self%%  total%%   self s  total s  %-*s  %s\n", w, "function", "location");
	for (i = 0; i < shown; i++) {
		const struct profile_func *fn = &p->funcs[st[i].func];

		fprintf(f, "   %5.1f%%  %5.1f%%  %7.2f  %7.2f  %-*.*s  ", report_pct(st[i].self,
			pp->samples), report_pct(st[i].total, pp->samples),
			report_seconds(p, st[i].self), report_seconds(p, st[i].total), w, NAME_MAX,
			fn->qualname);
		print_location(f, fn->file, fn->firstline, 0);
		fputc('\n', f);
	}
	free(st);
}

static void print_lines(FILE *f, const struct profile *p, const struct profile_proc *pp,
			const struct report_opts *o)
{
	struct line_stat *st;
	char src[160];
	size_t n, i, shown;
	int w;

	if (profile_proc__line_stats(p, pp, &st, &n)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	shown = n < o->top_lines ? n : o->top_lines;
	for (i = 0, w = NAME_MIN; i < shown; i++)
		w = fit_name(w, p->funcs[p->frames[st[i].frame].func].qualname);
	fprintf(f, "\n  Hottest lines (top %zu of %zu)\n", shown, n);
	fprintf(f, "   samples   self%%  %-36s  %-*s  %s\n", "location", w, "function", "source");
	for (i = 0; i < shown; i++) {
		const struct profile_frame *fr = &p->frames[st[i].frame];
		const struct profile_func *fn = &p->funcs[fr->func];

		if (report_source_line(pp->root_fd, fn->file, fr->line, src, sizeof(src)))
			snprintf(src, sizeof(src), "%s", fn->unresolved ? "" : "(source not available)");
		fprintf(f, "   %7llu  %5.1f%%  ", (unsigned long long)st[i].self,
			report_pct(st[i].self, pp->samples));
		print_location(f, fn->file, fr->line, 36);
		if (src[0])
			fprintf(f, "  %-*.*s  %s\n", w, NAME_MAX, fn->qualname, src);
		else
			fprintf(f, "  %.*s\n", NAME_MAX, fn->qualname);
	}
	free(st);
}

static void print_process(FILE *f, const struct profile *p, const struct profile_proc *pp,
			  const struct report_opts *o)
{
	size_t i;

	if (pp->nspid != pp->pid)
		fprintf(f, "\npid %d (pid %d in its namespace)  %s\n", pp->pid, pp->nspid,
			pp->cmdline[0] ? pp->cmdline : pp->comm);
	else
		fprintf(f, "\npid %d  %s\n", pp->pid, pp->cmdline[0] ? pp->cmdline : pp->comm);
	fprintf(f, "  Python %s, %s%s\n", pp->python, pp->exe, pp->exited ? " (exited during the run)"
		: "");
	fprintf(f, "  %llu samples (%.2f s of CPU); %llu truncated, %llu partial, %llu unresolved\n",
		(unsigned long long)pp->samples, report_seconds(p, pp->samples),
		(unsigned long long)pp->truncated, (unsigned long long)pp->partial,
		(unsigned long long)pp->unresolved);
	if (pp->nthreads) {
		fprintf(f, "  threads:");
		for (i = 0; i < pp->nthreads; i++)
			fprintf(f, "%s %u %s (%llu)", i ? "," : "", pp->threads[i].tid,
				pp->threads[i].name[0] ? pp->threads[i].name : "?",
				(unsigned long long)pp->threads[i].samples);
		fputc('\n', f);
	}
	if (!pp->samples) {
		fprintf(f, "  no samples with Python code: the process was idle or ran only C code\n");
		return;
	}
	print_functions(f, p, pp, o);
	print_lines(f, p, pp, o);
}

static int write_text(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct totals t = sum_procs(p);
	size_t i;

	fprintf(f, "pybpfprof %s: %s profile, %zu process%s, %.2f s at %u Hz\n", o->tool_version,
		p->mode, p->nprocs, p->nprocs == 1 ? "" : "es", p->duration_s, p->frequency_hz);
	for (i = 0; i < p->nprocs; i++)
		fprintf(f, "%s %d (Python %s, %s)%s", i ? "," : "pids:", p->procs[i].pid,
			p->procs[i].python, p->procs[i].exe, i + 1 == p->nprocs ? "\n" : "");
	fprintf(f, "samples: %llu total, %llu dropped, %llu truncated, %llu unresolved"
		" (%llu partial; %llu ticks in threads without Python frames)\n",
		(unsigned long long)t.samples, (unsigned long long)p->counts.dropped,
		(unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		(unsigned long long)t.partial, (unsigned long long)p->counts.no_python);
	for (i = 0; i < p->nprocs; i++)
		print_process(f, p, &p->procs[i], o);
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_text = {
	.name = "text",
	.ext = ".txt",
	.write = write_text,
};
