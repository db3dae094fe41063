/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --signatures: each function split by its arguments' types (its frames
 * named "qualname(x: int, ...)"), with the samples of each signature, in the
 * text and JSON reports; written only when p->signatures.
 */
#ifndef PYBPFPROF_REPORT_SIGNATURES_H
#define PYBPFPROF_REPORT_SIGNATURES_H

#include <stdio.h>
#include "profile/profile.h"
#include "report/report_writer.h"

void report_signatures_text(FILE *f, const struct profile *p, const struct profile_target *pp,
			    const struct report_opts *o);
void report_signatures_json(FILE *f, const struct profile *p, const struct profile_target *pp);

#endif
