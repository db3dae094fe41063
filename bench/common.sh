# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the root benchmark wrappers (overhead.sh, mem.sh, usdt.sh), from
# the repository root: bench_setup checks what every one of them needs and
# makes sure kernel.bpf_stats_enabled is put back to its previous value
# whatever happens.

die() { echo "${BENCH_NAME:-bench}: $*" >&2; exit 2; }

# bench_setup NAME HOW [python]: NAME in messages, HOW the command that runs
# it; "python" also requires the target interpreter (BENCH_PYTHON).
bench_setup() {
	BENCH_NAME=$1
	[ "$(id -u)" -eq 0 ] || die "needs root (BPF programs, perf events): run '$2'"
	[ -x "${PYBPFPROF:-./pybpfprof}" ] || die "${PYBPFPROF:-./pybpfprof} not built: run 'make'"
	if [ "${3:-}" = python ]; then
		[ -x "${BENCH_PYTHON:-/usr/bin/python3.11}" ] ||
			die "${BENCH_PYTHON:-/usr/bin/python3.11} not found (Debian: apt-get install python3.11)"
	fi
	[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not found"
	command -v bpftool >/dev/null || die "bpftool not found (needed for the BPF run-time stats)"
	[ -w /proc/sys/kernel/bpf_stats_enabled ] || die "cannot write kernel.bpf_stats_enabled"

	bench_stats_prev=$(cat /proc/sys/kernel/bpf_stats_enabled)
	trap 'echo "$bench_stats_prev" >/proc/sys/kernel/bpf_stats_enabled' EXIT
	trap 'exit 130' INT TERM
}
