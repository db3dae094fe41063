#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Regenerates src/cpython/py_opcode_names.h from every interpreter of this
# machine (src/cpython/gen_opcode_names.py dumps each one's own opcode
# tables, then writes the header; the dumps of one minor version must
# agree): pyenv's 3.8-3.13, Debian's 3.11, and the release roots of
# tests/debian-roots.sh (bullseye's 3.9, trixie's 3.13 and 3.13t, forky's
# and sid's 3.14, sid's 3.15), run in their chroots as root. Not part of
# the build: run it again when a new CPython version is supported.
set -euo pipefail
cd "$(dirname "$0")/../.."

gen=src/cpython/gen_opcode_names.py
out=src/cpython/py_opcode_names.h
roots=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}
pyenv_root=$(pyenv root 2>/dev/null || echo /root/.pyenv)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
dump() { # dump PYTHON [ROOT]
	local py=$1 root=${2:-} file
	n=$((n + 1))
	file=$tmp/dump-$n.json
	if [ -z "$root" ]; then
		"$py" "$gen" dump >"$file"
	else
		local inside
		inside=$(mktemp -p "$root/tmp" gen-opcode-names.XXXXXX.py)
		cp "$gen" "$inside"
		chroot "$root" "$py" "/tmp/${inside##*/}" dump >"$file"
		rm -f "$inside"
	fi
	echo "$py${root:+ in $root}: $(grep -o '"version": "[^"]*"' "$file")" >&2
}

for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	for py in "$pyenv_root"/versions/"$v".*/bin/python"$v"; do
		[ -x "$py" ] && dump "$py"
	done
done
[ -x /usr/bin/python3.11 ] && dump /usr/bin/python3.11
[ -x "$roots/bullseye/usr/bin/python3.9" ] && dump /usr/bin/python3.9 "$roots/bullseye"
[ -x "$roots/trixie/usr/bin/python3.13" ] && dump /usr/bin/python3.13 "$roots/trixie"
[ -x "$roots/trixie/opt/pybpfprof/3.13t/bin/python3.13t" ] &&
	dump /opt/pybpfprof/3.13t/bin/python3.13t "$roots/trixie"
[ -x "$roots/forky/usr/bin/python3.14" ] && dump /usr/bin/python3.14 "$roots/forky"
[ -x "$roots/sid/usr/bin/python3.14" ] && dump /usr/bin/python3.14 "$roots/sid"
[ -x "$roots/sid/usr/bin/python3.15" ] && dump /usr/bin/python3.15 "$roots/sid"

python3 "$gen" header "$tmp"/dump-*.json >"$tmp/header.h"
mv "$tmp/header.h" "$out"
echo "wrote $out" >&2
