// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JSON report's "model": everything the writers read, in arrays rather
 * than objects so that a long run's file stays compact. Functions and frames
 * are written once and referred to by index; a stack is its frame indices,
 * innermost first. Doubles are written with as many digits as read back
 * exactly, so that a loaded profile prints as the one it was saved from.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/hashmap.h"
#include "report/report_common.h"
#include "report/report_source.h"
#include "proc/source.h"
#include "report_json_model.h"

/* The shortest of 15, 16 or 17 digits that reads back as the same double. */
static void num(FILE *f, double d)
{
	char buf[40];
	int prec;

	if (!isfinite(d))
		d = 0;
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fprintf(f, "%.*g", prec, d);
}

static void u64s(FILE *f, const uint64_t *v, size_t n)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
	fputc(']', f);
}

static void frames(FILE *f, const uint32_t *fr, uint32_t n)
{
	uint32_t i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", fr[i]);
	fputc(']', f);
}

static void counts(FILE *f, const struct profile_counts *c)
{
	uint64_t v[] = { c->events,	c->dropped,	c->no_python,
			 c->unreadable, c->read_errors, c->truncated };

	u64s(f, v, 6);
}

/*
 * What the ticks said beyond the stacks: that each CPU sample's exception
 * state was read (and whether only those handling one were kept), and the
 * --opcodes instruction names, each [name, index of its unspecialised form].
 */
static void write_tick_header(FILE *f, const struct profile *p)
{
	size_t i;

	if (p->exc_known)
		fprintf(f, ",\n  \"exceptions\": {\"only\": %s}", p->exc_only ? "true" : "false");
	if (!p->opcodes)
		return;
	fputs(",\n  \"opnames\": [", f);
	for (i = 0; i < p->nopnames; i++) {
		fputs(i ? (i % 4 ? ", [" : ",\n   [") : "[", f);
		json_string(f, p->opnames[i].name);
		fprintf(f, ", %u]", p->opnames[i].base);
	}
	fputc(']', f);
}

/*
 * A process's exception figures: the samples left out (--mode exception),
 * and [stack index, handling, unknown] for the stacks with any; its
 * --opcodes counts, [stack index, name index, samples].
 */
static void write_tick(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	size_t i, j, n = 0;

	if (p->exc_known) {
		fprintf(f,
			",\n    \"exceptions\": {\"left_out\": %llu, \"unknown_left_out\": %llu, "
			"\"stacks\": [",
			(unsigned long long)pp->exc_left_out,
			(unsigned long long)pp->exc_unknown_left_out);
		for (i = 0; i < pp->nstacks; i++)
			if (pp->stacks[i].exc || pp->stacks[i].exc_unknown)
				fprintf(f, "%s[%zu, %llu, %llu]",
					n++ ? (n % 8 ? ", " : ",\n     ") : "", i,
					(unsigned long long)pp->stacks[i].exc,
					(unsigned long long)pp->stacks[i].exc_unknown);
		fputs("]}", f);
	}
	if (!p->opcodes)
		return;
	fputs(",\n    \"ops\": [", f);
	for (i = 0, n = 0; i < pp->nstacks; i++)
		for (j = 0; j < pp->stacks[i].nops; j++)
			fprintf(f, "%s[%zu, %u, %llu]", n++ ? (n % 8 ? ", " : ",\n     ") : "", i,
				pp->stacks[i].ops[j].op,
				(unsigned long long)pp->stacks[i].ops[j].samples);
	fputc(']', f);
}

static void write_header(FILE *f, const struct profile *p)
{
	const struct profile_usdt_counts *u = &p->usdt;
	const struct profile_cache_counts *c = &p->cache;
	uint64_t uv[] = { u->calls_unmatched, u->calls_too_deep,    u->calls_no_code,
			  u->calls_mismatch,  u->calls_map_full,    u->calls_unresolved,
			  u->gc_unmatched,    u->imports_unmatched, u->events_dropped,
			  u->records_dropped, u->probe_misses,	    u->procs_late,
			  u->procs_untraced };
	uint64_t cv[] = { c->budget_bytes, c->peak_bytes, c->reads, c->evicted, c->refused };

	fputs("\n \"model\": {\"mode\": ", f);
	json_string(f, p->mode);
	fprintf(f, ", \"frequency_hz\": %u, \"duration_s\": ", p->frequency_hz);
	num(f, p->duration_s);
	fputs(", \"first_sample_ms\": ", f);
	num(f, p->first_sample_ms);
	fprintf(f, ", \"start_unix_ns\": %lld", p->start_unix_ns > 0 ? p->start_unix_ns : 0);
	fputs(",\n  \"counts\": ", f);
	counts(f, &p->counts);
	fputs(", \"mem_counts\": ", f);
	counts(f, &p->mem_counts);
	fputs(", \"dropped_causes\": ", f);
	u64s(f,
	     (const uint64_t[]){ p->counts.dropped_ring, p->counts.dropped_unknown,
				 p->counts.dropped_malformed, p->counts.dropped_late },
	     4);
	fputs(", \"cache\": ", f);
	u64s(f, cv, 5);
	fputs(",\n  \"usdt\": ", f);
	u64s(f, uv, 13);
	fprintf(f, ", \"calls\": %s, \"gc\": %s, \"imports\": %s", p->calls_mode ? "true" : "false",
		p->gc_mode ? "true" : "false", p->imports_mode ? "true" : "false");
	if (p->signatures)
		fprintf(f, ", \"signatures\": [%llu, %llu, %llu]",
			(unsigned long long)p->sig_samples, (unsigned long long)p->sig_missing,
			(unsigned long long)p->sig_capped);
	if (p->kernel_mode)
		fprintf(f, ",\n  \"kernel\": {\"stacks\": %llu, \"missing\": %llu}",
			(unsigned long long)p->kstacks, (unsigned long long)p->kstack_missing);
	if (p->native_mode)
		fprintf(f,
			",\n  \"native\": {\"stacks\": %llu, \"partial\": %llu, \"unplaced\": %llu, "
			"\"refused\": %llu, \"missing\": %llu}",
			(unsigned long long)p->ustacks, (unsigned long long)p->ustack_partial,
			(unsigned long long)p->ustack_unplaced,
			(unsigned long long)p->ustack_refused,
			(unsigned long long)p->ustack_missing);
	if (p->mem)
		fprintf(f,
			",\n  \"mem\": {\"alloc\": %s, \"alloc_period\": %llu, \"mem_period\": %u, "
			"\"page_size\": %u, \"ranges_lost\": %llu}",
			p->mem_alloc ? "true" : "false", (unsigned long long)p->alloc_period,
			p->mem_period, p->page_size, (unsigned long long)p->mem_ranges_lost);
	if (p->wall || p->gil)
		fprintf(f,
			",\n  \"wall\": {\"wall\": %s, \"gil\": %s, \"idle\": %s, "
			"\"unmatched\": %llu, \"idle_hidden\": %llu, \"dropped\": %llu, "
			"\"inferred\": %llu, \"no_python\": %llu, \"unreadable\": %llu, "
			"\"unseen\": %llu, \"unseen_ns\": %llu}",
			p->wall ? "true" : "false", p->gil ? "true" : "false",
			p->idle ? "true" : "false", (unsigned long long)p->offcpu_unmatched,
			(unsigned long long)p->offcpu_idle_hidden,
			(unsigned long long)p->offcpu_dropped,
			(unsigned long long)p->offcpu_inferred,
			(unsigned long long)p->offcpu_no_python,
			(unsigned long long)p->offcpu_unreadable,
			(unsigned long long)p->offcpu_unseen,
			(unsigned long long)p->offcpu_unseen_ns);
	if (p->nmerged)
		report_json_pids(f, ",\n  \"merged\": ", p);
	if (p->selection)
		report_json_selection(f, ",\n  \"selection\": ", p);
	write_tick_header(f, p);
}

static void write_tables(FILE *f, const struct profile *p)
{
	size_t i;

	fputs(",\n  \"functions\": [", f);
	for (i = 0; i < p->nfuncs; i++) {
		fputs(i ? ",\n   [" : "\n   [", f);
		json_string(f, p->funcs[i].qualname);
		fputs(", ", f);
		json_string(f, p->funcs[i].file);
		fprintf(f, ", %d, %s", p->funcs[i].firstline,
			p->funcs[i].unresolved ? "true" : "false");
		/* machine code (--native, --kernel): a fifth entry says which */
		if (p->funcs[i].kind == PROFILE_FUNC_NATIVE)
			fputs(", \"native\"", f);
		else if (p->funcs[i].kind == PROFILE_FUNC_KERNEL)
			fputs(", \"kernel\"", f);
		fputc(']', f);
	}
	fputs("],\n  \"frames\": [", f);
	for (i = 0; i < p->nframes; i++)
		fprintf(f, "%s[%u,%d]", i ? (i % 8 ? ", " : ",\n   ") : "", p->frames[i].func,
			p->frames[i].line);
	fputc(']', f);
}

/*
 * Each file is written as the index of a function of that file, so its name
 * is written once. The sources name their files with the functions' own
 * strings (report_source.c): the pointer finds the function.
 */
static size_t func_of_file(const struct profile *p, struct hashmap *byptr, const char *name)
{
	uint64_t *slot;
	size_t k;

	if (!byptr->len)
		for (k = p->nfuncs; k-- > 0;)
			hashmap__set(byptr, (uintptr_t)p->funcs[k].file, k);
	slot = hashmap__find(byptr, (uintptr_t)name);
	if (slot)
		return *slot;
	for (k = 0; k < p->nfuncs && strcmp(p->funcs[k].file, name); k++)
		;
	return k;
}

static void write_sources(FILE *f, const struct profile *p, const struct profile_target *pp,
			  struct hashmap *byptr)
{
	const struct proc_sources *s = report_sources(p, pp);
	size_t i, j;

	if (!s) {
		fputs(",\n    \"sources\": null", f);
		return;
	}
	fprintf(f, ",\n    \"sources\": {\"error\": %d, \"files\": [", s->load_err);
	for (i = 0; i < s->nfiles; i++) {
		const struct source_file *sf = &s->files[i];

		fprintf(f, "%s\n     [%zu, %d, %lld, [", i ? "," : "",
			func_of_file(p, byptr, sf->name), sf->err, (long long)sf->mtime);
		for (j = 0; j < sf->nlines; j++) {
			fprintf(f, "%s[%d, ", j ? ", " : "", sf->lines[j]);
			if (sf->texts && sf->texts[j])
				json_string(f, sf->texts[j]);
			else
				fputs("null", f);
			fputc(']', f);
		}
		fputs("]]", f);
	}
	fputs("]}", f);
}

static void write_usdt(FILE *f, const struct profile_target *pp)
{
	size_t i, g;

	fprintf(f, ",\n    \"usdt_trace\": %d, \"usdt_note\": ", (int)pp->usdt_trace);
	if (pp->usdt_note)
		json_string(f, pp->usdt_note);
	else
		fputs("null", f);
	fputs(",\n    \"calls\": [", f);
	for (i = 0; i < pp->ncalls; i++) {
		const struct profile_call_edge *e = &pp->calls[i];

		fprintf(f, "%s[%u, %lld, %llu, %llu, %llu, %llu]", i ? ",\n     " : "", e->func,
			e->caller == UINT32_MAX ? -1LL : (long long)e->caller,
			(unsigned long long)e->calls, (unsigned long long)e->inclusive_ns,
			(unsigned long long)e->exclusive_ns, (unsigned long long)e->max_ns);
	}
	fputs("],\n    \"hists\": [", f);
	for (i = 0; i < pp->nhists; i++) {
		fprintf(f, "%s[%u, ", i ? ",\n     " : "", pp->hists[i].func);
		u64s(f, pp->hists[i].buckets, PROFILE_HIST_BUCKETS);
		fputc(']', f);
	}
	fputs("],\n    \"gc\": {\"all\": ", f);
	u64s(f, &pp->gc.all.collections, 4);
	fputs(", \"gen\": [", f);
	for (g = 0; g < PROFILE_GC_GENS; g++) {
		fputs(g ? ", " : "", f);
		u64s(f, &pp->gc.gen[g].collections, 4);
	}
	fputs("], \"stacks\": [", f);
	for (i = 0; i < pp->gc.nstacks; i++) {
		fputs(i ? ",\n     [" : "[", f);
		frames(f, pp->gc.stacks[i].frames, pp->gc.stacks[i].nframes);
		fputs(", ", f);
		u64s(f, &pp->gc.stacks[i].stat.collections, 4);
		fputc(']', f);
	}
	fputs("]},\n    \"imports\": [", f);
	for (i = 0; i < pp->nimports; i++) {
		const struct profile_import *im = &pp->imports[i];

		fputs(i ? ",\n     [" : "[", f);
		json_string(f, im->module);
		fprintf(f, ", %u, %d, %llu, %llu, %s, %s]", im->tid, im->parent,
			(unsigned long long)im->start_ns, (unsigned long long)im->ns,
			im->found ? "true" : "false", im->done ? "true" : "false");
	}
	fputc(']', f);
}

/*
 * --mem: a run that knows retained memory's ages: when retained was
 * measured, and per stack (and without one) the bytes mapped in the last
 * second before it, in a key of its own (older readers skip it).
 */
static void write_mem_recent(FILE *f, const struct profile_mem *m)
{
	size_t i, n = 0;

	fprintf(f,
		",\n     \"retained_recent\": {\"at_ns\": %llu, \"no_stack\": %llu, "
		"\"stacks\": [",
		(unsigned long long)m->retained_at_ns,
		(unsigned long long)m->retained_recent_no_stack);
	for (i = 0; i < m->nstacks; i++)
		if (m->stacks[i].bytes[PROFILE_MEM_RETAINED_RECENT])
			fprintf(f, "%s[%zu, %llu]", n++ ? ", " : "", i,
				(unsigned long long)m->stacks[i]
					.bytes[PROFILE_MEM_RETAINED_RECENT]);
	fputs("]}", f);
}

static void write_mem(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	const struct profile_mem *m = &pp->mem;
	const uint64_t ranges[] = { m->released_unknown,       m->released_no_stack,
				    m->retained_no_stack,      m->ranges.untracked,
				    m->ranges.untracked_bytes, m->ranges_unmatched };
	size_t i;

	fprintf(f,
		",\n    \"mem\": {\"truncated\": %llu, \"partial\": %llu, \"unresolved\": %llu, "
		"\"peak_stack\": %u, \"peak_rss\": %llu, \"peak_t_s\": ",
		(unsigned long long)m->truncated, (unsigned long long)m->partial,
		(unsigned long long)m->unresolved, m->peak_stack, (unsigned long long)m->peak_rss);
	num(f, m->peak_t_s);
	fprintf(f, ", \"events_dropped\": %llu, \"live_lost\": %llu, \"ranges\": ",
		(unsigned long long)m->events_dropped, (unsigned long long)m->live_lost);
	u64s(f, ranges, 6);
	if (p->mem_ages)
		write_mem_recent(f, m);
	fputs(",\n     \"stacks\": [", f);
	for (i = 0; i < m->nstacks; i++) {
		fputs(i ? ",\n      [" : "[", f);
		frames(f, m->stacks[i].frames, m->stacks[i].nframes);
		fputs(", ", f);
		u64s(f, m->stacks[i].bytes, PROFILE_MEM_SAVED_KINDS);
		fputs(", ", f);
		u64s(f, m->stacks[i].samples, PROFILE_MEM_SAVED_KINDS);
		fputc(']', f);
	}
	fputs("],\n     \"rss\": [", f);
	for (i = 0; i < m->nrss; i++) {
		fputs(i ? (i % 8 ? ", [" : ",\n      [") : "[", f);
		num(f, m->rss[i].t_s);
		fprintf(f, ", %llu]", (unsigned long long)m->rss[i].rss);
	}
	fputs("],\n     \"events\": [", f);
	for (i = 0; i < m->nevents; i++) {
		fputs(i ? (i % 4 ? ", [" : ",\n      [") : "[", f);
		num(f, m->events[i].t_s);
		fprintf(f, ", %u, %u, %llu]", m->events[i].frame, m->events[i].kind,
			(unsigned long long)m->events[i].bytes);
	}
	fputs("]}", f);
}

/*
 * --mode wall, --gil: per thread [tid, off-CPU ns by class..., GIL held,
 * released], and [stack index, GIL held, released] for the stacks that have
 * any; the samples whose GIL was not known in keys of their own (older
 * readers skip them), [tid, unknown] and [stack index, unknown].
 */
static void write_wall(FILE *f, const struct profile_target *pp)
{
	size_t i, n = 0;

	fputs(",\n    \"wall\": {\"threads\": [", f);
	for (i = 0; i < pp->nthreads; i++) {
		const struct profile_thread *th = &pp->threads[i];

		fprintf(f, "%s[%u, ", i ? ", " : "", th->tid);
		u64s(f, th->offcpu_ns, PROFILE_OFFCPU_NCLASSES);
		fprintf(f, ", %llu, %llu]", (unsigned long long)th->gil_held,
			(unsigned long long)th->gil_released);
	}
	fputs("], \"stack_gil\": [", f);
	for (i = 0; i < pp->nstacks; i++)
		if (pp->stacks[i].gil_held || pp->stacks[i].gil_released)
			fprintf(f, "%s[%zu, %llu, %llu]", n++ ? ", " : "", i,
				(unsigned long long)pp->stacks[i].gil_held,
				(unsigned long long)pp->stacks[i].gil_released);
	fputs("], \"gil_unknown\": {\"threads\": [", f);
	for (i = 0, n = 0; i < pp->nthreads; i++)
		if (pp->threads[i].gil_unknown)
			fprintf(f, "%s[%u, %llu]", n++ ? ", " : "", pp->threads[i].tid,
				(unsigned long long)pp->threads[i].gil_unknown);
	fputs("], \"stacks\": [", f);
	for (i = 0, n = 0; i < pp->nstacks; i++)
		if (pp->stacks[i].gil_unknown)
			fprintf(f, "%s[%zu, %llu]", n++ ? ", " : "", i,
				(unsigned long long)pp->stacks[i].gil_unknown);
	fputs("]}}", f);
}

static void write_target(FILE *f, const struct profile *p, const struct profile_target *pp,
			 struct hashmap *byptr)
{
	size_t i;

	fprintf(f, "\n   {\"pid\": %d, \"nspid\": %d, \"exe\": ", pp->pid, pp->nspid);
	json_string(f, pp->exe);
	fputs(", \"cmdline\": ", f);
	json_string(f, pp->cmdline);
	fputs(", \"comm\": ", f);
	json_string(f, pp->comm);
	fputs(", \"python\": ", f);
	json_string(f, pp->python);
	fputs(", \"start_time\": ", f);
	num(f, pp->start_time);
	fprintf(f, ", \"ppid\": %d, \"origin\": \"%s\"", pp->ppid, profile_origin_name(pp->origin));
	fprintf(f, ", \"exited\": %s,\n    \"counts\": [%llu, %llu, %llu, %llu], \"threads\": [",
		pp->exited ? "true" : "false", (unsigned long long)pp->samples,
		(unsigned long long)pp->truncated, (unsigned long long)pp->partial,
		(unsigned long long)pp->unresolved);
	for (i = 0; i < pp->nthreads; i++) {
		fprintf(f, "%s[%u, ", i ? ", " : "", pp->threads[i].tid);
		json_string(f, pp->threads[i].name);
		fprintf(f, ", %llu", (unsigned long long)pp->threads[i].samples);
		/* its Python name, when known: a fourth member (a model without it still loads) */
		if (pp->threads[i].pyname[0]) {
			fputs(", ", f);
			json_string(f, pp->threads[i].pyname);
		}
		fputc(']', f);
	}
	fputs("],\n    \"stacks\": [", f);
	for (i = 0; i < pp->nstacks; i++) {
		fprintf(f, "%s[%u, %llu, ", i ? ",\n     " : "", pp->stacks[i].tid,
			(unsigned long long)pp->stacks[i].count);
		frames(f, pp->stacks[i].frames, pp->stacks[i].nframes);
		/* the Python / native / system split, when known */
		if (pp->stacks[i].where[0] || pp->stacks[i].where[1] || pp->stacks[i].where[2]) {
			fputs(", ", f);
			u64s(f, pp->stacks[i].where, PROFILE_WHERE_N);
		}
		fputc(']', f);
	}
	fputc(']', f);
	write_sources(f, p, pp, byptr);
	if (p->calls_mode || p->gc_mode || p->imports_mode)
		write_usdt(f, pp);
	if (p->mem)
		write_mem(f, p, pp);
	if (p->wall || p->gil)
		write_wall(f, pp);
	write_tick(f, p, pp);
	fputc('}', f);
}

/*
 * The timeline (profile/timeline.h): its cap and start, what it dropped by
 * kind, its processes, module names and stacks, then each event as
 * [kind, t_ns, dur_ns, proc, tid, ref, value, arg], in the order counted.
 */
static void write_timeline(FILE *f, const struct profile_timeline *t)
{
	size_t i;

	fprintf(f, ",\n  \"timeline\": {\"cap\": %llu, \"start_mono_ns\": %llu, \"dropped\": ",
		(unsigned long long)t->cap, (unsigned long long)t->start_mono_ns);
	u64s(f, t->dropped, PROFILE_TL_NKINDS);
	fputs(",\n   \"procs\": [", f);
	for (i = 0; i < t->nprocs; i++) {
		fprintf(f, "%s[%d, ", i ? ", " : "", t->procs[i].pid);
		json_string(f, t->procs[i].name);
		fputs(", ", f);
		json_string(f, t->procs[i].cmdline);
		fprintf(f, ", %s]", t->procs[i].ended ? "true" : "false");
	}
	fputs("],\n   \"strings\": [", f);
	for (i = 0; i < t->nstrings; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, t->strings[i]);
	}
	fputs("],\n   \"stacks\": [", f);
	for (i = 0; i < t->nstacks; i++) {
		fputs(i ? (i % 8 ? ", " : ",\n    ") : "", f);
		frames(f, t->frames + t->stacks[i].off, t->stacks[i].n);
	}
	fputs("],\n   \"events\": [", f);
	for (i = 0; i < t->n; i++) {
		const struct profile_tl_event *e = &t->events[i];

		fprintf(f, "%s[%u,%lld,%llu,%u,%u,%lld,%u,%u]", i ? (i % 4 ? ", " : ",\n    ") : "",
			e->kind, (long long)e->t_ns, (unsigned long long)e->dur_ns, e->proc, e->tid,
			e->ref == PROFILE_TL_NO_STACK ? -1LL : (long long)e->ref, e->value, e->arg);
	}
	fputs("]}", f);
}

void report_json_model(FILE *f, const struct profile *p)
{
	struct hashmap byptr;
	size_t i;

	hashmap__init(&byptr);
	write_header(f, p);
	write_tables(f, p);
	fputs(",\n  \"processes\": [", f);
	for (i = 0; i < p->ntargets; i++) {
		fputs(i ? "," : "", f);
		write_target(f, p, &p->targets[i], &byptr);
	}
	fputc(']', f);
	if (p->timeline.on)
		write_timeline(f, &p->timeline);
	fputc('}', f);
	hashmap__free(&byptr);
}
