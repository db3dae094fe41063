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

die() { echo "overhead: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || die "needs root (BPF programs, perf events): run 'sudo make bench'"
[ -x "${PYBPFPROF:-./pybpfprof}" ] || die "${PYBPFPROF:-./pybpfprof} not built: run 'make'"
[ -x "${BENCH_PYTHON:-/usr/bin/python3.11}" ] ||
	die "${BENCH_PYTHON:-/usr/bin/python3.11} not found (Debian: apt-get install python3.11)"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not found"
command -v bpftool >/dev/null || die "bpftool not found (needed for the BPF run-time stats)"
[ -w /proc/sys/kernel/bpf_stats_enabled ] || die "cannot write kernel.bpf_stats_enabled"

stats_prev=$(cat /proc/sys/kernel/bpf_stats_enabled)
restore() { echo "$stats_prev" >/proc/sys/kernel/bpf_stats_enabled; }
trap restore EXIT
trap 'exit 130' INT TERM

/usr/bin/python3 bench/overhead.py
