/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The profile model's USDT parts, on hand-built events whose answers are
 * known: call edges merged per (callee, caller) with totals per function,
 * GC collections by generation and by triggering stack, and imports nested
 * per thread from their start/done order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/profile.h"

static void test_call_edges(void **state)
{
	struct profile p;
	struct profile_target *pp;
	struct profile_call_total *t;
	struct profile_call_edge a = { .calls = 2,
				       .inclusive_ns = 100,
				       .exclusive_ns = 60,
				       .max_ns = 70 };
	struct profile_call_edge b = { .calls = 3,
				       .inclusive_ns = 50,
				       .exclusive_ns = 50,
				       .max_ns = 20 };
	uint64_t h[PROFILE_HIST_BUCKETS] = { [3] = 2, [5] = 1 };
	uint32_t f, g, main_;

	(void)state;
	profile__init(&p, "cpu", 99);
	pp = profile__add_target(&p, 10, "/usr/bin/python3.9", "python3.9 x.py", "python3.9",
				 "3.9.2");
	assert_non_null(pp);
	f = profile__func(&p, "f", "/x.py", 1, false);
	g = profile__func(&p, "g", "/x.py", 5, false);
	main_ = profile__func(&p, "main", "/x.py", 9, false);
	/* f called from main twice, merged; from g once; g from the root */
	assert_int_equal(profile_target__add_call(pp, f, main_, &a), 0);
	assert_int_equal(profile_target__add_call(pp, f, main_, &a), 0);
	assert_int_equal(profile_target__add_call(pp, f, g, &b), 0);
	assert_int_equal(profile_target__add_call(pp, g, UINT32_MAX, &b), 0);
	assert_int_equal(pp->ncalls, 3);
	assert_int_equal(pp->calls[0].calls, 4);
	assert_int_equal(pp->calls[0].inclusive_ns, 200);
	assert_int_equal(pp->calls[0].max_ns, 70);
	assert_int_equal(profile_target__call_totals(&p, pp, &t), 0);
	assert_int_equal(t[f].calls, 7);
	assert_int_equal(t[f].inclusive_ns, 250);
	assert_int_equal(t[f].exclusive_ns, 170);
	assert_int_equal(t[f].max_ns, 70);
	assert_int_equal(t[g].calls, 3);
	assert_int_equal(t[main_].calls, 0);
	free(t);
	assert_int_equal(profile_target__add_hist(pp, f, h), 0);
	assert_int_equal(profile_target__add_hist(pp, f, h), 0);
	assert_int_equal(pp->nhists, 1);
	assert_int_equal(pp->hists[0].buckets[3], 4);
	assert_int_equal(pp->hists[0].buckets[5], 2);
	profile__free(&p);
}

static void test_gc(void **state)
{
	struct profile p;
	struct profile_target *pp;
	uint32_t s1[2] = { 4, 7 }, s2[1] = { 9 };

	(void)state;
	profile__init(&p, "cpu", 99);
	pp = profile__add_target(&p, 10, "", "", "", "3.13.5");
	assert_int_equal(profile_target__add_gc(pp, s1, 2, 0, 1000, 5), 0);
	assert_int_equal(profile_target__add_gc(pp, s1, 2, 0, 3000, 7), 0);
	assert_int_equal(profile_target__add_gc(pp, s2, 1, 2, 9000, 1), 0);
	assert_int_equal(profile_target__add_gc(pp, NULL, 0, 1, 500, 0), 0);
	assert_int_equal(pp->gc.all.collections, 4);
	assert_int_equal(pp->gc.all.total_ns, 13500);
	assert_int_equal(pp->gc.all.max_ns, 9000);
	assert_int_equal(pp->gc.all.collected, 13);
	assert_int_equal(pp->gc.gen[0].collections, 2);
	assert_int_equal(pp->gc.gen[0].max_ns, 3000);
	assert_int_equal(pp->gc.gen[1].collections, 1);
	assert_int_equal(pp->gc.gen[2].total_ns, 9000);
	assert_int_equal(pp->gc.nstacks, 3);
	assert_int_equal(pp->gc.stacks[0].stat.collections, 2);
	assert_int_equal(pp->gc.stacks[0].stat.total_ns, 4000);
	assert_int_equal(pp->gc.stacks[2].nframes, 0);
	profile__free(&p);
}

static void test_imports(void **state)
{
	struct profile p;
	struct profile_target *pp;

	(void)state;
	profile__init(&p, "cpu", 99);
	pp = profile__add_target(&p, 10, "", "", "", "3.9.2");
	/* a done before any start: began before attach */
	assert_int_equal(profile_target__import_done(pp, 1, true, 5), -ENOENT);
	/* thread 1: json { json.decoder { re }, json.encoder }; thread 2 interleaved: csv */
	assert_int_equal(profile_target__import_start(pp, 1, "json", 100), 0);
	assert_int_equal(profile_target__import_start(pp, 1, "json.decoder", 110), 0);
	assert_int_equal(profile_target__import_start(pp, 2, "csv", 115), 0);
	assert_int_equal(profile_target__import_start(pp, 1, "re", 120), 0);
	assert_int_equal(profile_target__import_done(pp, 1, true, 150), 3);
	assert_int_equal(profile_target__import_done(pp, 2, false, 160), 2);
	assert_int_equal(profile_target__import_done(pp, 1, true, 170), 1);
	assert_int_equal(profile_target__import_start(pp, 1, "json.encoder", 175), 0);
	assert_int_equal(profile_target__import_done(pp, 1, true, 185), 4);
	assert_int_equal(profile_target__import_done(pp, 1, true, 200), 0);
	assert_int_equal(pp->nimports, 5);
	assert_string_equal(pp->imports[0].module, "json");
	assert_int_equal(pp->imports[0].parent, -1);
	assert_int_equal(pp->imports[0].ns, 100);
	assert_int_equal(pp->imports[1].parent, 0); /* json.decoder in json */
	assert_int_equal(pp->imports[1].ns, 60);
	assert_int_equal(pp->imports[2].parent, -1); /* csv: another thread */
	assert_false(pp->imports[2].found);
	assert_int_equal(pp->imports[3].parent, 1); /* re in json.decoder */
	assert_int_equal(pp->imports[3].ns, 30);
	assert_int_equal(pp->imports[4].parent, 0); /* json.encoder in json */
	assert_true(pp->imports[4].done && pp->imports[0].done);
	profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_edges),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_imports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
