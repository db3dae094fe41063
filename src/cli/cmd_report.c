// SPDX-License-Identifier: GPL-2.0-only
/*
 * `pybpfprof report FILE`: a profile saved as JSON (-o prof.json) written
 * again in any format, later and on any machine, with the run's own output
 * options (cli_report_options) and checks (config_check_outputs) and the
 * same writers: the loaded profile is the one the run wrote from. Needs no
 * privileges and no BPF. The file is refused whole if anything in it is not
 * a profile (report_load.c); nothing is written then.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli/config.h"
#include "util/log.h"
#include "util/outfile.h"
#include "report/report.h"
#include "saved/report_load.h"
#include "commands.h"

/* The -o files, then --mem-timeline, --mem-folded, --mem-retained-folded, --mem-pprof. */
#define NOUTS (CONFIG_MAX_OUTPUTS + 4)

/* The memory outputs: option, writer, and what it shows (for report's --help). */
static const struct mem_output {
	const char *option;
	const struct report_writer *writer;
	const char *doc;
} mem_outputs[] = {
	{ "mem-timeline", &report_mem_svg,
	  "Resident memory over the run as an SVG picture (a profile recorded with --mem)" },
	{ "mem-folded", &report_mem_folded,
	  "The memory stacks as folded text weighted by bytes touched (a profile recorded "
	  "with --mem)" },
	{ "mem-retained-folded", &report_mem_retained_folded,
	  "The memory stacks as folded text weighted by bytes still mapped at the end (a "
	  "profile recorded with --mem)" },
	{ "mem-pprof", &report_mem_pprof,
	  "The memory stacks as a pprof profile of touched, mapped, released and retained "
	  "bytes (a profile recorded with --mem)" },
};
#define NMEM_OUTPUTS (sizeof(mem_outputs) / sizeof(mem_outputs[0]))

/* The run's options that mean something else for a saved run: report's --help for them. */
static const struct report_doc {
	const char *option, *doc;
} select_docs[] = {
	{ "pid", "Only the processes of this pid (repeat, or separate with commas)" },
	{ "match", "Only the processes whose command line matches REGEX (POSIX extended, "
		   "anywhere in it)" },
	{ "thread", "Only the threads whose name matches REGEX (POSIX extended), and the "
		    "processes that have one; not for a profile recorded with --mem, --calls, "
		    "--gc or --imports" },
	{ "merge", "One section for all the processes (those selected), as a run with --merge "
		   "would have written it" },
};
#define NSELECT_DOCS (sizeof(select_docs) / sizeof(select_docs[0]))

/* The memory output paths, in mem_outputs' order. */
static void mem_paths(const struct pyprof_config *cfg, const char *out[NMEM_OUTPUTS])
{
	out[0] = cfg->mem_timeline;
	out[1] = cfg->mem_folded;
	out[2] = cfg->mem_retained_folded;
	out[3] = cfg->mem_pprof;
}

static const char report_doc[] =
	"pybpfprof report: write a profile saved as JSON (pybpfprof -o prof.json) again, "
	"in any format, as the run that saved it would have written it."
	"\v"
	"The -f and -o options are those of a run: the format is taken from each -o FILE's "
	"extension (a FILE whose extension names no format is refused unless -f gives it), "
	"the text report goes to stdout without -o. Source lines are those read during the "
	"run, saved in the profile. Needs no privileges.\n"
	"\n"
	"--pid, --match and --thread keep what they select, in that order (a process whose "
	"threads all fail --thread is left out), and --merge then sums what is kept into one "
	"section; the report says what was left out. The totals are of what is kept; the "
	"dropped samples, ticks without Python frames and the run's other counters are the "
	"whole run's.\n"
	"\n"
	"FILE is anyone's: at most 256 MiB, read into at most 8 bytes per byte (a file that "
	"would need more than 1 GiB is refused), every field checked; its strings are "
	"shown as one field of one line in text ('?' for control and bidi characters and "
	"bytes that are not UTF-8).\n"
	"\n"
	"Examples:\n"
	"  pybpfprof report prof.json                   # the text report\n"
	"  pybpfprof report prof.json -o flame.html     # a flame graph\n"
	"  pybpfprof report prof.json -o p.pstats -o p.pb.gz -o graph.dot\n"
	"  pybpfprof report prof.json -f tree --prune 5 # the call tree, on stdout\n"
	"  pybpfprof report prof.json --pid 4242        # one process of the run\n"
	"  pybpfprof report prof.json --match 'spawn_main' -o workers.html\n"
	"                                               # the multiprocessing workers\n"
	"  pybpfprof report prof.json --thread '^worker' # the threads named worker...\n"
	"  pybpfprof report prof.json --merge           # all processes as one\n"
	"  pybpfprof report prof.json --min-share 0     # a section for every process\n"
	"  pybpfprof report run.json -o run.perfetto-trace -o run.trace.json\n"
	"                                  # the timeline of a run recorded with --timeline\n"
	"  pybpfprof report mem.json --mem-timeline rss.svg   # a --mem run's timeline";

struct report_cmd {
	struct pyprof_config cfg;
	const char *file;
};

static error_t report_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct report_cmd *rc = state->input;
	struct pyprof_config *cfg = &rc->cfg;
	int err = cli_report_apply(key, arg, cfg);

	if (err == ARGP_ERR_UNKNOWN) {
		err = 0;
		if (key == ARGP_KEY_ARG && !rc->file)
			rc->file = arg;
		else if (key == ARGP_KEY_ARG)
			snprintf(cfg->error, sizeof(cfg->error),
				 "unexpected argument '%s': report reads one profile", arg);
		else if (key == ARGP_KEY_END && !rc->file)
			snprintf(cfg->error, sizeof(cfg->error),
				 "no profile: give the JSON file a run wrote with -o FILE.json");
		else if (key == ARGP_KEY_END)
			err = config_check_outputs(cfg, cfg->error, sizeof(cfg->error)) ?:
				      config_check_timeline(cfg, true, cfg->error,
							    sizeof(cfg->error));
		else
			return ARGP_ERR_UNKNOWN;
		if (cfg->error[0] && !err)
			err = -EINVAL;
	}
	if (!err)
		return 0;
	argp_error(state, "%s", cfg->error);
	return EINVAL;
}

/* What the profile lacks for what was asked: 0, or -EINVAL with one sentence in why. */
static int check_needs(const struct report_cmd *rc, const struct profile *p, char *why, size_t len)
{
	const char *paths[NMEM_OUTPUTS];
	size_t i;

	if (rc->cfg.timeline && !p->timeline.on) {
		snprintf(why, len,
			 "%s: the timeline formats draw every event in time, and this profile has "
			 "none: record with --timeline (or a timeline output) beside -o FILE.json",
			 rc->file);
		return -EINVAL;
	}
	mem_paths(&rc->cfg, paths);
	for (i = 0; i < NMEM_OUTPUTS && !p->mem; i++)
		if (paths[i]) {
			snprintf(why, len,
				 "%s: --%s draws the memory samples, and this profile has none: "
				 "record with --mem",
				 rc->file, mem_outputs[i].option);
			return -EINVAL;
		}
	return 0;
}

/*
 * --pid, --match, --thread, then --merge, on the profile as loaded. 0, or
 * -EINVAL with one sentence in why, or -ENOMEM.
 */
static int select_merge(const struct report_cmd *rc, struct profile *p, char *why, size_t len)
{
	const struct pyprof_config *cfg = &rc->cfg;
	const struct profile_select sel = { .pids = cfg->pids,
					    .npids = cfg->npids,
					    .match = cfg->match,
					    .thread = cfg->thread };
	int err = profile__select(p, &sel, why, len);

	if (err || !cfg->merge || p->nmerged) /* a merged run is one section already */
		return err;
	if (p->wall || p->gc_mode || p->imports_mode) {
		snprintf(why, len, "%s: %s reports per %s: it does not go with --merge", rc->file,
			 p->wall    ? "a --mode wall profile" :
			 p->gc_mode ? "--gc" :
				      "--imports",
			 p->wall ? "thread" : "process");
		return -EINVAL;
	}
	err = profile__merge(p);
	if (err)
		snprintf(why, len, "out of memory while merging the processes");
	return err;
}

/* Checks each output file before anything is written; "-" is stdout. */
static int open_outputs(const struct pyprof_config *cfg, struct outfile *outs)
{
	const char *paths[NOUTS] = {};
	char why[400];
	size_t i;
	int err;

	memcpy(paths, cfg->outputs, cfg->noutputs * sizeof(*paths));
	mem_paths(cfg, &paths[CONFIG_MAX_OUTPUTS]);
	for (i = 0; i < NOUTS; i++) {
		if (!paths[i] || !strcmp(paths[i], "-"))
			continue;
		err = outfile__open(&outs[i], paths[i], why, sizeof(why));
		if (err) {
			pr_err("cannot write the output file %s: %s\n", paths[i], why);
			return err;
		}
	}
	return 0;
}

/* One output; a failure is said and kept in *err, and the others are still written. */
static void write_one(const struct report_writer *w, struct outfile *of, const struct profile *p,
		      const struct report_opts *o, int *err)
{
	bool file = of && of->dir_fd >= 0;
	char why[400];
	int werr = report_write(w, file ? of : NULL, p, o, why, sizeof(why));

	if (!werr)
		return;
	pr_err("cannot write %s: %s\n", file ? of->path : "to stdout", why);
	if (!*err)
		*err = werr;
}

static int write_all(const struct pyprof_config *cfg, struct outfile *outs, const struct profile *p)
{
	const struct report_opts ro = { .top_functions = cfg->top_functions,
					.top_lines = cfg->top_lines,
					.line_report = cfg->line_report,
					.prune_pct = cfg->prune_pct,
					.merge_lines = cfg->merge_lines,
					.min_share = cfg->min_share,
					.tool_version = PYBPFPROF_VERSION,
					.threads = cfg->threads };
	const struct report_writer *w, *fallback;
	const char *mem[NMEM_OUTPUTS];
	size_t i;
	int err = 0;

	fallback = cfg->format ? report_find(cfg->format) : &report_text;
	for (i = 0; i < (cfg->noutputs ? cfg->noutputs : 1); i++) {
		w = cfg->noutputs ? report_for_path(cfg->outputs[i]) : NULL;
		write_one(w ? w : fallback, cfg->noutputs ? &outs[i] : NULL, p, &ro, &err);
	}
	mem_paths(cfg, mem);
	for (i = 0; i < NMEM_OUTPUTS; i++)
		if (mem[i])
			write_one(mem_outputs[i].writer, &outs[CONFIG_MAX_OUTPUTS + i], p, &ro,
				  &err);
	return err;
}

int cmd_report(int argc, char **argv)
{
	struct argp_option options[32] = {};
	const struct argp argp = {
		options, report_parse_opt, "FILE", report_doc, NULL, NULL, NULL
	};
	struct report_cmd rc = { .cfg = PYPROF_CONFIG_DEFAULTS };
	struct outfile outs[NOUTS];
	struct profile p = {};
	char why[600], name[] = "pybpfprof report";
	size_t i, k, n;
	int err;

	n = cli_report_options(options, 31);
	for (i = 0; i < n; i++) {
		options[i].group = 0; /* one list, by name */
		for (k = 0; options[i].name && k < NMEM_OUTPUTS; k++)
			if (!strcmp(options[i].name, mem_outputs[k].option))
				options[i].doc = mem_outputs[k].doc;
		for (k = 0; options[i].name && k < NSELECT_DOCS; k++)
			if (!strcmp(options[i].name, select_docs[k].option))
				options[i].doc = select_docs[k].doc;
	}
	argv[0] = name; /* "pybpfprof report" in argp's messages */
	argp_err_exit_status = 2;
	if (argp_parse(&argp, argc, argv, 0, NULL, &rc))
		return 2;
	log_set_level(LOG_WARN + rc.cfg.verbose);
	for (i = 0; i < NOUTS; i++)
		outs[i] = (struct outfile){ .dir_fd = -1, .tmp_fd = -1 };
	err = report_load_json(rc.file, &p, why, sizeof(why));
	if (err) {
		pr_err("%s\n", why);
		return 1;
	}
	err = check_needs(&rc, &p, why, sizeof(why));
	if (!err)
		err = select_merge(&rc, &p, why, sizeof(why));
	if (err) {
		pr_err("%s\n", why);
		profile__free(&p);
		return err == -ENOMEM ? 1 : 2;
	}
	err = open_outputs(&rc.cfg, outs);
	if (!err)
		err = write_all(&rc.cfg, outs, &p);
	for (i = 0; i < NOUTS; i++)
		outfile__close(&outs[i]);
	profile__free(&p);
	return err ? 1 : 0;
}
