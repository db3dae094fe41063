// SPDX-License-Identifier: GPL-2.0-only
/*
 * asyncio's task tree of a live target (pybpfprof dump --async), read from
 * outside like every other object: the task sets or lists, each task's
 * fields, and each coroutine's own frame, following what a suspended
 * coroutine awaits (the top of its frame's value stack) down to the future
 * it waits on. Every loop is bounded and every object's type is checked
 * before its fields are believed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote_mem.h"
#include "util/mono.h"
#include "cpython/py_async.h"

#define MODULE_DICT 16	  /* PyModuleObject.md_dict */
#define WEAKREF_OBJECT 16 /* PyWeakReference.wr_object */
#define STACK_SLOTS 512	  /* a frame's value stack is never deeper */

struct walk {
	struct py_reader *r;
	const struct target *t;
	struct py_async_layout A;
	struct py_async_task *out;
	size_t max, n;
	struct py_async_state *st;
	long long until_ns; /* 0: no end */
};

/*
 * Whether the read must stop, nothing more being read: its CPU time is over
 * (sampling's --async: counted as cut) or its reader's deadline has come
 * (dump: said as out of time).
 */
static bool out_of_time(struct walk *w)
{
	if (!w->st)
		return false;
	if (!w->st->cut && w->until_ns && thread_cpu_ns() >= w->until_ns)
		w->st->cut = true;
	if (!w->st->out_of_time && w->r->deadline_ns && mono_ns() >= w->r->deadline_ns)
		w->st->out_of_time = true;
	return w->st->cut || w->st->out_of_time;
}

static uint64_t word(const struct walk *w, uint64_t addr)
{
	uint64_t v = 0;

	if (addr < 4096 || remote_read(w->t->pid, addr, &v, 8))
		return 0;
	return v;
}

static bool known(const struct walk *w, uint64_t task, size_t *at)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->out[i].addr == task) {
			if (at)
				*at = i;
			return true;
		}
	return false;
}

/* "Task-N" for the lazily named (a counter in place of the name, 3.12+), else the str. */
static void task_name(struct walk *w, uint64_t obj, char *out, size_t len)
{
	char text[64];

	if (py_type_is(w->r, obj, "str") == 1 &&
	    !remote_read_str(w->t->pid, &w->t->layout, obj, out, len))
		return;
	if (py_type_is(w->r, obj, "int") == 1 && !py_render(w->r, obj, text, sizeof(text), NULL))
		snprintf(out, len, "Task-%s", text);
	else
		snprintf(out, len, "<unreadable at 0x%" PRIx64 ">", obj);
}

uint64_t py_async_await_slot(const struct py_async_layout *A, uint16_t localsplus, uint64_t frame,
			     uint64_t stack_field, uint64_t nlocalsplus)
{
	uint64_t base = frame + localsplus, slot;

	/* the frame and its whole stack within the address space: no sum below wraps */
	if (nlocalsplus > 65536 ||
	    frame > UINT64_MAX - localsplus - 8 * (nlocalsplus + STACK_SLOTS))
		return 0;
	base += 8 * nlocalsplus; /* the value stack follows the locals, cells and free variables */
	if (A->stack_pointer) {
		if (stack_field < base + 8 * (uint64_t)A->await_depth ||
		    stack_field > base + 8 * STACK_SLOTS || (stack_field & 7))
			return 0;
		return stack_field - 8 * (uint64_t)A->await_depth;
	}
	/* stacktop: an int counting slots from localsplus; an empty stack awaits nothing */
	slot = (uint32_t)stack_field;
	if ((int32_t)stack_field < 0 || slot < nlocalsplus + A->await_depth ||
	    slot > nlocalsplus + STACK_SLOTS)
		return 0;
	return frame + localsplus + 8 * (slot - A->await_depth);
}

/* What the suspended coroutine frame awaits, if another coroutine or generator: else 0. */
static uint64_t awaited_coro(struct walk *w, const struct py_dump_frame *f)
{
	uint64_t names = word(w, f->code + w->r->O.code_names), n = 0, slot, v;

	/* the frame's locals, cells and free variables: co_localsplusnames' length */
	if (!names || remote_read(w->t->pid, names + 16, &n, 8))
		return 0;
	slot = py_async_await_slot(&w->A, w->r->O.frame_localsplus, f->frame,
				   word(w, f->frame + w->A.frame_stack), n);
	v = slot ? word(w, slot) & ~(uint64_t)7 : 0; /* 3.14+ stack references carry tag bits */
	if (py_type_is(w->r, v, "coroutine") == 1 || py_type_is(w->r, v, "generator") == 1)
		return v;
	return 0;
}

/* The task's coroutine stack, outermost first: each coroutine's frame, then what it awaits. */
static void coro_stack(struct walk *w, struct py_async_task *task, uint64_t coro)
{
	const struct py_offsets *off = &w->t->layout.bpf;
	size_t i;

	for (i = 0; coro && i < PY_ASYNC_DEPTH; i++) {
		struct py_dump_frame *f = &task->frames[task->nframes];

		if (py_type_is(w->r, coro, "coroutine") != 1 &&
		    py_type_is(w->r, coro, "generator") != 1)
			return;
		if (py_read_frame(w->t->pid, off, coro + w->A.gen_iframe, f))
			return;
		task->nframes++;
		coro = awaited_coro(w, f);
	}
	task->frames_truncated = coro != 0;
}

/* Adds the object at obj if it is a pending C task not yet listed. */
static void add_task(struct walk *w, uint64_t obj)
{
	uint8_t buf[256];
	struct py_async_task *task;
	int32_t state;
	int is;

	if (!obj || out_of_time(w) || known(w, obj, NULL))
		return;
	is = py_type_is(w->r, obj, "_asyncio.Task");
	if (is != 1) {
		w->st->skipped += is == 0;
		w->st->unreadable += is < 0;
		return;
	}
	if (w->A.task_size > sizeof(buf) || remote_read(w->t->pid, obj, buf, w->A.task_size)) {
		w->st->unreadable++;
		return;
	}
	memcpy(&state, buf + w->A.fut_state, 4);
	if (state != 0) {
		w->st->finished++;
		return;
	}
	if (w->n >= w->max) {
		w->st->left_out = true;
		return;
	}
	task = &w->out[w->n++];
	memset(task, 0, sizeof(*task));
	task->addr = obj;
	task_name(w, *(uint64_t *)(void *)(buf + w->A.task_name), task->name, sizeof(task->name));
	coro_stack(w, task, *(uint64_t *)(void *)(buf + w->A.task_coro));
}

/* The tasks of a 3.14+ list: a ring of task_node links from head, bounded. */
static void add_list(struct walk *w, uint64_t head)
{
	uint64_t node = word(w, head);
	size_t k;

	/* a task met twice: the list loops without coming back to its head */
	for (k = 0; node && node != head && k < PY_ASYNC_CHAIN; k++) {
		if (out_of_time(w) || known(w, node - w->A.task_node, NULL))
			break;
		add_task(w, node - w->A.task_node);
		node = word(w, node);
	}
	if (node && node != head && !w->st->out_of_time && !w->st->cut)
		w->st->left_out = true;
}

/* Every task of a set of tasks, or of a WeakSet's set of references to them. */
static void add_set(struct walk *w, uint64_t set, bool weak)
{
	uint64_t *keys = malloc(PY_ASYNC_TASKS * sizeof(*keys)), data;
	size_t total;
	int n, i;

	if (!keys)
		return;
	if (weak && py_object_attr(w->r, set, "data", &data))
		data = 0;
	n = py_set_keys(w->r, weak ? data : set, keys, PY_ASYNC_TASKS, &total);
	if (n == PY_ASYNC_TASKS && total > (size_t)n)
		w->st->left_out = true;
	for (i = 0; i < n && !out_of_time(w); i++)
		add_task(w, weak ? word(w, keys[i] + WEAKREF_OBJECT) : keys[i]);
	free(keys);
}

/* 3.11-3.13: asyncio.tasks._all_tasks / _scheduled_tasks (WeakSets) and _eager_tasks. */
static int tasks_from_module(struct walk *w, uint64_t interp)
{
	uint64_t modules, mod, dict = w->r->asyncio_tasks, set;

	/* the module's dict as found before, while it still holds a task set (a memo) */
	if (!dict || (py_dict_get(w->r, dict, "_scheduled_tasks", &set) &&
		      py_dict_get(w->r, dict, "_all_tasks", &set))) {
		w->r->asyncio_tasks = 0;
		modules = word(w, interp + w->A.interp_modules);
		if (!modules)
			return -EFAULT;
		if (py_dict_get(w->r, modules, "asyncio.tasks", &mod)) {
			w->st->no_asyncio = true;
			return 0;
		}
		dict = word(w, mod + MODULE_DICT);
		if (!dict)
			return -EFAULT;
		if (py_dict_get(w->r, dict, "_scheduled_tasks", &set) &&
		    py_dict_get(w->r, dict, "_all_tasks", &set))
			return 0;
		w->r->asyncio_tasks = dict;
	}
	add_set(w, set, true);
	if (!py_dict_get(w->r, dict, "_eager_tasks", &set))
		add_set(w, set, false);
	return 0;
}

struct by_addr {
	uint64_t addr;
	size_t index;
};

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct by_addr *)a)->addr, y = ((const struct by_addr *)b)->addr;

	return x < y ? -1 : x > y;
}

/* The listed task at addr, by binary search of the sorted index: its position, or -1. */
static long find_task(const struct by_addr *sorted, size_t n, uint64_t addr)
{
	struct by_addr key = { .addr = addr };
	const struct by_addr *hit = bsearch(&key, sorted, n, sizeof(*sorted), cmp_addr);

	return hit ? (long)hit->index : -1;
}

/* Which listed tasks each task awaits: its fut_waiter, or a gather()'s children. */
static void link_awaits(struct walk *w)
{
	uint64_t kids[PY_ASYNC_AWAITS], list;
	struct by_addr *sorted = malloc((w->n ? w->n : 1) * sizeof(*sorted));
	size_t i, total;
	long at;
	int n, k;

	if (!sorted)
		return;
	for (i = 0; i < w->n; i++)
		sorted[i] = (struct by_addr){ w->out[i].addr, i };
	qsort(sorted, w->n, sizeof(*sorted), cmp_addr);

	for (i = 0; i < w->n && !out_of_time(w); i++) {
		struct py_async_task *task = &w->out[i];
		uint64_t waiter = word(w, task->addr + w->A.task_fut_waiter);

		if (!waiter)
			continue;
		at = find_task(sorted, w->n, waiter);
		if (at >= 0) {
			task->awaits[task->nawaits++] = (uint32_t)at;
			continue;
		}
		if (py_type_is(w->r, waiter, "_GatheringFuture") != 1 ||
		    py_object_attr(w->r, waiter, "_children", &list) ||
		    py_type_is(w->r, list, "list") != 1)
			continue;
		task->gather = true;
		n = py_list_items(w->r, list, kids, PY_ASYNC_AWAITS, &total);
		for (k = 0; k < n; k++)
			if ((at = find_task(sorted, w->n, kids[k])) >= 0)
				task->awaits[task->nawaits++] = (uint32_t)at;
	}
	free(sorted);
}

int py_async_tasks(struct py_reader *r, const struct target *t, struct py_async_task *out,
		   size_t max, struct py_async_state *st)
{
	return py_async_tasks_until(r, t, out, max, st, 0);
}

int py_async_tasks_until(struct py_reader *r, const struct target *t, struct py_async_task *out,
			 size_t max, struct py_async_state *st, long long until_ns)
{
	struct walk w = { .r = r, .t = t, .out = out, .max = max, .st = st, .until_ns = until_ns };
	const struct py_offsets *off = &t->layout.bpf;
	uint64_t interp, ts;
	size_t k;
	int err = 0;

	memset(st, 0, sizeof(*st));
	if (t->layout.free_threaded || py_layout__async(t->version, &w.A))
		return -ENOTSUP;
	interp = word(&w, t->runtime_addr + off->runtime_interp_head);
	if (!interp)
		return -EFAULT;
	if (w.A.tstate_tasks == PYPROF_NO_OFFSET) {
		err = tasks_from_module(&w, interp);
	} else {
		/* each thread's tasks, then those of threads that have exited */
		ts = word(&w, interp + off->interp_threads_head);
		for (k = 0; ts && k < 4096 && !out_of_time(&w);
		     k++, ts = word(&w, ts + off->tstate_next))
			add_list(&w, ts + w.A.tstate_tasks);
		add_list(&w, interp + w.A.interp_tasks);
	}
	if (err)
		return err;
	link_awaits(&w);
	return (int)w.n;
}

int py_async_running_task(struct py_reader *r, const struct target *t, uint64_t tstate,
			  uint64_t *current_tasks, uint64_t *task)
{
	struct walk w = { .r = r, .t = t };
	uint64_t keys[PY_DICT_ITEMS], values[PY_DICT_ITEMS], loop = 0, mod, interp;
	int n, i;

	*task = 0;
	if (t->layout.free_threaded || py_layout__async(t->version, &w.A))
		return -ENOTSUP;
	if (w.A.tstate_running_task != PYPROF_NO_OFFSET) {
		*task = word(&w, tstate + w.A.tstate_running_task);
		return 0;
	}
	if (!*current_tasks) {
		interp = word(&w, t->runtime_addr + t->layout.bpf.runtime_interp_head);
		if (py_dict_get(r, word(&w, interp + w.A.interp_modules), "asyncio.tasks", &mod) ||
		    py_dict_get(r, word(&w, mod + MODULE_DICT), "_current_tasks", current_tasks))
			return -ENOENT;
	}
	n = py_dict_items(r, *current_tasks, keys, values, PY_DICT_ITEMS);
	if (n < 0)
		return n;
	if (w.A.tstate_running_loop != PYPROF_NO_OFFSET)
		loop = word(&w, tstate + w.A.tstate_running_loop);
	else if (n == 1)
		loop = keys[0];
	for (i = 0; loop && i < n; i++)
		if (keys[i] == loop)
			*task = values[i];
	return 0;
}

int py_async_thread_states(struct py_reader *r, const struct target *t, pid_t *tids,
			   uint64_t *tstates, size_t max)
{
	const struct py_offsets *off = &t->layout.bpf;
	struct walk w = { .r = r, .t = t };
	uint64_t interp = word(&w, t->runtime_addr + off->runtime_interp_head), ts, id;
	size_t n = 0, k;

	if (r->O.tstate_native_id == PYPROF_NO_OFFSET)
		return -ENOTSUP;
	ts = interp ? word(&w, interp + off->interp_threads_head) : 0;
	for (k = 0; ts && k < 4096 && n < max; k++, ts = word(&w, ts + off->tstate_next)) {
		id = word(&w, ts + r->O.tstate_native_id);
		if (!id || id >= 0x40000000)
			continue;
		tids[n] = (pid_t)id;
		tstates[n++] = ts;
	}
	return (int)n;
}
