#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --native / --kernel overhead benchmark (`sudo make bench-native`): the
# measuring is done by bench/native.py (standard library of /usr/bin/python3
# only); this wrapper checks the prerequisites and puts
# kernel.bpf_stats_enabled back whatever happens. Environment: see
# bench/native.py.
set -euo pipefail

cd "$(dirname "$0")/.."

. bench/common.sh
bench_setup "native bench" "sudo make bench-native" python

/usr/bin/python3 bench/native.py
