#!/usr/bin/env bash
# Builds the test interpreters that Debian does not ship, from Debian's own
# source packages, inside the Debian release roots of tests/debian-roots.sh,
# so that a process chrooted in a root runs them as a container would:
#
#   3.14t         python3.14 (forky, or sid): --disable-gil --with-dtrace
#   3.13t         python3.13 (trixie): --disable-gil --with-dtrace
#   3.14-shared   python3.14 (forky, or sid): --enable-shared --with-dtrace
#   3.13-shared   python3.13 (trixie): --enable-shared --with-dtrace
#   3.14-embed    a C program that dlopen()s Debian's libpython3.14 (forky)
#   3.13-embed    the same with Debian's libpython3.13 (trixie)
#   3.15-embed    the same with Debian's libpython3.15 (sid), which has the
#                 function probes 3.12 to 3.14 lack
#
#   tests/build-pythons.sh [NAME...]     default: all of the above
#
# Each is installed under /opt/pybpfprof/NAME inside its root, and cached
# there: a build is complete once its prefix has a .pybpfprof-key file whose
# content (the source package's version and the configure flags) matches
# what this script would build; anything else is removed and built anew.
# The source is fetched once (apt-get source, from a deb-src line made from
# the root's own deb line, so the same archive) and kept in
# /opt/pybpfprof/src; delete that folder to take a newer source version.
# No PGO, LTO, test modules, docs or pip: only what the tests run.
#
# Prints one line per program prepared:
#   NAME ROOT PATH-IN-ROOT HOST-PATH
# e.g. "3.14t /var/cache/pybpfprof/roots/forky /opt/pybpfprof/3.14t/bin/python3.14t
# /var/cache/pybpfprof/roots/forky/opt/pybpfprof/3.14t/bin/python3.14t".
# Run PATH-IN-ROOT with `chroot ROOT`: the programs link against the root's
# libraries, not the host's. Build logs go to $PYBPFPROF_ROOTS/build-NAME.log;
# PYBPFPROF_BUILD_JOBS (default 2) is make's -j.
# Needs root and the roots (tests/debian-roots.sh trixie forky sid).
set -euo pipefail
ROOTS=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}
HERE=$(cd "$(dirname "$0")" && pwd)
JOBS=${PYBPFPROF_BUILD_JOBS:-2}
OPT=/opt/pybpfprof
all=(3.14t 3.13t 3.14-shared 3.13-shared 3.14-embed 3.13-embed 3.15-embed)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${all[@]}")

die() {
	echo "build-pythons: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "chroot and apt-get need root: run this as root or with sudo"

# The roots a build may be made in, in order of preference: python3.14's
# source is taken from forky, or else from sid.
candidates_of() {
	case $1 in
	3.13*) echo trixie ;;
	3.14-embed) echo forky ;;
	3.15-embed) echo sid ;;
	3.14*) echo forky sid ;;
	esac
}
# The root of a build: the first candidate that has its source, or the first.
suite_of() {
	local s
	for s in $(candidates_of "$1"); do
		[ -n "${1##*-embed}" ] && [ -s "$ROOTS/$s/$OPT/src/$(srcpkg_of "$1").version" ] &&
			{ echo "$s"; return 0; }
	done
	s=$(candidates_of "$1")
	echo "${s%% *}"
}
# NAME -> source package, configure flags.
srcpkg_of() { case $1 in 3.13*) echo python3.13 ;; 3.14*) echo python3.14 ;; esac; }
flags_of() {
	local common="--prefix=$OPT/$1 --with-dtrace --disable-test-modules --with-ensurepip=no"
	case $1 in
	*t) echo "$common --disable-gil" ;;
	*-shared) echo "$common --enable-shared" ;;
	esac
}
for n in "${names[@]}"; do
	case " ${all[*]} " in *" $n "*) ;; *) die "unknown interpreter '$n' (known: ${all[*]})" ;; esac
done

# /proc inside a root while apt and the builds run; unmounted however we exit.
mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	mounted=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

in_root() {
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# step LOG WHAT CMD...: runs CMD with its output in LOG; on failure names the
# step and the log.
step() {
	local log=$1 what=$2
	shift 2
	echo "== $what" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		echo "build-pythons: $what failed; the end of $log:" >&2
		tail -n 15 "$log" >&2
		exit 1
	fi
}

mount_proc() {
	local root=$1
	mountpoint -q "$root/proc" && return 0
	mount -t proc proc "$root/proc"
	mounted+=("$root/proc")
}

# The root's compiler, dtrace (systemtap-sdt-dev) and the headers of the
# stdlib modules the tests use (ctypes: libffi; zlib), instead of the whole
# build-dep list (Tk, Bluetooth, documentation tools...).
BUILD_DEPS="build-essential dpkg-dev pkgconf systemtap-sdt-dev libffi-dev zlib1g-dev xz-utils"

prepare_root() {
	local suite=$1 root=$ROOTS/$1 log=$ROOTS/build-$1.log
	[ -e "$root/.ready" ] || die "the $suite root is missing in $root: run tests/debian-roots.sh $suite"
	[ "$(cat "$root/$OPT/.deps" 2>/dev/null)" = "$BUILD_DEPS" ] && return 0
	: >"$log"
	# The deb-src twin of each of the root's deb lines: the same archive.
	sed -n 's/^deb /deb-src /p' "$root/etc/apt/sources.list" \
		>"$root/etc/apt/sources.list.d/pybpfprof-src.list"
	[ -s "$root/etc/apt/sources.list.d/pybpfprof-src.list" ] ||
		die "no deb line in $root/etc/apt/sources.list to take the source packages from"
	# The archive may be a frozen snapshot whose Release files are past their
	# Valid-Until date (as debian-roots.sh says for sid).
	step "$log" "apt-get update in $suite" \
		in_root "$root" apt-get -q -o Acquire::Check-Valid-Until=false update
	# shellcheck disable=SC2086
	step "$log" "installing the build dependencies in $suite" \
		in_root "$root" apt-get -q install -y --no-install-recommends $BUILD_DEPS
	mkdir -p "$root/$OPT"
	echo "$BUILD_DEPS" >"$root/$OPT/.deps"
}

# Fetches and unpacks the source package once; sets SRC to its folder in the
# root (not printed: a command substitution's subshell would lose the mounts
# to undo). 1 when the archive does not give it (the message says why).
fetch_source() {
	local suite=$1 pkg=$2 root=$ROOTS/$1 log=$ROOTS/build-$2-$1-source.log ver tmp d
	if [ -s "$root/$OPT/src/$pkg.version" ]; then
		ver=$(cat "$root/$OPT/src/$pkg.version")
		SRC=$OPT/src/$pkg-$ver
		[ -d "$root/$SRC" ] && return 0
	fi
	prepare_root "$suite"
	: >"$log"
	tmp=$OPT/src/download
	rm -rf "${root:?}/$tmp"
	mkdir -p "$root/$tmp"
	if ! in_root "$root" sh -c "cd $tmp && apt-get -q source $pkg" >>"$log" 2>&1; then
		if grep -q "404 *Not Found" "$log"; then
			echo "build-pythons: apt-get source $pkg in $suite failed: the Debian archive this machine's apt uses lists it but does not serve its files (404); see $log" >&2
			# For the tests' skip message (tests/integration/harness.py).
			echo "the Debian archive this machine's apt uses lists $pkg's source in $suite but does not serve its files (404)" >>"$ROOTS/.why-$BUILDING"
		else
			echo "build-pythons: apt-get source $pkg in $suite failed; see $log" >&2
		fi
		rm -rf "${root:?}/$tmp"
		return 1
	fi
	ver=$(cd "$root/$tmp" && for f in "$pkg"_*.dsc; do echo "$f"; done |
		sed -n "s/^${pkg}_\(.*\)\.dsc$/\1/p" | head -n 1)
	[ -n "$ver" ] || die "apt-get source $pkg left no .dsc in $root/$tmp"
	d=$(cd "$root/$tmp" && for f in "$pkg"-*/; do [ -f "$f/configure" ] && echo "${f%/}"; done | head -n 1)
	[ -n "$d" ] || die "apt-get source $pkg unpacked no source tree in $root/$tmp"
	rm -rf "${root:?}/$OPT/src/$pkg-$ver"
	mv "$root/$tmp/$d" "$root/$OPT/src/$pkg-$ver" || die "cannot move the source into $root/$OPT/src"
	rm -rf "${root:?}/$tmp"
	echo "$ver" >"$root/$OPT/src/$pkg.version"
	SRC=$OPT/src/$pkg-$ver
}

exe_of() {
	case $1 in
	*-embed) echo "$OPT/$1/bin/pyembed" ;;
	*t) echo "$OPT/$1/bin/python${1%t}t" ;;
	*-shared) echo "$OPT/$1/bin/python${1%-shared}" ;;
	esac
}

report() {
	local root exe
	root=$ROOTS/$(suite_of "$1")
	exe=$(exe_of "$1")
	echo "$1 $root $exe $root$exe"
}

# Whether NAME is installed with the key this script would build it with.
cached() {
	local root pkg key
	root=$ROOTS/$(suite_of "$1")
	case $1 in
	*-embed)
		key=$(embed_key "$1")
		;;
	*)
		pkg=$(srcpkg_of "$1")
		[ -s "$root/$OPT/src/$pkg.version" ] || return 1
		key="$pkg $(cat "$root/$OPT/src/$pkg.version") $(flags_of "$1")"
		;;
	esac
	[ "$(cat "$root/$OPT/$1/.pybpfprof-key" 2>/dev/null)" = "$key" ] && [ -x "$root$(exe_of "$1")" ]
}

build_python() {
	local name=$1 suite root pkg src ver key log prefix bdir flags t0=$SECONDS
	pkg=$(srcpkg_of "$name")
	prefix=$OPT/$name
	flags=$(flags_of "$name")
	for suite in $(candidates_of "$name") none; do
		[ "$suite" = none ] && die "no root gave the source of $pkg: $name cannot be built"
		[ -e "$ROOTS/$suite/.ready" ] || continue
		fetch_source "$suite" "$pkg" && break
	done
	root=$ROOTS/$suite
	src=$SRC
	ver=$(cat "$root/$OPT/src/$pkg.version")
	key="$pkg $ver $flags"
	log=$ROOTS/build-$name.log
	: >"$log"
	echo "build-pythons: building $name ($pkg $ver) in $suite; log in $log" >&2
	prepare_root "$suite"
	# The key goes first: a build stopped half-way has none and is redone.
	rm -rf "${root:?}/$prefix" "${root:?}/$OPT/build/$name"
	bdir=$OPT/build/$name
	mkdir -p "$root/$bdir"
	# The shared build's python finds its libpython by its run path. Given
	# to make: Debian's configure does not keep a configure-time LDFLAGS.
	local ldflags=
	[ "${name%-shared}" != "$name" ] && ldflags="-Wl,-rpath,$prefix/lib"
	step "$log" "configure $name" in_root "$root" sh -c "cd $bdir && $src/configure $flags"
	step "$log" "make $name" in_root "$root" make -C "$bdir" -j"$JOBS" LDFLAGS="$ldflags"
	step "$log" "make install $name" in_root "$root" make -C "$bdir" install LDFLAGS="$ldflags"
	step "$log" "checking $name's stdlib" in_root "$root" "$(exe_of "$name")" -c \
		'import threading, _socket, math, time, ctypes, mmap, gc, json, zlib, sysconfig
assert sysconfig.get_config_var("WITH_DTRACE") == 1, "no dtrace"'
	rm -rf "${root:?}/$bdir"
	echo "$key" >"$root/$prefix/.pybpfprof-key"
	echo "build-pythons: $name built in $((SECONDS - t0)) s" >&2
	report "$name"
}

# The embedding program: a C program that loads libpython with dlopen() at
# run time, so the probes live in a library mapped after the process
# started. It loads Debian's own libpython3.X.so (package libpython3.X,
# built by Debian with --enable-shared --with-dtrace), the library embedding
# applications on Debian load.
embed_key() {
	local root v
	root=$ROOTS/$(suite_of "$1")
	v=${1%-embed}
	# shellcheck disable=SC2016 # ${Version} is dpkg-query's, not the shell's
	echo "libpython$v $(in_root "$root" dpkg-query -W -f '${Version}' "libpython$v" 2>/dev/null)" \
		"$(cksum <"$HERE/integration/targets/pyembed.c")"
}

build_embed() {
	local name=$1 suite root lib home ver log prefix
	suite=$(suite_of "$name")
	root=$ROOTS/$suite
	ver=${name%-embed}
	prefix=$OPT/$name
	log=$ROOTS/build-$name.log
	prepare_root "$suite"
	: >"$log"
	step "$log" "installing libpython$ver in $suite" \
		in_root "$root" apt-get -q install -y --no-install-recommends "libpython$ver"
	lib=$(in_root "$root" dpkg-query -L "libpython$ver" | grep "/libpython$ver\.so\.1\.0$" | head -n 1)
	[ -n "$lib" ] || die "libpython$ver in $suite has no libpython$ver.so.1.0"
	home=$(in_root "$root" "python$ver" -c 'import sys; print(sys.base_prefix)')
	rm -rf "${root:?}/$prefix"
	mkdir -p "$root/$prefix/bin"
	cp "$HERE/integration/targets/pyembed.c" "$root/$prefix/pyembed.c"
	step "$log" "compiling $name" in_root "$root" cc -O2 -Wall -Werror \
		-DPYEMBED_LIBPYTHON="\"$lib\"" -DPYEMBED_HOME="\"$home\"" -o "$prefix/bin/pyembed" "$prefix/pyembed.c" -ldl
	step "$log" "checking $name" in_root "$root" "$prefix/bin/pyembed" \
		"import math, json, sys; assert sys.prefix == '$home', sys.prefix"
	embed_key "$name" >"$root/$prefix/.pybpfprof-key"
	report "$name"
}

# What is cached is reported at once; the rest is built one at a time, each
# in a subshell so that one that cannot be built (its step says why) does
# not stop the others. /proc is mounted here, in the process whose trap
# unmounts it.
todo=()
for n in "${names[@]}"; do
	if cached "$n"; then
		report "$n"
	else
		todo+=("$n")
	fi
done
[ ${#todo[@]} -eq 0 ] && exit 0

# One build at a time: two would fight over apt's lock and the build
# folders. A finished build's key is written last, so the reading above
# needs no lock; what another run built meanwhile is seen below.
mkdir -p "$ROOTS"
exec 9>"$ROOTS/.build-pythons.lock"
if ! flock -n 9; then
	echo "build-pythons: another run holds $ROOTS/.build-pythons.lock; waiting for it" >&2
	flock 9
fi
failed=()
for n in "${todo[@]}"; do
	if cached "$n"; then
		report "$n"
		continue
	fi
	for s in $(candidates_of "$n"); do
		[ -e "$ROOTS/$s/.ready" ] && mount_proc "$ROOTS/$s"
	done
	# Why it could not be built, if it cannot: one line per candidate root.
	BUILDING=$n
	rm -f "$ROOTS/.why-$n"
	# Not "(...) || ...": that would turn off set -e inside the subshell.
	set +e
	(
		set -e
		case $n in
		*-embed) build_embed "$n" ;;
		*) build_python "$n" ;;
		esac
	)
	rc=$?
	set -e
	if [ $rc -eq 0 ]; then
		rm -f "$ROOTS/.why-$n"
	else
		failed+=("$n")
		[ -s "$ROOTS/.why-$n" ] || echo "its build failed; see $ROOTS/build-$n.log" >"$ROOTS/.why-$n"
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "build-pythons: not built: ${failed[*]} (the messages above say why)" >&2
	exit 1
fi
