// SPDX-License-Identifier: GPL-2.0-only
/*
 * JSON report for scripts: the header counts, then per process its threads,
 * every function with self and total samples, and every line with self samples;
 * then the "model" (report_json_model.c) that `pybpfprof report` loads again.
 */
#include <errno.h>
#include <stdlib.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report/report_ci.h"
#include "report_json_model.h"
#include "report_mem.h"
#include "report_procs.h"
#include "report_signatures.h"
#include "report_threads.h"
#include "report_timeline.h"
#include "report_wall.h"
#include "report_usdt.h"
#include "report_where.h"
#include "report_tick.h"

/*
 * ", \"NAME\": [lo, hi]": the 95 % interval of k of the section's n samples,
 * in percent as the text shows shares; computed from the counts here, never
 * read back (report_load reads only the model).
 */
static void write_ci(FILE *f, const char *name, uint64_t k, uint64_t n)
{
	struct report_ci c = report_ci_wilson(k, n);

	fprintf(f, ", \"%s\": [%.4f, %.4f]", name, 100.0 * c.lo, 100.0 * c.hi);
}

static void write_functions(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	struct func_stat *st = NULL;
	struct profile_call_total *calls = NULL;
	profile_where_split *where = NULL;
	bool *listed = NULL;
	struct wall_stat *wf = NULL, *wl = NULL;
	struct exc_stat *exc = NULL;
	size_t n = 0, i;

	profile_target__func_stats(p, pp, &st, &n);
	if (p->exc_known)
		profile_target__exc_stats(p, pp, &exc, NULL, NULL);
	if (report_wall_on(p))
		report_wall_stats(p, pp, &wf, &wl);
	profile_target__where_stats(p, pp, &where, NULL, NULL);
	if (p->calls_mode && (profile_target__call_totals(p, pp, &calls) ||
			      !(listed = calloc(p->nfuncs + 1, sizeof(*listed))))) {
		free(calls);
		calls = NULL;
	}
	fputs(",\n     \"functions\": [", f);
	for (i = 0; i < n; i++) {
		const struct profile_func *fn = &p->funcs[st[i].func];

		fprintf(f, "%s\n       {\"qualname\": ", i ? "," : "");
		json_string(f, fn->qualname);
		fputs(", \"file\": ", f);
		json_string(f, fn->file);
		fprintf(f, ", \"line\": %d, \"self\": %llu, \"total\": %llu%s", fn->firstline,
			(unsigned long long)st[i].self, (unsigned long long)st[i].total,
			fn->unresolved ? ", \"unresolved\": true" : "");
		write_ci(f, "self_ci95", st[i].self, pp->samples);
		write_ci(f, "total_ci95", st[i].total, pp->samples);
		if (wf)
			report_wall_json_stat(f, p, &wf[st[i].func]);
		report_where_json(f, where ? where[st[i].func] : NULL);
		report_exc_json_func(f, exc ? &exc[st[i].func] : NULL);
		if (calls) {
			report_usdt_json_func(f, p, calls, st[i].func);
			listed[st[i].func] = true;
		}
		fputc('}', f);
	}
	if (calls)
		report_usdt_json_extra_funcs(f, p, pp, calls, listed, n == 0);
	fputs("]", f);
	free(st);
	free(calls);
	free(listed);
	free(wf);
	free(wl);
	free(where);
	free(exc);
}

static void write_lines(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	struct line_stat *st = NULL;
	struct wall_stat *wf = NULL, *wl = NULL;
	profile_where_split *where = NULL;
	struct op_stat *ops = NULL;
	size_t n = 0, i, nops = 0;

	profile_target__line_stats(p, pp, &st, &n);
	profile_target__op_stats(p, pp, &ops, &nops);
	if (report_wall_on(p))
		report_wall_stats(p, pp, &wf, &wl);
	profile_target__where_stats(p, pp, NULL, &where, NULL);
	fputs(",\n     \"lines\": [", f);
	for (i = 0; i < n; i++) {
		const struct profile_frame *fr = &p->frames[st[i].frame];
		const struct profile_func *fn = &p->funcs[fr->func];

		fprintf(f, "%s\n       {\"file\": ", i ? "," : "");
		json_string(f, fn->file);
		fprintf(f, ", \"line\": %d, \"qualname\": ", fr->line);
		json_string(f, fn->qualname);
		fprintf(f, ", \"self\": %llu, \"total\": %llu", (unsigned long long)st[i].self,
			(unsigned long long)st[i].total);
		write_ci(f, "self_ci95", st[i].self, pp->samples);
		write_ci(f, "total_ci95", st[i].total, pp->samples);
		if (wl)
			report_wall_json_stat(f, p, &wl[st[i].frame]);
		report_where_json(f, where ? where[st[i].frame] : NULL);
		report_op_json_line(f, p, ops, nops, st[i].frame);
		fputc('}', f);
	}
	fputs("]", f);
	free(st);
	free(wf);
	free(wl);
	free(where);
	free(ops);
}

static void write_process(FILE *f, const struct profile *p, const struct profile_target *pp,
			  const struct report_opts *o)
{
	profile_where_split total;
	char role[PROFILE_ROLE];
	size_t i;

	fprintf(f, "\n    {\"pid\": %d, \"nspid\": %d, \"exe\": ", pp->pid, pp->nspid);
	json_string(f, pp->exe);
	fputs(", \"cmdline\": ", f);
	json_string(f, pp->cmdline);
	fputs(", \"python\": ", f);
	json_string(f, pp->python);
	if (!report_is_merged(p, pp)) {
		fprintf(f, ", \"ppid\": %d, \"origin\": \"%s\", \"role\": ", pp->ppid,
			profile_origin_name(pp->origin));
		json_string(f, profile_target__role(pp, role, sizeof(role)));
	}
	if (report_is_merged(p, pp))
		report_json_pids(f, ", \"merged\": ", p);
	fprintf(f,
		", \"exited\": %s,\n     \"samples\": %llu, \"truncated\": %llu, "
		"\"partial\": %llu, \"unresolved\": %llu",
		pp->exited ? "true" : "false", (unsigned long long)pp->samples,
		(unsigned long long)pp->truncated, (unsigned long long)pp->partial,
		(unsigned long long)pp->unresolved);
	if (!profile_target__where_stats(p, pp, NULL, NULL, total))
		report_where_json(f, total);
	report_exc_json_proc(f, p, pp);
	fputs(",\n     \"threads\": [", f);
	for (i = 0; i < pp->nthreads; i++) {
		fprintf(f, "%s{\"tid\": %u, \"name\": ", i ? ", " : "", pp->threads[i].tid);
		json_string(f, pp->threads[i].name);
		fputs(", \"python_name\": ", f);
		report_json_opt_string(f, pp->threads[i].pyname);
		fprintf(f, ", \"samples\": %llu", (unsigned long long)pp->threads[i].samples);
		report_wall_json_thread(f, p, pp, &pp->threads[i]);
		fputc('}', f);
	}
	fputs("]", f);
	write_functions(f, p, pp);
	write_lines(f, p, pp);
	report_signatures_json(f, p, pp);
	if (o->threads)
		report_json_threads(f, p, pp);
	report_usdt_json_proc(f, p, pp);
	if (p->mem)
		report_mem_json(f, p, pp);
	fputs("}", f);
}

static int write_json(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct report_totals t = report_totals(p);
	size_t i, *order;

	fprintf(f, "{\"tool\": \"pybpfprof\", \"schema\": %d, \"version\": ", REPORT_SCHEMA);
	json_string(f, o->tool_version);
	fputs(", \"mode\": ", f);
	json_string(f, p->mode);
	fprintf(f, ", \"frequency_hz\": %u, \"duration_s\": %.3f, \"first_sample_ms\": ",
		p->frequency_hz, p->duration_s);
	if (p->first_sample_ms >= 0)
		fprintf(f, "%.1f,\n", p->first_sample_ms);
	else
		fputs("null,\n", f);
	fprintf(f,
		" \"samples\": {\"total\": %llu, \"dropped\": %llu, \"truncated\": %llu, "
		"\"unresolved\": %llu, \"partial\": %llu, \"no_python\": %llu, "
		"\"unreadable\": %llu,\n  \"dropped_by_cause\": {\"ring_buffer_full\": %llu, "
		"\"unknown_process\": %llu, \"malformed\": %llu, \"late\": %llu}},\n",
		(unsigned long long)t.samples, (unsigned long long)p->counts.dropped,
		(unsigned long long)t.truncated, (unsigned long long)t.unresolved,
		(unsigned long long)t.partial, (unsigned long long)p->counts.no_python,
		(unsigned long long)p->counts.unreadable,
		(unsigned long long)p->counts.dropped_ring,
		(unsigned long long)p->counts.dropped_unknown,
		(unsigned long long)p->counts.dropped_malformed,
		(unsigned long long)p->counts.dropped_late);
	if (p->mem)
		fprintf(f,
			" \"memory_records\": {\"dropped\": %llu, \"truncated\": %llu, "
			"\"no_python\": %llu, \"unreadable\": %llu},\n",
			(unsigned long long)p->mem_counts.dropped,
			(unsigned long long)p->mem_counts.truncated,
			(unsigned long long)p->mem_counts.no_python,
			(unsigned long long)p->mem_counts.unreadable);
	fprintf(f,
		" \"cache\": {\"budget_bytes\": %llu, \"peak_bytes\": %llu, \"reads\": %llu, "
		"\"evicted\": %llu, \"refused\": %llu},\n",
		(unsigned long long)p->cache.budget_bytes, (unsigned long long)p->cache.peak_bytes,
		(unsigned long long)p->cache.reads, (unsigned long long)p->cache.evicted,
		(unsigned long long)p->cache.refused);
	if (p->selection) {
		report_json_selection(f, " \"selection\": ", p);
		fputs(",\n", f);
	}
	report_usdt_json_counts(f, p);
	report_timeline_json(f, p);
	order = report_procs_order(p);
	if (!order)
		return -ENOMEM;
	/* busiest first, as the text report's table: the first one read is the one that matters */
	fputs(" \"processes\": [", f);
	for (i = 0; i < p->ntargets; i++) {
		if (i)
			fputc(',', f);
		write_process(f, p, &p->targets[order[i]], o);
	}
	free(order);
	fputs("],", f);
	report_json_model(f, p);
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}

const struct report_writer report_json = {
	.name = "json",
	.exts = { ".json" },
	.write = write_json,
};
