#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --mem overhead benchmark: slowdown of an allocation-heavy workload
# (bench/mem_workload.py) under each memory mode, and the BPF programs' cost.
# Run as root from anywhere: `sudo bench/mem.sh`. Settings: see bench/mem.py.
# kernel.bpf_stats_enabled is put back to its previous value on every exit.
set -euo pipefail

cd "$(dirname "$0")/.."

die() { echo "mem bench: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || die "needs root (BPF programs, perf events): run 'sudo bench/mem.sh'"
[ -x "${PYBPFPROF:-./pybpfprof}" ] || die "${PYBPFPROF:-./pybpfprof} not built: run 'make'"
[ -x "${BENCH_PYTHON:-/usr/bin/python3.11}" ] ||
	die "${BENCH_PYTHON:-/usr/bin/python3.11} not found (Debian: apt-get install python3.11)"
command -v bpftool >/dev/null || die "bpftool not found (needed for the BPF run-time stats)"
[ -w /proc/sys/kernel/bpf_stats_enabled ] || die "cannot write kernel.bpf_stats_enabled"

stats_prev=$(cat /proc/sys/kernel/bpf_stats_enabled)
restore() { echo "$stats_prev" >/proc/sys/kernel/bpf_stats_enabled; }
trap restore EXIT
trap 'exit 130' INT TERM

/usr/bin/python3 bench/mem.py
