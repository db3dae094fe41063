#!/usr/bin/env bash
# Installs everything the build and the tests need on a fresh Debian 12
# machine. Used by the README's commands and by .ci/run, so they cannot
# drift apart. Run as root, or as a user with sudo (it asks for it).
#
#   tests/install-deps.sh build    the build's packages only (to run make example)
#   tests/install-deps.sh          the build's, the tests' and the Debian
#                                  release roots the tests chroot into
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/as-root.sh
if [ "$(id -u)" -ne 0 ]; then
	as_root "$PWD/tests/install-deps.sh" "$@"
	exit
fi
export DEBIAN_FRONTEND=noninteractive
# A freshly booted machine may be running its daily apt jobs: wait for them.
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
t0=$SECONDS
apt_get update -qq
apt_get install -y -qq make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev \
	libcurl4-openssl-dev libmicrohttpd-dev python3 util-linux libdw-dev liblzma-dev >/dev/null
[ "${1:-}" = build ] && exit 0

# Tests: cmocka, jansson (the unit tests read our JSON with a parser not our
# own), setpriv and unshare (util-linux), readelf (binutils), the
# formats' real consumers (protoc, Chromium and its WebDriver, Graphviz's
# dot), tmux for the live view, debootstrap for the Debian release roots; for
# the checks of check-all, clang-format (make format-check) and groff and man
# (tests/check-man.sh).
apt_get install -y -qq libcmocka-dev libjansson-dev binutils protobuf-compiler chromium chromium-driver \
	graphviz tmux debootstrap clang-format groff-base man-db xz-utils >/dev/null
# numpy for /usr/bin/python3.11: dump --locals shows arrays by dtype and shape;
# suite_native unwinds its FFT code.
apt_get install -y -qq python3-numpy >/dev/null
# The real applications of suite_apps: dask.distributed, Flask under gunicorn,
# pandas and requests, all for /usr/bin/python3.11.
apt_get install -y -qq python3-distributed python3-dask python3-pandas python3-flask gunicorn \
	python3-requests >/dev/null
# The agent's --metrics page read by Prometheus' own Python client's parser.
apt_get install -y -qq python3-prometheus-client >/dev/null
# go tool pprof, the reference reader of pprof files (the toolchain only, no extras).
apt_get install -y -qq --no-install-recommends golang-go >/dev/null
# npm fetches speedscope's schema for the format tests; a machine with its own
# Node.js (which bundles npm) keeps it, a bare Debian one gets Debian's.
command -v npm >/dev/null || apt_get install -y -qq nodejs npm >/dev/null
tests/fetch-speedscope.sh
echo "install-deps: packages ready ($((SECONDS - t0)) s)"

# CPython 3.9 and 3.13 to 3.15 as Debian builds them (static, with USDT
# probes), in chroot directories that also stand for containers: made once
# (a few minutes), then cached in $PYBPFPROF_ROOTS (/var/cache/pybpfprof/roots).
t0=$SECONDS
tests/debian-roots.sh >/dev/null
echo "install-deps: Debian release roots ready ($((SECONDS - t0)) s)"

# Free-threaded (3.13t, 3.14t) and shared-libpython CPython with USDT probes,
# built from Debian's source packages inside those roots (no PGO or LTO):
# about 4 minutes each when cold, then cached under /opt/pybpfprof in each
# root. One that cannot be built is named, and its tests skip.
t0=$SECONDS
if tests/build-pythons.sh >/dev/null; then
	echo "install-deps: test interpreters ready ($((SECONDS - t0)) s)"
else
	echo "install-deps: some test interpreters could not be built ($((SECONDS - t0)) s)"
fi
# How long this took, for make check-all's budget of the whole README command.
roots=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}
mkdir -p "$roots" && echo "$SECONDS" >"$roots/.install-deps-seconds"
