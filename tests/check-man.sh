#!/usr/bin/env bash
# The man page against the program: tests/check-man.sh [BINARY [PAGE]]
# (./pybpfprof and man/pybpfprof.8 by default; `make check-man` builds the
# binary first). Checks that the page renders without a warning (groff -ww,
# man -l), that every long option `BINARY --help` (and each subcommand's --help) prints has an entry in the
# page (a .TP tag, with the same short option), that the page names no long
# option --help does not know, that each entry states the defaults and
# bounds --help gives, and that the page is for this version.
# One line per check, then "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
bin=${1:-./pybpfprof}
page=${2:-man/pybpfprof.8}
passed=0 failed=0 skipped=0

pass() { echo "  PASS $1"; passed=$((passed + 1)); }
fail() { echo "  FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "  SKIP $1: $2"; skipped=$((skipped + 1)); }

if [ ! -x "$bin" ] || [ ! -r "$page" ]; then
	echo "check-man: need the binary ($bin) and the page ($page)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

# 1. groff's every warning (-ww), on a page that is only parsed (-z).
if command -v groff >/dev/null; then
	out=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -z "$out" ]; then pass "groff -ww"; else fail "groff -ww" "$out"; fi
else
	skip "groff -ww" "no groff (tests/install-deps.sh installs groff-base)"
fi

# 2. man(1) shows it, as a user would see it, with nothing on stderr.
if command -v man >/dev/null; then
	err=$(mktemp)
	out=$(MANWIDTH=80 man -P cat -l "$page" 2>"$err")
	if [ -s "$err" ]; then
		fail "man -l" "$(cat "$err")"
	elif ! grep -q '^NAME' <<<"$out" || ! grep -q 'pybpfprof - ' <<<"$out"; then
		fail "man -l" "no NAME section in what man shows"
	else
		pass "man -l"
	fi
	rm -f "$err"
else
	skip "man -l" "no man (tests/install-deps.sh installs man-db)"
fi

# The subcommands with options of their own (`pybpfprof NAME --help`): the
# page documents theirs too.
subcommands="agent dump"

# --help: each option line ("  -p, --pid=PID  ..." or "      --merge  ...")
# and the lines that continue its description.
declare -A h_short h_text m_short m_text
h_order=()
opt_re='^(  -(.), |      )--([a-z][a-z0-9-]*)'
cont_re='^ {7,}[^ ]'
cur=
while IFS= read -r l; do
	if [[ $l =~ $opt_re ]]; then
		cur=${BASH_REMATCH[3]}
		h_short[$cur]=${BASH_REMATCH[2]}
		h_text[$cur]=$l
		h_order+=("$cur")
	elif [ -n "$cur" ] && [[ $l =~ $cont_re ]]; then
		h_text[$cur]+=" $l"
	else
		cur=
	fi
done < <("$bin" --help; for sub in $subcommands; do "$bin" "$sub" --help; done)
if [ "${#h_order[@]}" -lt 10 ]; then
	fail "--help" "found ${#h_order[@]} options in $bin --help: is it the right binary?"
fi

# The page, with roff's escapes for - and fonts taken out: an entry is a
# .TP, its tag line, and its text up to the next .TP, .SS or .SH.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\[&%]//g' -e 's/"//g' "$@"; }
long_re='--([a-z][a-z0-9-]*)'
short_re='(^|[ ,])-([A-Za-z?])([ ,]|$)'
cur= tag=0
while IFS= read -r l; do
	case $l in
	.TP*) tag=1; cur=; continue ;;
	.SS* | .SH*) cur=; tag=0; continue ;;
	esac
	if [ "$tag" = 1 ]; then
		tag=0
		t=${l#.* }
		if [[ $t =~ $long_re ]]; then
			cur=${BASH_REMATCH[1]}
			m_short[$cur]=
			[[ $t =~ $short_re ]] && m_short[$cur]=${BASH_REMATCH[2]}
			m_text[$cur]=
		fi
	elif [ -n "$cur" ]; then
		m_text[$cur]+=" $l"
	fi
done < <(grep -v '^\.\\"' "$page" | plain)

# 3. Every option of --help has its entry, with the same short option.
missing=()
for o in "${h_order[@]}"; do
	if [ -z "${m_text[$o]+set}" ]; then
		missing+=("--$o (no entry)")
	elif [ "${h_short[$o]}" != "${m_short[$o]}" ]; then
		missing+=("--$o (short option '${h_short[$o]}' in --help, '${m_short[$o]}' in the page)")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	pass "every option of --help has an entry (${#h_order[@]} options)"
else
	fail "every option of --help has an entry" "${missing[*]}"
fi

# 4. The page names no long option that --help does not know, anywhere
# (or the --help of a subcommand its synopsis names: `.SY pybpfprof`, `.B NAME`).
declare -A sub_opts
for sub in $(sed -n '/^\.SY pybpfprof/{n;s/^\.B \([a-z][a-z]*\)$/\1/p;}' "$page"); do
	for o in $("$bin" "$sub" --help 2>/dev/null | grep -oE -- "^ +(-., )?--[a-z][a-z0-9-]*" |
		grep -oE -- "--[a-z][a-z0-9-]*"); do
		sub_opts[${o#--}]=1
	done
done
unknown=()
for o in $(grep -v '^\.\\"' "$page" | plain | grep -oE -- "$long_re" | sort -u); do
	[ -n "${h_text[${o#--}]+set}" ] || [ -n "${sub_opts[${o#--}]+set}" ] || unknown+=("$o")
done
if [ "${#unknown[@]}" -eq 0 ]; then
	pass "every option the page names is one --help knows"
else
	fail "every option the page names is one --help knows" "${unknown[*]}"
fi

# 5. Each number --help gives as a default or a bound is in the option's entry.
wrong=()
for o in "${h_order[@]}"; do
	[ -n "${m_text[$o]+set}" ] || continue
	for n in $(grep -oE '(default: |at most )[0-9]+' <<<"${h_text[$o]}" | grep -oE '[0-9]+$'); do
		grep -qE "(^|[^0-9])$n([^0-9]|\$)" <<<"${m_text[$o]}" || wrong+=("--$o ($n)")
	done
done
if [ "${#wrong[@]}" -eq 0 ]; then
	pass "every default and bound of --help is in the page"
else
	fail "every default and bound of --help is in the page" "${wrong[*]}"
fi

# 6. The page is for this version: its .TH names what --version prints.
version=$("$bin" --version | head -1)
if grep -q "^\.TH .*\"$version\"" "$page"; then
	pass "the page is for $version"
else
	fail "the page is for $version" "$(grep '^\.TH' "$page")"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
