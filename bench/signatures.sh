#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The per-sample cost of --signatures (bench/signatures.py): `sudo make
# bench-signatures` from the repository root. kernel.bpf_stats_enabled is put
# back to its previous value whatever happens.
#
# Environment: BENCH_ROUNDS=5, BENCH_SECONDS=5, BENCH_PYTHON, PYBPFPROF.
set -euo pipefail

cd "$(dirname "$0")/.."

. bench/common.sh
bench_setup signatures "sudo make bench-signatures" python

/usr/bin/python3 bench/signatures.py
