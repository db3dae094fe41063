/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the libFuzzer targets: a fake target memory image behind
 * process_vm_readv, so the remote readers (remote_mem.c, code_cache.c) run
 * unchanged over bytes the fuzzer chooses.
 *
 * The seam is the link: this file defines process_vm_readv, and a fuzz binary
 * links it instead of libc's. The product's code is the same code, compiled
 * the same way; only where its reads land differs.
 *
 * Image format (what the seed generator writes, what the fuzzer mutates):
 * segments one after the other, each a little-endian u64 address, a u16
 * length and that many bytes. A read is served from the segment holding its
 * first byte and stops at that segment's end (a short read, as for an
 * unmapped page); a read starting in no segment fails with EFAULT.
 */
#ifndef PYBPFPROF_FUZZ_H
#define PYBPFPROF_FUZZ_H
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "cpython/code_cache.h"
#include "cpython/py_objects.h"
#include "cpython/target.h"
#include "cpython/py_layout.h"
#include "cpython/remote_mem.h"

#define FAKE_MAX_SEGS 64

struct fake_seg {
	uint64_t addr;
	const uint8_t *data;
	size_t len;
};

static struct fake_seg fake_segs[FAKE_MAX_SEGS];
static size_t fake_nsegs;

static inline uint64_t fuzz_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Points the fake memory at the segments in p (kept by reference). */
static inline void fake_mem_load(const uint8_t *p, size_t n)
{
	fake_nsegs = 0;
	while (n >= 10 && fake_nsegs < FAKE_MAX_SEGS) {
		uint64_t addr = fuzz_u64(p);
		size_t len = p[8] | (size_t)p[9] << 8;

		p += 10;
		n -= 10;
		if (len > n)
			len = n;
		fake_segs[fake_nsegs++] = (struct fake_seg){ addr, p, len };
		p += len;
		n -= len;
	}
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	uint64_t addr;
	size_t i, len;

	(void)pid;
	(void)flags;
	if (liovcnt != 1 || riovcnt != 1 || local->iov_len < remote->iov_len) {
		errno = EINVAL; /* the readers use one buffer each way */
		return -1;
	}
	addr = (uintptr_t)remote->iov_base;
	len = remote->iov_len;
	for (i = 0; i < fake_nsegs; i++) {
		const struct fake_seg *s = &fake_segs[i];
		size_t n;

		if (addr < s->addr || addr - s->addr >= s->len)
			continue;
		n = s->len - (addr - s->addr);
		if (n > len)
			n = len;
		memcpy(local->iov_base, s->data + (addr - s->addr), n);
		return n;
	}
	if (!len)
		return 0;
	errno = EFAULT;
	return -1;
}

/* A _Py_DebugOffsets capture from tests/fixtures (run from the repository root). */
static inline int fuzz_load_fixture(const char *name, uint8_t *buf)
{
	char path[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "tests/fixtures/debug_offsets/%s.bin", name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz: missing %s (run from the repository root)\n", path);
		return -1;
	}
	n = fread(buf, 1, PY_DEBUG_OFFSETS_READ, f);
	fclose(f);
	return n == PY_DEBUG_OFFSETS_READ ? 0 : -1;
}

/*
 * The layout of each of versions[0..n): the built-in tables before 3.13, the
 * _Py_DebugOffsets captures in tests/fixtures for 3.13, 3.14 and 3.15 (the
 * micro versions the captures were taken from). Aborts if one cannot be made.
 */
static inline void fuzz_layouts(const uint32_t *versions, size_t n, struct py_layout *out)
{
	static const char *const fixtures[] = { "3.13.0-pyenv", "3.14.10-sid", "3.15.2-sid" };
	uint8_t buf[PY_DEBUG_OFFSETS_READ];
	char why[160];
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned minor = (versions[i] >> 16) & 0xff;

		if (minor < 13 ?
			    py_layout__for_version(versions[i], &out[i]) :
			    minor > 15 || fuzz_load_fixture(fixtures[minor - 13], buf) ||
				    py_layout__from_debug_offsets(versions[i], buf, sizeof(buf),
								  &out[i], why, sizeof(why))) {
			fprintf(stderr, "fuzz: no layout for 3.%u\n", minor);
			abort();
		}
	}
}

/*
 * The input as a target (the thread, dump and task harnesses' format):
 * data[0] picks one of the n versions, the rest is the memory image, the
 * runtime at its first segment's address. t and r are set for it; false
 * when the input holds no memory.
 */
static inline bool fake_target(const uint8_t *data, size_t size, const uint32_t *versions,
			       const struct py_layout *layouts, unsigned n, struct target *t,
			       struct py_reader *r)
{
	unsigned v;

	if (size < 1)
		return false;
	v = data[0] % n;
	fake_mem_load(data + 1, size - 1);
	if (!fake_nsegs)
		return false;
	memset(t, 0, sizeof(*t));
	t->pid = t->nspid = 1;
	t->version = versions[v];
	t->layout = layouts[v];
	t->runtime_addr = fake_segs[0].addr;
	if (py_reader__init(r, 1, &t->layout, t->version))
		abort();
	return true;
}

/*
 * Everything that reads an object at addr in the fake image with layout L:
 * the str and bytes readers, and the code object reader with the line
 * lookups its fields allow. code_type: &PyCode_Type (0: not checked). The
 * budget lives across inputs, as it does across a run's targets; each input
 * gets its own cache, as each target does.
 */
static inline void fuzz_read_objects(const struct py_layout *L, uint64_t code_type, uint64_t addr,
				     size_t small_out)
{
	static const int32_t instrs[] = { -1, 0, 1, 2, 6, 40, 1000, INT32_MAX, INT32_MIN };
	static struct cache_budget budget;
	static struct target t;
	static int budget_ready;
	char out[REMOTE_MAX_STR], small[64];
	const struct code_info *ci;
	struct code_cache *cc;
	uint64_t *slot;
	uint8_t *bytes;
	size_t n, i;

	remote_read_str(1, L, addr, out, sizeof(out));
	remote_read_str(1, L, addr, small, 1 + small_out % sizeof(small));
	if (!remote_read_bytes(1, L, addr, REMOTE_MAX_BYTES, &bytes, &n))
		free(bytes);

	if (!budget_ready) {
		cache_budget__init(&budget, 4 << 20);
		budget_ready = 1;
	}
	t.pid = 1;
	t.layout = *L;
	t.code_type_addr = code_type;
	cc = code_cache__new(&budget);
	if (!cc)
		return;
	code_cache__get(cc, &t, addr, 0);
	/* the fingerprint it read, so the second lookup is a cache hit and lines get decoded */
	slot = hashmap__find(&cc->by_addr, addr);
	if (slot) {
		ci = code_cache__get(cc, &t, addr,
				     ((const struct code_info *)(uintptr_t)*slot)->fingerprint);
		for (i = 0; ci && i < sizeof(instrs) / sizeof(instrs[0]); i++) {
			int line = code_info__line(ci, L, instrs[i]);

			if (line < 1 && line != -1)
				abort(); /* linetable.h: a line is >= 1 or -1 */
		}
	}
	code_cache__free(cc);
}

#endif
