// SPDX-License-Identifier: GPL-2.0-only
/*
 * pybpfprof dump --native: each thread's native frames among its Python
 * frames, read from outside without stopping the process. The sampler
 * unwinds a copy of the registers and stack BPF took at the tick; here no
 * BPF runs and no ptrace stops the thread, so only a thread waiting in the
 * kernel can be unwound: /proc/PID/task/TID/syscall gives the stack and
 * instruction pointers it entered the kernel with, the stack above that
 * pointer is read with process_vm_readv and unwound with the call frame
 * information of the process's files (proc/native_unwind.c), from those two
 * registers alone. A thread that leaves its wait while its stack is read
 * would give a mixed copy, so the registers are read again after the copy
 * and must not have moved. A running thread is said to be running.
 *
 * The unwind's eval-loop calls stand for the Python frames they ran, as in
 * the sampler (session/native_merge.h): every other frame, the
 * interpreter's own (time_sleep, pysleep) included, is shown where it was
 * called. Everything is the target's: the stack copy is bounded, the
 * frames too, and every name is charged to the process's budget.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dump.h"
#include "proc/native_unwind.h"
#include "proc/procfs.h"
#include "session/native_merge.h"

#define NATIVE_STACK (256u << 10) /* bytes of a thread's stack read at most */
#define NATIVE_FRAMES 256	  /* native frames of a thread unwound at most */
#define NATIVE_TRIES 3		  /* copies of a stack until its thread stays in its wait */
#define COST_NFRAME 48		  /* bytes charged beside a frame's name and file */

/* What a thread's syscall file says of where it waits. */
struct wait_regs {
	long nr; /* the system call, or -1: blocked outside one */
	uint64_t sp, pc;
};

/*
 * Its stack and instruction pointers, from /proc/PID/task/TID/syscall: "nr
 * arg1..arg6 sp pc", "-1 sp pc", or "running". 0, -EBUSY (running), or
 * -errno.
 */
static int wait_regs(pid_t pid, pid_t tid, struct wait_regs *w)
{
	char path[96], buf[512], *p, *end;
	int i, words;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	proc_read_small_file(path, buf, sizeof(buf), false);
	if (!buf[0])
		return -ENOENT;
	if (!strncmp(buf, "running", 7))
		return -EBUSY;
	w->nr = strtol(buf, &p, 10);
	if (p == buf)
		return -EINVAL;
	words = w->nr >= 0 ? 6 : 0;
	for (i = 0; i < words; i++, p = end)
		if (strtoull(p, &end, 16), end == p)
			return -EINVAL;
	w->sp = strtoull(p, &end, 16);
	if (end == p)
		return -EINVAL;
	p = end;
	w->pc = strtoull(p, &end, 16);
	return end == p || !w->sp || !w->pc ? -EINVAL : 0;
}

static bool is_entry(const uint64_t *entries, uint32_t nbits, uint32_t i)
{
	return entries && i < nbits && (entries[i / 64] >> (i % 64) & 1);
}

enum dump_native_status dump_native_place(const uint8_t *kinds, uint32_t n, uint32_t npy,
					  const uint64_t *entries, uint32_t nbits, bool py_cut,
					  int32_t *at, uint32_t *placed)
{
	uint32_t i, pi = 0, evals = 0;
	bool agree = true;

	*placed = 0;
	if (!npy) {
		/* no Python frame to place them among: the whole native stack */
		for (i = 0; i < n; i++)
			at[i] = 0;
		return DUMP_NATIVE_WHOLE;
	}
	for (i = 0; i < n; i++) {
		at[i] = -1;
		if (kinds[i] != NATIVE_PC_EVAL) {
			/* past the outermost Python frame: the thread's start, main */
			if (pi < npy)
				at[i] = (int32_t)pi;
			continue;
		}
		evals++;
		if (pi == npy) {
			/* an eval call beyond the Python frames read: fine only if they were cut */
			agree = py_cut;
			break;
		}
		do
			pi++;
		while (!is_entry(entries, nbits, pi - 1) && pi < npy);
	}
	for (; i < n; i++)
		at[i] = -1;
	*placed = agree ? pi : 0;
	if (agree && evals)
		return pi < npy ? DUMP_NATIVE_PARTIAL : DUMP_NATIVE_PLACED;
	/*
	 * No eval call (the unwind ended first: all it found was called by the
	 * innermost Python frame), or stacks that disagree: the frames below
	 * the innermost, up to the first of the interpreter's, are still sure.
	 */
	for (i = 0; i < n; i++) {
		bool sure = kinds[i] == NATIVE_PC_OTHER && (i == 0 || at[i - 1] == 0);

		at[i] = !evals || sure ? 0 : -1;
	}
	return evals ? DUMP_NATIVE_BELOW : DUMP_NATIVE_PARTIAL;
}

/* The frames of one unwind, where dump_native_place put them. */
struct unwound {
	uint64_t pcs[NATIVE_FRAMES], sps[NATIVE_FRAMES];
	uint8_t kinds[NATIVE_FRAMES];
	int32_t at[NATIVE_FRAMES];
	int n;
	uint8_t status;	 /* enum dump_native_status */
	uint32_t placed; /* Python frames the eval calls found account for */
};

/* One frame kept: its name charged to the budget; false once it is spent. */
static bool keep_frame(struct dump_process *dp, struct native_unwinder *u, struct dump_thread *th,
		       uint64_t pc, uint32_t at)
{
	char name[256], file[512];
	struct dump_nframe *f = &th->native[th->nnative];

	native_unwinder__name(u, pc, name, sizeof(name), file, sizeof(file));
	if (!dump_budget_take(dp, COST_NFRAME + strlen(name) + strlen(file)))
		return false;
	f->name = strdup(name);
	f->file = strdup(file);
	if (!f->name || !f->file) {
		free(f->name);
		free(f->file);
		return false;
	}
	f->pc = pc;
	f->at = at;
	th->nnative++;
	return true;
}

/* The kind of each pc: the eval loop (by name, or 3.12+ by the shims pt passed). */
static void classify(struct native_unwinder *u, struct unwound *uw, const struct py_dump_thread *pt)
{
	char name[256], file[512];
	int i;

	for (i = 0; i < uw->n; i++) {
		uw->kinds[i] = NATIVE_PC_OTHER;
		if (!native_unwinder__in_interp(u, uw->pcs[i]))
			continue;
		native_unwinder__name(u, uw->pcs[i], name, sizeof(name), file, sizeof(file));
		uw->kinds[i] = native_merge_is_eval(name) ? NATIVE_PC_EVAL : NATIVE_PC_INTERP;
	}
	/*
	 * The last frame unwound has no known end (the unwind stopped in it, or
	 * above it lies only the thread's start): it holds no shim, or every
	 * shim above would be its
	 */
	if (pt && pt->nshims && uw->n)
		native_merge_eval_by_shims(uw->kinds, uw->sps, (uint32_t)uw->n, uw->sps[uw->n - 1],
					   pt->shims, pt->nshims);
	/* the interpreter's own functions are frames here, as a debugger shows them */
	for (i = 0; i < uw->n; i++)
		if (uw->kinds[i] == NATIVE_PC_INTERP)
			uw->kinds[i] = NATIVE_PC_OTHER;
}

/* Where the unwound frames go among pt's Python frames (none: the whole stack). */
static void place(struct unwound *uw, const struct py_dump_thread *pt)
{
	uw->status = dump_native_place(uw->kinds, (uint32_t)uw->n, pt ? (uint32_t)pt->nframes : 0,
				       pt ? pt->entry_mask : NULL, PY_DUMP_DEPTH,
				       pt && (pt->truncated || pt->read_error), uw->at,
				       &uw->placed);
}

/* One unwind of the copy from w's registers (and bp, if not 0), classified and placed. */
static void attempt(struct native_unwinder *u, pid_t tid, const struct wait_regs *w, uint64_t bp,
		    const uint8_t *stack, size_t len, const struct py_dump_thread *pt,
		    struct unwound *uw)
{
	struct native_regs regs = { .ip = w->pc,
				    .sp = w->sp,
				    .bp = bp,
				    .known = bp ? NATIVE_REGS_IP_SP_BP : NATIVE_REGS_IP_SP };

	uw->n = native_unwinder__unwind_all(u, tid, &regs, stack, len, uw->pcs, uw->sps,
					    NATIVE_FRAMES);
	classify(u, uw, pt);
	place(uw, pt);
}

/* Whether a is a better unwind than b: all its Python frames placed, or more of them, or deeper. */
static bool better(const struct unwound *a, const struct unwound *b)
{
	if ((a->status == DUMP_NATIVE_PLACED) != (b->status == DUMP_NATIVE_PLACED))
		return a->status == DUMP_NATIVE_PLACED;
	if (a->placed != b->placed)
		return a->placed > b->placed;
	return a->n > b->n;
}

/*
 * Where rbp may point, for code built with frame pointers (Debian's 3.14
 * and 3.15, among others), whose frames need it: the syscall file does not
 * give it, and the frames inside the C library keep it as it was, so it is
 * the frame record of the first function that uses it, at or above from
 * (where the unwind stopped): a word that is 0 or a higher address of the
 * copy (the saved rbp), then a return address into a mapped file. At most
 * max of them, in the first BP_SCAN bytes.
 */
#define BP_SCAN 8192
#define BP_TRIES 8

static int bp_candidates(struct native_unwinder *u, const uint8_t *stack, size_t len, uint64_t sp,
			 uint64_t from, uint64_t *out, int max)
{
	uint64_t end = sp + len, a, saved, ret;
	int n = 0;

	for (a = (from + 7) & ~7ULL; a >= sp && a + 16 <= end && a - from < BP_SCAN && n < max;
	     a += 8) {
		memcpy(&saved, stack + (a - sp), 8);
		memcpy(&ret, stack + (a + 8 - sp), 8);
		if ((!saved || (saved > a && saved < end)) && native_unwinder__in_code(u, ret))
			out[n++] = a;
	}
	return n;
}

/*
 * The unwind of th's copy into best: from its stack and instruction
 * pointers alone, or, where that stopped short, from there with the best
 * of the frame records found as rbp (tmp: room for the tries).
 */
static void unwind_thread(struct native_unwinder *u, pid_t tid, const struct wait_regs *w,
			  const uint8_t *stack, size_t len, const struct py_dump_thread *pt,
			  struct unwound *best, struct unwound *tmp)
{
	uint64_t bps[BP_TRIES];
	int k, nbp;

	attempt(u, tid, w, 0, stack, len, pt, best);
	if (best->status == DUMP_NATIVE_PLACED)
		return;
	nbp = bp_candidates(u, stack, len, w->sp, best->n ? best->sps[best->n - 1] : w->sp, bps,
			    BP_TRIES);
	for (k = 0; k < nbp; k++) {
		attempt(u, tid, w, bps[k], stack, len, pt, tmp);
		if (better(tmp, best))
			memcpy(best, tmp, sizeof(*best));
		if (best->status == DUMP_NATIVE_PLACED)
			return;
	}
}

/*
 * A copy of th's stack taken while it stays in its wait: the registers read
 * before and after the copy are the same. 0, or -EBUSY, -EAGAIN (it moved),
 * -errno.
 */
static int copy_stack(pid_t pid, const struct dump_thread *th, uint8_t *stack, size_t *len,
		      struct wait_regs *w)
{
	struct wait_regs again;
	ssize_t got;
	int k, err;

	for (k = 0; k < NATIVE_TRIES; k++) {
		err = wait_regs(pid, th->tid, w);
		if (err)
			return err;
		got = native_read_stack(pid, w->sp, stack, NATIVE_STACK);
		if (got < 0)
			return (int)got;
		*len = (size_t)got;
		if (!wait_regs(pid, th->tid, &again) && again.nr == w->nr && again.sp == w->sp &&
		    again.pc == w->pc)
			return 0;
	}
	return -EAGAIN;
}

/* Room for one thread: its stack's copy and two unwinds. */
struct native_room {
	uint8_t stack[NATIVE_STACK];
	struct unwound best, tmp;
};

/* One thread's native frames (pt: its Python stack, if any). */
static void thread_native(pid_t pid, struct native_unwinder *u, struct dump_process *dp,
			  struct dump_thread *th, const struct py_dump_thread *pt,
			  struct native_room *room)
{
	struct unwound *uw = &room->best;
	struct wait_regs w;
	size_t len = 0;
	int err, i;

	if (th->tid <= 0 || th->state == 'Z') {
		th->native_status = DUMP_NATIVE_UNREAD;
		th->native_err = -ESRCH;
		return;
	}
	err = copy_stack(pid, th, room->stack, &len, &w);
	if (err) {
		th->native_status = err == -EBUSY  ? DUMP_NATIVE_RUNNING :
				    err == -EAGAIN ? DUMP_NATIVE_MOVING :
						     DUMP_NATIVE_UNREAD;
		th->native_err = err;
		return;
	}
	unwind_thread(u, th->tid, &w, room->stack, len, pt, uw, &room->tmp);
	th->native_status = uw->status;
	th->native = calloc(uw->n ? uw->n : 1, sizeof(*th->native));
	for (i = 0; th->native && i < uw->n; i++)
		if (uw->at[i] >= 0 && !keep_frame(dp, u, th, uw->pcs[i], (uint32_t)uw->at[i])) {
			th->native_status = DUMP_NATIVE_CUT;
			return;
		}
}

/* The Python thread th shows, among pts (n of them), if any. */
static const struct py_dump_thread *python_of(const struct py_dump_thread *pts, int n,
					      struct dump_thread *const *ths,
					      const struct dump_thread *th)
{
	int i;

	for (i = 0; i < n; i++)
		if (ths[i] == th)
			return &pts[i];
	return NULL;
}

void dump_read_native(const struct target *t, const struct py_dump_thread *pts, int n,
		      struct dump_thread *const *ths, struct dump_process *dp)
{
	struct native_unwinder *u = NULL;
	struct native_room *room = malloc(sizeof(*room));
	size_t j;

	if (room)
		u = native_unwinder__new(t->pid, t->text_start, t->text_end);
	for (j = 0; j < dp->nthreads; j++) {
		struct dump_thread *th = &dp->threads[j];

		if (!u) {
			th->native_status = DUMP_NATIVE_UNREAD;
			th->native_err = -ENOMEM;
		} else if (dump_budget_spent(dp)) {
			th->native_status = DUMP_NATIVE_CUT;
		} else {
			thread_native(t->pid, u, dp, th, python_of(pts, n, ths, th), room);
		}
	}
	native_unwinder__free(u);
	free(room);
}

void dump_native_free(struct dump_thread *th)
{
	size_t i;

	for (i = 0; i < th->nnative; i++) {
		free(th->native[i].name);
		free(th->native[i].file);
	}
	free(th->native);
	th->native = NULL;
	th->nnative = 0;
}

const char *dump_native_key(uint8_t status)
{
	static const char *const keys[] = { NULL,      "placed", "partial", "below", "whole",
					    "running", "unread", "moving",  "cut" };

	return status < sizeof(keys) / sizeof(keys[0]) ? keys[status] : NULL;
}
