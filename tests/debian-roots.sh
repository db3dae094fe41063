#!/usr/bin/env bash
# Prepares minimal Debian release directories whose python3 builds serve as
# test interpreters (static, stripped, non-PIE, with USDT probes), and as
# container-like targets when a process is started with chroot in them.
#
#   tests/debian-roots.sh [SUITE...]     default: bullseye trixie forky sid
#
# Each root is cached in $PYBPFPROF_ROOTS (default /var/cache/pybpfprof/roots)
# and reused on later runs; a root is complete once its .ready file exists.
# Prints "SUITE DIR" for every root that is ready. Needs root and debootstrap.
set -u
ROOTS=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}
MIRROR=${PYBPFPROF_MIRROR:-http://deb.debian.org/debian}
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(bullseye trixie forky sid)

command -v debootstrap >/dev/null || {
	echo "debian-roots: debootstrap is not installed (apt-get install debootstrap)" >&2
	exit 1
}
mkdir -p "$ROOTS"
for suite in "${suites[@]}"; do
	dir=$ROOTS/$suite
	if [ ! -e "$dir/.ready" ]; then
		rm -rf "$dir"
		# forky has no debootstrap script of its own yet: it is built like sid.
		script=$suite
		[ "$suite" = forky ] && script=sid
		echo "debian-roots: creating $suite in $dir (about a minute)" >&2
		if ! debootstrap --variant=minbase --include=python3 "$suite" "$dir" "$MIRROR" \
			"/usr/share/debootstrap/scripts/$script" >"$ROOTS/$suite.log" 2>&1; then
			echo "debian-roots: debootstrap $suite failed; see $ROOTS/$suite.log" >&2
			continue
		fi
		# sid (and forky) also carry the next CPython; the archive's Release
		# files there may be past their Valid-Until date in a frozen snapshot.
		if [ "$suite" = sid ]; then
			echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99novalid"
			chroot "$dir" apt-get -qq update >>"$ROOTS/$suite.log" 2>&1 &&
				chroot "$dir" apt-get -qq install -y python3.15 >>"$ROOTS/$suite.log" 2>&1 ||
				echo "debian-roots: python3.15 not installed in sid; see $ROOTS/$suite.log" >&2
		fi
		touch "$dir/.ready"
	fi
	echo "$suite $dir"
done
