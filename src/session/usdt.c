// SPDX-License-Identifier: GPL-2.0-only
/*
 * USDT modes (--calls, --gc, --imports). What a target can do is decided
 * before anything is attached, from two facts: the probe notes in its
 * interpreter's ELF file (the file holding _PyRuntime: the executable of a
 * static build, the libpython3.X.so a shared build or an embedding program
 * has mapped, read through /proc/PID/map_files, so a chrooted target's own
 * copy), and its version, because on some versions a probe
 * exists but does not fire (3.11 fires function__entry only on its tracing
 * path). A mode that cannot work on a target is refused with a sentence, not
 * attached to report nothing.
 *
 * Attaching goes through libbpf (bpf_program__attach_usdt), which gives the
 * kernel each probe's semaphore as the uprobe's ref_ctr_offset: the kernel
 * raises it while the link exists and lowers it when the link's fd closes,
 * also when pybpfprof is killed. Both the probe and the semaphore are file
 * offsets in that ELF file, so a libpython mapped anywhere (PIC, ASLR) needs
 * no load address from us: the kernel finds the semaphore in the process's
 * mapping of the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/bus_guard.h"
#include "util/deadline.h"
#include "proc/elf_file.h"
#include "util/log.h"
#include "pybpfprof.skel.h"
#include "session/usdt.h"

_Static_assert(sizeof(struct py_event) == 128, "py_event layout changed");
_Static_assert(sizeof(struct py_call_edge_key) == 32, "py_call_edge_key layout changed");
_Static_assert(PYPROF_HIST_BUCKETS == PROFILE_HIST_BUCKETS, "histogram sizes differ");

#define PROVIDER "python"

static void note_probe(const char *name, uint64_t sem, void *ctx)
{
	struct usdt_probes *pr = ctx;

	pr->function_entry |= !strcmp(name, "function__entry");
	pr->function_return |= !strcmp(name, "function__return");
	pr->line |= !strcmp(name, "line");
	pr->gc_start |= !strcmp(name, "gc__start");
	pr->gc_done |= !strcmp(name, "gc__done");
	pr->import_start |= !strcmp(name, "import__find__load__start");
	pr->import_done |= !strcmp(name, "import__find__load__done");
}

int usdt_probes__read(const char *path, struct usdt_probes *pr)
{
	struct elf_file *ef = elf_file__open(path);

	memset(pr, 0, sizeof(*pr));
	if (!ef)
		return -errno;
	pr->total = elf_file__usdt_probes(ef, PROVIDER, note_probe, pr);
	elf_file__close(ef);
	return 0;
}

int usdt__check(const struct target *t, const struct usdt_probes *pr, unsigned modes,
		bool py311_line, char *why, size_t whylen)
{
	unsigned minor = (t->version >> 16) & 0xff;
	const char *mode = (modes & USDT_CALLS) ? "--calls" :
			   (modes & USDT_GC)	? "--gc" :
						  "--imports";

	if (!modes)
		return 0;
	if (!pr->total) {
		snprintf(why, whylen,
			 "pid %d (Python %s) cannot be traced with %s: its interpreter "
			 "%s was built without USDT probes (no python provider in .note.stapsdt, "
			 "as in pyenv, python.org and most Docker builds); profile it by sampling, "
			 "without %s",
			 t->pid, t->version_str, mode, t->python_elf, mode);
		return -ENOTSUP;
	}
	if (modes & USDT_CALLS) {
		if (!pr->function_entry || !pr->function_return) {
			snprintf(why, whylen,
				 "pid %d runs Python %s, which has no function__entry/"
				 "function__return probes (CPython 3.12 to 3.14 removed them), so "
				 "--calls cannot count its calls; profile it by sampling, without "
				 "--calls",
				 t->pid, t->version_str);
			return -ENOTSUP;
		}
		/* calls.bpf.c reads co_flags where a default build has it */
		if (t->layout.free_threaded) {
			snprintf(
				why, whylen,
				"pid %d runs the free-threaded Python %s, whose function probes "
				"--calls does not support; profile it by sampling, without --calls",
				t->pid, t->version_str);
			return -ENOTSUP;
		}
		if (minor == 11 && (!py311_line || !pr->line)) {
			snprintf(
				why, whylen,
				"pid %d runs Python %s, whose function probes fire only "
				"while the line probe or a trace function is active; --calls needs "
				"--calls-py311-line for it, which slows the target about 30 times "
				"(and is reported to crash some 3.11 builds): profile it by sampling "
				"instead",
				t->pid, t->version_str);
			return -ENOTSUP;
		}
	}
	if ((modes & USDT_GC) && (!pr->gc_start || !pr->gc_done)) {
		snprintf(why, whylen,
			 "pid %d (Python %s) has no gc__start/gc__done probes, so --gc "
			 "cannot time its collections; profile it by sampling, without --gc",
			 t->pid, t->version_str);
		return -ENOTSUP;
	}
	if ((modes & USDT_IMPORTS) && (!pr->import_start || !pr->import_done)) {
		snprintf(why, whylen,
			 "pid %d (Python %s) has no import__find__load probes, so "
			 "--imports cannot time its imports; profile it by sampling, without "
			 "--imports",
			 t->pid, t->version_str);
		return -ENOTSUP;
	}
	return 0;
}

void usdt__prepare(struct session *s, unsigned modes)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	/* Hash maps are preallocated: tens of MB (memory-cgroup accounted) nobody would use. */
	struct bpf_map *calls[] = {
		skel->maps.call_stacks, skel->maps.call_active, skel->maps.call_edges,
		skel->maps.call_hist,	skel->maps.call_codes,	skel->maps.call_zero_map,
	};
	size_t i;

	/* Nor are programs that will not be attached verified: each stack walk costs load time. */
	if (!(modes & USDT_CALLS)) {
		for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			bpf_map__set_max_entries(calls[i], 1);
		bpf_program__set_autoload(skel->progs.on_func_entry, false);
		bpf_program__set_autoload(skel->progs.on_func_return, false);
		bpf_program__set_autoload(skel->progs.on_line, false);
	}
	if (!(modes & USDT_GC)) {
		bpf_map__set_max_entries(skel->maps.gc_starts, 1);
		bpf_program__set_autoload(skel->progs.on_gc_start, false);
		bpf_program__set_autoload(skel->progs.on_gc_done, false);
	}
	if (!(modes & USDT_IMPORTS)) {
		bpf_map__set_max_entries(skel->maps.events, getpagesize());
		bpf_program__set_autoload(skel->progs.on_import_start, false);
		bpf_program__set_autoload(skel->progs.on_import_done, false);
	}
}

struct attach_call {
	struct bpf_program *prog;
	const struct target *t;
	pid_t pid; /* t's pid, or -1: every process of the file */
	const char *name;
	struct bpf_link *link;
	bool returned; /* false: cut short by SIGBUS */
};

static int do_attach(void *ctx)
{
	struct attach_call *a = ctx;

	a->link = bpf_program__attach_usdt(a->prog, a->pid, a->t->python_elf_host, PROVIDER,
					   a->name, NULL);
	a->returned = true;
	return a->link ? 0 : -errno;
}

static int attach_one(struct usdt *u, struct bpf_program *prog, const struct target *t, pid_t pid,
		      const char *name, char *why, size_t whylen)
{
	struct attach_call a = { prog, t, pid, name, NULL, false };
	struct bpf_link *l;
	int err;

	if (vec_grow((void **)&u->links, &u->cap_links, u->nlinks + 1, sizeof(*u->links)))
		return -ENOMEM;
	/*
	 * The interpreter as held by the kernel (/proc/PID/exe or the mapping's
	 * /proc/PID/map_files entry): right for chrooted targets, and no path
	 * the target could swap. libbpf maps it: a target that truncates it
	 * meanwhile gets us SIGBUS, made an error here.
	 */
	err = bus_guard__call(do_attach, &a);
	l = a.link;
	if (!a.returned) {
		snprintf(why, whylen,
			 "cannot attach to the %s probe of pid %d: its interpreter "
			 "file %s was truncated while it was read",
			 name, t->pid, t->python_elf);
		return err;
	}
	if (!l) {
		snprintf(why, whylen, "cannot attach to the %s probe of pid %d (%s): %s%s", name,
			 t->pid, t->python_elf, strerror(-err), uprobe_privilege_hint(err));
		return err;
	}
	u->links[u->nlinks++] = l;
	return 0;
}

/* modes' programs on t's interpreter, for pid only or (-1) for every process of it. */
static int attach_modes(struct usdt *u, struct session *s, const struct target *t, pid_t pid,
			unsigned modes, bool py311_line, char *why, size_t whylen)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	unsigned minor = (t->version >> 16) & 0xff;
	int err = 0;

	/*
	 * Returns before entries: a return with no entry is ignored, while an
	 * entry whose return is not attached yet would leave the stack unbalanced.
	 */
	if (modes & USDT_CALLS) {
		err = attach_one(u, skel->progs.on_func_return, t, pid, "function__return", why,
				 whylen);
		if (!err)
			err = attach_one(u, skel->progs.on_func_entry, t, pid, "function__entry",
					 why, whylen);
		if (!err && minor == 11 && py311_line)
			err = attach_one(u, skel->progs.on_line, t, pid, "line", why, whylen);
	}
	if (!err && (modes & USDT_GC)) {
		err = attach_one(u, skel->progs.on_gc_done, t, pid, "gc__done", why, whylen);
		if (!err)
			err = attach_one(u, skel->progs.on_gc_start, t, pid, "gc__start", why,
					 whylen);
	}
	if (!err && (modes & USDT_IMPORTS)) {
		err = attach_one(u, skel->progs.on_import_done, t, pid, "import__find__load__done",
				 why, whylen);
		if (!err)
			err = attach_one(u, skel->progs.on_import_start, t, pid,
					 "import__find__load__start", why, whylen);
	}
	return err;
}

int usdt__attach(struct usdt *u, struct session *s, const struct target *t, unsigned modes,
		 bool py311_line, char *why, size_t whylen)
{
	return attach_modes(u, s, t, t->pid, modes, py311_line, why, whylen);
}

static struct usdt_binary *find_binary(struct usdt *u, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < u->nbins; i++)
		if (u->bins[i].dev == dev && u->bins[i].ino == ino)
			return &u->bins[i];
	return NULL;
}

/* The first process of an interpreter file: its probes read, checked and attached. */
static void binary_attach(struct usdt *u, struct session *s, const struct target *t,
			  struct usdt_binary *b, unsigned modes, bool py311_line)
{
	char why[512];
	size_t first = u->nlinks, i;

	b->err = usdt_probes__read(t->python_elf_host, &b->pr);
	if (b->err) {
		snprintf(b->why, sizeof(b->why), "cannot read the USDT notes of %.300s: %s",
			 t->python_elf, strerror(-b->err));
		return;
	}
	b->err = usdt__check(t, &b->pr, modes, py311_line, why, sizeof(why));
	if (b->err)
		return; /* the sentence is made again for each process, naming it */
	b->err = attach_modes(u, s, t, -1, modes, py311_line, b->why, sizeof(b->why));
	if (!b->err) {
		pr_info("USDT probes on in %s, for every process that runs it (pid %d first)\n",
			t->python_elf, t->pid);
		return;
	}
	/* all of the file's probes or none: half of a pair would count nothing right */
	for (i = first; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	u->nlinks = first;
}

int usdt__follow(struct usdt *u, struct session *s, const struct target *t, unsigned modes,
		 bool py311_line, bool *attached_now, char *why, size_t whylen)
{
	struct usdt_binary *b;
	struct stat st;

	*attached_now = false;
	/* the file the kernel maps for t (python_elf_host is a /proc path of its own) */
	if (stat(t->python_elf_host, &st)) {
		snprintf(why, whylen, "pid %d is not traced with USDT: its interpreter %s: %s",
			 t->pid, t->python_elf, strerror(errno));
		return -ESRCH;
	}
	b = find_binary(u, st.st_dev, st.st_ino);
	if (!b) {
		if (vec_grow((void **)&u->bins, &u->cap_bins, u->nbins + 1, sizeof(*u->bins))) {
			snprintf(why, whylen, "pid %d is not traced with USDT: out of memory",
				 t->pid);
			return -ENOMEM;
		}
		b = &u->bins[u->nbins++];
		memset(b, 0, sizeof(*b));
		b->dev = st.st_dev;
		b->ino = st.st_ino;
		binary_attach(u, s, t, b, modes, py311_line);
		*attached_now = !b->err;
	}
	if (b->err == -ENOTSUP)
		return usdt__check(t, &b->pr, modes, py311_line, why, whylen);
	if (b->err)
		snprintf(why, whylen, "pid %d is not traced with USDT: %s", t->pid, b->why);
	return b->err;
}

void usdt__detach(struct usdt *u)
{
	size_t i;

	for (i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	free(u->links);
	free(u->bins);
	memset(u, 0, sizeof(*u));
}

/* A finished import on the timeline, nested in its parent by its times. */
static void timeline_import(struct profile *p, const struct profile_target *pp,
			    const struct profile_import *im)
{
	struct profile_tl_add a = { .kind = PROFILE_TL_IMPORT,
				    .arg = im->found ? PROFILE_TL_IMPORT_FOUND : 0,
				    .tid = im->tid,
				    .ktime_ns = im->start_ns,
				    .dur_ns = im->ns,
				    .name = im->module };

	profile_target__tl_add(p, pp, &a);
}

int usdt__on_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	const struct py_event *e = data;
	struct collector_target *ts;
	struct profile_target *pp;
	char name[PY_EVENT_NAME + 1];

	if (size < sizeof(*e)) {
		c->malformed++;
		return 0;
	}
	ts = collector__find(c, e->pid);
	if (!ts) {
		c->unknown_pid++;
		return 0;
	}
	pp = &c->prof->targets[ts->target_index];
	memcpy(name, e->name, PY_EVENT_NAME);
	name[PY_EVENT_NAME] = '\0';
	if (e->kind == PY_EVENT_IMPORT_START) {
		if (profile_target__import_start(pp, e->tid, name, e->ktime_ns))
			c->malformed++;
	} else if (e->kind == PY_EVENT_IMPORT_DONE) {
		int i = profile_target__import_done(pp, e->tid, e->found, e->ktime_ns);

		if (i < 0)
			c->prof->usdt.imports_unmatched++;
		else
			timeline_import(c->prof, pp, &pp->imports[i]);
	} else {
		c->malformed++;
	}
	return 0;
}

/* Profile function of a code object seen by --calls; UINT32_MAX on allocation failure. */
static uint32_t call_func(struct collector *c, struct collector_target *ts,
			  const struct py_call_func *fn, bool count_unresolved)
{
	const struct code_info *ci = NULL;

	/*
	 * A process that has exited cannot be read again: a lookup of an
	 * older object at the same address (freed and reused, as happens at
	 * startup) must not drop the entry of the one that lives there now.
	 * A target with more functions than can be read in time gets the rest
	 * unresolved.
	 */
	ci = code_cache__peek(ts->codes, fn->code, fn->fingerprint);
	if (!ci && !ts->exited && !deadline__past(DEADLINE_REPORT_NS))
		ci = code_cache__get(ts->codes, &ts->t, fn->code, fn->fingerprint);
	if (!ci) {
		if (count_unresolved)
			pr_info("--calls: pid %d: code object 0x%llx (fingerprint %08x) could not be "
				"named\n",
				ts->t.pid, (unsigned long long)fn->code, fn->fingerprint);
		c->prof->usdt.calls_unresolved += count_unresolved;
		return profile__func(c->prof, "[unresolved]", "", 0, true);
	}
	return profile__func(c->prof, ci->qualname, ci->filename, ci->firstlineno, false);
}

uint64_t usdt__probe_misses(struct session *s)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	const struct bpf_program *progs[] = {
		skel->progs.on_func_entry, skel->progs.on_func_return,	skel->progs.on_gc_start,
		skel->progs.on_gc_done,	   skel->progs.on_import_start, skel->progs.on_import_done,
	};
	uint64_t misses = 0;
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(progs[i]) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			misses += info.recursion_misses;
	}
	return misses;
}

int usdt__collect_calls(struct session *s, struct collector *c)
{
	struct pybpfprof_bpf *skel = session__skel(s);
	int efd = bpf_map__fd(skel->maps.call_edges), hfd = bpf_map__fd(skel->maps.call_hist);
	struct py_call_edge_key ek, *prev = NULL;
	struct py_call_func hk, *hprev = NULL;
	struct py_call_stats st;
	struct py_call_hist h;
	int err = 0;

	while (!err && !bpf_map_get_next_key(efd, prev, &ek)) {
		struct collector_target *ts = collector__find(c, ek.callee.pid);
		struct profile_call_edge add;
		uint32_t func, caller = UINT32_MAX;

		prev = &ek;
		if (!ts || bpf_map_lookup_elem(efd, &ek, &st))
			continue;
		func = call_func(c, ts, &ek.callee, true);
		if (ek.caller.code)
			caller = call_func(c, ts, &ek.caller, false);
		if (func == UINT32_MAX) {
			err = -ENOMEM;
			break;
		}
		add = (struct profile_call_edge){ .calls = st.calls,
						  .inclusive_ns = st.inclusive_ns,
						  .exclusive_ns = st.exclusive_ns,
						  .max_ns = st.max_ns };
		err = profile_target__add_call(&c->prof->targets[ts->target_index], func, caller,
					       &add);
	}
	while (!err && !bpf_map_get_next_key(hfd, hprev, &hk)) {
		struct collector_target *ts = collector__find(c, hk.pid);
		uint32_t func;

		hprev = &hk;
		if (!ts || bpf_map_lookup_elem(hfd, &hk, &h))
			continue;
		func = call_func(c, ts, &hk, false);
		if (func == UINT32_MAX) {
			err = -ENOMEM;
			break;
		}
		err = profile_target__add_hist(&c->prof->targets[ts->target_index], func,
					       (const uint64_t *)h.buckets);
	}
	return err;
}
