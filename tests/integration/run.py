#!/usr/bin/python3
"""Root integration tests for pybpfprof: profile real CPython processes.

Usage: run.py [PATTERN...]   (shell-style patterns over test names; default all)
       run.py --list         (the test names, one a line, in the order they run)

Every workload under targets/ has a known ground truth (a CPU split, a hot
line, a stack depth, ...), so the assertions are exact values or tight
bounds, not "it printed something". Each test prints one line, PASS with the
figures it measured, FAIL with the reason, or SKIP when an interpreter under
test is not installed; the last line is "N passed, N failed[, N skipped]".

The tests live in suite_<concern>.py, each importing what it uses from
harness.py; they run in the order of SUITES, then of their definitions.

Standard library only: this runs under Debian 12's /usr/bin/python3.
"""

import fnmatch
import importlib
import sys

from harness import TESTS, Fail, Skip

# Each suite registers its tests (@test, @per_build) when imported.
SUITES = ("suite_cpu", "suite_dump", "suite_errors", "suite_session", "suite_formats",
          "suite_harness", "suite_mem", "suite_procs", "suite_sec_budget", "suite_sec_faults",
          "suite_sec_offsets", "suite_sec_outputs", "suite_sec_procfs", "suite_sec_sources",
          "suite_usdt", "suite_report", "suite_diff", "suite_freethreaded", "suite_agent",
          "suite_sec_agent",
          "suite_async", "suite_wall",
          "suite_signatures", "suite_native")

for _suite in SUITES:
    importlib.import_module(_suite)


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nTests:", " ".join(name for name, _ in TESTS))
        return 0
    if argv == ["--list"]:
        for name, _ in TESTS:
            print(name)
        return 0
    selected = [(n, f) for n, f in TESTS
                if not argv or any(fnmatch.fnmatchcase(n, pat) for pat in argv)]
    unmatched = [pat for pat in argv if not any(fnmatch.fnmatchcase(n, pat) for n, _ in TESTS)]
    if unmatched:
        print(f"run.py: no test matches {', '.join(unmatched)}; tests: "
              f"{' '.join(n for n, _ in TESTS)}", file=sys.stderr)
        return 2

    passed = failed = skipped = 0
    for name, fn in selected:
        try:
            details = fn()
        except Skip as e:
            skipped += 1
            print(f"SKIP {name}: {e}", flush=True)
        except Fail as e:
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
        except Exception as e:  # a crash in the test is a failure, not an abort
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        else:
            passed += 1
            print(f"PASS {name} ({details})", flush=True)
    summary = f"{passed} passed, {failed} failed"
    if skipped:
        summary += f", {skipped} skipped"
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
