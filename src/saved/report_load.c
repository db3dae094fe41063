// SPDX-License-Identifier: GPL-2.0-only
/*
 * A saved JSON profile read back into the profile model. Only the "model"
 * section is read (report_json_model.c writes it; doc/json-schema.md
 * describes it): functions and frames are interned again in the file's
 * order, so that their indices are the file's and every writer sees the
 * profile it would have seen in the run. The file is anyone's: its size is
 * bounded, and every type, index and count is checked before it is used.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/hashmap.h"
#include "saved/report_load.h"
#include "proc/source.h"
#include "report_load.h"

/* --signatures: its counts, when the run had it. */
static int load_signatures(struct ld *l, const struct jval *m)
{
	const struct jval *sig = jv_get(m, "signatures");
	uint64_t x[3];

	if (!sig || jv_is_null(sig))
		return 0;
	if (ld_u64s(l, sig, "model.signatures", x, 3))
		return -EINVAL;
	l->p->signatures = true;
	l->p->sig_samples = x[0];
	l->p->sig_missing = x[1];
	l->p->sig_capped = x[2];
	return 0;
}

/*
 * --kernel: "kernel": {"stacks": N, "missing": N}; --native: "native":
 * {"stacks": N, "partial": N, "unplaced": N, "refused": N, "missing": N}
 * ("unplaced" and "refused" only in files written since they existed); or
 * neither.
 */
static int load_kernel(struct ld *l, const struct jval *m)
{
	const struct jval *k = jv_get(m, "kernel"), *n = jv_get(m, "native"), *unplaced, *refused;
	struct profile *p = l->p;

	p->kernel_mode = k != NULL;
	p->native_mode = n != NULL;
	if (k && (ld_u64(l, ld_get(l, k, "model.kernel", "stacks"), "model.kernel.stacks",
			 UINT64_MAX, &p->kstacks) ||
		  ld_u64(l, ld_get(l, k, "model.kernel", "missing"), "model.kernel.missing",
			 UINT64_MAX, &p->kstack_missing)))
		return -EINVAL;
	if (n && (ld_u64(l, ld_get(l, n, "model.native", "stacks"), "model.native.stacks",
			 UINT64_MAX, &p->ustacks) ||
		  ld_u64(l, ld_get(l, n, "model.native", "partial"), "model.native.partial",
			 UINT64_MAX, &p->ustack_partial) ||
		  ld_u64(l, ld_get(l, n, "model.native", "missing"), "model.native.missing",
			 UINT64_MAX, &p->ustack_missing)))
		return -EINVAL;
	/* "unplaced" came with native frames between Python frames: older files have none */
	unplaced = n ? jv_get(n, "unplaced") : NULL;
	if (unplaced &&
	    ld_u64(l, unplaced, "model.native.unplaced", UINT64_MAX, &p->ustack_unplaced))
		return -EINVAL;
	refused = n ? jv_get(n, "refused") : NULL;
	if (refused && ld_u64(l, refused, "model.native.refused", UINT64_MAX, &p->ustack_refused))
		return -EINVAL;
	return 0;
}

/* --merge's processes, when the file is of a merged run ("merged": [pid...]). */
static int load_merged(struct ld *l, const struct jval *m)
{
	const struct jval *v = jv_get(m, "merged");
	long long pid;
	size_t i, n;
	int *pids;
	int err = 0;

	if (!v)
		return 0;
	if (ld_array(l, v, "model.merged", 0, 1u << 20, &n))
		return -EINVAL;
	pids = malloc((n ? n : 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		if (ld_int(l, jv_at(v, i), "model.merged[]", 1, INT_MAX, &pid))
			err = -EINVAL;
		else
			pids[i] = (int)pid;
	}
	if (!err)
		err = profile__set_merged(l->p, pids, n);
	free(pids);
	return err;
}

/* What --pid, --match and --thread left out of the run, when they did (optional). */
static int load_selection(struct ld *l, const struct jval *m)
{
	const struct jval *v = jv_get(m, "selection");
	struct profile *p = l->p;
	const char *what;

	if (!v)
		return 0;
	if (ld_str(l, ld_get(l, v, "model.selection", "options"), "model.selection.options",
		   PROFILE_SELECTION_MAX, &what) ||
	    ld_u64(l, ld_get(l, v, "model.selection", "processes_out"),
		   "model.selection.processes_out", UINT64_MAX, &p->sel_procs_out) ||
	    ld_u64(l, ld_get(l, v, "model.selection", "threads_out"), "model.selection.threads_out",
		   UINT64_MAX, &p->sel_threads_out) ||
	    ld_u64(l, ld_get(l, v, "model.selection", "samples_out"), "model.selection.samples_out",
		   UINT64_MAX, &p->sel_samples_out) ||
	    ld_bool(l, ld_get(l, v, "model.selection", "threads_cut"),
		    "model.selection.threads_cut", &p->sel_threads_cut))
		return -EINVAL;
	p->selection = strdup(what);
	return p->selection ? 0 : -ENOMEM;
}

/* The modes, counters and sizes of the whole run. */
static int load_header(struct ld *l, const struct jval *m)
{
	struct profile *p = l->p;
	struct profile_counts *c[] = { &p->counts, &p->mem_counts };
	const char *keys[] = { "counts", "mem_counts" };
	const struct jval *mem;
	uint64_t x[13];
	size_t i;

	if (ld_u64(l, ld_get(l, m, "model", "frequency_hz"), "model.frequency_hz", 1000000, &x[0]))
		return -EINVAL;
	p->frequency_hz = (unsigned)x[0];
	if (ld_double(l, ld_get(l, m, "model", "duration_s"), "model.duration_s", 0, 1e10,
		      &p->duration_s) ||
	    ld_double(l, ld_get(l, m, "model", "first_sample_ms"), "model.first_sample_ms", -1,
		      1e13, &p->first_sample_ms))
		return -EINVAL;
	if (ld_u64(l, ld_get(l, m, "model", "start_unix_ns"), "model.start_unix_ns", LLONG_MAX,
		   &x[0]))
		return -EINVAL;
	p->start_unix_ns = (long long)x[0];
	for (i = 0; i < 2; i++) {
		if (ld_u64s(l, ld_get(l, m, "model", keys[i]), keys[i], x, 6))
			return -EINVAL;
		*c[i] = (struct profile_counts){ x[0], x[1], x[2], x[3], x[4], x[5], 0, 0, 0, 0 };
	}
	/* absent from a profile saved before they were kept: the causes unknown */
	if (jv_get(m, "dropped_causes")) {
		if (ld_u64s(l, jv_get(m, "dropped_causes"), "model.dropped_causes", x, 4))
			return -EINVAL;
		p->counts.dropped_ring = x[0];
		p->counts.dropped_unknown = x[1];
		p->counts.dropped_malformed = x[2];
		p->counts.dropped_late = x[3];
	}
	if (ld_u64s(l, ld_get(l, m, "model", "cache"), "model.cache", x, 5))
		return -EINVAL;
	p->cache = (struct profile_cache_counts){ x[0], x[1], x[2], x[3], x[4] };
	if (ld_u64s(l, ld_get(l, m, "model", "usdt"), "model.usdt", x, 13))
		return -EINVAL;
	p->usdt = (struct profile_usdt_counts){ x[0], x[1], x[2], x[3],	 x[4],	x[5], x[6],
						x[7], x[8], x[9], x[10], x[11], x[12] };
	if (ld_bool(l, ld_get(l, m, "model", "calls"), "model.calls", &p->calls_mode) ||
	    ld_bool(l, ld_get(l, m, "model", "gc"), "model.gc", &p->gc_mode) ||
	    ld_bool(l, ld_get(l, m, "model", "imports"), "model.imports", &p->imports_mode))
		return -EINVAL;
	if (ld_wall_header(l, m))
		return -EINVAL;
	if (ld_tick_header(l, m))
		return -EINVAL;
	if (load_signatures(l, m))
		return -EINVAL;
	mem = jv_get(m, "mem");
	if (!mem || jv_is_null(mem))
		return 0;
	p->mem = true;
	if (ld_bool(l, ld_get(l, mem, "model.mem", "alloc"), "model.mem.alloc", &p->mem_alloc) ||
	    ld_u64(l, ld_get(l, mem, "model.mem", "alloc_period"), "model.mem.alloc_period",
		   1ULL << 40, &p->alloc_period) ||
	    ld_u64(l, ld_get(l, mem, "model.mem", "mem_period"), "model.mem.mem_period", UINT_MAX,
		   &x[0]) ||
	    ld_u64(l, ld_get(l, mem, "model.mem", "page_size"), "model.mem.page_size", 1u << 30,
		   &x[1]) ||
	    ld_u64(l, ld_get(l, mem, "model.mem", "ranges_lost"), "model.mem.ranges_lost",
		   UINT64_MAX, &p->mem_ranges_lost))
		return -EINVAL;
	p->mem_period = (unsigned)x[0];
	p->page_size = (unsigned)x[1];
	return 0;
}

/* A function's fifth entry: "native" or "kernel" (machine code). */
static int ld_func_kind(struct ld *l, const struct jval *v, const char *where,
			enum profile_func_kind *kind)
{
	const char *s;

	if (ld_str(l, v, where, 16, &s))
		return -EINVAL;
	if (!strcmp(s, "native"))
		*kind = PROFILE_FUNC_NATIVE;
	else if (!strcmp(s, "kernel"))
		*kind = PROFILE_FUNC_KERNEL;
	else
		return ld_fail(l, where, "\"%s\" is no kind of function (native, kernel)", s);
	return 0;
}

/* Functions and frames, interned in the file's order: each must be new. */
static int load_tables(struct ld *l, const struct jval *m)
{
	const struct jval *fs = ld_get(l, m, "model", "functions"), *frs, *e;
	struct profile *p = l->p;
	const char *q, *file;
	size_t i, n = 0, k, nfr = 0;
	long long line, func;
	enum profile_func_kind kind = PROFILE_FUNC_PYTHON;
	bool unres = false;
	char w[LD_WHERE];

	if (ld_array(l, fs, "model.functions", 0, UINT32_MAX - 1, &n))
		return -EINVAL;
	frs = ld_get(l, m, "model", "frames");
	if (ld_array(l, frs, "model.frames", 0, UINT32_MAX - 1, &nfr))
		return -EINVAL;
	/* the tables' sizes are known: taken at once, without growth's slack */
	if (profile__reserve(p, n, nfr))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ld_at(w, sizeof(w), "model.functions[%zu]", i);
		e = jv_at(fs, i);
		if (ld_array(l, e, w, 0, 5, &k) ||
		    (k < 4 && ld_fail(l, w, "%zu entries instead of 4 or 5", k)) ||
		    ld_str(l, jv_at(e, 0), w, REPORT_LOAD_MAX_STR, &q) ||
		    ld_str(l, jv_at(e, 1), w, REPORT_LOAD_MAX_STR, &file) ||
		    ld_int(l, jv_at(e, 2), w, -1, INT_MAX, &line) ||
		    ld_bool(l, jv_at(e, 3), w, &unres) ||
		    (k == 5 && ld_func_kind(l, jv_at(e, 4), w, &kind)))
			return -EINVAL;
		func = profile__func_kind(p, q, file, (int)line, unres, k == 5 ? kind : 0);
		if (func == UINT32_MAX)
			return -ENOMEM;
		if ((size_t)func != i)
			return ld_fail(l, w, "the same function as model.functions[%lld]", func);
	}
	for (i = 0; i < nfr; i++) {
		uint32_t id;

		ld_at(w, sizeof(w), "model.frames[%zu]", i);
		e = jv_at(frs, i);
		if (ld_array(l, e, w, 2, 2, &k) ||
		    ld_int(l, jv_at(e, 0), w, 0, (long long)p->nfuncs - 1, &func) ||
		    ld_int(l, jv_at(e, 1), w, -1, INT_MAX, &line))
			return -EINVAL;
		id = profile__frame(p, (uint32_t)func, (int)line);
		if (id == UINT32_MAX)
			return -ENOMEM;
		if (id != i)
			return ld_fail(l, w, "the same frame as model.frames[%u]", id);
	}
	return 0;
}

/* Threads, each tid once; tids maps a tid to 1 + its index. */
/*
 * A thread's name as the run wrote it: at most 15 bytes then, but a byte that
 * was not UTF-8 (a character the kernel cut at 15 bytes, a target's own
 * bytes) was written as U+FFFD, 3 bytes. Such a name is kept cut at its last
 * whole character within the 15, not refused: the run's own file is read.
 */
#define LD_THREAD_NAME_MAX (3 * (sizeof(((struct profile_thread *)0)->name) - 1))

static void thread_name(struct profile_thread *th, const char *name)
{
	size_t n = strlen(name);

	if (n >= sizeof(th->name)) {
		n = sizeof(th->name) - 1;
		while (n && ((unsigned char)name[n] & 0xC0) == 0x80)
			n--; /* name[n] continues a character: cut before that character */
	}
	memcpy(th->name, name, n);
	th->name[n] = '\0';
}

static int load_threads(struct ld *l, const struct jval *v, const char *where,
			struct profile_target *pp, struct hashmap *tids)
{
	size_t i, n = 0, k;
	uint64_t tid, samples;
	const char *name, *pyname = NULL;
	char w[LD_WHERE];

	if (ld_array(l, v, where, 0, 1u << 24, &n))
		return -EINVAL;
	if (profile_target__reserve(pp, n, 0) || hashmap__reserve(tids, n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(v, i);
		struct profile_thread *th;

		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		/*
		 * [tid, comm, samples] and, when known, its Python name: a byte the
		 * writer made U+FFFD is three, and the name is cut to what it held
		 */
		if (ld_array(l, e, w, 0, 4, &k) ||
		    (k < 3 && ld_fail(l, w, "%zu entries, fewer than 3", k)) ||
		    ld_u64(l, jv_at(e, 0), w, UINT32_MAX, &tid) ||
		    ld_str(l, jv_at(e, 1), w, LD_THREAD_NAME_MAX, &name) ||
		    ld_u64(l, jv_at(e, 2), w, UINT64_MAX, &samples) ||
		    (k == 4 && ld_str(l, jv_at(e, 3), w, 3 * (sizeof(th->pyname) - 1), &pyname)))
			return -EINVAL;
		if (hashmap__find(tids, tid))
			return ld_fail(l, w, "thread %llu is listed twice",
				       (unsigned long long)tid);
		if (hashmap__set(tids, tid, i + 1) || !(th = profile_target__new_thread(pp, tid)))
			return -ENOMEM;
		thread_name(th, name);
		if (k == 4)
			snprintf(th->pyname, sizeof(th->pyname), "%s", pyname);
		th->samples = samples;
	}
	return 0;
}

/* A stack's split: [python, native, system] samples, at most count in all. */
static int ld_where(struct ld *l, const struct jval *v, const char *where, uint64_t count,
		    uint64_t split[PROFILE_WHERE_N])
{
	if (ld_u64s(l, v, where, split, PROFILE_WHERE_N))
		return -EINVAL;
	if (split[0] > count || split[1] > count - split[0] ||
	    split[2] > count - split[0] - split[1])
		return ld_fail(l, where,
			       "the split %llu, %llu, %llu exceeds the stack's %llu samples",
			       (unsigned long long)split[0], (unsigned long long)split[1],
			       (unsigned long long)split[2], (unsigned long long)count);
	return 0;
}

/* Stacks: [tid, count, [frame...](, [python, native, system])], each tid one of the threads. */
static int load_stacks(struct ld *l, const struct jval *v, const char *where,
		       struct profile_target *pp, const struct hashmap *tids)
{
	uint32_t *fr = malloc(REPORT_LOAD_MAX_DEPTH * sizeof(*fr)), nfr;
	size_t i, n = 0, k;
	uint64_t tid, count, split[PROFILE_WHERE_N];
	char w[LD_WHERE];
	int err = -EINVAL;

	if (!fr)
		return -ENOMEM;
	if (ld_array(l, v, where, 0, SIZE_MAX, &n))
		goto out;
	err = profile_target__reserve(pp, 0, n);
	if (err)
		goto out;
	err = -EINVAL;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(v, i);

		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		memset(split, 0, sizeof(split));
		if (ld_array(l, e, w, 0, 4, &k) ||
		    (k < 3 && ld_fail(l, w, "%zu entries instead of 3 or 4", k)) ||
		    ld_u64(l, jv_at(e, 0), w, UINT32_MAX, &tid) ||
		    ld_u64(l, jv_at(e, 1), w, UINT64_MAX, &count) ||
		    ld_frames(l, e, 2, w, 1, fr, &nfr) ||
		    (k == 4 && ld_where(l, jv_at(e, 3), w, count, split)))
			goto out;
		if (!hashmap__find(tids, tid)) {
			ld_fail(l, w, "thread %llu is not in the process's threads",
				(unsigned long long)tid);
			goto out;
		}
		err = profile_target__add_stack_where(pp, (uint32_t)tid, fr, nfr, count, split);
		if (err)
			goto out;
		err = -EINVAL;
	}
	err = 0;
out:
	free(fr);
	return err;
}

static int cmp_name(const void *a, const void *b, void *files)
{
	const struct source_file *f = files;

	return strcmp(f[*(const size_t *)a].name, f[*(const size_t *)b].name);
}

/* One file's lines: [[line, text or null]...], ascending, into f (lines at *used of s->lines). */
static int load_source_lines(struct ld *l, const struct jval *v, const char *where,
			     struct proc_sources *s, size_t *used, struct source_file *f)
{
	size_t i, n = 0, k;
	long long line;
	const char *text;
	char w[LD_WHERE];

	if (ld_array(l, v, where, 0, INT_MAX, &n))
		return -EINVAL;
	f->lines = s->lines + *used;
	f->texts = calloc(n + 1, sizeof(*f->texts));
	if (!f->texts)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(v, i), *t;

		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		if (ld_array(l, e, w, 2, 2, &k) || ld_int(l, jv_at(e, 0), w, 1, INT_MAX, &line))
			return -EINVAL;
		if (i && line <= s->lines[*used - 1])
			return ld_fail(l, w, "line %lld is not after line %d", line,
				       s->lines[*used - 1]);
		t = jv_at(e, 1);
		if (!jv_is_null(t)) {
			if (ld_str(l, t, w, SOURCE_TEXT_MAX, &text))
				return -EINVAL;
			if (!(f->texts[i] = strdup(text)))
				return -ENOMEM;
		}
		s->lines[(*used)++] = (int)line;
		f->nlines++;
	}
	return 0;
}

/* count lines in every file, so that s->lines is one array */
static size_t count_lines(const struct jval *files)
{
	size_t i, n = 0;

	for (i = 0; i < jv_size(files); i++) {
		const struct jval *lines = jv_at(jv_at(files, i), 3);

		n += jv_is_array(lines) ? jv_size(lines) : 0;
	}
	return n;
}

/* The source lines read in the run: {"error": E, "files": [[func, err, mtime, lines]...]}. */
static int load_sources(struct ld *l, const struct jval *v, const char *where,
			struct profile_target *pp)
{
	struct proc_sources *s = pp->sources;
	const struct jval *files;
	size_t i, n = 0, k, used = 0;
	long long x, func;
	char w[LD_WHERE];
	int err;

	if (jv_is_null(v)) { /* none in the run: nothing was to be read */
		proc_sources__free(pp->sources);
		pp->sources = NULL;
		return 0;
	}
	ld_at(w, sizeof(w), "%s.error", where);
	if (ld_int(l, ld_get(l, v, where, "error"), w, -SOURCE_EMIXED, 0, &x))
		return -EINVAL;
	s->loaded = true;
	s->load_err = (int)x;
	ld_at(w, sizeof(w), "%s.files", where);
	files = ld_get(l, v, where, "files");
	if (ld_array(l, files, w, 0, l->p->nfuncs, &n))
		return -EINVAL;
	s->files = calloc(n + 1, sizeof(*s->files));
	s->byname = calloc(n + 1, sizeof(*s->byname));
	s->lines = calloc(count_lines(files) + 1, sizeof(*s->lines));
	if (!s->files || !s->byname || !s->lines)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(files, i);
		struct source_file *f = &s->files[i];

		ld_at(w, sizeof(w), "%s.files[%zu]", where, i);
		if (ld_array(l, e, w, 4, 4, &k) ||
		    ld_int(l, jv_at(e, 0), w, 0, (long long)l->p->nfuncs - 1, &func) ||
		    ld_int(l, jv_at(e, 1), w, -SOURCE_EMIXED, 0, &x))
			return -EINVAL;
		f->name = l->p->funcs[func].file;
		f->err = (int)x;
		s->nfiles++;
		if (ld_int(l, jv_at(e, 2), w, LLONG_MIN, LLONG_MAX, &x))
			return -EINVAL;
		f->mtime = x;
		err = load_source_lines(l, jv_at(e, 3), w, s, &used, f);
		if (err)
			return err;
		s->byname[i] = i;
	}
	if (n)
		qsort_r(s->byname, n, sizeof(*s->byname), cmp_name, s->files);
	return 0;
}

/* Its parent and how it came ("ppid", "origin"): a file written before them has neither. */
static int load_origin(struct ld *l, const struct jval *jt, const char *where,
		       struct profile_target *pp)
{
	const struct jval *v;
	const char *origin;
	long long ppid;
	char w[LD_WHERE];
	int o;

	if ((v = jv_get(jt, "ppid"))) {
		ld_at(w, sizeof(w), "%s.ppid", where);
		if (ld_int(l, v, w, 0, INT_MAX, &ppid))
			return -EINVAL;
		pp->ppid = (int)ppid;
	}
	if (!(v = jv_get(jt, "origin")))
		return 0;
	ld_at(w, sizeof(w), "%s.origin", where);
	if (ld_str(l, v, w, 16, &origin))
		return -EINVAL;
	o = profile_origin_of(origin);
	if (o < 0)
		return ld_fail(l, w, "\"%s\" is no origin (found, launched, forked, execed)",
			       origin);
	pp->origin = (enum profile_origin)o;
	return 0;
}

static int load_target_head(struct ld *l, const struct jval *jt, const char *where,
			    struct profile_target **out)
{
	const char *keys[] = { "exe", "cmdline", "comm", "python" }, *str[4];
	long long pid, nspid;
	uint64_t c[4];
	struct profile_target *pp;
	char w[LD_WHERE];
	size_t i;

	for (i = 0; i < 4; i++) {
		ld_at(w, sizeof(w), "%s.%s", where, keys[i]);
		if (ld_str(l, ld_get(l, jt, where, keys[i]), w, REPORT_LOAD_MAX_STR, &str[i]))
			return -EINVAL;
	}
	ld_at(w, sizeof(w), "%s.pid", where);
	if (ld_int(l, ld_get(l, jt, where, "pid"), w, 0, INT_MAX, &pid))
		return -EINVAL;
	ld_at(w, sizeof(w), "%s.nspid", where);
	if (ld_int(l, ld_get(l, jt, where, "nspid"), w, 0, INT_MAX, &nspid))
		return -EINVAL;
	ld_at(w, sizeof(w), "%s.counts", where);
	if (ld_u64s(l, ld_get(l, jt, where, "counts"), w, c, 4))
		return -EINVAL;
	pp = profile__add_target(l->p, (int)pid, str[0], str[1], str[2], str[3]);
	if (!pp)
		return -ENOMEM;
	pp->nspid = (int)nspid;
	pp->samples = c[0];
	pp->truncated = c[1];
	pp->partial = c[2];
	pp->unresolved = c[3];
	ld_at(w, sizeof(w), "%s.start_time", where);
	if (ld_double(l, ld_get(l, jt, where, "start_time"), w, 0, 1e12, &pp->start_time))
		return -EINVAL;
	ld_at(w, sizeof(w), "%s.exited", where);
	if (ld_bool(l, ld_get(l, jt, where, "exited"), w, &pp->exited))
		return -EINVAL;
	*out = pp;
	return load_origin(l, jt, where, pp);
}

static int load_target(struct ld *l, const struct jval *jt, const char *where)
{
	struct profile_target *pp;
	struct hashmap tids;
	char w[LD_WHERE];
	int err;

	hashmap__init(&tids);
	err = load_target_head(l, jt, where, &pp);
	ld_at(w, sizeof(w), "%s.threads", where);
	if (!err)
		err = load_threads(l, ld_get(l, jt, where, "threads"), w, pp, &tids);
	ld_at(w, sizeof(w), "%s.stacks", where);
	if (!err)
		err = load_stacks(l, ld_get(l, jt, where, "stacks"), w, pp, &tids);
	ld_at(w, sizeof(w), "%s.sources", where);
	if (!err)
		err = load_sources(l, ld_get(l, jt, where, "sources"), w, pp);
	if (!err && (l->p->calls_mode || l->p->gc_mode || l->p->imports_mode))
		err = ld_usdt(l, jt, where, pp);
	if (!err && l->p->mem)
		err = ld_mem(l, jt, where, pp);
	if (!err && (l->p->wall || l->p->gil))
		err = ld_wall(l, jt, where, pp, &tids);
	if (!err && (l->p->exc_known || l->p->opcodes))
		err = ld_tick(l, jt, where, pp);
	hashmap__free(&tids);
	return err;
}

/* The mode names the run writes; the profile keeps a pointer to one of them. */
static const char *const modes[] = { "cpu",	 "cpu+mem",   "wall",
				     "wall+mem", "exception", "exception+mem" };

static int load_model(struct ld *l, const struct jval *root)
{
	const struct jval *m = ld_get(l, root, "", "model"), *procs;
	const char *mode;
	char w[LD_WHERE];
	size_t i, n = 0;
	int err;

	if (!m)
		return ld_fail(l, NULL, "not a pybpfprof profile (no \"model\")");
	if (ld_str(l, ld_get(l, m, "model", "mode"), "model.mode", 64, &mode))
		return -EINVAL;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]) && strcmp(modes[i], mode); i++)
		;
	if (i == sizeof(modes) / sizeof(modes[0]))
		return ld_fail(l, "model.mode", "unknown mode \"%.40s\"", mode);
	profile__init(l->p, modes[i], 0);
	err = load_header(l, m);
	if (!err)
		err = load_kernel(l, m);
	if (!err)
		err = load_merged(l, m);
	if (!err)
		err = load_selection(l, m);
	if (!err)
		err = load_tables(l, m);
	procs = err ? NULL : ld_get(l, m, "model", "processes");
	if (!err && ld_array(l, procs, "model.processes", 0, 1u << 20, &n))
		err = -EINVAL;
	for (i = 0; !err && i < n; i++) {
		ld_at(w, sizeof(w), "model.processes[%zu]", i);
		err = load_target(l, jv_at(procs, i), w);
	}
	if (!err)
		err = ld_timeline(l, m);
	return err;
}

/* The schema first: a newer file gets "upgrade", not a list of what is odd in it. */
static int check_schema(struct ld *l, const struct jval *root)
{
	const struct jval *v = jv_get(root, "schema");

	if (!v)
		return ld_fail(l, NULL, "not a pybpfprof profile (no \"schema\")");
	if (!jv_is_integer(v) || jv_int(v) < 1)
		return ld_fail(l, NULL, "not a pybpfprof profile (\"schema\" is not a version)");
	if (jv_int(v) > REPORT_SCHEMA)
		return ld_fail(l, NULL,
			       "schema %lld is newer than this pybpfprof reads (%d): upgrade "
			       "pybpfprof",
			       jv_int(v), REPORT_SCHEMA);
	return 0;
}

int report_load_json_buf(const char *buf, size_t len, const char *name, struct profile *p,
			 char *why, size_t whylen)
{
	struct ld l = { name, p, why, whylen };
	struct jdoc_error jerr;
	const struct jval *root;
	struct jdoc doc;
	int err;

	memset(p, 0, sizeof(*p));
	if (len > REPORT_LOAD_MAX_BYTES)
		return ld_fail(&l, NULL,
			       "too large for a pybpfprof profile (%zu bytes, at most %u MiB)", len,
			       REPORT_LOAD_MAX_BYTES >> 20);
	err = jdoc_parse(&doc, buf, len, REPORT_LOAD_MAX_DOC, &jerr);
	if (err == -EINVAL)
		return ld_fail(&l, NULL, "not JSON: %s (line %zu, column %zu)", jerr.text,
			       jerr.line, jerr.column);
	if (err == -EFBIG)
		return ld_fail(&l, NULL, "too large for a pybpfprof profile: %s", jerr.text);
	if (err)
		return ld_fail(&l, NULL, "out of memory while reading the profile");
	root = jdoc_root(&doc);
	if (!jv_is_object(root))
		err = ld_fail(&l, NULL, "not a pybpfprof profile (not a JSON object)");
	else
		err = check_schema(&l, root);
	if (!err)
		err = load_model(&l, root);
	jdoc_free(&doc);
	if (err == -ENOMEM)
		snprintf(why, whylen, "%s: out of memory while reading the profile", name);
	if (err)
		profile__free(p);
	return err;
}

int report_load_json(const char *path, struct profile *p, char *why, size_t whylen)
{
	struct stat st;
	char *buf = NULL;
	ssize_t got = 0, r;
	int fd, err;

	memset(p, 0, sizeof(*p));
	/* non-blocking: a FIFO named as the profile must not hang the command */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "%s: cannot open it: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(why, whylen, "%s: not a regular file: give a JSON profile written by -o",
			 path);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > REPORT_LOAD_MAX_BYTES) {
		close(fd);
		snprintf(why, whylen,
			 "%s: too large for a pybpfprof profile (%lld bytes, at most %u MiB)", path,
			 (long long)st.st_size, REPORT_LOAD_MAX_BYTES >> 20);
		return -EFBIG;
	}
	/* one byte more than its size: a file that grows while read is refused below */
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(why, whylen, "%s: out of memory while reading the profile", path);
		return -ENOMEM;
	}
	while (got <= st.st_size && (r = read(fd, buf + got, st.st_size + 1 - got)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			snprintf(why, whylen, "%s: cannot read it: %s", path, strerror(-err));
			free(buf);
			close(fd);
			return err;
		}
		got += r;
	}
	close(fd);
	if (got > st.st_size) {
		free(buf);
		snprintf(why, whylen, "%s: changed while it was read: read it again once written",
			 path);
		return -EAGAIN;
	}
	err = report_load_json_buf(buf, got, path, p, why, whylen);
	free(buf);
	return err;
}
