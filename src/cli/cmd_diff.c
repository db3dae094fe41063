// SPDX-License-Identifier: GPL-2.0-only
/*
 * `pybpfprof diff BEFORE AFTER`: two saved JSON profiles compared
 * (report_diff.h). Everything that can be refused is refused before anything
 * is written: the options, the output files' endings and directories, both
 * profiles (read whole by report_load.h) and their modes; then every output
 * is written whole, or left as it was.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "saved/report_diff.h"
#include "saved/report_load.h"
#include "report/report_common.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/text.h"

#define DIFF_MAX_OUTPUTS 8
#define DIFF_MAX_ROWS 100000
/* the exit status of a diff that --fail-above tripped (1: an error, 2: a usage error) */
#define DIFF_EXIT_GREW 3

enum { OPT_LINES = 256, OPT_FAIL_ABOVE };

struct diff_args {
	const char *paths[2];
	size_t npaths;
	const char *outputs[DIFF_MAX_OUTPUTS];
	size_t noutputs;
	int format;	   /* -f, or -1 */
	double fail_above; /* --fail-above PP, or -1 */
	struct report_diff_opts opts;
};

static const char doc[] =
	"pybpfprof diff: compare two profiles saved with -o FILE.json, by function and by line, "
	"in shares of each profile's own samples, so runs at different rates (-F) and of "
	"different lengths compare."
	"\v"
	"Functions match by qualname and module: a file under site-packages/, dist-packages/ or "
	"lib/pythonX.Y/ by its path below that directory, whatever the root or virtualenv; any "
	"other file by its full path, else by the longest run of equal trailing path components "
	"(the same script run from another directory). Lines match by function and line number. "
	"The text lists what shrank (faster) before what grew (slower), each biggest change "
	"first, then the functions only one profile has. -o FILE.html writes a differential "
	"flame graph: widths are AFTER's shares, red where a frame's share grew, blue where it "
	"shrank.\n"
	"\n"
	"Each self delta carries its 95 % interval, from both profiles' sample counts "
	"(Newcombe's hybrid score interval of a difference of two binomial shares), shown as "
	"±half its width, and * when it excludes 0 (significant: not the luck of the draw). "
	"It covers sampling error only, not systematic error (a function too short for any "
	"tick). --fail-above PP makes diff exit with status 3 when a function's self share "
	"grew by more than PP percentage points even at the low end of that interval, and "
	"name each such function on stderr, one line each: for two runs of an unchanged "
	"program, at any rates, the low end of a function's change is above 0 about 1 time in "
	"40, above PP > 0 far less often. Exit status: 0, 1 (an error), 2 (a usage error), "
	"3 (--fail-above tripped).\n"
	"\n"
	"Examples:\n"
	"  sudo pybpfprof -p 1234 -d 30 -o before.json   # change the code, then\n"
	"  sudo pybpfprof -p 5678 -d 10 -F 499 -o after.json\n"
	"  pybpfprof diff before.json after.json         # text on stdout\n"
	"  pybpfprof diff before.json after.json -o diff.html -o diff.json\n"
	"  pybpfprof diff -f json before.json after.json | jq '.functions[0]'\n"
	"  pybpfprof diff --fail-above 5 base.json head.json || exit  # CI: fails when a "
	"function grew by 5 pp or more";

static const struct argp_option options[] = {
	{ "format", 'f', "FORMAT", 0,
	  "format on stdout, and of an -o file whose ending names none: text, json or html "
	  "(default: text)",
	  0 },
	{ "output", 'o', "FILE", 0,
	  "write to FILE in the format its ending names (.txt, .json, .html); repeat for "
	  "several (default: stdout)",
	  0 },
	{ "top", 'n', "N", 0, "rows in each functions table of the text (default: 20)", 0 },
	{ "lines", OPT_LINES, "N", 0, "rows in each lines table of the text (default: 20)", 0 },
	{ "fail-above", OPT_FAIL_ABOVE, "PP", 0,
	  "exit with status 3, naming each function on stderr, when a function's self share "
	  "grew by more than PP percentage points (0 to 100) at the low end of its 95 % "
	  "interval (default: off)",
	  0 },
	{ 0 }
};

static int parse_pp(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0.0 && v <= 100.0))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_rows(const char *arg, unsigned *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > DIFF_MAX_ROWS)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/*
 * A usage error said as every other error is ("pybpfprof: ..."), then argp's
 * pointer to --help; exits 2 (argp_err_exit_status).
 */
__attribute__((format(printf, 2, 3))) static void usage_error(struct argp_state *state,
							      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("%s\n", msg);
	argp_state_help(state, stderr, ARGP_HELP_STD_ERR);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;

	switch (key) {
	case 'f':
		a->format = report_diff_format_find(arg);
		if (a->format < 0)
			usage_error(state, "unknown format '%s' for diff: use one of %s", arg,
				    REPORT_DIFF_FORMATS);
		break;
	case 'o':
		if (a->noutputs == DIFF_MAX_OUTPUTS)
			usage_error(state, "at most %d -o files", DIFF_MAX_OUTPUTS);
		a->outputs[a->noutputs++] = arg;
		break;
	case 'n':
	case OPT_LINES:
		if (parse_rows(arg, key == 'n' ? &a->opts.top_functions : &a->opts.top_lines))
			usage_error(state, "%s takes a number of rows from 0 to %d, not '%s'",
				    key == 'n' ? "-n" : "--lines", DIFF_MAX_ROWS, arg);
		break;
	case OPT_FAIL_ABOVE:
		if (parse_pp(arg, &a->fail_above))
			usage_error(state,
				    "--fail-above takes percentage points from 0 to 100, not '%s'",
				    arg);
		break;
	case ARGP_KEY_ARG:
		if (a->npaths == 2)
			usage_error(state,
				    "unexpected argument '%s': diff compares two profiles, "
				    "BEFORE and AFTER",
				    arg);
		a->paths[a->npaths++] = arg;
		break;
	case ARGP_KEY_END:
		if (a->npaths != 2)
			usage_error(state, "diff needs two saved profiles, BEFORE and AFTER (each "
					   "written by a run with -o FILE.json)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Each output's format: its ending's, else -f's; an unknown ending without -f is refused. */
static int output_formats(const struct diff_args *a, int *fmt)
{
	size_t i;

	for (i = 0; i < a->noutputs; i++) {
		const char *path = a->outputs[i], *slash = strrchr(path, '/'),
			   *dot = strrchr(slash ? slash : path, '.');

		fmt[i] = strcmp(path, "-") ? report_diff_format_for_path(path) : -1;
		if (fmt[i] >= 0)
			continue;
		if (a->format >= 0 || !strcmp(path, "-") || !dot) {
			fmt[i] = a->format >= 0 ? a->format : DIFF_TEXT;
			continue;
		}
		pr_err("unknown extension '%s' in -o %s: use one of %s, or give the format with "
		       "-f\n",
		       dot, path, REPORT_DIFF_EXTENSIONS);
		return -EINVAL;
	}
	return 0;
}

static int open_outputs(const struct diff_args *a, struct outfile *outs)
{
	char why[400];
	size_t i;

	for (i = 0; i < a->noutputs; i++) {
		if (!strcmp(a->outputs[i], "-"))
			continue;
		if (outfile__open(&outs[i], a->outputs[i], why, sizeof(why))) {
			pr_err("cannot write the output file %s: %s\n", a->outputs[i], why);
			return -EIO;
		}
	}
	return 0;
}

static int write_outputs(const struct diff_args *a, const int *fmt, struct outfile *outs,
			 const struct report_diff *d)
{
	char why[400];
	size_t i;
	int err = 0, e;

	if (!a->noutputs) {
		e = report_diff_write(a->format >= 0 ? a->format : DIFF_TEXT, NULL, d, &a->opts,
				      why, sizeof(why));
		if (e)
			pr_err("cannot write the diff to stdout: %s\n", why);
		return e;
	}
	for (i = 0; i < a->noutputs; i++) {
		bool file = outs[i].dir_fd >= 0;

		e = report_diff_write(fmt[i], file ? &outs[i] : NULL, d, &a->opts, why,
				      sizeof(why));
		if (e)
			pr_err("cannot write the diff to %s: %s\n", file ? a->outputs[i] : "stdout",
			       why);
		err = err ? err : e;
	}
	return err;
}

/*
 * --fail-above: each function whose self share grew by more than pp at the
 * low end of its interval, one line each on stderr; how many.
 */
static size_t report_grown(const struct report_diff *d, double pp)
{
	char q[256], file[512], num[16];
	size_t i, n = 0;

	for (i = 0; i < d->nfuncs; i++) {
		const struct report_diff_row *r = &d->funcs[i];

		if (!report_diff_row_over(r, pp))
			continue;
		pr_err("%s (%s:%s): self share %.1f%% -> %.1f%%, %+.1fpp (95%% interval %+.1f to "
		       "%+.1f), more than --fail-above %g\n",
		       text_clean(q, sizeof(q), r->qualname),
		       text_clean(file, sizeof(file), r->file),
		       report_line_str(r->line, num, sizeof(num)), r->self_pct[DIFF_BEFORE],
		       r->self_pct[DIFF_AFTER], r->self_pct[DIFF_AFTER] - r->self_pct[DIFF_BEFORE],
		       100.0 * r->d_self.lo, 100.0 * r->d_self.hi, pp);
		n++;
	}
	return n;
}

/* Reads both profiles and compares them; 0, or -errno once the reason is said. */
static int load_and_compare(const struct diff_args *a, struct profile *p, struct report_diff *d)
{
	char why[600];
	int err, i;

	for (i = 0; i < 2; i++) {
		err = report_load_json(a->paths[i], &p[i], why, sizeof(why));
		if (err) {
			pr_err("cannot read the %s profile: %s\n", i ? "AFTER" : "BEFORE", why);
			if (i)
				profile__free(&p[0]);
			return err;
		}
	}
	err = report_diff__build(d, &p[0], a->paths[0], &p[1], a->paths[1], why, sizeof(why));
	if (err) {
		pr_err("%s\n", why);
		profile__free(&p[0]);
		profile__free(&p[1]);
	}
	return err;
}

int cmd_diff(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, "BEFORE.json AFTER.json", doc, NULL,
					  NULL,	   NULL };
	struct diff_args a = {
		.format = -1,
		.fail_above = -1,
		.opts = { .tool_version = PYBPFPROF_VERSION, .top_functions = 20, .top_lines = 20 }
	};
	struct outfile outs[DIFF_MAX_OUTPUTS];
	int fmt[DIFF_MAX_OUTPUTS], err;
	bool grew = false;
	struct profile p[2];
	struct report_diff d;
	size_t i;

	argp_err_exit_status = 2;
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < DIFF_MAX_OUTPUTS; i++)
		outs[i] = (struct outfile){ .dir_fd = -1, .tmp_fd = -1 };
	/* argp names the program by argv[0] in its messages and usage */
	argv[0] = "pybpfprof diff";
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	if (output_formats(&a, fmt))
		return 2;
	err = open_outputs(&a, outs);
	if (!err)
		err = load_and_compare(&a, p, &d);
	if (!err) {
		err = write_outputs(&a, fmt, outs, &d);
		if (!err && a.fail_above >= 0 && report_grown(&d, a.fail_above))
			grew = true;
		report_diff__free(&d);
		profile__free(&p[0]);
		profile__free(&p[1]);
	}
	for (i = 0; i < a.noutputs; i++)
		outfile__close(&outs[i]);
	return err ? 1 : grew ? DIFF_EXIT_GREW : 0;
}
