/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tests for dump's thread reader (cpython/py_threads.c): a fake 3.11
 * interpreter in this process's memory (runtime -> interpreter -> thread
 * state -> frame -> code object), read back through process_vm_readv, which
 * this file wraps to move the frame's instruction pointer between reads: a
 * stack that changes under every read is marked moving after
 * PY_DUMP_TRIES reads, one that settles is shown as it settled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cpython/py_objects.h"
#include "fake_memory.h"

static uint8_t runtime[1024], interp[64], tstate[256], tstate2[256], cframe[16], frame[128],
	code[256] __attribute__((aligned(64)));
static struct target target;
static struct py_reader reader;
static struct py_dump_thread threads[8];
/* Reads of the frame that move its instruction pointer on by one unit; -1: every one. */
static int moves_left;
static unsigned frame_reads;

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	ssize_t n = syscall(SYS_process_vm_readv, pid, local, liovcnt, remote, riovcnt, flags);
	uint64_t ip;

	/* the thread runs on between two reads of its frame */
	if (n > 0 && (uintptr_t)remote->iov_base == (uintptr_t)frame && moves_left) {
		frame_reads++;
		if (moves_left > 0)
			moves_left--;
		memcpy(&ip, frame + 56, 8);
		put64(frame, 56, ip + 2);
	}
	return n;
}

static int setup(void **state)
{
	(void)state;
	memset(&target, 0, sizeof(target));
	memset(interp, 0, sizeof(interp));
	memset(tstate, 0, sizeof(tstate));
	memset(tstate2, 0, sizeof(tstate2));
	assert_int_equal(py_layout__for_version(0x030B02F0, &target.layout), 0);
	target.version = 0x030B02F0;
	target.pid = target.nspid = getpid();
	target.runtime_addr = addr(runtime);
	put64(runtime, 40, addr(interp));	 /* interpreters.head */
	put64(interp, 16, addr(tstate));	 /* threads.head */
	put64(tstate, 152, 0x1234000);		 /* thread_id */
	put64(tstate, 160, (uint64_t)getpid());	 /* native_thread_id: this very thread */
	put64(tstate, 56, addr(cframe));	 /* cframe */
	put64(cframe, 8, addr(frame));		 /* current_frame */
	put64(frame, 32, addr(code));		 /* f_code */
	put64(frame, 56, addr(code) + 184 + 20); /* prev_instr: unit 10 */
	put64(code, 72, 7);			 /* co_firstlineno */
	assert_int_equal(py_reader__init(&reader, getpid(), &target.layout, target.version), 0);
	return 0;
}

static void test_still_stack(void **state)
{
	(void)state;
	moves_left = 0;
	assert_int_equal(py_dump_threads(&reader, &target, threads, 2, &(struct py_dump_state){}),
			 1);
	assert_false(threads[0].moving);
	assert_int_equal(threads[0].tid, getpid());
	assert_int_equal(threads[0].nframes, 1);
	assert_int_equal(threads[0].frames[0].code, addr(code));
	assert_int_equal(threads[0].frames[0].frame, addr(frame));
	assert_int_equal(threads[0].frames[0].instr, 20);
	/* the GIL at _PyRuntime.ceval.gil holds zeros: not a GIL, so unknown */
	assert_int_equal(threads[0].gil, -1);
}

static void test_moving_stack(void **state)
{
	(void)state;
	moves_left = -1;
	frame_reads = 0;
	put64(frame, 56, addr(code) + 184 + 20);
	assert_int_equal(py_dump_threads(&reader, &target, threads, 2, &(struct py_dump_state){}),
			 1);
	assert_true(threads[0].moving);
	assert_int_equal(frame_reads, PY_DUMP_TRIES);
}

static void test_settling_stack(void **state)
{
	(void)state;
	/* moves under the first two reads, then stays: the third and fourth agree */
	moves_left = 2;
	put64(frame, 56, addr(code) + 184 + 20);
	assert_int_equal(py_dump_threads(&reader, &target, threads, 2, &(struct py_dump_state){}),
			 1);
	assert_false(threads[0].moving);
	assert_int_equal(threads[0].frames[0].instr, 24);
}

static void test_gil_holder(void **state)
{
	struct py_dump_state st;

	(void)state;
	moves_left = 0;
	/* _PyRuntime.ceval.gil (3.11: 360): interval 5000 us, last_holder, locked */
	put64(runtime, 360, 5000);
	put64(runtime, 368, addr(tstate));
	put64(runtime, 376, 1);
	assert_int_equal(py_dump_threads(&reader, &target, threads, 2, &st), 1);
	assert_int_equal(threads[0].gil, 1);
	assert_int_equal(st.gil, addr(runtime) + 360);
	/* a holder that is none of the threads: nothing is claimed */
	put64(runtime, 368, 0xdead0000);
	assert_int_equal(py_dump_threads(&reader, &target, threads, 2, &st), 1);
	assert_int_equal(threads[0].gil, -1);
	/* locked = 7: not a GIL */
	put64(runtime, 368, addr(tstate));
	put64(runtime, 376, 7);
	assert_int_equal(py_dump_threads(&reader, &target, threads, 2, &st), 1);
	assert_int_equal(threads[0].gil, -1);
	memset(runtime + 360, 0, 24);
}

/*
 * A thread list that loops (a damaged or hostile process: the last thread
 * state's next is the first) shows each thread once and says it loops, as
 * does an interpreter list that loops; the old walk listed the ring's two
 * thread states over and over, up to the array's end.
 */
static void test_thread_list_loops(void **state)
{
	const struct py_offsets *off = &target.layout.bpf;
	struct py_dump_state st;

	(void)state;
	moves_left = 0;
	put64(tstate, off->tstate_next, addr(tstate2));
	put64(tstate2, off->tstate_next, addr(tstate));
	assert_int_equal(py_dump_threads(&reader, &target, threads, 8, &st), 2);
	assert_true(st.loops);
	assert_int_equal(threads[0].tstate, addr(tstate));
	assert_int_equal(threads[1].tstate, addr(tstate2));
	assert_int_equal(threads[0].nframes, 1);
	/* a thread state whose next is itself */
	put64(tstate, off->tstate_next, addr(tstate));
	assert_int_equal(py_dump_threads(&reader, &target, threads, 8, &st), 1);
	assert_true(st.loops);
	/* an interpreter list that comes back to its head: its threads once */
	put64(tstate, off->tstate_next, 0);
	put64(interp, off->interp_next, addr(interp));
	assert_int_equal(py_dump_threads(&reader, &target, threads, 8, &st), 1);
	assert_true(st.loops);
	/* a list that ends: no loop said */
	put64(interp, off->interp_next, 0);
	assert_int_equal(py_dump_threads(&reader, &target, threads, 8, &st), 1);
	assert_false(st.loops);
	assert_false(st.out_of_time);
}

/* A deadline already past: no thread is read, and that is said. */
static void test_deadline(void **state)
{
	struct py_dump_state st;

	(void)state;
	moves_left = 0;
	reader.deadline_ns = 1;
	assert_int_equal(py_dump_threads(&reader, &target, threads, 8, &st), 0);
	assert_true(st.out_of_time);
	reader.deadline_ns = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_still_stack, setup),
		cmocka_unit_test_setup(test_moving_stack, setup),
		cmocka_unit_test_setup(test_settling_stack, setup),
		cmocka_unit_test_setup(test_gil_holder, setup),
		cmocka_unit_test_setup(test_thread_list_loops, setup),
		cmocka_unit_test_setup(test_deadline, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
