#!/bin/bash
# Root integration tests: attach pybpfprof to real CPython processes.
# Run from the repo root (make check-integration); exit 77 = skipped, the
# automake convention, because BPF programs and perf events need root.
set -u

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: integration tests need root (BPF, perf events)"
	exit 77
fi

# Debian's python3 on purpose, not whatever python3 is first on PATH (a pyenv
# shim, say): the runner relies only on its standard library.
/usr/bin/python3 "$(dirname "$0")/run.py" "$@"
exit $?
