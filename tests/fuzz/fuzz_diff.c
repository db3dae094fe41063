// SPDX-License-Identifier: GPL-2.0-only
/*
 * `pybpfprof diff` on any two profiles the loader accepts: the input is two
 * saved profiles separated by a NUL byte. Both files are anyone's, and the
 * names and paths in them a target's: the matching, the counting and the
 * three writers must take whatever the loader lets through (stacks of any
 * depth, recursion, functions of one name in many files, empty profiles).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "saved/report_diff.h"
#include "saved/report_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct report_diff_opts o = { .tool_version = "fuzz",
						   .top_functions = 20,
						   .top_lines = 20 };
	static FILE *null;
	const uint8_t *sep = memchr(data, '\0', size);
	struct profile p[2];
	struct report_diff d;
	char why[512];

	if (!sep)
		return 0;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (report_load_json_buf((const char *)data, (size_t)(sep - data), "before.json", &p[0],
				 why, sizeof(why)))
		return 0;
	if (report_load_json_buf((const char *)sep + 1, size - (size_t)(sep - data) - 1,
				 "after.json", &p[1], why, sizeof(why))) {
		profile__free(&p[0]);
		return 0;
	}
	if (!report_diff__build(&d, &p[0], "before.json", &p[1], "after.json", why, sizeof(why))) {
		report_diff_text(null, &d, &o);
		report_diff_json(null, &d, &o);
		report_diff_html(null, &d, &o);
		report_diff__free(&d);
	}
	profile__free(&p[0]);
	profile__free(&p[1]);
	return 0;
}
