// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every Python thread's stack, read from outside while the process runs
 * (pybpfprof dump). The frame walk is the BPF program's own
 * (bpf/stackwalk.h, which compiles as host C too): its reads go to
 * process_vm_readv here. A thread whose stack changes between two reads is
 * read again, a few times, until two reads agree; then it is marked moving.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote_mem.h"
#include "cpython/py_objects.h"
#include "util/mono.h"

/*
 * stackwalk.h's host side wants a reader, a depth limit and the module
 * bodies sent; the unit tests define those names for their memory images,
 * so this file's are renamed.
 */
#define stackwalk_read dump_stackwalk_read
#define stackwalk_module_sent dump_stackwalk_module_sent
#define max_depth dump_max_depth
#include "../../bpf/stackwalk.h"

__u32 dump_max_depth = PY_DUMP_DEPTH;

/* A dump sends no module records: none is ever sent. */
int dump_stackwalk_module_sent(__u64 key)
{
	(void)key;
	return 0;
}
/* The process the walk reads (one walk at a time: dump is single-threaded). */
static pid_t walk_pid;

long dump_stackwalk_read(void *dst, __u32 size, __u64 addr)
{
	if (addr < 4096)
		return -EFAULT;
	return remote_read(walk_pid, addr, dst, size);
}

/* glibc's struct pthread.tid, from the thread pointer (x86_64, glibc 2.x). */
#define GLIBC_PTHREAD_TID 0x2d0

/* One read of a thread's stack, with each frame's address (the locals are there). */
static void walk_once(const struct py_offsets *off, struct scratch *s, uint64_t tstate,
		      struct py_dump_thread *th)
{
	struct walk_ctx w = { .off = off, .s = s, .read_size = off->frame_read_size };
	unsigned i;

	memset(&s->sample, 0, PY_SAMPLE_HEADER_SIZE);
	memset(s->entry_mask, 0, sizeof(s->entry_mask));
	s->nentries = s->nshims = 0;
	th->nframes = 0;
	w.f = current_frame(off, tstate);
	/* walk_step's own steps, so that each emitted frame's address is known */
	for (i = 0; i < PY_DUMP_DEPTH + 64 && w.f; i++) {
		uint64_t f = w.f;
		__u32 before = w.n;

		if (walk_step(i, &w))
			break;
		if (w.n > before && th->nframes < PY_DUMP_DEPTH) {
			struct py_frame *pf = &s->sample.frames[before];

			th->frames[th->nframes++] = (struct py_dump_frame){
				.frame = f,
				.code = pf->code,
				.instr = pf->instr,
				.fingerprint = pf->fingerprint,
			};
		}
	}
	memcpy(th->entry_mask, s->entry_mask, sizeof(th->entry_mask));
	th->nshims = s->nshims < PY_SHIM_MAX ? s->nshims : PY_SHIM_MAX;
	memcpy(th->shims, s->shim_addr, sizeof(th->shims));
	th->truncated = (s->sample.flags & PY_SAMPLE_TRUNCATED) || (w.f && i >= PY_DUMP_DEPTH + 64);
	th->read_error = s->sample.flags & PY_SAMPLE_READ_ERROR;
}

static bool same_stack(const struct py_dump_thread *a, const struct py_dump_thread *b)
{
	size_t i;

	if (a->nframes != b->nframes)
		return false;
	for (i = 0; i < a->nframes; i++)
		if (a->frames[i].code != b->frames[i].code ||
		    a->frames[i].instr != b->frames[i].instr ||
		    a->frames[i].frame != b->frames[i].frame)
			return false;
	return true;
}

/* Reads until two reads agree, at most PY_DUMP_TRIES times. */
static void read_stack(const struct py_offsets *off, struct scratch *s, uint64_t tstate,
		       struct py_dump_thread *th, struct py_dump_thread *prev)
{
	int k;

	walk_once(off, s, tstate, th);
	for (k = 1; k < PY_DUMP_TRIES; k++) {
		memcpy(prev, th, sizeof(*prev));
		walk_once(off, s, tstate, th);
		if (same_stack(prev, th))
			return;
	}
	th->moving = true;
}

/*
 * Which task the thread state runs on, as the process numbers it (its own
 * pid namespace): native_thread_id (3.11+), else glibc's pthread.tid.
 */
static pid_t thread_tid(const struct py_reader *r, const struct target *t, uint64_t tstate,
			uint64_t thread_id)
{
	uint64_t nid = 0;
	int32_t tid = 0;
	char path[64];
	FILE *f;

	if (r->O.tstate_native_id != PYPROF_NO_OFFSET &&
	    !remote_read(t->pid, tstate + r->O.tstate_native_id, &nid, 8) && nid &&
	    nid < 0x40000000)
		tid = (int32_t)nid;
	else if (thread_id >= 4096 && remote_read(t->pid, thread_id + GLIBC_PTHREAD_TID, &tid, 4))
		tid = 0;
	if (tid <= 0 || t->nspid != t->pid)
		return tid > 0 ? tid : 0; /* the caller maps it to a host tid */
	/* believed only if the process has such a task */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", t->pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	fclose(f);
	return tid;
}

/* GIL and GC fields of 3.13+ interpreters, from _Py_DebugOffsets.interpreter_state. */
static void debug_positions(const struct target *t, uint64_t *ceval_gil, uint64_t *gc)
{
	unsigned minor = (t->version >> 16) & 0xff;
	uint8_t buf[PY_DEBUG_OFFSETS_READ];
	uint64_t size, collecting;

	*ceval_gil = *gc = PYPROF_NO_OFFSET;
	if (minor < 13 || remote_read(t->pid, t->runtime_addr, buf, sizeof(buf)) ||
	    memcmp(buf, "xdebugpy", 8))
		return;
	/* interpreter_state: size at 48; gc, ceval_gil at 80, 112 (3.13) or 88, 120 (3.14+) */
	memcpy(&size, buf + 48, 8);
	memcpy(ceval_gil, buf + (minor == 13 ? 112 : 120), 8);
	memcpy(gc, buf + (minor == 13 ? 80 : 88), 8);
	if (*ceval_gil + 8 > size || *ceval_gil >= (1u << 20))
		*ceval_gil = PYPROF_NO_OFFSET;
	/*
	 * _gc_runtime_state.collecting: 200 in 3.13 (DWARF 3.13.0); 192 in 3.14
	 * (incremental collector) and 112 in 3.15, found live as the one int
	 * that is 1 in a "start" gc callback and 0 outside (3.14.8, 3.14.10,
	 * 3.15.2).
	 */
	collecting = minor == 13 ? PY_GC_COLLECTING : minor == 14 ? 192 : minor == 15 ? 112 : 0;
	if (!collecting || *gc + collecting + 4 > size || *gc >= (1u << 20))
		*gc = PYPROF_NO_OFFSET;
	else
		*gc += collecting;
}

int py_gil_place(const struct target *t, uint16_t *off, bool *via_interp)
{
	uint64_t ceval_gil, gc;
	struct py_obj_layout O;

	*off = PYPROF_NO_OFFSET;
	*via_interp = false;
	if (t->layout.free_threaded || py_layout__objects(t->version, &O))
		return -ENOTSUP;
	if (O.runtime_gil != PYPROF_NO_OFFSET) {
		*off = O.runtime_gil;
		return 0;
	}
	ceval_gil = O.interp_gil_ptr;
	if (t->version >> 16 >= 0x030D)
		debug_positions(t, &ceval_gil, &gc);
	/* the kernel's field is 16 bits wide: a farther one stays userspace's to find */
	if (ceval_gil >= PYPROF_NO_OFFSET)
		return -ENOENT;
	*off = (uint16_t)ceval_gil;
	*via_interp = true;
	return 0;
}

/*
 * Where the main interpreter's GIL is, whether it is locked, whether the
 * collector runs. A GIL whose fields are not what a GIL holds is unknown.
 */
static void interp_state(const struct py_reader *r, const struct target *t, uint64_t interp,
			 struct py_dump_state *st, uint64_t *holder)
{
	uint64_t gil = 0, ceval_gil = r->O.interp_gil_ptr, gc = r->O.interp_gc_collecting;
	uint64_t head[3];
	int32_t collecting;

	st->gil = 0;
	st->locked = st->collecting = -1;
	*holder = 0;
	if (t->version >> 16 >= 0x030D)
		debug_positions(t, &ceval_gil, &gc);
	if (r->O.runtime_gil != PYPROF_NO_OFFSET)
		gil = t->runtime_addr + r->O.runtime_gil;
	else if (ceval_gil != PYPROF_NO_OFFSET)
		gil = read_word(interp + ceval_gil);
	if (gil && !remote_read(t->pid, gil, head, sizeof(head)) && head[0] >= 1 &&
	    head[0] <= 1000000000 && (uint32_t)head[2] <= 1) {
		st->gil = gil;
		st->locked = (int)(uint32_t)head[2];
		*holder = st->locked ? head[1] : 0;
	}
	if (r->O.runtime_gc_collecting != PYPROF_NO_OFFSET)
		gc = t->runtime_addr + r->O.runtime_gc_collecting;
	else if (gc != PYPROF_NO_OFFSET)
		gc += interp;
	else
		gc = 0;
	if (gc && !remote_read(t->pid, gc, &collecting, 4) && (collecting == 0 || collecting == 1))
		st->collecting = collecting;
}

/* Each thread's GIL and GC state; a holder that is none of them makes both unknown. */
static void gil_owners(struct py_dump_thread *out, size_t n, struct py_dump_state *st,
		       uint64_t holder)
{
	size_t i, found = 0;

	for (i = 0; i < n; i++)
		found += st->gil && holder && out[i].tstate == holder;
	if (holder && !found) {
		st->gil = 0;
		st->locked = -1;
	}
	for (i = 0; i < n; i++) {
		out[i].gil = st->gil ? out[i].tstate == holder : -1;
		out[i].gc = st->collecting < 0 || out[i].gil < 0 ? -1 :
								   st->collecting && out[i].gil;
	}
}

/* Whether addr is among the first n of seen: a list that loops comes back to one. */
static bool seen_before(const uint64_t *seen, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (seen[i] == addr)
			return true;
	return false;
}

static bool past(const struct py_reader *r)
{
	return r->deadline_ns && mono_ns() >= r->deadline_ns;
}

/*
 * The thread states of one interpreter into out from *n on (up to max),
 * each read once: a thread state met before (in this or an earlier
 * interpreter) ends the list, and so does the reader's deadline. prev:
 * room for read_stack's previous read.
 */
static void interp_threads(struct py_reader *r, const struct target *t, uint64_t interp,
			   struct py_dump_thread *out, size_t *n, size_t max, struct scratch *s,
			   struct py_dump_thread *prev, struct py_dump_state *st)
{
	const struct py_offsets *off = &t->layout.bpf;
	uint64_t ts;
	size_t k;

	for (ts = read_word(interp + off->interp_threads_head), k = 0; ts && *n < max && k < 4096;
	     k++, ts = read_word(ts + off->tstate_next)) {
		struct py_dump_thread *th = &out[*n];
		size_t i;

		for (i = 0; i < *n && out[i].tstate != ts; i++)
			;
		if (i < *n) {
			st->loops = true;
			return;
		}
		if (past(r)) {
			st->out_of_time = true;
			return;
		}
		memset(th, 0, offsetof(struct py_dump_thread, frames));
		th->tstate = ts;
		th->thread_id = read_word(ts + off->tstate_thread_id);
		th->tid = thread_tid(r, t, ts, th->thread_id);
		read_stack(off, s, ts, th, prev);
		(*n)++;
	}
}

int py_dump_threads(struct py_reader *r, const struct target *t, struct py_dump_thread *out,
		    size_t max, struct py_dump_state *st)
{
	const struct py_offsets *off = &t->layout.bpf;
	uint64_t interps[PYPROF_MAX_INTERPS], interp, holder = 0;
	struct py_dump_thread *spare;
	struct scratch *s;
	size_t n = 0, steps;

	s = calloc(1, sizeof(*s));
	spare = malloc(sizeof(*spare));
	if (!s || !spare) {
		free(s);
		free(spare);
		return -ENOMEM;
	}
	walk_pid = t->pid;
	st->loops = st->out_of_time = false;
	interp = read_word(t->runtime_addr + off->runtime_interp_head);
	interp_state(r, t, interp, st, &holder);
	/* every interpreter's threads, newest first; each interpreter once */
	for (steps = 0; interp && steps < PYPROF_MAX_INTERPS; steps++) {
		if (seen_before(interps, steps, interp)) {
			st->loops = true;
			break;
		}
		interps[steps] = interp;
		interp_threads(r, t, interp, out, &n, max, s, spare, st);
		interp = read_word(interp + off->interp_next);
	}
	gil_owners(out, n, st, holder);
	free(s);
	free(spare);
	return (int)n;
}

int py_read_frame(pid_t pid, const struct py_offsets *off, uint64_t frame,
		  struct py_dump_frame *out)
{
	struct scratch *s = calloc(1, sizeof(*s));
	struct walk_ctx w = { .off = off, .s = s, .read_size = off->frame_read_size, .f = frame };
	int err = -ENOENT;

	if (!s)
		return -ENOMEM;
	walk_pid = pid;
	walk_step(0, &w);
	if (s->sample.flags & PY_SAMPLE_READ_ERROR)
		err = -EFAULT;
	else if (w.n == 1)
		err = 0;
	if (!err)
		*out = (struct py_dump_frame){
			.frame = frame,
			.code = s->sample.frames[0].code,
			.instr = s->sample.frames[0].instr,
			.fingerprint = s->sample.frames[0].fingerprint,
		};
	free(s);
	return err;
}
