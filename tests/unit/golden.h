/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Golden files for the writer tests: output compared byte for byte with
 * tests/golden/NAME. Run the tests with UPDATE_GOLDEN=1 from the repository
 * root to rewrite them after a deliberate format change, then review the diff.
 * Include after <cmocka.h>.
 */
#ifndef PYBPFPROF_TEST_GOLDEN_H
#define PYBPFPROF_TEST_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report.h"

#define GOLDEN_DIR "tests/golden/"

/* The whole of f, NUL-terminated (*len excludes the NUL). */
static inline char *slurp(FILE *f, size_t *len)
{
	char *buf;
	long n;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* What writer w writes for p with options o. */
static inline char *golden_write(const struct report_writer *w, const struct profile *p,
				 const struct report_opts *o, size_t *len)
{
	FILE *out = tmpfile();
	char *got;

	assert_non_null(out);
	assert_int_equal(w->write(out, p, o), 0);
	got = slurp(out, len);
	fclose(out);
	return got;
}

/* Fails unless got is exactly tests/golden/name; text output is shown in full. */
static inline void golden_compare(const char *name, const char *got, size_t got_len)
{
	char path[256];
	size_t want_len;
	char *want;
	FILE *gold;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("UPDATE_GOLDEN")) {
		gold = fopen(path, "w");
		assert_non_null(gold);
		fwrite(got, 1, got_len, gold);
		fclose(gold);
	}
	gold = fopen(path, "r");
	if (!gold)
		fail_msg("missing %s (run with UPDATE_GOLDEN=1 from the repo root)", path);
	want = slurp(gold, &want_len);
	fclose(gold);
	if (got_len != want_len || memcmp(got, want, got_len))
		fail_msg("%s differs from the writer's output (%zu bytes, golden %zu)%s%s", path,
			 got_len, want_len, strlen(got) == got_len ? ":\n" : "",
			 strlen(got) == got_len ? got : "");
	free(want);
}

/* Writes p with w and compares the output with tests/golden/NAME. */
static inline void golden_check(const struct report_writer *w, const struct profile *p,
				const struct report_opts *o, const char *name)
{
	size_t len;
	char *got = golden_write(w, p, o, &len);

	golden_compare(name, got, len);
	free(got);
}

#endif
