/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Why a thread is off the CPU, from the system call it blocked in: the
 * table of --mode wall. Host C too: userspace classifies the threads already
 * blocked when the run starts (/proc/PID/task/TID/syscall) with the same
 * table, and the unit tests pin it (tests/unit/test_offcpu.c).
 */
#ifndef PYBPFPROF_OFFCPU_CLASS_H
#define PYBPFPROF_OFFCPU_CLASS_H

#include "bpf_abi.h"

/* x86_64 system call numbers the classes name. */
enum {
	PY_NR_read = 0,
	PY_NR_write = 1,
	PY_NR_poll = 7,
	PY_NR_pread64 = 17,
	PY_NR_pwrite64 = 18,
	PY_NR_readv = 19,
	PY_NR_writev = 20,
	PY_NR_select = 23,
	PY_NR_pause = 34,
	PY_NR_nanosleep = 35,
	PY_NR_sendfile = 40,
	PY_NR_connect = 42,
	PY_NR_accept = 43,
	PY_NR_sendto = 44,
	PY_NR_recvfrom = 45,
	PY_NR_sendmsg = 46,
	PY_NR_recvmsg = 47,
	PY_NR_flock = 73,
	PY_NR_fsync = 74,
	PY_NR_fdatasync = 75,
	PY_NR_futex = 202,
	PY_NR_clock_nanosleep = 230,
	PY_NR_epoll_wait = 232,
	PY_NR_pselect6 = 270,
	PY_NR_ppoll = 271,
	PY_NR_splice = 275,
	PY_NR_epoll_pwait = 281,
	PY_NR_accept4 = 288,
	PY_NR_preadv = 295,
	PY_NR_pwritev = 296,
	PY_NR_recvmmsg = 299,
	PY_NR_sendmmsg = 307,
	PY_NR_copy_file_range = 326,
	PY_NR_preadv2 = 327,
	PY_NR_pwritev2 = 328,
	PY_NR_io_uring_enter = 426,
	PY_NR_epoll_pwait2 = 441,
	PY_NR_futex_waitv = 449,
};

static inline int py_offcpu_is_io(long nr)
{
	switch (nr) {
	case PY_NR_read:
	case PY_NR_write:
	case PY_NR_poll:
	case PY_NR_pread64:
	case PY_NR_pwrite64:
	case PY_NR_readv:
	case PY_NR_writev:
	case PY_NR_select:
	case PY_NR_sendfile:
	case PY_NR_connect:
	case PY_NR_accept:
	case PY_NR_sendto:
	case PY_NR_recvfrom:
	case PY_NR_sendmsg:
	case PY_NR_recvmsg:
	case PY_NR_fsync:
	case PY_NR_fdatasync:
	case PY_NR_epoll_wait:
	case PY_NR_pselect6:
	case PY_NR_ppoll:
	case PY_NR_splice:
	case PY_NR_epoll_pwait:
	case PY_NR_accept4:
	case PY_NR_preadv:
	case PY_NR_pwritev:
	case PY_NR_recvmmsg:
	case PY_NR_sendmmsg:
	case PY_NR_copy_file_range:
	case PY_NR_preadv2:
	case PY_NR_pwritev2:
	case PY_NR_io_uring_enter:
	case PY_NR_epoll_pwait2:
		return 1;
	}
	return 0;
}

/*
 * nr: the system call (orig_ax; -1 outside one); arg0: its first argument;
 * gil: the process's struct _gil_runtime_state, 0 if unknown. A futex word
 * inside the GIL's struct (its cond or mutex) is a GIL wait; select and poll
 * on no descriptor are sleeps (old builds' time.sleep).
 */
static inline __u32 py_offcpu_classify(long nr, __u64 arg0, __u64 gil)
{
	if (nr == PY_NR_nanosleep || nr == PY_NR_clock_nanosleep || nr == PY_NR_pause)
		return PY_OFFCPU_SLEEP;
	if ((nr == PY_NR_select || nr == PY_NR_pselect6 || nr == PY_NR_poll || nr == PY_NR_ppoll) &&
	    !arg0)
		return PY_OFFCPU_SLEEP;
	if (py_offcpu_is_io(nr))
		return PY_OFFCPU_IO;
	if (nr == PY_NR_futex && gil && arg0 >= gil && arg0 < gil + PY_GIL_STRUCT_SIZE)
		return PY_OFFCPU_GIL;
	if (nr == PY_NR_futex || nr == PY_NR_futex_waitv || nr == PY_NR_flock)
		return PY_OFFCPU_LOCK;
	return PY_OFFCPU_OTHER;
}

#endif /* PYBPFPROF_OFFCPU_CLASS_H */
