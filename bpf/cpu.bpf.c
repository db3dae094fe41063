// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU sampling: a perf_event program on the cpu-clock software event, one
 * event per CPU. At each tick it keeps only threads of profiled processes
 * (pid in `targets`), finds the thread's PyThreadState, walks the Python
 * frame chain and streams (code object, bytecode offset) pairs to userspace
 * through a ring buffer (emit_stack.h). It reads target memory only, with
 * bounded loops, and never writes it.
 */
#include "native.h"

/* CPU sampling: one cpu-clock perf event per CPU, a fixed period of 1e9/Hz ns. */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	native_emit_cpu(ctx);
	return 0;
}
