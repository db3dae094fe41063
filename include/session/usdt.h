/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CPython's USDT probes (provider "python"): which ones a target's
 * interpreter has, whether they fire on its version, attaching the BPF
 * programs of --calls (bpf/calls.bpf.c), --gc and --imports
 * (bpf/gc_imports.bpf.c), and turning the kernel maps of --calls into profile
 * call edges.
 */
#ifndef PYBPFPROF_USDT_H
#define PYBPFPROF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "session/collector.h"
#include "session/session.h"
#include "cpython/target.h"

enum usdt_mode {
	USDT_CALLS = 1,	  /* function__entry / function__return */
	USDT_GC = 2,	  /* gc__start / gc__done */
	USDT_IMPORTS = 4, /* import__find__load__start / done */
};

/* Probes found in an interpreter's .note.stapsdt. */
struct usdt_probes {
	int total;
	bool function_entry, function_return, line, gc_start, gc_done, import_start, import_done;
};

/* Reads the probes of the ELF file at path (host path). 0 or -errno. */
int usdt_probes__read(const char *path, struct usdt_probes *pr);

/*
 * Whether modes can work on target t with these probes: 0, or -ENOTSUP with
 * one sentence in why saying what is missing and suggesting sampling.
 * py311_line: the user accepted the line probe's slowdown on 3.11.
 */
int usdt__check(const struct target *t, const struct usdt_probes *pr, unsigned modes,
		bool py311_line, char *why, size_t whylen);

/*
 * Between session__open and session__load: shrinks the maps, and skips the
 * programs, of the modes not in modes.
 */
void usdt__prepare(struct session *s, unsigned modes);

/*
 * An interpreter file probed for a followed run (usdt__follow): identified
 * by device and inode, as the kernel's uprobes are.
 */
struct usdt_binary {
	dev_t dev;
	ino_t ino;
	struct usdt_probes pr;
	int err;       /* 0: attached; else why its processes are not traced */
	char why[400]; /* attach failure (err other than -ENOTSUP) */
};

struct usdt {
	struct bpf_link **links;
	size_t nlinks, cap_links;
	struct usdt_binary *bins;
	size_t nbins, cap_bins;
};

/* Attaches modes' programs to t (returns before entries). 0, or -errno with a reason. */
int usdt__attach(struct usdt *u, struct session *s, const struct target *t, unsigned modes,
		 bool py311_line, char *why, size_t whylen);
/*
 * Runs that follow new processes (-a, a command, --subprocesses): t's
 * interpreter file gets modes' programs once, for every process that maps
 * it (pid -1: uprobes are per inode, and the kernel raises each probe's
 * semaphore in every such process, also in the ones that exec or map it
 * later); the programs count only the pids in `targets`. 0 when t is
 * traced; -errno with a sentence naming t when it is not (no usable probes,
 * or the file's attach failed), while other files' processes still are.
 * *attached_now: this call attached the file (t ran before its probes).
 */
int usdt__follow(struct usdt *u, struct session *s, const struct target *t, unsigned modes,
		 bool py311_line, bool *attached_now, char *why, size_t whylen);
/* Closes every link: the kernel lowers the semaphores. */
void usdt__detach(struct usdt *u);

/* Ring-buffer callback of the `events` map (imports); ctx is the collector. */
int usdt__on_event(void *ctx, void *data, size_t size);

/*
 * Probe hits whose BPF program the kernel skipped because another BPF program
 * was running on that CPU (bpf_prog_info.recursion_misses, summed).
 */
uint64_t usdt__probe_misses(struct session *s);

/* Reads the --calls maps into the profile's call edges and histograms. 0 or -errno. */
int usdt__collect_calls(struct session *s, struct collector *c);

#endif
