#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --mem overhead benchmark: slowdown of an allocation-heavy workload
# (bench/mem_workload.py) under each memory mode, and the BPF programs' cost.
# Run as root from anywhere: `sudo bench/mem.sh`. Settings: see bench/mem.py.
# kernel.bpf_stats_enabled is put back to its previous value on every exit.
set -euo pipefail

cd "$(dirname "$0")/.."

. bench/common.sh
bench_setup "mem bench" "sudo bench/mem.sh" python

/usr/bin/python3 bench/mem.py
