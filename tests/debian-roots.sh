#!/usr/bin/env bash
# Prepares minimal Debian release directories whose python3 builds serve as
# test interpreters (static, stripped, non-PIE, with USDT probes), and as
# container-like targets when a process is started with chroot in them.
#
#   tests/debian-roots.sh [SUITE...]     default: bullseye trixie forky sid
#
# Each root is cached in $PYBPFPROF_ROOTS (default /var/cache/pybpfprof/roots)
# and reused on later runs; a root is complete once its .ready file exists.
# The roots are made at the same time (each takes about a minute, mostly
# download). Prints "SUITE DIR" for every root that is ready; exits 1 if one
# could not be made. Needs root and debootstrap.
#
# The packages come from the Debian archive this machine's own apt uses
# (its deb822 sources.list.d/*.sources or its one-line sources.list), or from
# $PYBPFPROF_MIRROR when set.
set -u
ROOTS=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(bullseye trixie forky sid)

# The URI of the main archive in apt's sources: the entry that carries the
# machine's own release (bookworm), not its -updates or -security ones,
# which are other suites and, for security, another archive.
apt_mirror() {
	local codename dir
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	dir=$(apt-config shell d Dir::Etc::sourceparts/d 2>/dev/null | sed -n "s/^d='\(.*\)'$/\1/p")
	dir=${dir:-/etc/apt/sources.list.d}
	# deb822 stanzas: paragraphs of "Field: value" lines.
	for f in "$dir"/*.sources; do
		[ -r "$f" ] || continue
		awk -v want="$codename" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled != "no" && uris != "" &&
				    (" " suites " ") ~ (" " want " "))
					{ split(uris, u, " "); print u[1]; found = 1; exit }
				types = uris = suites = enabled = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{
				key = tolower($1); sub(/:$/, "", key)
				val = $0; sub(/^[^:]*:[ \t]*/, "", val)
				if (key == "types") types = val
				else if (key == "uris") uris = val
				else if (key == "suites") suites = val
				else if (key == "enabled") enabled = tolower(val)
			}
			END { if (!found) flush() }' "$f"
	done | head -n 1 | grep . && return 0
	# One-line format: "deb [options] URI SUITE COMPONENT...".
	cat /etc/apt/sources.list "$dir"/*.list 2>/dev/null |
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' |
		awk -v want="$codename" '$1 == "deb" && $3 == want { print $2; exit }' | grep .
}

if [ -n "${PYBPFPROF_MIRROR:-}" ]; then
	MIRROR=$PYBPFPROF_MIRROR
elif ! MIRROR=$(apt_mirror); then
	echo "debian-roots: no Debian archive found in this machine's apt sources" \
		"(/etc/apt/sources.list.d/*.sources, /etc/apt/sources.list):" \
		"set PYBPFPROF_MIRROR to a Debian mirror's URL" >&2
	exit 1
fi
# debootstrap fetches with its own wget, not apt: give it apt's proxy if any.
if [ -z "${http_proxy:-}" ]; then
	eval "$(apt-config shell http_proxy Acquire::http::Proxy 2>/dev/null)"
	[ -n "${http_proxy:-}" ] && export http_proxy
fi

command -v debootstrap >/dev/null || {
	echo "debian-roots: debootstrap is not installed (tests/install-deps.sh installs it)" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || {
	echo "debian-roots: debootstrap and chroot need root: run this as root or with sudo" >&2
	exit 1
}
mkdir -p "$ROOTS"

# One root: the base system with python3 (.base once debootstrap is done),
# then what a suite adds; .ready when all is in.
prepare() {
	local suite=$1 dir=$ROOTS/$1 log=$ROOTS/$1.log script=$1
	[ -e "$dir/.ready" ] && return 0
	if [ ! -e "$dir/.base" ]; then
		rm -rf "$dir"
		# forky has no debootstrap script of its own yet: it is built like sid.
		[ "$suite" = forky ] && script=sid
		echo "debian-roots: creating $suite in $dir from $MIRROR" >&2
		if ! debootstrap --variant=minbase --include=python3 "$suite" "$dir" "$MIRROR" \
			"/usr/share/debootstrap/scripts/$script" >"$log" 2>&1; then
			echo "debian-roots: debootstrap $suite failed; see $log" >&2
			return 1
		fi
		touch "$dir/.base"
	fi
	# sid also carries the next CPython; the archive's Release files may be
	# past their Valid-Until date when the mirror is a frozen snapshot.
	if [ "$suite" = sid ]; then
		echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99novalid"
		if ! { chroot "$dir" apt-get -qq update &&
			chroot "$dir" apt-get -qq install -y python3.15; } >>"$log" 2>&1; then
			echo "debian-roots: python3.15 could not be installed in sid; see $log" >&2
			return 1
		fi
	fi
	touch "$dir/.ready"
}

# Killed in the middle, debootstrap leaves /proc mounted inside a half-made
# root, which then cannot be removed: on the way out, stop what is still
# running and unmount whatever is mounted in a root that is not ready.
# debootstrap ignores SIGTERM: its whole tree is stopped, then killed.
tree() {
	local child
	echo "$1"
	for child in $(pgrep -P "$1"); do tree "$child"; done
}
unmount_unfinished() {
	local suite mnt
	for suite in "${suites[@]}"; do
		[ -e "$ROOTS/$suite/.ready" ] && continue
		awk -v d="$ROOTS/$suite/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts |
			sort -r | while read -r mnt; do umount -l "$mnt" || true; done
	done
}
on_signal() {
	trap - INT TERM
	local victims
	# A terminal's Ctrl-C may have ended the subshells already, leaving their
	# debootstrap to init: it is also found by the root on its command line.
	victims=$(
		for pid in "${pids[@]}" $(for suite in "${suites[@]}"; do
			[ -e "$ROOTS/$suite/.ready" ] || pgrep -f -- "$ROOTS/$suite( |$)"
		done); do tree "$pid"; done | sort -u
	) || true
	kill -STOP $victims 2>/dev/null || true
	kill -KILL $victims 2>/dev/null || true
	wait
	echo "debian-roots: interrupted; the unfinished roots are left to be made again" >&2
	exit 130
}
pids=()
trap unmount_unfinished EXIT
trap on_signal INT TERM
for suite in "${suites[@]}"; do
	prepare "$suite" &
	pids+=($!)
done
rc=0
for i in "${!suites[@]}"; do
	if wait "${pids[$i]}"; then
		echo "${suites[$i]} $ROOTS/${suites[$i]}"
	else
		rc=1
	fi
done
exit $rc
