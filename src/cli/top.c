// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live view (see top.h). It reads the same profile model as the report
 * writers, summed over every process, so what it shows is what the report
 * at the end will say.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>
#include "report/report_common.h"
#include "util/text.h"
#include "util/vec.h"
#include "top.h"

static struct termios saved_tio;

/* The terminal is ours (raw stdin, hidden cursor): what a second stop signal must undo. */
static volatile sig_atomic_t tty_changed, screen_changed;

void top__restore_terminal(void)
{
	static const char show_cursor[] = "\033[?25h\n";

	/* tcsetattr and write are async-signal-safe */
	if (tty_changed)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	if (screen_changed && write(STDOUT_FILENO, show_cursor, sizeof(show_cursor) - 1) < 0)
		return;
}

void top__init(struct top_view *v, unsigned rows, long long now)
{
	struct termios tio;

	memset(v, 0, sizeof(*v));
	hashmap__init(&v->waits_prev);
	hashmap__init(&v->counts_prev);
	v->rows = rows ? rows : 20;
	v->last_ns = now;
	v->next_ns = now;
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		tio = saved_tio;
		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 0;
		tio.c_cc[VTIME] = 0;
		v->tty = !tcsetattr(STDIN_FILENO, TCSANOW, &tio);
		tty_changed = v->tty;
	}
	/* hide the cursor while drawing */
	screen_changed = 1;
	fputs("\033[?25l\033[H\033[2J", stdout);
	fflush(stdout);
}

void top__end(struct top_view *v)
{
	free(v->prev);
	v->prev = NULL;
	v->nprev = 0;
	hashmap__free(&v->waits_prev);
	hashmap__free(&v->counts_prev);
	if (v->tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	v->tty = false;
	tty_changed = 0;
	fputs("\033[?25h\n", stdout);
	fflush(stdout);
	screen_changed = 0;
}

static bool quit_pressed(void)
{
	char buf[32];
	ssize_t n, i;
	int fl = fcntl(STDIN_FILENO, F_GETFL);

	if (fl < 0 || !isatty(STDIN_FILENO))
		return false;
	fcntl(STDIN_FILENO, F_SETFL, fl | O_NONBLOCK);
	n = read(STDIN_FILENO, buf, sizeof(buf));
	fcntl(STDIN_FILENO, F_SETFL, fl);
	for (i = 0; i < n; i++)
		if (buf[i] == 'q' || buf[i] == 'Q')
			return true;
	return false;
}

static int cmp_self(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

/* Self and total per function over every process. */
static int sum_funcs(const struct profile *p, struct func_stat **out, size_t *n, uint64_t *samples,
		     size_t *alive)
{
	struct func_stat *all = calloc(p->nfuncs + 1, sizeof(*all)), *st;
	size_t i, j, k;

	if (!all)
		return -ENOMEM;
	*samples = 0;
	*alive = 0;
	for (i = 0; i < p->ntargets; i++) {
		*samples += p->targets[i].samples;
		*alive += !p->targets[i].exited;
		if (profile_target__func_stats(p, &p->targets[i], &st, &k))
			continue;
		for (j = 0; j < k; j++) {
			all[st[j].func].func = st[j].func;
			all[st[j].func].self += st[j].self;
			all[st[j].func].total += st[j].total;
		}
		free(st);
	}
	for (i = 0, k = 0; i < p->nfuncs; i++)
		if (all[i].total)
			all[k++] = all[i];
	qsort(all, k, sizeof(*all), cmp_self);
	*out = all;
	*n = k;
	return 0;
}

/* Prints one line cut to the terminal's width, so nothing wraps and scrolls. */
static void put_line(unsigned cols, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (cols && cols < sizeof(line))
		line[cols] = '\0';
	text_sanitize(line); /* names and comm are the targets' own */
	printf("%s\033[K\n", line);
}

/* A process's (tid 0) or a thread's key in top_view's counts. */
static uint64_t count_key(int pid, uint32_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | tid;
}

/* count's part since the last redraw (was: the counts then), noted in next. */
static uint64_t since_last(const struct hashmap *was, struct hashmap *next, uint64_t key,
			   uint64_t count)
{
	uint64_t *then = hashmap__find(was, key);

	hashmap__set(next, key, count); /* out of memory: it counts from the start next time */
	/* counts only grow: a pid seen again is another process, counted from its start */
	return then && *then <= count ? count - *then : count;
}

/* A running process or one of its threads, by its samples in the last interval. */
struct top_row {
	size_t index; /* the process's, or the thread's in it */
	uint64_t recent, all;
};

/* Busiest in the last interval first, then since the start, then the first seen. */
static int cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->recent != y->recent)
		return x->recent < y->recent ? 1 : -1;
	if (x->all != y->all)
		return x->all < y->all ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The running processes with samples, busiest first (*n of them), each with
 * its last interval's samples; every process's and thread's count noted in
 * next. NULL with *n 0 when there are none or memory ran out.
 */
static struct top_row *busiest(const struct top_view *v, const struct profile *p,
			       struct hashmap *next, size_t *n)
{
	struct top_row *rows = calloc(p->ntargets + 1, sizeof(*rows));
	size_t i, k;

	*n = 0;
	if (!rows)
		return NULL;
	for (i = 0; i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		/* an exec's old image (exited) has its pid: it is not shown, nor counted */
		if (pp->exited || !pp->samples)
			continue;
		rows[(*n)++] = (struct top_row){
			.index = i,
			.recent = since_last(&v->counts_prev, next, count_key(pp->pid, 0),
					     pp->samples),
			.all = pp->samples,
		};
		for (k = 0; k < pp->nthreads; k++)
			since_last(&v->counts_prev, next, count_key(pp->pid, pp->threads[k].tid),
				   pp->threads[k].samples);
	}
	qsort(rows, *n, sizeof(*rows), cmp_row);
	return rows;
}

/* "24460 MainThread, 24471 fetcher": pp's busiest threads of the last interval, into buf. */
static void busiest_threads(const struct top_view *v, const struct profile_target *pp, char *buf,
			    size_t len)
{
	struct top_row by[TOP_THREADS_SHOWN];
	size_t i, j, k = 0, used = 0;

	buf[0] = '\0';
	for (i = 0; i < pp->nthreads; i++) {
		const struct profile_thread *th = &pp->threads[i];
		uint64_t *then = hashmap__find(&v->counts_prev, count_key(pp->pid, th->tid));
		struct top_row r = { i,
				     then && *then <= th->samples ? th->samples - *then :
								    th->samples,
				     th->samples };

		if (!th->samples)
			continue;
		if (k < TOP_THREADS_SHOWN)
			j = k++;
		else if (cmp_row(&r, &by[k - 1]) < 0)
			j = k - 1;
		else
			continue;
		/* insertion into a short sorted list */
		for (; j > 0 && cmp_row(&r, &by[j - 1]) < 0; j--)
			by[j] = by[j - 1];
		by[j] = r;
	}
	for (i = 0; i < k && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%u %s", i ? ", " : "",
				 pp->threads[by[i].index].tid,
				 profile_thread__label(&pp->threads[by[i].index]));
}

/*
 * The busiest running processes (up to shown rows), each by its share of the
 * last interval and since the start, pid, role (as the report's process
 * table names it) and busiest threads (tid and Python name); the rest in
 * one line. Before the counts of this redraw replace v->counts_prev.
 */
static void put_processes(struct top_view *v, const struct profile *p, uint64_t recent,
			  uint64_t samples, unsigned cols, size_t shown)
{
	char role[PROFILE_ROLE], threads[TOP_THREADS_TEXT];
	uint64_t rest_recent = recent, rest_all = samples;
	struct hashmap next;
	struct top_row *rows;
	size_t n, i;

	hashmap__init(&next);
	rows = busiest(v, p, &next, &n);
	put_line(cols, "   last s  since start      pid  process: busiest threads (tid name)");
	if (!n)
		put_line(cols, "  (no samples yet)");
	for (i = 0; i < n && i < shown; i++) {
		const struct profile_target *pp = &p->targets[rows[i].index];

		busiest_threads(v, pp, threads, sizeof(threads));
		put_line(cols, "  %6.1f%%  %10.1f%%  %7d  %s: %s",
			 report_pct(rows[i].recent, recent), report_pct(rows[i].all, samples),
			 pp->pid, profile_target__role(pp, role, sizeof(role)), threads);
		rest_recent -= rest_recent >= rows[i].recent ? rows[i].recent : rest_recent;
		rest_all -= rows[i].all;
	}
	if (p->ntargets > i && n)
		put_line(cols, "  %6.1f%%  %10.1f%%           %zu more process%s",
			 report_pct(rest_recent, recent), report_pct(rest_all, samples),
			 p->ntargets - i, p->ntargets - i == 1 ? "" : "es");
	free(rows);
	hashmap__free(&v->counts_prev);
	v->counts_prev = next;
}

/* Self and total of the last interval: the counts now minus those at the last redraw. */
static struct func_stat *interval_stats(struct top_view *v, const struct func_stat *st, size_t n,
					size_t nfuncs)
{
	struct func_stat *d = calloc(n + 1, sizeof(*d));
	size_t i;

	if (!d)
		return NULL;
	for (i = 0; i < n; i++) {
		const struct func_stat *was = st[i].func < v->nprev ? &v->prev[st[i].func] : NULL;

		d[i] = st[i];
		/* counts only grow; if a process's section went away, start it again */
		if (was && was->self <= st[i].self && was->total <= st[i].total) {
			d[i].self -= was->self;
			d[i].total -= was->total;
		}
	}
	if (vec_grow((void **)&v->prev, &v->nprev, nfuncs, sizeof(*v->prev))) {
		free(d);
		return NULL;
	}
	for (i = 0; i < n; i++)
		v->prev[st[i].func] = st[i];
	return d;
}

/* Hot now first; among equals, the one with more samples since the start. */
static int cmp_interval(const void *a, const void *b, void *since_start)
{
	const struct func_stat *x = a, *y = b, *all = since_start;
	int c = cmp_self(x, y);

	return c ? c : cmp_self(&all[x->func], &all[y->func]);
}

/* An off-CPU pseudo-function's share, at one line that waited so. */
struct wait_stat {
	uint32_t func, frame; /* the pseudo-function; the innermost Python frame under it */
	uint64_t all, recent; /* samples since the start, and in the last interval */
};

#define WAITS_SHOWN 3 /* waiting lines under each off-CPU row */

static uint64_t wait_key(uint32_t func, uint32_t frame)
{
	return (uint64_t)func << 32 | frame;
}

/* The Python frame that waited in off-CPU stack s: the first under the pseudo-frame. */
static int64_t waiting_frame(const struct profile *p, const struct profile_stack *s)
{
	uint32_t j;

	for (j = 1; j < s->nframes; j++)
		if (s->frames[j] < p->nframes &&
		    p->funcs[p->frames[s->frames[j]].func].kind == PROFILE_FUNC_PYTHON)
			return s->frames[j];
	return -1;
}

/* Adds s's count to its (pseudo-function, waiting line) in *w (index + 1 in index). */
static int wait_add(const struct profile *p, const struct profile_stack *s, struct hashmap *index,
		    struct wait_stat **w, size_t *n, size_t *cap)
{
	int64_t fr = waiting_frame(p, s);
	uint32_t fn = p->frames[s->frames[0]].func;
	uint64_t *slot;

	if (fr < 0)
		return 0;
	slot = hashmap__find(index, wait_key(fn, (uint32_t)fr));
	if (!slot) {
		if (vec_grow((void **)w, cap, *n + 1, sizeof(**w)) ||
		    hashmap__set(index, wait_key(fn, (uint32_t)fr), *n + 1))
			return -ENOMEM;
		(*w)[*n] = (struct wait_stat){ .func = fn, .frame = (uint32_t)fr };
		slot = hashmap__find(index, wait_key(fn, (uint32_t)fr));
		(*n)++;
	}
	(*w)[*slot - 1].all += s->count;
	return 0;
}

/*
 * --mode wall: per off-CPU pseudo-function and the line that waited so, the
 * samples since the start and since the last redraw (v->waits_prev). NULL
 * with *n 0 when there are none or memory ran out.
 */
static struct wait_stat *wait_stats(struct top_view *v, const struct profile *p, size_t *n)
{
	struct wait_stat *w = NULL;
	struct hashmap index;
	size_t i, j, cap = 0;
	uint64_t *was;
	int err = 0;

	*n = 0;
	hashmap__init(&index);
	for (i = 0; i < p->ntargets && !err; i++)
		for (j = 0; j < p->targets[i].nstacks && !err; j++)
			if (profile__offcpu_class(p, &p->targets[i].stacks[j]) >= 0)
				err = wait_add(p, &p->targets[i].stacks[j], &index, &w, n, &cap);
	hashmap__free(&index);
	for (i = 0; i < *n && !err; i++) {
		was = hashmap__find(&v->waits_prev, wait_key(w[i].func, w[i].frame));
		w[i].recent = was && *was <= w[i].all ? w[i].all - *was : w[i].all;
		err = hashmap__set(&v->waits_prev, wait_key(w[i].func, w[i].frame), w[i].all);
	}
	if (err) {
		free(w);
		*n = 0;
		return NULL;
	}
	return w;
}

/* Waiting lines by their last interval, then by their samples since the start. */
static int cmp_wait(const void *a, const void *b)
{
	const struct wait_stat *x = a, *y = b;

	if (x->recent != y->recent)
		return x->recent < y->recent ? 1 : -1;
	if (x->all != y->all)
		return x->all < y->all ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Under off-CPU pseudo-function func's row, the lines that waited so; the rows used. */
static unsigned put_waits(const struct profile *p, const struct wait_stat *w, size_t n,
			  uint32_t func, uint64_t recent, uint64_t samples, unsigned cols,
			  unsigned room)
{
	unsigned shown = 0;
	size_t i;

	for (i = 0; i < n && shown < room && shown < WAITS_SHOWN; i++) {
		const struct profile_frame *fr = &p->frames[w[i].frame];
		const struct profile_func *fn = &p->funcs[fr->func];
		char num[16];

		if (w[i].func != func)
			continue;
		put_line(cols, " %5.1f%%          %5.1f%%            waiting at %s (%s:%s)",
			 report_pct(w[i].recent, recent), report_pct(w[i].all, samples),
			 fn->qualname, fn->file, report_line_str(fr->line, num, sizeof(num)));
		shown++;
	}
	return shown;
}

/*
 * Fits the window (when stdout is a terminal): the process rows (returned) and
 * function rows (*rows), with the header lines and one spare line, so that
 * the cursor never scrolls the screen; *cols its width (0: not known).
 */
static size_t fit_window(unsigned *rows, unsigned *cols, size_t ntargets)
{
	struct winsize ws = { 0 };
	size_t procs = ntargets < TOP_PROCS_SHOWN ? ntargets : TOP_PROCS_SHOWN;
	/* title, process header, a "more" line, blank, two function headers, spare */
	const unsigned fixed = 7;
	unsigned keep = *rows < 3 ? *rows : 3; /* function rows kept before process rows */

	if (!procs)
		procs = 1; /* "no samples yet" */
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row)
		return procs;
	*cols = ws.ws_col;
	while (procs > 1 && fixed + procs + keep > ws.ws_row)
		procs--;
	if (fixed + procs + *rows > ws.ws_row)
		*rows = ws.ws_row > fixed + procs ? ws.ws_row - fixed - procs : 1;
	return procs;
}

bool top__tick(struct top_view *v, const struct profile *p, uint64_t dropped, long long now)
{
	unsigned rows = v->rows, cols = 0;
	struct func_stat *st, *d;
	struct wait_stat *waits;
	uint64_t samples, recent;
	size_t n, i, alive, nwaits, procs;
	unsigned used;
	double rate;

	if (quit_pressed())
		return true;
	if (now < v->next_ns)
		return false;
	v->next_ns = now + 1000000000LL;
	if (sum_funcs(p, &st, &n, &samples, &alive))
		return false;
	d = interval_stats(v, st, n, p->nfuncs);
	if (!d) {
		free(st);
		return false;
	}
	recent = samples - v->last_samples;
	rate = now > v->last_ns ? recent * 1e9 / (now - v->last_ns) : 0;
	v->last_samples = samples;
	v->last_ns = now;
	procs = fit_window(&rows, &cols, p->ntargets);
	printf("\033[H");
	put_line(cols,
		 "pybpfprof top: %zu process%s (%zu running), %.0f samples/s, %llu samples, "
		 "%llu dropped   (q to quit)",
		 p->ntargets, p->ntargets == 1 ? "" : "es", alive, rate,
		 (unsigned long long)samples, (unsigned long long)dropped);
	put_processes(v, p, recent, samples, cols, procs);
	put_line(cols, "");
	put_line(cols, "   last second     since start");
	put_line(cols, "  self%%  total%%   self%%  total%%  function (location)");
	/* d[i] and st[i] describe the same function: d keeps the index into st */
	for (i = 0; i < n; i++)
		d[i].func = i;
	qsort_r(d, n, sizeof(*d), cmp_interval, st);
	waits = wait_stats(v, p, &nwaits);
	if (nwaits)
		qsort(waits, nwaits, sizeof(*waits), cmp_wait);
	for (i = 0, used = 0; i < n && used < rows; i++, used++) {
		const struct func_stat *all = &st[d[i].func];
		const struct profile_func *fn = &p->funcs[all->func];
		char num[16];

		put_line(cols, " %5.1f%%  %5.1f%%  %5.1f%%  %5.1f%%  %s (%s:%s)",
			 report_pct(d[i].self, recent), report_pct(d[i].total, recent),
			 report_pct(all->self, samples), report_pct(all->total, samples),
			 fn->qualname, fn->file, report_line_str(fn->firstline, num, sizeof(num)));
		if (!strcmp(fn->file, PROFILE_OFFCPU_FILE))
			used += put_waits(p, waits, nwaits, all->func, recent, samples, cols,
					  rows - used - 1);
	}
	free(waits);
	/* clear what a longer previous frame left below */
	printf("\033[J");
	fflush(stdout);
	free(d);
	free(st);
	return false;
}
