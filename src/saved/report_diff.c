// SPDX-License-Identifier: GPL-2.0-only
/*
 * The comparison behind `pybpfprof diff` (report_diff.h): functions of the
 * two profiles matched into rows, then every stack of each profile counted
 * into them, self for its innermost frame, total once per function and per
 * line however often they recur in it. Shares are of each profile's own
 * samples. Each profile is also redrawn by matched function (its "view"),
 * for the differential flame graph.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "saved/report_diff.h"
#include "report/report_common.h"
#include "util/hashmap.h"
#include "util/vec.h"

#define KEY_MAX (PATH_MAX + 16)
/*
 * Candidates one AFTER function's suffix match looks at, at most: a profile
 * may hold any number of functions of one name in files of one name (a
 * target's own code makes them), and the match must stay linear.
 */
#define SUFFIX_SCAN_MAX 256

/* Rows of one hash, most recent first: a map to the first, and each row's next. */
struct chain {
	struct hashmap first; /* hash -> row + 1 */
	uint32_t *next;	      /* per row: the next row of its hash + 1, or 0 */
	size_t cap;
};

struct builder {
	struct report_diff *d;
	size_t cap_funcs, cap_lines;
	uint32_t *map[2]; /* function id of each profile -> row */
	char **keys;	  /* per row: qualname '\0' file key, for the exact match */
	size_t cap_keys;
	struct hashmap by_key;	 /* hash of a key -> row */
	struct chain by_name[2]; /* BEFORE's program files by qualname and last 1, 2 components */
	struct hashmap by_line;	 /* row << 32 | line -> line row */
	uint64_t serial;	 /* stacks counted so far: the `seen` stamps */
};

static const char *after_dir(const char *file, const char *dir)
{
	const char *at = NULL, *s;

	for (s = strstr(file, dir); s; s = strstr(s + 1, dir))
		at = s + strlen(dir);
	return at;
}

/* What follows the last "/lib/pythonX.Y/" or "/lib64/pythonX.Y/" (any suffix letters). */
static const char *after_stdlib(const char *file)
{
	const char *at = NULL, *s;

	for (s = strstr(file, "/python"); s; s = strstr(s + 1, "/python")) {
		const char *c = s + strlen("/python");

		if (!((s - file >= 4 && !strncmp(s - 4, "/lib", 4)) ||
		      (s - file >= 6 && !strncmp(s - 6, "/lib64", 6))))
			continue;
		if (*c < '0' || *c > '9')
			continue;
		while ((*c >= '0' && *c <= '9') || *c == '.' || (*c >= 'a' && *c <= 'z'))
			c++;
		if (*c == '/')
			at = c + 1;
	}
	return at;
}

char *report_diff_file_key(const char *file, bool *library, char *buf, size_t len)
{
	const char *site = after_dir(file, "/site-packages/"), *dist;

	dist = after_dir(file, "/dist-packages/");
	if (!site || (dist && dist > site))
		site = dist;
	*library = true;
	if (site)
		snprintf(buf, len, "pkg:%s", site);
	else if ((site = after_stdlib(file)))
		snprintf(buf, len, "lib:%s", site);
	else {
		*library = false;
		snprintf(buf, len, "%s", file);
	}
	return buf;
}

unsigned report_diff_common_suffix(const char *a, const char *b)
{
	const char *ea = a + strlen(a), *eb = b + strlen(b);
	unsigned n = 0;

	for (;;) {
		const char *sa = ea, *sb = eb;

		while (sa > a && sa[-1] != '/')
			sa--;
		while (sb > b && sb[-1] != '/')
			sb--;
		if (ea == sa || ea - sa != eb - sb || memcmp(sa, sb, (size_t)(ea - sa)))
			return n;
		n++;
		if (sa == a || sb == b)
			return n;
		ea = sa - 1;
		eb = sb - 1;
	}
}

static double abs_delta(const double *v)
{
	return fabs(v[DIFF_AFTER] - v[DIFF_BEFORE]);
}

int report_diff_cmp(const void *a, const void *b)
{
	const struct report_diff_row *x = a, *y = b;
	double dx = abs_delta(x->self_pct), dy = abs_delta(y->self_pct);
	int c;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	dx = abs_delta(x->total_pct), dy = abs_delta(y->total_pct);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	c = strcmp(x->qualname, y->qualname);
	if (!c)
		c = strcmp(x->file, y->file);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static uint64_t key_hash(const char *key)
{
	size_t n = strlen(key);

	return hash_bytes(key, n + 1 + strlen(key + n + 1), 0);
}

static bool key_equal(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strcmp(a, b) && !strcmp(a + n + 1, b + n + 1);
}

/* qualname '\0' file key, malloc'ed; *library as report_diff_file_key says. */
static char *make_key(const struct profile_func *fn, bool *library)
{
	char fk[KEY_MAX], *k;
	size_t q = strlen(fn->qualname);

	report_diff_file_key(fn->file, library, fk, sizeof(fk));
	k = malloc(q + 1 + strlen(fk) + 1);
	if (k) {
		memcpy(k, fn->qualname, q + 1);
		strcpy(k + q + 1, fk);
	}
	return k;
}

/*
 * The row key is indexed under, or NULL with *h the hash it would be indexed
 * under: on a 64-bit collision with another key, the next free one.
 */
static uint64_t *key_slot(struct builder *b, const char *key, uint64_t *h)
{
	uint64_t *slot;

	for (*h = key_hash(key); (slot = hashmap__find(&b->by_key, *h)); (*h)++)
		if (key_equal(b->keys[*slot], key))
			return slot;
	return NULL;
}

/* The row of key (taken over), or a new one spelled as fn. Row index, or -errno. */
static long row_for_key(struct builder *b, char *key, const struct profile_func *fn, bool add)
{
	struct report_diff *d = b->d;
	uint64_t h, *slot = key_slot(b, key, &h);
	struct report_diff_row *r;

	if (slot || !add) {
		free(key);
		return slot ? (long)*slot : -ENOENT;
	}
	if (vec_grow((void **)&d->funcs, &b->cap_funcs, d->nfuncs + 1, sizeof(*d->funcs)) ||
	    vec_grow((void **)&b->keys, &b->cap_keys, d->nfuncs + 1, sizeof(*b->keys)) ||
	    hashmap__set(&b->by_key, h, d->nfuncs)) {
		free(key);
		return -ENOMEM;
	}
	b->keys[d->nfuncs] = key;
	r = &d->funcs[d->nfuncs];
	r->qualname = fn->qualname;
	r->file = fn->file;
	r->line = fn->firstline;
	return (long)d->nfuncs++;
}

static void spell_as(struct report_diff_row *r, const struct profile_func *fn)
{
	r->qualname = fn->qualname;
	r->file = fn->file;
	r->line = fn->firstline;
}

/*
 * The suffix match's candidates: the same qualname in a file whose last
 * `levels` path components (1: the file name) are the same.
 */
static uint64_t name_hash(const struct profile_func *fn, int levels)
{
	const char *f = fn->file, *tail = f + strlen(f);
	int k = 0;

	while (tail > f && k < levels)
		if (*--tail == '/' && ++k == levels)
			tail++;
	return hash_bytes(tail, strlen(tail), hash_bytes(fn->qualname, strlen(fn->qualname), 1));
}

static int chain_add(struct chain *c, uint64_t h, uint32_t row)
{
	uint64_t *first = hashmap__find(&c->first, h);

	if (vec_grow((void **)&c->next, &c->cap, (size_t)row + 1, sizeof(*c->next)))
		return -ENOMEM;
	c->next[row] = first ? (uint32_t)*first : 0;
	return hashmap__set(&c->first, h, (uint64_t)row + 1);
}

static void chain_free(struct chain *c)
{
	hashmap__free(&c->first);
	free(c->next);
}

/* BEFORE's functions: one row per key; program files chained for the suffix match. */
static int match_before(struct builder *b, const struct profile *p)
{
	size_t i;
	int lv;

	for (i = 0; i < p->nfuncs; i++) {
		const struct profile_func *fn = &p->funcs[i];
		bool lib;
		char *key = make_key(fn, &lib);
		size_t before = b->d->nfuncs;
		long r = key ? row_for_key(b, key, fn, true) : -ENOMEM;

		if (r < 0)
			return (int)r;
		b->map[DIFF_BEFORE][i] = (uint32_t)r;
		if (lib || !fn->file[0] || fn->file[0] == '<' || (size_t)r != before)
			continue;
		for (lv = 0; lv < 2; lv++)
			if (chain_add(&b->by_name[lv], name_hash(fn, lv + 1), (uint32_t)r))
				return -ENOMEM;
	}
	return 0;
}

/*
 * In one chain: the unclaimed row of fn's qualname sharing most trailing
 * components. Claimed rows met are unlinked, so each is passed over once.
 */
static long chain_best(struct builder *b, struct chain *c, const struct profile_func *fn,
		       int levels)
{
	uint64_t *first = hashmap__find(&c->first, name_hash(fn, levels));
	unsigned best = 0, n, scanned = 0;
	uint32_t r, prev = 0;
	long best_row = -1;

	for (r = first ? (uint32_t)*first : 0; r && scanned < SUFFIX_SCAN_MAX; r = c->next[r - 1]) {
		const struct report_diff_row *row = &b->d->funcs[r - 1];

		if (row->claimed) {
			if (prev)
				c->next[prev - 1] = c->next[r - 1];
			else
				*first = c->next[r - 1];
			continue;
		}
		prev = r;
		scanned++;
		if (strcmp(row->qualname, fn->qualname))
			continue;
		n = report_diff_common_suffix(row->file, fn->file);
		/* ties: the row BEFORE lists first, met last */
		if (n >= best && n) {
			best = n;
			best_row = r - 1;
		}
	}
	return best_row;
}

/*
 * The unclaimed BEFORE row of fn's qualname whose file shares most trailing
 * components with fn's, or -1: those sharing two or more are all in the
 * second chain, so it is looked at first; each scan stops after
 * SUFFIX_SCAN_MAX candidates.
 */
static long suffix_match(struct builder *b, const struct profile_func *fn)
{
	long r = chain_best(b, &b->by_name[1], fn, 2);

	return r >= 0 ? r : chain_best(b, &b->by_name[0], fn, 1);
}

/*
 * AFTER's functions: first every exact key, then by suffix what is left,
 * so that no suffix match takes a row an exact one wants.
 */
static int match_after(struct builder *b, const struct profile *p)
{
	size_t i;
	long r;
	bool lib;

	for (i = 0; i < p->nfuncs; i++) {
		char *key = make_key(&p->funcs[i], &lib);

		if (!key)
			return -ENOMEM;
		r = row_for_key(b, key, &p->funcs[i], false);
		b->map[DIFF_AFTER][i] = r < 0 ? UINT32_MAX : (uint32_t)r;
		if (r >= 0) {
			b->d->funcs[r].claimed = true;
			spell_as(&b->d->funcs[r], &p->funcs[i]);
		}
	}
	for (i = 0; i < p->nfuncs; i++) {
		const struct profile_func *fn = &p->funcs[i];
		uint64_t h, *slot;
		char *key;

		if (b->map[DIFF_AFTER][i] != UINT32_MAX)
			continue;
		key = make_key(fn, &lib);
		if (!key)
			return -ENOMEM;
		/* an AFTER function of the same key was matched by suffix: join it */
		slot = key_slot(b, key, &h);
		r = slot ? (long)*slot : -1;
		if (!slot && !lib && fn->file[0] && fn->file[0] != '<')
			r = suffix_match(b, fn);
		if (slot) {
			free(key);
		} else if (r >= 0) {
			if (hashmap__set(&b->by_key, h, (uint64_t)r)) {
				free(key);
				return -ENOMEM;
			}
			free(b->keys[r]);
			b->keys[r] = key;
		} else if ((r = row_for_key(b, key, fn, true)) < 0) {
			return (int)r;
		}
		b->map[DIFF_AFTER][i] = (uint32_t)r;
		b->d->funcs[r].claimed = true;
		spell_as(&b->d->funcs[r], fn);
	}
	return 0;
}

/* The row of (function row, line), made on first use. Index, or -ENOMEM. */
static long line_row(struct builder *b, uint32_t func, int line)
{
	struct report_diff *d = b->d;
	uint64_t key = ((uint64_t)func << 32) | (uint32_t)line, *slot;
	struct report_diff_row *r;

	slot = hashmap__find(&b->by_line, key);
	if (slot)
		return (long)*slot;
	if (vec_grow((void **)&d->lines, &b->cap_lines, d->nlines + 1, sizeof(*d->lines)) ||
	    hashmap__set(&b->by_line, key, d->nlines))
		return -ENOMEM;
	r = &d->lines[d->nlines];
	r->qualname = d->funcs[func].qualname;
	r->file = d->funcs[func].file;
	r->line = line;
	return (long)d->nlines++;
}

/* Adds count to total once per stack (the serial stamp), and self for the innermost. */
static void count_row(struct builder *b, struct report_diff_row *r, int s, uint64_t count,
		      bool innermost)
{
	r->in[s] = true;
	if (innermost)
		r->self[s] += count;
	if (r->seen != b->serial) {
		r->seen = b->serial;
		r->total[s] += count;
	}
}

static int count_stack(struct builder *b, int s, const struct profile_stack *st)
{
	const struct profile *p = b->d->side[s].p;
	uint32_t k;

	b->serial++;
	for (k = 0; k < st->nframes; k++) {
		const struct profile_frame *fr = &p->frames[st->frames[k]];
		uint32_t func = b->map[s][fr->func];
		long l = line_row(b, func, fr->line);

		if (l < 0)
			return (int)l;
		count_row(b, &b->d->funcs[func], s, st->count, !k);
		count_row(b, &b->d->lines[l], s, st->count, !k);
	}
	return 0;
}

/* Every stack of side s into the rows, and into its view (all processes as one). */
static int count_side(struct builder *b, int s)
{
	struct report_diff_side *sd = &b->d->side[s];
	const struct profile *p = sd->p;
	struct profile_target *vt;
	uint32_t *frames = NULL;
	size_t cap = 0, i, j, k;
	int err = 0;

	vt = profile__add_target(&sd->view, 0, "", "", "", "");
	if (!vt)
		return -ENOMEM;
	for (i = 0; i < p->ntargets && !err; i++)
		for (j = 0; j < p->targets[i].nstacks && !err; j++) {
			const struct profile_stack *st = &p->targets[i].stacks[j];

			if (!st->nframes)
				continue;
			err = count_stack(b, s, st);
			if (!err && vec_grow((void **)&frames, &cap, st->nframes, sizeof(*frames)))
				err = -ENOMEM;
			for (k = 0; !err && k < st->nframes; k++)
				frames[k] = b->map[s][p->frames[st->frames[k]].func];
			if (!err)
				err = profile_target__add_stack(vt, 0, frames, st->nframes,
								st->count);
			sd->samples += st->count;
			vt->samples += st->count;
		}
	free(frames);
	return err;
}

/*
 * One function and one frame per row, in row order, in both views: the same
 * ids on both sides, so the flame graph's labels match. The first line is
 * the row's index, which keeps rows that read alike apart.
 */
static int make_views(struct builder *b)
{
	struct report_diff *d = b->d;
	size_t i;
	int s;

	for (s = 0; s < 2; s++) {
		profile__init(&d->side[s].view, d->side[s].p->mode, d->side[s].p->frequency_hz);
		for (i = 0; i < d->nfuncs; i++)
			if (profile__func(&d->side[s].view, d->funcs[i].qualname, d->funcs[i].file,
					  (int)i, false) != i ||
			    profile__frame(&d->side[s].view, (uint32_t)i, -1) != i)
				return -ENOMEM;
	}
	return 0;
}

static void shares(struct report_diff_row *rows, size_t n, const struct report_diff *d)
{
	size_t i;
	int s;

	for (i = 0; i < n; i++)
		for (s = 0; s < 2; s++) {
			double whole = (double)d->side[s].samples;

			rows[i].self_pct[s] = 100.0 * (double)rows[i].self[s] / whole;
			rows[i].total_pct[s] = 100.0 * (double)rows[i].total[s] / whole;
		}
	for (i = 0; i < n; i++) {
		const uint64_t nb = d->side[DIFF_BEFORE].samples, na = d->side[DIFF_AFTER].samples;

		rows[i].d_self = report_ci_diff(rows[i].self[DIFF_BEFORE], nb,
						rows[i].self[DIFF_AFTER], na);
		rows[i].d_total = report_ci_diff(rows[i].total[DIFF_BEFORE], nb,
						 rows[i].total[DIFF_AFTER], na);
	}
}

bool report_diff_row_over(const struct report_diff_row *r, double pp)
{
	return 100.0 * r->d_self.lo > pp && report_ci_significant(r->d_self);
}

/* Rows with samples on neither side (functions only named by other records) go. */
static void drop_empty(struct report_diff_row *rows, size_t *n)
{
	size_t i, k = 0;

	for (i = 0; i < *n; i++)
		if (rows[i].in[DIFF_BEFORE] || rows[i].in[DIFF_AFTER])
			rows[k++] = rows[i];
	*n = k;
}

static int check_sides(const struct report_diff *d, char *why, size_t whylen)
{
	const char *mb = d->side[DIFF_BEFORE].p->mode, *ma = d->side[DIFF_AFTER].p->mode;
	int s;

	mb = mb ? mb : "";
	ma = ma ? ma : "";
	if (strcmp(mb, ma)) {
		snprintf(why, whylen,
			 "%s is a %s profile and %s a %s one: diff compares profiles of the "
			 "same mode",
			 d->side[DIFF_BEFORE].path, mb, d->side[DIFF_AFTER].path, ma);
		return -EINVAL;
	}
	for (s = 0; s < 2; s++)
		if (!d->side[s].samples) {
			snprintf(why, whylen,
				 "%s has no samples with a Python stack: there are no shares to "
				 "compare",
				 d->side[s].path);
			return -EINVAL;
		}
	return 0;
}

static void builder__free(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->cap_keys; i++) /* grown zeroed: unused slots are NULL */
		free(b->keys[i]);
	free(b->keys);
	free(b->map[0]);
	free(b->map[1]);
	chain_free(&b->by_name[0]);
	chain_free(&b->by_name[1]);
	hashmap__free(&b->by_key);
	hashmap__free(&b->by_line);
}

int report_diff__build(struct report_diff *d, const struct profile *before, const char *before_path,
		       const struct profile *after, const char *after_path, char *why,
		       size_t whylen)
{
	struct builder b = { .d = d };
	int err = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->side[DIFF_BEFORE] = (struct report_diff_side){ .p = before, .path = before_path };
	d->side[DIFF_AFTER] = (struct report_diff_side){ .p = after, .path = after_path };
	b.map[0] = calloc(before->nfuncs + 1, sizeof(*b.map[0]));
	b.map[1] = calloc(after->nfuncs + 1, sizeof(*b.map[1]));
	if (!b.map[0] || !b.map[1])
		goto out;
	err = match_before(&b, before);
	if (!err)
		err = match_after(&b, after);
	if (!err)
		err = make_views(&b);
	if (!err)
		err = count_side(&b, DIFF_BEFORE);
	if (!err)
		err = count_side(&b, DIFF_AFTER);
	if (!err)
		err = check_sides(d, why, whylen);
	if (err)
		goto out;
	shares(d->funcs, d->nfuncs, d);
	shares(d->lines, d->nlines, d);
	drop_empty(d->funcs, &d->nfuncs);
	qsort(d->funcs, d->nfuncs, sizeof(*d->funcs), report_diff_cmp);
	qsort(d->lines, d->nlines, sizeof(*d->lines), report_diff_cmp);
out:
	builder__free(&b);
	if (err == -ENOMEM)
		snprintf(why, whylen, "out of memory comparing the profiles");
	if (err)
		report_diff__free(d);
	return err;
}

void report_diff__free(struct report_diff *d)
{
	int s;

	for (s = 0; s < 2; s++)
		profile__free(&d->side[s].view);
	free(d->funcs);
	free(d->lines);
	memset(d, 0, sizeof(*d));
}

char *report_diff_side_str(const struct report_diff_side *sd, char *buf, size_t len)
{
	struct report_totals t = report_totals(sd->p);
	char procs[64];

	snprintf(buf, len,
		 "%llu samples at %u Hz in %.2f s, %s (%llu dropped, %llu truncated, "
		 "%llu unresolved, %llu partial)",
		 (unsigned long long)sd->samples, sd->p->frequency_hz, sd->p->duration_s,
		 report_nprocs(sd->p, procs, sizeof(procs)),
		 (unsigned long long)sd->p->counts.dropped, (unsigned long long)t.truncated,
		 (unsigned long long)t.unresolved, (unsigned long long)t.partial);
	return buf;
}
