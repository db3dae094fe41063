/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for the layout check of a live target (target__check) and for how
 * long the tracker believes a mismatch. The target is a fake 3.11
 * interpreter in this process's memory (runtime -> interpreter -> thread
 * state -> frame -> code object -> type), read through process_vm_readv,
 * which this file wraps to let the "thread" move on between two reads: a
 * code object freed as its frame returns shows its type overwritten by the
 * allocator only until the thread runs on, and must not drop the target.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "session/tracker.h"
#include "cpython/target.h"
#include "fake_memory.h"

static uint8_t runtime[64], interp[64], tstate[256], cframe[16], frame1[128], frame2[128],
	code1[256], code2[256], code_type[64];
static struct target target;
/* Reads of a code object's type after which the thread runs on to the other frame; -1: every one. */
static int moves_left;
static unsigned type_reads;

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	ssize_t n = syscall(SYS_process_vm_readv, pid, local, liovcnt, remote, riovcnt, flags);
	uintptr_t at = (uintptr_t)remote->iov_base;
	uint64_t now;

	if (n > 0 && (at == (uintptr_t)code1 + 8 || at == (uintptr_t)code2 + 8)) {
		type_reads++;
		if (moves_left) {
			if (moves_left > 0)
				moves_left--;
			memcpy(&now, cframe + 8, 8);
			put64(cframe, 8, now == addr(frame1) ? addr(frame2) : addr(frame1));
		}
	}
	return n;
}

static int setup(void **state)
{
	(void)state;
	memset(&target, 0, sizeof(target));
	assert_int_equal(py_layout__for_version(0x030B02F0, &target.layout), 0);
	target.version = 0x030B02F0;
	target.pid = target.nspid = getpid();
	target.runtime_addr = addr(runtime);
	target.code_type_addr = addr(code_type);
	put64(runtime, 40, addr(interp)); /* interpreters.head */
	put64(interp, 16, addr(tstate));  /* threads.head */
	put64(tstate, 8, 0);		  /* next */
	put64(tstate, 16, addr(interp));  /* interp */
	put64(tstate, 56, addr(cframe));  /* cframe */
	put64(cframe, 8, addr(frame1));	  /* current_frame */
	put64(frame1, 32, addr(code1));	  /* f_code */
	put64(frame2, 32, addr(code2));
	put64(code1, 8, addr(code_type)); /* ob_type */
	put64(code2, 8, addr(code_type));
	moves_left = 0;
	type_reads = 0;
	return 0;
}

static void test_matches(void **state)
{
	(void)state;
	assert_int_equal(target__check(&target), 0);
	assert_int_equal(type_reads, 1);
}

static void test_no_interpreter_yet(void **state)
{
	(void)state;
	put64(runtime, 40, 0);
	assert_int_equal(target__check(&target), -EAGAIN);
}

static void test_back_pointer(void **state)
{
	(void)state;
	put64(tstate, 16, addr(runtime));
	assert_int_equal(target__check(&target), -EPROTO);
}

/* A wrong type that stays under the same code object is a layout that does not match. */
static void test_wrong_type(void **state)
{
	(void)state;
	put64(code1, 8, 0x55aa55aa55aa55aaULL);
	assert_int_equal(target__check(&target), -EPROTO);
	assert_int_equal(type_reads, 2);
}

/* The code object was freed (its type overwritten) as its frame returned: the thread moved on. */
static void test_freed_as_it_returns(void **state)
{
	(void)state;
	put64(code1, 8, 0x55aa55aa55aa55aaULL);
	moves_left = 1;
	assert_int_equal(target__check(&target), 0);
}

/* A thread that moves at every read between two bad code objects: a bounded number of looks. */
static void test_moving_forever(void **state)
{
	(void)state;
	put64(code1, 8, 0x55aa55aa55aa55aaULL);
	put64(code2, 8, 0x55aa55aa55aa55aaULL);
	moves_left = -1;
	assert_int_equal(target__check(&target), -EPROTO);
	assert_true(type_reads >= 2 && type_reads <= 8);
}

/* A mismatch is believed after 3 checks in a row over 20 ms, or at the end of the start time. */
static void test_mismatch_settled(void **state)
{
	struct tracker_pending p = { .since_ns = 1000000000LL };
	long long t0 = p.since_ns + 5000000;

	(void)state;
	assert_false(tracker__mismatch_settled(&p, t0));
	assert_false(tracker__mismatch_settled(&p, t0 + 1000000));
	/* three checks, but within 3 ms: a thread descheduled that long is common */
	assert_false(tracker__mismatch_settled(&p, t0 + 3000000));
	assert_false(tracker__mismatch_settled(&p, t0 + TRACKER_MISMATCH_NS - 1));
	assert_true(tracker__mismatch_settled(&p, t0 + TRACKER_MISMATCH_NS));

	/* two checks 30 ms apart are not enough either */
	memset(&p, 0, sizeof(p));
	p.since_ns = 1000000000LL;
	assert_false(tracker__mismatch_settled(&p, t0));
	assert_false(tracker__mismatch_settled(&p, t0 + 30000000));
	assert_true(tracker__mismatch_settled(&p, t0 + 31000000));

	/* the first mismatch seen when the time to start is over */
	memset(&p, 0, sizeof(p));
	p.since_ns = 1000000000LL;
	assert_true(tracker__mismatch_settled(&p, p.since_ns + TRACKER_GIVE_UP_NS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_matches, setup),
		cmocka_unit_test_setup(test_no_interpreter_yet, setup),
		cmocka_unit_test_setup(test_back_pointer, setup),
		cmocka_unit_test_setup(test_wrong_type, setup),
		cmocka_unit_test_setup(test_freed_as_it_returns, setup),
		cmocka_unit_test_setup(test_moving_forever, setup),
		cmocka_unit_test(test_mismatch_settled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
