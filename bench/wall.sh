#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost of --mode wall: the slowdown of a socket ping-pong (two Python threads;
# two blocks in recv() and about two GIL waits per round trip) and the BPF
# time of the sched_switch program, in interleaved rounds. Measuring is done
# by bench/wall.py; this wrapper checks prerequisites and puts
# kernel.bpf_stats_enabled back.
#   BENCH_TRIPS=10000  round trips per run   BENCH_ROUNDS=7  rounds (median)
#   BENCH_HZ=99        sampling rate         BENCH_MODE=wall (or gil: --gil alone)
#   BENCH_WORK=6500    Python loop iterations per message (about 11k switches/s here)
#   BENCH_NICE=-10     nice value of the workload and pybpfprof (a shared machine's noise)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
bench_setup "wall bench" "sudo make bench-wall" python
echo 1 >/proc/sys/kernel/bpf_stats_enabled
/usr/bin/python3 bench/wall.py
