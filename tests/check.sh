#!/usr/bin/env bash
# `make check`: the cmocka unit tests, then the root integration tests on real
# CPython processes. The last line is the overall "N passed, N failed, N skipped".
#
# Usage: tests/check.sh [NAME=OUTPUT_DIR[,sanitize]]...
# Each argument is a pass: the build in OUTPUT_DIR (its pybpfprof and its unit
# tests under OUTPUT_DIR/tests), ",sanitize" when it carries ASan and UBSan.
# Default: one pass, "plain=.output" (or "asan=.output-asan,sanitize" with
# PYBPFPROF_SANITIZE=1, as `make SANITIZE=1 check` sets). With several passes
# (`make check-all` gives plain and asan), all their integration tests share
# one pool ($PYBPFPROF_JOBS at once, default 3) while each pass's unit tests
# run beside it; a line "NAME: N passed, N failed, N skipped" sums each pass
# before the overall line.
#
# Under a sanitizer any report, leaks included, aborts the process (failing
# its test) and is also written to a log, so a test that tolerates the
# profiler dying still cannot hide one: a unit test binary's logs count as one
# failure each; run.py fails the integration test during which a log appeared.
set -u
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
	if [ "${PYBPFPROF_SANITIZE:-}" = 1 ]; then
		set -- "asan=.output-asan,sanitize"
	else
		set -- "plain=.output"
	fi
fi
jobs=${PYBPFPROF_JOBS:-3}
san_common="halt_on_error=1:abort_on_error=1:print_stacktrace=1:disable_coredump=1"
declare -A up uf
runpasses=()
unit_dir=$(mktemp -d)
unit_pids=()

# unit_pass NAME OUT FLAGS: one pass's unit tests, their output in $unit_dir/NAME
unit_pass() {
	local name=$1 out=$2 flags=$3 san_dir= units=() src log f
	for src in tests/unit/test_*.c; do
		units+=("$out/tests/$(basename "$src" .c)")
	done
	if [ "$flags" = sanitize ]; then
		san_dir=$(mktemp -d /tmp/pybpfprof-san.XXXXXX)
		ASAN_OPTIONS="$san_common:detect_leaks=1:log_path=$san_dir/asan" \
			UBSAN_OPTIONS="$san_common:log_path=$san_dir/ubsan" \
			LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
			tests/run-unit.sh "${units[@]}" >"$unit_dir/$name" 2>&1
	else
		tests/run-unit.sh "${units[@]}" >"$unit_dir/$name" 2>&1
	fi
	f=0
	if [ -n "$san_dir" ]; then
		for log in "$san_dir"/*; do
			[ -e "$log" ] || continue
			{ echo "sanitizer report ($log):"; cat "$log"; } >>"$unit_dir/$name"
			f=$((f + 1))
		done
		rm -rf "$san_dir"
	fi
	echo "$f" >"$unit_dir/$name.san"
}

# The unit tests need neither root nor the machine to themselves: they run
# beside the integration tests, their output shown after them.
for spec in "$@"; do
	name=${spec%%=*} rest=${spec#*=}
	out=${rest%%,*} flags=
	[ "$rest" != "$out" ] && flags=${rest#*,}
	bin=$out/pybpfprof
	[ -x "$bin" ] || bin=pybpfprof	# the plain build's binary is at the top
	unit_pass "$name" "$out" "$flags" &
	unit_pids+=($!)
	runpasses+=(--pass "$name=$PWD/$bin${flags:+,$flags}")
done

# Shown as it runs and kept for the summary. Not `tee /dev/stderr`: when
# stderr is a file, reopening it truncates it, erasing the lines above.
integ_log=$(mktemp)
trap 'rm -f "$integ_log"' EXIT
# They need root (BPF, perf events): a user with sudo is asked for it; with
# neither, run.sh says so and they count as skipped.
. tests/as-root.sh
integ=(tests/integration/run.sh -j "$jobs" "${runpasses[@]}")
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && integ=(as_root "${integ[@]}")
"${integ[@]}" 2>&1 | tee "$integ_log"
integ_rc=${PIPESTATUS[0]}

wait "${unit_pids[@]}"
for spec in "$@"; do
	name=${spec%%=*}
	unit_out=$(cat "$unit_dir/$name")
	printf '%s\n' "$unit_out" | sed "s/^unit:/unit [$name]:/"
	read -r p f < <(printf '%s\n' "$unit_out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
	up[$name]=${p:-0} uf[$name]=$((${f:-1} + $(cat "$unit_dir/$name.san" 2>/dev/null || echo 1)))
done
rm -rf "$unit_dir"

declare -A ip if_ is
nskip_all=
if [ "$integ_rc" -eq 77 ]; then
	echo "integration tests skipped: they need root"
	nskip_all=$(/usr/bin/python3 tests/integration/run.py --help | sed -n 's/^Tests: //p' | wc -w)
fi
total_p=0 total_f=0 total_s=0
for spec in "$@"; do
	name=${spec%%=*}
	if [ $# -gt 1 ]; then
		line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$integ_log" | tail -1)
		line=${line#"$name: "}
	else
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$integ_log" | tail -1)
	fi
	p=0 f=0 s=${nskip_all:-0}
	if [ -n "$line" ]; then
		p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
		f=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
		s=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$line")
		s=${s:-0}
	elif [ "$integ_rc" -ne 77 ]; then
		f=1	# the runner died before its summary
	fi
	p=$((p + ${up[$name]})) f=$((f + ${uf[$name]}))
	# Skips are counted even when there are none: "0 skipped" is the claim
	# that every test ran.
	[ $# -gt 1 ] && echo "$name: $p passed, $f failed, $s skipped"
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
done
echo "$total_p passed, $total_f failed, $total_s skipped"
{ [ "$integ_rc" -eq 0 ] || [ "$integ_rc" -eq 77 ]; } && [ "$total_f" -eq 0 ]
