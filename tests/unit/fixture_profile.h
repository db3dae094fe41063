/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hand-built profile every writer's golden file comes from: two
 * processes, one of them exited, an unresolved frame, names that need
 * escaping, two threads. Included by the writer tests.
 */
#ifndef PYBPFPROF_TEST_FIXTURE_PROFILE_H
#define PYBPFPROF_TEST_FIXTURE_PROFILE_H

#include "profile/profile.h"
#include "proc/source.h"

static inline void build(struct profile *p)
{
	struct profile_target *a, *b;
	uint32_t fmain, fhot, fq, fun, s1[2], s2[2], s3[2], s4[1];

	profile__init(p, "cpu", 100);
	p->duration_s = 2.0;
	p->first_sample_ms = 42.5;
	p->counts.dropped = 3;
	p->counts.dropped_ring = 2; /* and the causes (report_dropped_causes) */
	p->counts.dropped_late = 1;
	p->counts.no_python = 4;
	p->counts.unreadable = 2;
	/* no root directory and no such files: source lines read as unavailable */
	a = profile__add_target(p, 0, "/usr/bin/python3.11", "python3 app.py", "python3", "3.11.2");
	a->sources->creds[0].kind = SOURCE_CREDS_SELF; /* made here: our own rights */
	a->sources->ncreds = 1;
	fmain = profile__func(p, "main", "/nonexistent/app.py", 10, false);
	fhot = profile__func(p, "Klass.hot", "/nonexistent/app.py", 3, false);
	fq = profile__func(p, "say \"hi\"\\", "/nonexistent/odd\tname.py", 1, false);
	fun = profile__func(p, "[unresolved]", "", 0, true);
	s1[0] = profile__frame(p, fhot, 5);
	s1[1] = profile__frame(p, fmain, 12);
	s2[0] = profile__frame(p, fhot, 6);
	s2[1] = s1[1];
	s3[0] = profile__frame(p, fq, 2);
	s3[1] = s1[1];
	s4[0] = profile__frame(p, fun, -1);
	profile_target__add_stack(a, 0, s1, 2, 150);
	profile_target__add_stack(a, 0, s2, 2, 30);
	profile_target__add_stack(a, 1, s3, 2, 20);
	a->samples = 200;
	a->truncated = 1;
	profile_target__thread(a, 0)->samples = 180;
	strcpy(profile_target__thread(a, 0)->name, "python3");
	profile_target__thread(a, 1)->samples = 20;
	strcpy(profile_target__thread(a, 1)->name, "worker");
	/* its threading name, a target's string: not ASCII, with a terminal's escape */
	strcpy(profile_target__thread(a, 1)->pyname, "w\xc3\xb6rker-1 \x1b[2J");
	b = profile__add_target(p, 0, "/opt/py/bin/python3.11", "python3 -c pass", "python3",
				"3.11.7");
	b->exited = true;
	b->ppid = 41; /* forked by pid 41: its role says so */
	b->origin = PROFILE_FORKED;
	b->sources->creds[0].kind = SOURCE_CREDS_SELF;
	b->sources->ncreds = 1;
	profile_target__add_stack(b, 0, s4, 1, 2);
	b->samples = 2;
	b->unresolved = 2;
	profile_target__thread(b, 0)->samples = 2;
}

#endif
