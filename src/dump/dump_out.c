// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump's bounded output. A hostile process can make its dump as
 * large as it likes (256 threads of 128 frames of 64 locals; a task graph
 * drawn as a tree), so nothing is written to the output directly: each
 * element (a thread's header, a frame with its locals, a task, a line of the
 * task tree) is formatted apart, in a buffer that never grows past the room
 * left, and written whole if it fits, else not at all. From the first
 * element that does not fit, the process's output is full: the writers count
 * what they leave out instead of writing it. Closers (brackets, the lines
 * saying what was cut) are written from reserves kept for them, so that the
 * output is complete and within its bounds, exactly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dump.h"

/* The element's buffer as a stdio stream: keeps at most o->room bytes, then only counts. */
static ssize_t el_write(void *cookie, const char *buf, size_t size)
{
	struct dump_out *o = cookie;
	size_t want;
	char *more;

	if (o->over || size > o->room - o->len) {
		o->over = true;
		return (ssize_t)size; /* swallowed: the element will not be written */
	}
	if (o->len + size > o->cap) {
		want = o->cap ? o->cap : 4096;
		while (want < o->len + size)
			want *= 2;
		if (want > o->room)
			want = o->room;
		more = realloc(o->buf, want);
		if (!more) {
			o->over = o->nomem = true;
			return (ssize_t)size;
		}
		o->buf = more;
		o->cap = want;
	}
	memcpy(o->buf + o->len, buf, size);
	o->len += size;
	return (ssize_t)size;
}

int dump_out__init(struct dump_out *o, FILE *f, uint64_t bound)
{
	cookie_io_functions_t io = { .write = el_write };

	memset(o, 0, sizeof(*o));
	o->f = f;
	o->bound = bound;
	o->el = fopencookie(o, "w", io);
	return o->el ? 0 : -ENOMEM;
}

void dump_out__free(struct dump_out *o)
{
	if (o->el)
		fclose(o->el);
	free(o->buf);
	o->el = NULL;
	o->buf = NULL;
}

/* What is left of bound once used and keep are taken from it. */
static uint64_t left(uint64_t bound, uint64_t used, uint64_t keep)
{
	return bound > used + keep ? bound - used - keep : 0;
}

bool dump_out__process(struct dump_out *o, uint64_t bound)
{
	uint64_t room = left(o->bound, o->written, DUMP_OUT_RESERVE);

	o->full = room < DUMP_PROC_RESERVE + DUMP_PROC_MIN;
	o->in_proc = !o->full;
	o->proc_bound = bound < room ? bound : room;
	o->proc_by_dump = bound > room;
	o->proc_written = 0;
	return o->in_proc;
}

uint64_t dump_out__room(const struct dump_out *o)
{
	if (o->in_proc)
		return left(o->proc_bound, o->proc_written, DUMP_PROC_RESERVE);
	return left(o->bound, o->written, DUMP_OUT_RESERVE);
}

FILE *dump_out__begin(struct dump_out *o, enum dump_el kind)
{
	uint64_t room;

	if (kind == DUMP_EL_ITEM && o->full)
		return NULL;
	if (kind == DUMP_EL_ITEM)
		room = dump_out__room(o);
	else if (o->in_proc)
		room = left(o->proc_bound, o->proc_written, 0);
	else
		room = left(o->bound, o->written, 0);
	fflush(o->el);
	o->len = 0;
	o->over = false;
	o->room = room < SIZE_MAX ? (size_t)room : SIZE_MAX;
	return o->el;
}

bool dump_out__end(struct dump_out *o)
{
	fflush(o->el);
	if (o->over) {
		o->len = 0;
		o->over = false;
		o->full = true;
		return false;
	}
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len && !o->err)
		o->err = -EIO;
	o->written += o->len;
	if (o->in_proc)
		o->proc_written += o->len;
	o->len = 0;
	return true;
}

void dump_out__process_end(struct dump_out *o)
{
	o->in_proc = false;
	o->full = false;
}
