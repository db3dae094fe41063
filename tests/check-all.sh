#!/usr/bin/env bash
# `make check-all`, what CI runs: the man page against --help
# (`make check-man`), the C formatting (`make format-check`), the source
# tree's layers, cycles and function lengths (`make check-layout`), `make check`,
# the same tests on the ASan+UBSan build (`make SANITIZE=1 check`), then
# every fuzz target for 10 s (`make fuzz-smoke`). Each part's output is shown
# as it runs, then a line with its count and time; the last line sums them:
# "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
tp=0 tf=0 ts=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
summary=()

part() {
	local name=$1 t0 rc line p f s
	shift
	t0=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^(fuzz: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	p=$(sed -nE 's/^(fuzz: )?([0-9]+) passed.*/\2/p' <<<"$line")
	f=$(sed -nE 's/^(fuzz: )?[0-9]+ passed, ([0-9]+) failed.*/\2/p' <<<"$line")
	s=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$line")
	p=${p:-0} f=${f:-0} s=${s:-0}
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1	# failed before counting (build error, ...)
	[ "$rc" -eq 0 ] && [ -z "$line" ] && p=1	# a part with no count of its own is one check
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
	summary+=("$(printf '  %-22s %4d passed, %d failed, %d skipped  %5ds' "$name" "$p" "$f" "$s" \
		$(($(date +%s) - t0)))")
}

part "check-man" $MAKE --no-print-directory check-man
part "format-check" $MAKE --no-print-directory format-check
part "check-layout" $MAKE --no-print-directory check-layout
part "check" $MAKE --no-print-directory check
part "SANITIZE=1 check" $MAKE --no-print-directory SANITIZE=1 check
part "fuzz-smoke" $MAKE --no-print-directory fuzz-smoke
echo "check-all:"
printf '%s\n' "${summary[@]}"
# Skips always stated, as check.sh does: "0 skipped" says every test ran.
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ]
