#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Small ELF seeds for fuzz_elf, into OUTDIR:
#   seed-so, seed-so-stripped   elf_seed.c as a shared object (ET_DYN, .dynsym,
#                               .symtab unless stripped, .note.stapsdt)
#   seed-exe                    as an ET_EXEC executable that needs libpython3
#                               (DT_NEEDED), linked against the stub seed-so
#   notes-<name>                the .note.stapsdt (and .stapsdt.base) of each
#                               CPython binary given, cut out with objcopy
# Usage: gen_elf_seeds.sh OUTDIR [PYTHON_ELF...]
set -eu
out=$1
shift
src=$(dirname "$0")/elf_seed.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
small="-Os -nostdlib -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code -Wl,--build-id=none"
clang $small -fPIC -shared -o "$out/seed-so" "$src"
llvm-strip -o "$out/seed-so-stripped" "$out/seed-so" 2>/dev/null ||
	strip -o "$out/seed-so-stripped" "$out/seed-so"
cp "$out/seed-so" "$tmp/libpython3.13.so"
clang $small -fno-pic -no-pie -Wl,-e,py_probes -Wl,--no-as-needed \
	-o "$out/seed-exe" "$src" -L"$tmp" -lpython3.13
for elf in "$@"; do
	[ -r "$elf" ] || continue
	name=$(basename "$elf")
	objcopy -j .note.stapsdt -j .stapsdt.base "$elf" "$out/notes-$name" 2>/dev/null ||
		rm -f "$out/notes-$name"
done
