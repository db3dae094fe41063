#!/usr/bin/env bash
# Installs everything the build and the tests need on a fresh Debian 12
# machine (run as root). Used by the README's test command and by .ci/run,
# so the two cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Build: compilers, BPF tooling, libraries. Tests: cmocka, python3, setpriv and
# unshare (util-linux), readelf (binutils), the formats' real consumers
# (protoc, Chromium and its WebDriver), tmux for the live view.
apt-get install -y -qq make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev \
	libcmocka-dev python3 util-linux binutils protobuf-compiler chromium chromium-driver \
	tmux >/dev/null
# go tool pprof, the reference reader of pprof files (the toolchain only, no extras).
apt-get install -y -qq --no-install-recommends golang-go >/dev/null
# npm fetches speedscope's schema for the format tests; a machine with its own
# Node.js (which bundles npm) keeps it, a bare Debian one gets Debian's.
command -v npm >/dev/null || apt-get install -y -qq nodejs npm >/dev/null
tests/fetch-speedscope.sh
