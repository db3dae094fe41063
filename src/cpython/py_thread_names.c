// SPDX-License-Identifier: GPL-2.0-only
/*
 * The threading names of a target's Python threads (worker_0, MainThread),
 * read from outside while it runs. A thread that threading.Thread started
 * runs Thread._bootstrap in threading.py as its outermost frame, whose first
 * local, self, holds _name. The main thread is threading._main_thread, found
 * in that frame's globals (threading's own), and matched to its thread by
 * _ident: so only once another threading thread has run (the caller keeps
 * the globals' address). Everything read is the target's: a name is shown
 * as its text, never believed for anything else.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "remote_mem.h"
#include "cpython/code_cache.h"
#include "cpython/py_objects.h"
#include "util/mono.h"

/* _PyInterpreterFrame.f_globals (3.11+), PyFrameObject.f_globals (<= 3.10) */
static uint16_t frame_globals(uint32_t version)
{
	unsigned minor = (version >> 16) & 0xff;

	return minor <= 10 ? 48 : minor == 11 ? 8 : 24;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

/* The frame index of th's Thread._bootstrap, outermost first, or -1. */
static long bootstrap_frame(struct code_cache *cc, const struct target *t,
			    const struct py_dump_thread *th)
{
	size_t i;

	for (i = th->nframes; i-- > 0;) {
		const struct py_dump_frame *f = &th->frames[i];
		const struct code_info *ci = code_cache__get(cc, t, f->code, f->fingerprint);

		if (!ci)
			return -1;
		if (ends_with(ci->filename, "/threading.py") &&
		    ends_with(ci->qualname, "_bootstrap"))
			return (long)i;
		/* only threading's own frames lie outside its target's */
		if (!ends_with(ci->filename, "/threading.py"))
			return -1;
	}
	return -1;
}

/* The int at addr as a number: its text (py_render), for any version's layout. */
static int read_int(struct py_reader *r, uint64_t addr, uint64_t *v)
{
	char text[64], *end;

	if (py_render(r, addr, text, sizeof(text), NULL) || text[0] < '0' || text[0] > '9')
		return -EBADMSG;
	*v = strtoull(text, &end, 10);
	return *end ? -EBADMSG : 0;
}

/* threading._main_thread's name, into the thread of ths whose ident it has. */
static void main_thread(struct py_reader *r, uint64_t globals, const struct py_dump_thread *ths,
			size_t n, struct py_thread_id *out)
{
	uint64_t main, ident_obj, ident;
	size_t i;

	if (py_dict_get(r, globals, "_main_thread", &main) ||
	    py_object_attr(r, main, "_ident", &ident_obj) || read_int(r, ident_obj, &ident))
		return;
	for (i = 0; i < n; i++)
		if (ths[i].thread_id == ident && ths[i].tid > 0 && !out[i].name[0] &&
		    py_object_attr_str(r, main, "_name", out[i].name, sizeof(out[i].name)))
			out[i].name[0] = 0;
}

/* Names out[0..n) from ths; the first bootstrap frame's globals into *globals. */
static void bootstrap_names(struct py_reader *r, const struct target *t, struct code_cache *cc,
			    const struct py_dump_thread *ths, size_t n, struct py_thread_id *out,
			    uint64_t *globals)
{
	struct py_local self;
	size_t i, total;

	for (i = 0; i < n && !(r->deadline_ns && mono_ns() >= r->deadline_ns); i++) {
		long k = bootstrap_frame(cc, t, &ths[i]);
		const struct py_dump_frame *f;

		if (k < 0 || ths[i].tid <= 0)
			continue;
		f = &ths[i].frames[k];
		if (py_frame_locals(r, f->frame, f->code, &self, 1, &total) == 1 &&
		    !strcmp(self.name, "self") && self.value &&
		    py_object_attr_str(r, self.value, "_name", out[i].name, sizeof(out[i].name)))
			out[i].name[0] = 0;
		if (!*globals &&
		    remote_read(t->pid, f->frame + frame_globals(t->version), globals, 8))
			*globals = 0;
	}
}

int py_thread_names(struct py_reader *r, const struct target *t, struct code_cache *cc,
		    struct py_thread_id *out, size_t max, uint64_t *threading)
{
	struct py_dump_thread *ths;
	struct py_dump_state st;
	uint64_t globals = 0;
	int n, i;

	if (max > PY_DUMP_THREADS)
		max = PY_DUMP_THREADS;
	ths = malloc(max * sizeof(*ths));
	if (!ths)
		return -ENOMEM;
	n = py_dump_threads(r, t, ths, max, &st);
	for (i = 0; i < n; i++)
		out[i] = (struct py_thread_id){ .ident = ths[i].thread_id, .tid = ths[i].tid };
	if (n > 0) {
		bootstrap_names(r, t, cc, ths, (size_t)n, out, &globals);
		if (globals)
			*threading = globals;
		if (*threading)
			main_thread(r, *threading, ths, (size_t)n, out);
	}
	free(ths);
	return n;
}
