#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost of the USDT modes (--calls): BPF time per probe hit and the slowdown of
# a call-heavy loop, per interpreter (Debian roots from tests/debian-roots.sh).
# Measuring is done by bench/usdt.py; this wrapper checks prerequisites and
# puts kernel.bpf_stats_enabled back whatever happens.
#   BENCH_CALLS=200000  calls per loop      BENCH_ROUNDS=3  rounds (median)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh
bench_setup "usdt bench" "sudo bench/usdt.sh"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
/usr/bin/python3 bench/usdt.py
