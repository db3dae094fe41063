/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collector's own parts, private to src/session: resolution (resolve.c),
 * --signatures (collector_sig.c) and --mem (collector_mem.c). collector.c
 * routes each record to them; see the steps at the top of collector.c.
 */
#ifndef PYBPFPROF_COLLECTOR_PARTS_H
#define PYBPFPROF_COLLECTOR_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include "session/collector.h"

/* Profile frame id for one raw frame of ts; *unresolved set when it could not be named. */
uint32_t resolve__frame(struct collector *c, struct collector_target *ts, const struct py_frame *rf,
			bool *unresolved);
/*
 * Names every frame of s into c->scratch (frame ids). Returns -ENOMEM when
 * the sample cannot be kept, -ETIME when the run ended too long ago to go on;
 * *unresolved is set when a frame could not be named.
 */
int resolve__stack(struct collector *c, struct collector_target *ts, const struct py_sample *s,
		   bool *unresolved);
/* A PY_KIND_MODULE record of ts: BPF's name of a module body, kept for its frames. */
void resolve__module(struct collector *c, struct collector_target *ts, const void *data,
		     size_t size);

/* Notes a thread of ts seen with no name: collector__name_threads names it. */
void collector__unnamed(struct collector *c, struct collector_target *ts, uint32_t tid);

/* A PY_KIND_SIGNATURE record: kept until its sample comes (or COLLECTOR_SIG_PENDING more). */
void collector__sig_keep(struct collector *c, const void *data, size_t size);
/* Renames s's innermost frames (in c->scratch) by the signature record sent before it. */
void collector__sig_apply(struct collector *c, struct collector_target *ts,
			  const struct py_sample *s);

/* A --mem record of this kind on its stack (in c->scratch). */
void collector__mem_sample(struct collector *c, struct collector_target *ts,
			   const struct py_sample *s, enum profile_mem_kind kind, bool unresolved);
/* A memory call's address range (struct py_mem_range), matched to its stack record. */
void collector__mem_range(struct collector *c, struct collector_target *ts, const void *data,
			  size_t size);

#endif
