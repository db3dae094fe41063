#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The per-sample BPF cost of --opcodes and of --exceptions, the exception
# state read at every CPU tick (bench/opcodes.py): `sudo make bench-opcodes` from the
# repository root. kernel.bpf_stats_enabled is put back to its previous
# value whatever happens.
#
# Environment: BENCH_ROUNDS=5, BENCH_SECONDS=5, BENCH_PYTHON, PYBPFPROF,
# PYBPFPROF_BASE (a build without the ticks' reads, for the exception read's cost).
set -euo pipefail

cd "$(dirname "$0")/.."

. bench/common.sh
bench_setup opcodes "sudo make bench-opcodes" python

/usr/bin/python3 bench/opcodes.py
