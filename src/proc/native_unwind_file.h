/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the fuzzer (tests/fuzz/fuzz_native_elf.c): an unwinder whose only
 * module is the file behind fd (size bytes), placed at base, reported as a target's mapped
 * file is (the same checks, the same libdw calls). Its thread is this process
 * (pass getpid() as tid); an unwind reads only the stack copy given. fd is
 * consumed. NULL on allocation failure.
 */
#ifndef PYBPFPROF_NATIVE_UNWIND_FILE_H
#define PYBPFPROF_NATIVE_UNWIND_FILE_H

#include <stdint.h>
#include "proc/native_unwind.h"

struct native_unwinder *native_unwinder__new_file(int fd, uint64_t base, uint64_t size);

#endif
