/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --native's pure-ish parts on this very process: the interpreter-range
 * lookup (maps_exec_range) finds the executable mapping holding main, the
 * unwinder names a static function from this binary's .symtab and, from
 * registers and a stack copy captured three calls deep, unwinds through
 * its callers in order and stops at the "interpreter" range it is given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/native_unwind.h"
#include "proc/procfs.h"

#define COPY 8192

static struct native_regs regs;
static uint8_t stack_copy[COPY];
static size_t copied;

/* The registers here and the stack above, as the BPF program copies them. */
static __attribute__((noinline)) void capture(void)
{
	__asm__ volatile("leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, %0\n\t"
			 "movq %%rsp, %1\n\t"
			 "movq %%rbp, %2\n\t"
			 "movq %%rbx, %3\n\t"
			 "movq %%r12, %4\n\t"
			 "movq %%r13, %5\n\t"
			 "movq %%r14, %6\n\t"
			 "movq %%r15, %7\n\t"
			 : "=m"(regs.ip), "=m"(regs.sp), "=m"(regs.bp), "=m"(regs.bx),
			   "=m"(regs.r12), "=m"(regs.r13), "=m"(regs.r14), "=m"(regs.r15)
			 :
			 : "rax", "memory");
	/* as the BPF program: smaller copies when a larger one would cross the stack's end */
	for (copied = COPY; copied >= 256; copied /= 2) {
		struct iovec local = { stack_copy, copied };
		struct iovec remote = { (void *)(uintptr_t)regs.sp, copied };

		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)copied)
			return;
	}
	copied = 0;
}

static __attribute__((noinline)) int level2(int x)
{
	capture();
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static __attribute__((noinline)) int level1(int x)
{
	int r = level2(x) * 3;

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

/* The "interpreter": unwinding stops at the first frame in it. */
static __attribute__((noinline)) int outer(int x)
{
	int r = level1(x) * 5;

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static void test_exec_range(void **state)
{
	uint64_t lo = 0, hi = 0;
	struct stat st;

	(void)state;
	assert_int_equal(stat("/proc/self/exe", &st), 0);
	assert_int_equal(maps_exec_range(getpid(), st.st_ino, &lo, &hi), 0);
	assert_true(lo <= (uintptr_t)outer && (uintptr_t)outer < hi);
	assert_int_equal(maps_exec_range(getpid(), 1, &lo, &hi), -ENOENT);
}

static void test_unwind(void **state)
{
	struct native_unwinder *u;
	uint64_t pcs[NATIVE_MAX_FRAMES];
	char name[256], file[4096];
	const char *want[] = { "capture", "level2", "level1", "outer", "test_unwind" };
	bool complete = false;
	int n, i;

	(void)state;
	outer(1);
	/* outer's code, as far as the next function: its frame is the interpreter's */
	u = native_unwinder__new(getpid(), (uintptr_t)outer, (uintptr_t)outer + 1);
	assert_non_null(u);
	assert_int_equal(native_unwinder__name(u, (uintptr_t)level1 + 1, name, sizeof(name), file,
					       sizeof(file)),
			 0);
	assert_string_equal(name, "level1");
	assert_non_null(strstr(file, "test_native_unwind"));
	n = native_unwinder__unwind(u, getpid(), &regs, stack_copy, copied, pcs, NATIVE_MAX_FRAMES,
				    &complete);
	/* outer's call site is past its first byte: the unwind goes on through it */
	assert_true(n >= 5);
	for (i = 0; i < 5; i++) {
		native_unwinder__name(u, pcs[i], name, sizeof(name), file, sizeof(file));
		assert_string_equal(name, want[i]);
	}
	/* bounded by max, and by the copy: 8 bytes hold capture's return address only */
	assert_int_equal(native_unwinder__unwind(u, getpid(), &regs, stack_copy, copied, pcs, 2,
						 &complete),
			 2);
	n = native_unwinder__unwind(u, getpid(), &regs, stack_copy, 8, pcs, NATIVE_MAX_FRAMES,
				    &complete);
	assert_true(n >= 1 && n <= 2);
	native_unwinder__free(u);
}

/* With outer's call site as the interpreter, the unwind ends there, complete. */
static void test_unwind_stops(void **state)
{
	struct native_unwinder *u;
	uint64_t pcs[NATIVE_MAX_FRAMES], site;
	bool complete = true;
	int n;

	(void)state;
	outer(2);
	u = native_unwinder__new(getpid(), 0, 0);
	assert_non_null(u);
	n = native_unwinder__unwind(u, getpid(), &regs, stack_copy, copied, pcs, NATIVE_MAX_FRAMES,
				    &complete);
	native_unwinder__free(u);
	assert_true(n >= 4);
	assert_false(complete);
	/* functions may be laid out in any order: outer's own call site is the range */
	site = pcs[3];
	u = native_unwinder__new(getpid(), site, site + 1);
	assert_non_null(u);
	n = native_unwinder__unwind(u, getpid(), &regs, stack_copy, copied, pcs, NATIVE_MAX_FRAMES,
				    &complete);
	native_unwinder__free(u);
	assert_int_equal(n, 3);
	assert_true(complete);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_range),
		cmocka_unit_test(test_unwind),
		cmocka_unit_test(test_unwind_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
