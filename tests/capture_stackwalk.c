// SPDX-License-Identifier: GPL-2.0-only
/*
 * Captures a stack-walk fixture from a live interpreter (see
 * tests/capture_stackwalk.sh, which starts it): runs the walk of
 * bpf/stackwalk.h on the process's memory, with the offsets target__open
 * finds for it, and saves every page the walk read, the offsets, and the
 * stack the interpreter reported (the workload's file) into one gzip'd
 * fixture (format: tests/unit/stackwalk_image.h).
 *
 * Usage: capture_stackwalk PID EXPECTED_FILE OUT.txt.gz
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <zlib.h>
#include "cpython/target.h"
#include "../bpf/stackwalk.h"
#include "stackwalk_image.h"

#define MAX_PAGES 4096

__u32 max_depth = PYPROF_MAX_DEPTH;
static pid_t target_pid;
static uint64_t pages[MAX_PAGES];
static size_t npages;

static void page_note(uint64_t page)
{
	size_t i;

	for (i = 0; i < npages; i++)
		if (pages[i] == page)
			return;
	if (npages < MAX_PAGES)
		pages[npages++] = page;
}

/* The walk's reader: the live process, noting the pages each read touches. */
long stackwalk_read(void *dst, __u32 size, __u64 addr)
{
	struct iovec local = { dst, size }, remote = { (void *)(uintptr_t)addr, size };
	uint64_t p;

	if (process_vm_readv(target_pid, &local, 1, &remote, 1, 0) != (ssize_t)size)
		return -EFAULT;
	for (p = addr & ~(uint64_t)(STACKWALK_PAGE - 1); p < addr + size; p += STACKWALK_PAGE)
		page_note(p);
	return 0;
}

static int write_offsets(gzFile out, const struct py_offsets *off)
{
#define PUT_FIELD(f) gzprintf(out, "off %s %u\n", #f, (unsigned)off->f);
	STACKWALK_OFFSET_FIELDS(PUT_FIELD)
#undef PUT_FIELD
	return 0;
}

static int write_pages(gzFile out)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t buf[STACKWALK_PAGE];
	char line[2 * STACKWALK_PAGE + 1];
	struct iovec local = { buf, sizeof(buf) }, remote;
	size_t i, j;

	for (i = 0; i < npages; i++) {
		remote.iov_base = (void *)(uintptr_t)pages[i];
		remote.iov_len = sizeof(buf);
		if (process_vm_readv(target_pid, &local, 1, &remote, 1, 0) != sizeof(buf))
			return -1;
		for (j = 0; j < sizeof(buf); j++) {
			line[2 * j] = hex[buf[j] >> 4];
			line[2 * j + 1] = hex[buf[j] & 15];
		}
		line[2 * STACKWALK_PAGE] = '\0';
		gzprintf(out, "page %#" PRIx64 " ", pages[i]);
		gzputs(out, line);
		gzputs(out, "\n");
	}
	return 0;
}

/* Walks the thread's stack live; the number of frames found, or -1. */
static int walk(const struct target *t, uint64_t thread, struct scratch *s)
{
	struct py_target proc = { .runtime_addr = t->runtime_addr, .off = t->layout.bpf };
	struct walk_ctx w = { .off = &proc.off, .s = s, .read_size = proc.off.frame_read_size };
	uint64_t tstate = stackwalk_find_tstate(&proc, thread);
	__u32 i;

	if (!tstate)
		return -1;
	w.f = current_frame(&proc.off, tstate);
	stackwalk_frames(&w);
	for (i = 0; i < w.n; i++)
		fprintf(stderr, "  walk: code %#llx instr %d\n",
			(unsigned long long)s->sample.frames[i].code, s->sample.frames[i].instr);
	return s->sample.flags ? -1 : (int)w.n;
}

static int capture(const struct target *t, const char *expected, const char *path)
{
	static struct scratch s;
	char line[512];
	uint64_t thread = 0;
	FILE *in = fopen(expected, "r");
	gzFile out;

	if (!in)
		return -1;
	out = gzopen(path, "wb9");
	if (!out) {
		fclose(in);
		return -1;
	}
	gzprintf(out, "python %s %s\nruntime %#" PRIx64 "\n", t->version_str, t->exe,
		 t->runtime_addr);
	write_offsets(out, &t->layout.bpf);
	while (fgets(line, sizeof(line), in)) {
		if (sscanf(line, "thread %" SCNx64, &thread) == 1 || !strncmp(line, "frame ", 6))
			gzputs(out, line);
	}
	fclose(in);
	if (walk(t, thread, &s) < 0 || write_pages(out)) {
		gzclose(out);
		return -1;
	}
	fprintf(stderr, "capture: %zu pages\n", npages);
	return gzclose(out) == Z_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	static struct target t;
	char why[256];

	if (argc != 4) {
		fprintf(stderr, "usage: %s PID EXPECTED_FILE OUT.txt.gz\n", argv[0]);
		return 2;
	}
	target_pid = atoi(argv[1]);
	if (target__open(target_pid, &t, why, sizeof(why))) {
		fprintf(stderr, "capture: %s\n", why);
		return 1;
	}
	if (capture(&t, argv[2], argv[3])) {
		fprintf(stderr, "capture: the walk or the write failed for pid %d\n", target_pid);
		return 1;
	}
	return 0;
}
