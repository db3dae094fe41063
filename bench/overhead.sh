#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Overhead benchmark of pybpfprof against Debian's /usr/bin/python3.11.
# `sudo make bench` runs it from the repository root. The measuring is done by
# bench/overhead.py (standard library of /usr/bin/python3 only); this wrapper
# checks the prerequisites and makes sure kernel.bpf_stats_enabled is put
# back to its previous value whatever happens.
#
# Environment:
#   BENCH_ROUNDS=7         interleaved rounds (none, 99 Hz, 999 Hz)
#   BENCH_CONTROL=1        add a control run per round: cpu-clock events at 999 Hz, no BPF
#   BENCH_QUIET_TIMEOUT=60 before each round, wait up to this long for an idle machine
#   BENCH_ATTACH_WAIT=0.5  seconds between starting pybpfprof and starting the work
#   BENCH_ITERATIONS=N     workload size (default: ~2 s of work)
#   BENCH_OUT=FILE         also write the results as a Markdown section to FILE
#   BENCH_RAW=FILE         also write every run's figures as JSON to FILE
#   BENCH_STRICT=1         exit 3 when a goal is missed
#   BENCH_NICE=-10         run the workload and pybpfprof at this nice value (shared machines)
#   BENCH_PIN=1            diagnostic: workload pinned to CPU 1, pybpfprof to CPU 0
#   BENCH_PYTHON, PYBPFPROF  the target interpreter and the profiler binary
set -euo pipefail

cd "$(dirname "$0")/.."

. bench/common.sh
bench_setup overhead "sudo make bench" python

/usr/bin/python3 bench/overhead.py
