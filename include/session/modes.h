/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The run's modes and the BPF object: opens a session with the programs and
 * maps of the modes asked for only, and loads it. It sits above session.h,
 * mem.h and usdt.h, so that the session knows nothing of the modes and the
 * modes only use the session.
 */
#ifndef PYBPFPROF_MODES_H
#define PYBPFPROF_MODES_H

#include <stdbool.h>
#include <stddef.h>
#include "session/mem.h"
#include "session/session.h"

/*
 * Opens the BPF object (max_depth frames per sample), keeps the programs
 * and maps of mem_mode (--mem) and usdt_modes (enum usdt_mode: --calls,
 * --gc, --imports) and wall_mode (enum wall_mode: --mode wall, --gil) only,
 * sends the stacks of native_modes (enum native_mode: --kernel, --native)
 * and, with opcodes (--opcodes), each CPU sample's innermost instruction,
 * with exceptions (--exceptions, --mode exception) its thread's exception state,
 * and loads it; session__poll delivers the samples to on_sample. NULL with a
 * reason in why.
 */
struct session *modes__open_session(unsigned max_depth, enum pyprof_mem_mode mem_mode,
				    unsigned usdt_modes, unsigned wall_mode, unsigned native_modes,
				    bool opcodes, bool exceptions, sample_fn_t on_sample, void *ctx,
				    char *why, size_t whylen);

#endif
