#!/usr/bin/env bash
# `make check-all`, what CI runs: the man page against --help
# (`make check-man`), the C formatting (`make format-check`), the source
# tree's layers, cycles and function lengths (`make check-layout`); then the
# plain and the ASan+UBSan builds (each built once), their unit tests, and
# their integration tests in one pool (what `make check` and `make SANITIZE=1
# check` run one at a time); beside them every fuzz target for 10 s (`make
# fuzz-smoke`). Each part's output is shown, then a line with its count and
# time; the last lines sum them ("N passed, N failed, N skipped") and check
# the suite's time budget.
#
# The budget: the README's test command (tests/install-deps.sh, which leaves
# its time beside the release roots, then this) must stay under
# PYBPFPROF_BUDGET_MIN minutes (45) on the project's 2-core machine; past it,
# the run fails, naming the slowest tests, so that the suite's growth is
# seen when it happens rather than when CI's limit is hit.
set -u
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
budget_min=${PYBPFPROF_BUDGET_MIN:-45}
t_start=$(date +%s)
tp=0 tf=0 ts=0
log=$(mktemp)
fuzz_log=$(mktemp)
fuzz_pid=
trap 'rm -f "$log" "$fuzz_log"; [ -n "$fuzz_pid" ] && kill "$fuzz_pid" 2>/dev/null' EXIT
summary=()

# counts LINE: "P F S" from a "N passed, N failed[, N skipped]" line
counts() {
	local p f s
	p=$(sed -nE 's/^(fuzz: )?([0-9]+) passed.*/\2/p' <<<"$1")
	f=$(sed -nE 's/^(fuzz: )?[0-9]+ passed, ([0-9]+) failed.*/\2/p' <<<"$1")
	s=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$1")
	echo "${p:-0} ${f:-0} ${s:-0}"
}

# add NAME RC LINE SECONDS: one part's line in the summary, and the sums
add() {
	local name=$1 rc=$2 line=$3 secs=$4 p f s
	read -r p f s < <(counts "$line")
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1	# failed before counting (build error, ...)
	[ "$rc" -eq 0 ] && [ -z "$line" ] && p=1	# a part with no count of its own is one check
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
	summary+=("$(printf '  %-22s %4d passed, %d failed, %d skipped  %5ds' "$name" "$p" "$f" "$s" \
		"$secs")")
}

part() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	add "$name" "$rc" "$(grep -E '^(fuzz: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)" \
		$(($(date +%s) - t0))
}

part "check-man" $MAKE --no-print-directory check-man
part "format-check" $MAKE --no-print-directory format-check
part "check-layout" $MAKE --no-print-directory check-layout
# Both builds and the fuzz targets, once, before anything runs on them.
part "build" sh -c "$MAKE --no-print-directory -j2 tests-build && \
	$MAKE --no-print-directory -j2 SANITIZE=1 tests-build && \
	$MAKE --no-print-directory -j2 fuzz-build"

# The fuzz smoke beside the tests: CPU only, no root, nothing shared with them.
t_fuzz=$(date +%s)
$MAKE --no-print-directory fuzz-smoke >"$fuzz_log" 2>&1 &
fuzz_pid=$!

t0=$(date +%s)
tests/check.sh plain=.output asan=.output-asan,sanitize 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - t0))
for pass in "plain:check" "asan:SANITIZE=1 check"; do
	line=$(grep -E "^${pass%%:*}: [0-9]+ passed" "$log" | tail -1)
	add "${pass#*:}" "$([ -n "$line" ] && echo 0 || echo "$rc")" "${line#*: }" "$secs"
done
slowest=$(sed -n '/^slowest tests/,/^[^ ]/p' "$log" | sed '$d')
# The failures again at the end, shortened, where a reader of the run's last
# lines (CI shows those) finds them; sanitizer reports after the tests too.
failures=$(grep -E '^(FAIL |sanitizer report after)' "$log" | cut -c1-300)

wait "$fuzz_pid"
rc=$?
fuzz_pid=
cat "$fuzz_log"
add "fuzz-smoke" "$rc" "$(grep -E '^fuzz: [0-9]+ passed' "$fuzz_log" | tail -1)" \
	$(($(date +%s) - t_fuzz))

echo "check-all:"
printf '%s\n' "${summary[@]}"
if [ -n "$failures" ]; then
	echo "failed:"
	sed 's/^/  /' <<<"$failures"
fi
elapsed=$(($(date +%s) - t_start))
# What tests/install-deps.sh took, if it ran just before (as in .ci/run).
stamp=${PYBPFPROF_ROOTS:-/var/cache/pybpfprof/roots}/.install-deps-seconds
install=0
[ -n "$(find "$stamp" -newermt "@$((t_start - 3600))" 2>/dev/null)" ] && install=$(cat "$stamp")
total=$((elapsed + install))
printf 'time: %d min %d s (tests/install-deps.sh %d min %d s, check-all %d min %d s); budget %d min\n' \
	$((total / 60)) $((total % 60)) $((install / 60)) $((install % 60)) \
	$((elapsed / 60)) $((elapsed % 60)) "$budget_min"
if [ "$total" -gt $((budget_min * 60)) ]; then
	echo "check-all: the suite took longer than its budget of $budget_min minutes: make the" \
		"slowest tests shorter or run more of them at once (PYBPFPROF_JOBS):"
	printf '%s\n' "$slowest"
	tf=$((tf + 1))
fi
# Skips always stated, as check.sh does: "0 skipped" says every test ran.
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
