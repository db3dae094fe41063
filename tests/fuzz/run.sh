#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make fuzz`: runs each libFuzzer target for SECONDS (or FUZZ_RUNS
# executions, if set, whichever ends first) from its seed corpus
# tests/fuzz/corpus/NAME plus seeds made from this machine's interpreters.
# New inputs go to $FUZZ_OUT/corpus/NAME, crashes to $FUZZ_OUT/crashes/,
# logs to $FUZZ_OUT/logs/: nothing is written into the repository.
# Prints one line per target and the closing "fuzz: N passed, N failed".
# Usage: FUZZ_OUT=.output/fuzz tests/fuzz/run.sh SECONDS NAME...
set -u
cd "$(dirname "$0")/../.."
secs=$1
shift
out=${FUZZ_OUT:-.output/fuzz}
mkdir -p "$out/corpus" "$out/crashes" "$out/logs" "$out/seeds"

# Seeds from the interpreters found here, made once per output directory.
if [ ! -e "$out/seeds/.done" ]; then
	pythons=$(ls /usr/bin/python3.[0-9]* "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.*/bin/python3.[0-9]* 2>/dev/null |
		grep -E 'python3\.[0-9]+$')
	for py in $pythons; do
		"$py" tests/fuzz/gen_seeds.py "$out/seeds" 8 >/dev/null 2>&1
	done
	elfs=$(for py in $pythons; do
		readlink -f "$py"
		ls "$(dirname "$py")"/../lib/libpython3.*.so.1.0 2>/dev/null
	done | sort -u)
	# shellcheck disable=SC2086
	tests/fuzz/gen_elf_seeds.sh "$out/seeds/elf" $elfs >/dev/null 2>&1
	touch "$out/seeds/.done"
fi

passed=0 failed=0
printf '  %-16s %12s %10s %8s\n' target executions exec/s crashes
for name in "$@"; do
	bin=$out/fuzz_$name log=$out/logs/$name.log
	mkdir -p "$out/corpus/$name"
	before=$(ls "$out/crashes" | grep -c "^$name-")
	dirs=("$out/corpus/$name")
	[ -d "tests/fuzz/corpus/$name" ] && dirs+=("tests/fuzz/corpus/$name")
	[ -d "$out/seeds/$name" ] && dirs+=("$out/seeds/$name")
	"$bin" -max_total_time="$secs" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$out/crashes/$name-" "${dirs[@]}" \
		>"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	crashes=$(($(ls "$out/crashes" | grep -c "^$name-") - before))
	[ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1	# died without an artifact
	printf '  %-16s %12s %10s %8d\n' "$name" "${execs:-?}" "${rate:-?}" "$crashes"
	if [ "$crashes" -ne 0 ]; then
		grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)|runtime error' "$log" |
			sed 's/^/    /' | head -8
		echo "    full log: $log"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
