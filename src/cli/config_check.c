// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rules between options, apart from argp so that they are tested on
 * configs built by hand: the defaults one option gives another, then the
 * combinations refused, first match wins, each with the sentence the user
 * sees after "pybpfprof: ".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/config.h"
#include "profile/profile.h"
#include "report/report.h"
#include "session/usdt.h"

static int refuse(char *why, size_t whylen, const char *sentence)
{
	snprintf(why, whylen, "%s", sentence);
	return -EINVAL;
}

/* Whether an output draws the timeline: by its ending, or by -f's format without one. */
static bool timeline_output(const struct pyprof_config *cfg)
{
	const struct report_writer *w, *f = cfg->format ? report_find(cfg->format) : NULL;
	size_t i;

	if (!cfg->noutputs && f && f->timeline)
		return true;
	for (i = 0; i < cfg->noutputs; i++) {
		w = report_for_path(cfg->outputs[i]);
		if ((w && w->timeline) || (!w && f && f->timeline))
			return true;
	}
	return false;
}

int config_check_timeline(struct pyprof_config *cfg, bool report, char *why, size_t whylen)
{
	/* The timeline files are drawn from the timeline. */
	if (cfg->timeline_events || timeline_output(cfg))
		cfg->timeline = true;
	/* it keeps every process and thread: a cut report beside it would not be its figures */
	if (cfg->timeline && (cfg->match || cfg->thread || (report && cfg->npids)))
		return refuse(
			why, whylen,
			"the timeline keeps every process and thread of the run, and --pid, "
			"--match and --thread cut the report: write the timeline without them");
	return 0;
}

int config_check(struct pyprof_config *cfg, char *why, size_t whylen)
{
	bool followed = cfg->all || cfg->command || cfg->subprocesses;

	/* The memory files are drawn from the memory samples. */
	if ((cfg->mem_folded || cfg->mem_timeline || cfg->mem_retained_folded || cfg->mem_pprof) &&
	    !cfg->mem)
		cfg->mem = PYPROF_MEM_FAULTS;
	if (config_check_timeline(cfg, false, why, whylen))
		return -EINVAL;

	if (!cfg->npids && !cfg->all && !cfg->command)
		return refuse(why, whylen, "no target: give -p PID, -a, or a command after --");
	if (cfg->all && (cfg->npids || cfg->command))
		return refuse(why, whylen,
			      "-a profiles every process already: it takes no -p or "
			      "command");
	if (cfg->command && cfg->npids)
		return refuse(why, whylen, "give either -p PID or a command after --, not both");
	if (cfg->user && !cfg->command)
		return refuse(why, whylen,
			      "--user runs a launched command as that user: give the "
			      "command after -- (profiled processes keep their own users)");
	if (cfg->subprocesses && cfg->all)
		return refuse(why, whylen,
			      "--subprocesses goes with -p or a command; -a sees "
			      "every process already");
	if (cfg->merge && (cfg->usdt_modes & (USDT_GC | USDT_IMPORTS)))
		return refuse(why, whylen,
			      "--gc and --imports report per process: they do not go "
			      "with --merge");
	if (cfg->py311_line && !(cfg->usdt_modes & USDT_CALLS))
		return refuse(why, whylen, "--calls-py311-line only makes sense with --calls");
	if (cfg->top && (cfg->noutputs || cfg->mem_timeline || cfg->mem_folded ||
			 cfg->mem_retained_folded || cfg->mem_pprof))
		return refuse(why, whylen,
			      "top shows a live view and writes no file: drop -o, "
			      "--mem-timeline and --mem-folded, or record without top");
	if (cfg->top && cfg->timeline)
		return refuse(why, whylen,
			      "top shows a live view and keeps no timeline: drop --timeline, or "
			      "record without top");
	if (cfg->mode && strcmp(cfg->mode, "cpu") && strcmp(cfg->mode, "wall") &&
	    strcmp(cfg->mode, "exception"))
		return refuse(why, whylen, "invalid --mode: expected cpu, wall or exception");
	if (cfg->idle && !(cfg->mode && !strcmp(cfg->mode, "wall")))
		return refuse(why, whylen,
			      "--idle shows threads blocked for the whole run: it needs --mode "
			      "wall");
	if ((cfg->mode && !strcmp(cfg->mode, "wall")) && cfg->merge)
		return refuse(why, whylen,
			      "--mode wall reports per thread: it does not go with --merge");
	if (cfg->thread && (cfg->mem || cfg->usdt_modes))
		return refuse(why, whylen,
			      "--thread keeps CPU samples by thread, and the figures of --mem, "
			      "--calls, --gc and --imports are per process: use --match, or "
			      "leave those out");
	if (cfg->match || cfg->thread) {
		const struct profile_select sel = { .match = cfg->match, .thread = cfg->thread };
		int err = profile_select__check(&sel, why, whylen);

		if (err)
			return err;
	}
	if (cfg->top && (cfg->match || cfg->thread))
		return refuse(why, whylen,
			      "top shows every process it samples: --match and --thread select "
			      "what a report shows");
	/* The allocator's uprobes are attached to the processes known at the start. */
	if (cfg->mem == PYPROF_MEM_ALLOC && followed)
		return refuse(why, whylen,
			      "--mem=alloc traces the processes given with -p only, "
			      "not -a, a command or --subprocesses (--mem works with all of them)");
	return 0;
}

/* The extension of path's last component ("" for none, for ".hidden" and for "name."). */
static const char *extension(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return dot && dot != base && dot[1] ? dot : "";
}

/*
 * A file named profile.svg, profile.xyz or prof.html.bak in a format it does
 * not name would be opened by the wrong program, or by none: refused before
 * profiling. -f names the format of every such file, so with -f it is kept.
 */
int config_check_outputs(const struct pyprof_config *cfg, char *why, size_t whylen)
{
	char known[256];
	struct stat st;
	size_t i;

	if (cfg->format)
		return 0;
	for (i = 0; i < cfg->noutputs; i++) {
		const char *path = cfg->outputs[i], *ext = extension(path);

		if (!*ext || report_for_path(path) || (!stat(path, &st) && S_ISCHR(st.st_mode)))
			continue;
		snprintf(why, whylen,
			 "unknown extension '%s' in -o %s: use one of %s, or give the format "
			 "with -f",
			 ext, path, report_extensions(known, sizeof(known)));
		return -EINVAL;
	}
	return 0;
}
