#!/usr/bin/env bash
# Runs each cmocka test binary given as an argument and sums their results.
# Prints one line per binary and the closing line "unit: N passed, N failed".
set -u
passed=0 failed=0
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	n=$(printf '%s\n' "$out" | sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	n=${n:-0} f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# crashed or aborted before cmocka could count
	fi
	[ "$f" -ne 0 ] && printf '%s\n' "$out"
	printf '  %-40s %3d passed, %d failed\n' "$(basename "$t")" "$n" "$f"
	passed=$((passed + n)) failed=$((failed + f))
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
