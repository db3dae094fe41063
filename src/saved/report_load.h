/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The checked accessors the JSON loader's parts share (report_load.c, the
 * profile, report_load_more.c, the memory and USDT sections). Each returns
 * 0, or -EINVAL with "FILE: WHERE: what is wrong" in the loader's why.
 */
#ifndef PYBPFPROF_REPORT_LOAD_PRIV_H
#define PYBPFPROF_REPORT_LOAD_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/profile.h"
#include "util/json_doc.h"

struct ld {
	const char *name; /* the file, for messages */
	struct profile *p;
	char *why;
	size_t whylen;
};

/* A place in the file for messages ("model.processes[0].stacks[3]"). */
#define LD_WHERE 256
void ld_at(char *w, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int ld_fail(struct ld *l, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* key of obj, which must be there. */
const struct jval *ld_get(struct ld *l, const struct jval *obj, const char *where, const char *key);
/* An array of n entries if n, else of at most max; its length in *len. */
int ld_array(struct ld *l, const struct jval *v, const char *where, size_t n, size_t max,
	     size_t *len);
int ld_u64(struct ld *l, const struct jval *v, const char *where, uint64_t max, uint64_t *out);
int ld_int(struct ld *l, const struct jval *v, const char *where, long long lo, long long hi,
	   long long *out);
int ld_double(struct ld *l, const struct jval *v, const char *where, double lo, double hi,
	      double *out);
int ld_bool(struct ld *l, const struct jval *v, const char *where, bool *out);
/* A string without NUL bytes, at most max bytes. */
int ld_str(struct ld *l, const struct jval *v, const char *where, size_t max, const char **out);
/* n u64 entries of the array v. */
int ld_u64s(struct ld *l, const struct jval *v, const char *where, uint64_t *out, size_t n);
/*
 * A stack, e[at]: frame indices of the profile, at least min (the writers read
 * a CPU or memory stack's innermost frame), at most REPORT_LOAD_MAX_DEPTH.
 */
int ld_frames(struct ld *l, const struct jval *e, size_t at, const char *where, size_t min,
	      uint32_t *out, uint32_t *n);

#define REPORT_LOAD_MAX_DEPTH 1024 /* PYPROF_MAX_DEPTH: the deepest a run keeps */
#define REPORT_LOAD_MAX_STR 65536

/* A process's --calls, --gc and --imports data, and its --mem data. */
int ld_usdt(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp);
int ld_mem(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp);
/* --mode wall, --gil (report_load_wall.c): the header's flags (absent: off), a process's figures. */
int ld_wall_header(struct ld *l, const struct jval *m);
int ld_wall(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp,
	    const struct hashmap *tids);
/* The timeline (report_load_timeline.c), once the functions and frames are read (absent: off). */
int ld_timeline(struct ld *l, const struct jval *m);
/*
 * The ticks' facts (report_load_tick.c): the header's exception flag and
 * instruction names (absent: not read in the run), a process's counts.
 */
int ld_tick_header(struct ld *l, const struct jval *m);
int ld_tick(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp);

#endif
