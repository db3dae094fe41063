#!/usr/bin/env bash
# `make check`: the cmocka unit tests, then the root integration tests on real
# CPython processes. The last line is the overall "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."

# PYBPFPROF_SANITIZE=1 (make SANITIZE=1 check): the binaries carry ASan and
# UBSan. Any report, leaks included, aborts the process (failing its test)
# and is written to a log here, so a test that tolerates the profiler dying
# still cannot hide one: each log counts as one more failure below.
san_dir=
if [ "${PYBPFPROF_SANITIZE:-}" = 1 ]; then
	san_dir=$(mktemp -d /tmp/pybpfprof-san.XXXXXX)
	chmod 1777 "$san_dir"	# the profiler may run as another user
	common="halt_on_error=1:abort_on_error=1:print_stacktrace=1:disable_coredump=1"
	export ASAN_OPTIONS="$common:detect_leaks=1:log_path=$san_dir/asan"
	export UBSAN_OPTIONS="$common:log_path=$san_dir/ubsan"
	export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
fi

unit_out=$(tests/run-unit.sh "$@")
unit_rc=$?
printf '%s\n' "$unit_out"
read -r up uf < <(printf '%s\n' "$unit_out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')

# Shown as it runs and kept for the summary. Not `tee /dev/stderr`: when
# stderr is a file, reopening it truncates it, erasing the lines above.
integ_log=$(mktemp)
trap 'rm -f "$integ_log"' EXIT
# They need root (BPF, perf events): a user with sudo is asked for it; with
# neither, run.sh says so and they count as skipped.
. tests/as-root.sh
integ=(tests/integration/run.sh)
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && integ=(as_root "${integ[@]}")
"${integ[@]}" 2>&1 | tee "$integ_log"
integ_rc=${PIPESTATUS[0]}
integ_out=$(cat "$integ_log")
ip=0 if_=0 is=0
line=$(printf '%s\n' "$integ_out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
if [ -n "$line" ]; then
	ip=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
	if_=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
	is=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$line")
	is=${is:-0}
elif [ "$integ_rc" -ne 77 ]; then
	if_=1	# the runner died before its summary
fi
if [ "$integ_rc" -eq 77 ]; then
	echo "integration tests skipped: they need root"
	is=$(/usr/bin/python3 tests/integration/run.py --help | sed -n 's/^Tests: //p' | wc -w)
fi
san_f=0
if [ -n "$san_dir" ]; then
	for log in "$san_dir"/*; do
		[ -e "$log" ] || continue
		echo "sanitizer report ($log):"
		cat "$log"
		san_f=$((san_f + 1))
	done
	[ "$san_f" -eq 0 ] && rm -rf "$san_dir"
fi
total_p=$((${up:-0} + ip)) total_f=$((${uf:-1} + if_ + san_f))
# Skips are counted even when there are none: "0 skipped" is the claim
# that every test ran.
echo "$total_p passed, $total_f failed, $is skipped"
[ "$unit_rc" -eq 0 ] && { [ "$integ_rc" -eq 0 ] || [ "$integ_rc" -eq 77 ]; } && [ "$total_f" -eq 0 ]
