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

/* Indices of the (up to) n busiest running processes, most samples first. */
static size_t busiest(const struct profile *p, size_t *idx, size_t n)
{
	size_t i, j, k = 0;

	for (i = 0; i < p->ntargets; i++) {
		uint64_t mine = p->targets[i].samples;

		if (p->targets[i].exited || !mine)
			continue;
		if (k < n)
			j = k++;
		else if (mine > p->targets[idx[n - 1]].samples)
			j = n - 1;
		else
			continue;
		/* insertion into a short sorted list */
		for (; j > 0 && p->targets[idx[j - 1]].samples < mine; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return k;
}

/* "pid comm share%, ..." of the busiest running processes, in one line. */
static void put_processes(const struct profile *p, uint64_t samples, unsigned cols)
{
	char line[512];
	size_t idx[8], n = busiest(p, idx, 8), i, used = 0;

	used = snprintf(line, sizeof(line), "  busiest:");
	for (i = 0; i < n && used < sizeof(line); i++) {
		const struct profile_target *pp = &p->targets[idx[i]];

		used += snprintf(line + used, sizeof(line) - used, "%s %d %s %.1f%%", i ? "," : "",
				 pp->pid, pp->comm, report_pct(pp->samples, samples));
	}
	put_line(cols, "%s", n ? line : "  busiest: (no samples yet)");
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

bool top__tick(struct top_view *v, const struct profile *p, uint64_t dropped, long long now)
{
	struct winsize ws = { 0 };
	unsigned rows = v->rows, cols = 0;
	struct func_stat *st, *d;
	struct wait_stat *waits;
	uint64_t samples, recent;
	size_t n, i, alive, nwaits;
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
	/* fit the window: five header lines, one spare so the cursor never scrolls it */
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row) {
		cols = ws.ws_col;
		if (rows > ws.ws_row - 6u)
			rows = ws.ws_row > 6 ? ws.ws_row - 6 : 1;
	}
	printf("\033[H");
	put_line(cols,
		 "pybpfprof top: %zu process%s (%zu running), %.0f samples/s, %llu samples, "
		 "%llu dropped   (q to quit)",
		 p->ntargets, p->ntargets == 1 ? "" : "es", alive, rate,
		 (unsigned long long)samples, (unsigned long long)dropped);
	put_processes(p, samples, cols);
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
