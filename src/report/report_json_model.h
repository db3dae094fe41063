/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The "model" section of the JSON report: the whole profile (functions,
 * frames, stacks per thread, counters, source lines, memory and USDT data),
 * from which report_load.c rebuilds the struct profile every writer reads.
 * doc/json-schema.md describes it.
 */
#ifndef PYBPFPROF_REPORT_JSON_MODEL_H
#define PYBPFPROF_REPORT_JSON_MODEL_H

#include <stdio.h>
#include "profile/profile.h"

void report_json_model(FILE *f, const struct profile *p);

#endif
