#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Small ELF seeds for fuzz_native_elf (what --native hands libdw), into OUTDIR:
#   stripped-so      a stripped shared object: .dynsym and .eh_frame(_hdr)
#   minidebug-so     stripped, its static function named only in an
#                    xz-compressed .gnu_debugdata (as suite_native.py makes one)
#   ehframe-only-so  stripped, no .eh_frame_hdr: .eh_frame only
#   debugframe-so    no .eh_frame: call frame information in .debug_frame only
# Usage: gen_native_elf_seeds.sh OUTDIR
set -eu
out=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
cat >"$tmp/s.c" <<'C'
static __attribute__((noinline)) long hidden_leaf(long n)
{
	volatile long x = 0;
	for (long i = 0; i < n; i++)
		x += i;
	return x;
}

long seed_entry(long n)
{
	return hidden_leaf(n) + 1;
}
C
small="-Os -nostdlib -shared -fPIC -Wl,-z,max-page-size=4096 -Wl,-z,noseparate-code -Wl,--build-id=none"
# shellcheck disable=SC2086
gcc $small -o "$tmp/full.so" "$tmp/s.c"
strip --strip-all -R .comment -o "$out/stripped-so" "$tmp/full.so"
echo hidden_leaf >"$tmp/keep"
objcopy -S -R .comment --keep-symbols="$tmp/keep" "$tmp/full.so" "$tmp/mini"
xz -f "$tmp/mini"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$out/stripped-so" "$out/minidebug-so"
# shellcheck disable=SC2086
gcc $small -Wl,--no-eh-frame-hdr -o "$tmp/noh.so" "$tmp/s.c"
strip --strip-all -R .comment -o "$out/ehframe-only-so" "$tmp/noh.so"
# shellcheck disable=SC2086
gcc $small -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$tmp/dbg.so" "$tmp/s.c"
strip --strip-all -R .comment --keep-section=.debug_frame -o "$out/debugframe-so" "$tmp/dbg.so"
