#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Captures the stack walk's fixtures (tests/fixtures/stackwalk/NAME.txt.gz)
# from real interpreters, as root: starts each one on
# tests/fixtures/stackwalk/workload.py (asleep in f1 -> f2 -> f3, its stack
# written down by the interpreter itself), then runs
# tests/capture_stackwalk.c on it, which walks that stack with bpf/stackwalk.h
# and saves the pages the walk read. tests/unit/test_stackwalk.c replays them.
# Run it again when the walk or the offsets change; not part of `make check`.
#
# Usage: tests/capture_stackwalk.sh [NAME=PYTHON | NAME=ROOT:PYTHON ...]
#   (default: Debian's 3.11, pyenv's 3.8-3.13, forky's 3.14 in its chroot,
#   and the free-threaded 3.13t and 3.14t of tests/build-pythons.sh)
# A NAME ending in -thread runs the workload's stack in a thread other than
# the main one (3.14t: thread-local bytecode).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=tests/fixtures/stackwalk
TOOL=.output/tests/capture_stackwalk
make -s "$TOOL"

pyenv_root=$(pyenv root 2>/dev/null || echo /root/.pyenv)
roots=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}
if [ $# -eq 0 ]; then
	set -- debian-3.11=/usr/bin/python3.11
	for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
		for py in "$pyenv_root"/versions/"$v".*/bin/python"$v"; do
			[ -x "$py" ] && set -- "$@" "pyenv-$v=$py"
		done
	done
	[ -x "$roots/forky/usr/bin/python3.14" ] && set -- "$@" "forky-3.14=$roots/forky:/usr/bin/python3.14"
	ft313=/opt/pybpfprof/3.13t/bin/python3.13t ft314=/opt/pybpfprof/3.14t/bin/python3.14t
	[ -x "$roots/trixie$ft313" ] && set -- "$@" "trixie-3.13t=$roots/trixie:$ft313"
	[ -x "$roots/forky$ft314" ] && set -- "$@" "forky-3.14t-thread=$roots/forky:$ft314"
fi

# capture NAME [ROOT] PYTHON
capture() {
	local name=$1 root=$2 python=$3 dir pid i expected where=main
	dir=$(mktemp -d "${root:-}/tmp/stackwalk.XXXXXX")
	cp "$OUT/workload.py" "$dir/workload.py"
	case $name in *-thread) where=thread ;; esac
	if [ -n "$root" ]; then
		chroot "$root" "$python" "${dir#"$root"}/workload.py" "${dir#"$root"}/expected" \
			"$where" &
	else
		"$python" "$dir/workload.py" "$dir/expected" "$where" &
	fi
	pid=$!
	expected=$dir/expected
	for i in $(seq 100); do
		[ -e "$expected" ] && break
		sleep 0.1
	done
	if "$TOOL" "$pid" "$expected" "$OUT/$name.txt.gz"; then
		echo "$name: $(grep -c '^frame' "$expected") frames, $(du -k "$OUT/$name.txt.gz" | cut -f1) KiB"
	else
		echo "$name: FAILED" >&2
	fi
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$dir"
}

for spec in "$@"; do
	name=${spec%%=*} py=${spec#*=} root=
	case $py in *:*) root=${py%%:*} py=${py#*:} ;; esac
	capture "$name" "$root" "$py"
done
