#!/usr/bin/env bash
# Captures the first 1024 bytes of _PyRuntime (where _Py_DebugOffsets lives in
# 3.13+) from a CPython binary's .PyRuntime section, as a test fixture:
#
#   tests/capture_debug_offsets.sh BINARY NAME   -> tests/fixtures/debug_offsets/NAME.bin
#
# The fixtures in git came from pyenv's 3.13.0 libpython and the python3.13,
# python3.14 and python3.15 executables of Debian trixie, forky and sid
# (tests/debian-roots.sh).
set -eu
bin=$1 name=$2
read -r off < <(readelf -SW "$bin" | awk '$2 == ".PyRuntime" { print $5 }')
[ -n "$off" ] || { echo "no .PyRuntime section in $bin" >&2; exit 1; }
out=$(dirname "$0")/fixtures/debug_offsets/$name.bin
dd if="$bin" of="$out" bs=1 skip=$((16#$off)) count=1024 status=none
echo "$out"
