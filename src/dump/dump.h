/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pybpfprof dump: what a snapshot of a process holds (cmd_dump.c collects it,
 * dump_write.c prints it as text or JSON). Every string is the target's and
 * is cleaned (text) or escaped (JSON) on its way out.
 */
#ifndef PYBPFPROF_CLI_DUMP_H
#define PYBPFPROF_CLI_DUMP_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "cpython/code_cache.h"
#include "cpython/py_async.h"
#include "cpython/py_objects.h"

struct dump_local {
	char name[64];
	char type[48];
	char *value; /* the bounded text (py_render) */
	bool unbound, unreadable;
};

struct dump_frame {
	char *func, *file; /* NULL: the code object could not be read */
	int line;	   /* -1: unknown */
	char *source;	   /* the source line, stripped; NULL: not read */
	struct dump_local *locals;
	size_t nlocals, total_locals;
	int locals_err; /* 0, or -errno: they could not be read */
};

struct dump_thread {
	pid_t tid;
	pid_t nstid;	 /* the same thread in the process's own pid namespace */
	char name[64];	 /* /proc/PID/task/TID/comm */
	char pyname[64]; /* threading.Thread's name; "" unknown */
	char state;	 /* /proc/PID/task/TID/stat: R, S, D, T, t, Z, ... */
	char wchan[64];	 /* the kernel function it waits in, "" if none */
	long syscall;	 /* its system call number; -1 none, -2 running, -3 unknown */
	unsigned long args[6];
	bool python; /* it has a Python thread state */
	int gil;     /* 1 holds it, 2 waits for it, 0 neither, -1 unknown */
	int gc;	     /* 1 in a collection, 0 not, -1 unknown */
	bool moving, truncated, read_error;
	struct dump_frame *frames;
	size_t nframes;
};

/* One pending asyncio task (--async): its coroutine stack, outermost first. */
struct dump_task {
	uint64_t addr;
	char name[128];
	struct dump_frame *frames;
	size_t nframes;
	bool truncated, gather;
	uint32_t awaits[PY_ASYNC_AWAITS]; /* indices of the tasks it awaits */
	size_t nawaits;
};

struct dump_process {
	pid_t pid;
	char version[24];
	char exe[PATH_MAX], cmdline[256];
	struct dump_thread *threads;
	size_t nthreads, cap;
	bool threads_left_out;	 /* it had more Python threads than PY_DUMP_THREADS */
	struct dump_task *tasks; /* --async */
	size_t ntasks;
	int tasks_err; /* 0, or -errno: the tasks could not be read */
	struct py_async_state tasks_state;
};

struct dump_report {
	struct dump_process *procs;
	size_t nprocs;
	bool locals;
	bool async; /* the asyncio tasks were read */
};

/* Reads the source line of every frame of dp, with pid's rights, inside its root. */
void dump_read_sources(pid_t pid, struct dump_process *dp);
void dump_report_free(struct dump_report *rep);

/* Writers: 0 or -errno (a write error). */
int dump_write_text(FILE *f, void *report);
int dump_write_json(FILE *f, void *report);

/* --async (dump_async.c): reads dp's tasks; prints them as a tree, or as JSON; frees them. */
void dump_read_tasks(struct py_reader *r, struct code_cache *cc, const struct target *t,
		     struct dump_process *dp);
void dump_tasks_text(FILE *f, const struct dump_process *dp);
void dump_tasks_json(FILE *f, const struct dump_process *dp);
void dump_tasks_free(struct dump_process *dp);

/* A system call's name by number (x86_64), or NULL. */
const char *dump_syscall_name(long nr);
/* "held", "waiting", "not held", "unknown" */
const char *dump_gil_name(int gil);
/* The kernel state letter in words: "sleeping", "stopped", ... */
const char *dump_state_name(const struct dump_thread *t);

#endif
