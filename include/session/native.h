/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Machine code under the Python stack: --kernel adds the kernel stack of each
 * CPU sample taken in kernel mode (bpf/native.h sends it, collector_cpu.c
 * joins it to its sample and names it through /proc/kallsyms).
 */
#ifndef PYBPFPROF_NATIVE_H
#define PYBPFPROF_NATIVE_H

#include "session/session.h"

enum native_mode {
	NATIVE_KERNEL = 1, /* --kernel */
	NATIVE_USER = 2,   /* --native */
};

/* Before load: tells the BPF object which stacks to send. */
void native__prepare(struct session *s, unsigned native_modes);

#endif
