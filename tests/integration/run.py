#!/usr/bin/python3
"""Root integration tests for pybpfprof: profile real CPython processes.

Usage: run.py [-j N] [--pass NAME=BINARY[,sanitize]]... [PATTERN...]
       run.py --list         (the test names, one a line, in the order they run)

PATTERN: shell-style patterns over test names (default: all).
-j N: N tests at once (default 1, or $PYBPFPROF_JOBS). Each runs in a worker
      process of its own; a test registered with alone=True runs with no
      other test beside it (it measures the machine, or all of its processes).
--pass NAME=BINARY: run the tests against this pybpfprof, its lines tagged
      [NAME]; repeat to run two builds in one pool (make check-all runs the
      plain and the ASan+UBSan builds together). ",sanitize": the binary carries
      ASan and UBSan; a sanitizer report during a test fails that test. Default:
      one pass, $PYBPFPROF (else ./pybpfprof), sanitized if
      $PYBPFPROF_SANITIZE=1.

Every workload under targets/ has a known ground truth (a CPU split, a hot
line, a stack depth, ...), so the assertions are exact values or tight
bounds, not "it printed something". Each test prints one line, PASS with the
figures it measured, FAIL with the reason, or SKIP when an interpreter under
test is not installed. Then come the ten slowest tests, a summary line per
pass when there are several, and last "N passed, N failed[, N skipped]".

The tests live in suite_<concern>.py, each importing what it uses from
harness.py; they run in the order of SUITES, then of their definitions (with
-j, alone tests come last).

Standard library only: this runs under Debian 12's /usr/bin/python3.
"""

import fnmatch
import importlib
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ALONE, TESTS, Fail, Skip

# Each suite registers its tests (@test, @per_build) when imported.
SUITES = ("suite_cpu", "suite_dump", "suite_errors", "suite_session", "suite_formats",
          "suite_harness", "suite_mem", "suite_procs", "suite_sec_budget", "suite_sec_faults",
          "suite_sec_offsets", "suite_sec_outputs", "suite_sec_procfs", "suite_sec_sources",
          "suite_sec_strings",
          "suite_usdt", "suite_report", "suite_diff", "suite_freethreaded", "suite_agent",
          "suite_sec_agent",
          "suite_async", "suite_wall",
          "suite_signatures", "suite_native", "suite_launch", "suite_apps", "suite_peers",
          "suite_dumpview", "suite_select", "suite_views", "suite_report_view",
          "suite_merge_lines", "suite_accept31", "suite_top_view", "suite_oplabels",
          "suite_errbars", "suite_timeline", "suite_heatmap", "suite_opcodes",
          "suite_agent_recorder", "suite_agent_budget")

for _suite in SUITES:
    importlib.import_module(_suite)

ROOT = Path(__file__).resolve().parents[2]
# A test that has not ended after this long is stuck: its worker is killed,
# the test fails, and the run goes on. Far above any test's own timeouts.
TEST_TIMEOUT = 900
# What the sanitized binary runs with: any report aborts the process (failing
# the test it came from) and is also written to a log of the worker's own, so
# that a test which tolerates the profiler dying still cannot hide one.
SAN_COMMON = "halt_on_error=1:abort_on_error=1:print_stacktrace=1:disable_coredump=1"


def run_one(fn):
    """(outcome, details) of one test function, a crash being a failure."""
    try:
        return "PASS", fn()
    except Skip as e:
        return "SKIP", str(e)
    except Fail as e:
        return "FAIL", str(e)
    except Exception as e:  # a crash in the test is a failure, not an abort
        return "FAIL", f"{type(e).__name__}: {e}"


def san_logs(san_dir):
    try:
        return sorted(os.listdir(san_dir))
    except (OSError, TypeError):
        return []


def worker(result_fd):
    """The worker's loop: a test name a line on stdin, a JSON result a line
    on result_fd. Sanitizer logs that appear during a test fail it."""
    by_name = dict(TESTS)
    san_dir = os.environ.get("PYBPFPROF_SAN_DIR")
    out = os.fdopen(result_fd, "w", buffering=1)
    for line in sys.stdin:
        name = line.strip()
        before = set(san_logs(san_dir))
        t0 = time.monotonic()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        outcome, details = run_one(by_name[name])
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        new = [f for f in san_logs(san_dir) if f not in before]
        if new:
            reports = []
            for f in new:
                path = os.path.join(san_dir, f)
                with open(path, errors="replace") as fh:
                    reports.append(f"{path}:\n{fh.read()[-4000:]}")
            outcome, details = "FAIL", f"sanitizer report ({details}):\n" + "\n".join(reports)
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        out.write(json.dumps({"name": name, "outcome": outcome, "details": str(details),
                              "wall": time.monotonic() - t0, "cpu": cpu}) + "\n")
    return 0


class Pass:
    """One build the tests run against."""

    def __init__(self, spec):
        name, _, rest = spec.partition("=")
        binary, _, flags = rest.partition(",")
        if not name or not binary or flags not in ("", "sanitize"):
            raise SystemExit(f"run.py: --pass {spec!r}: expected NAME=BINARY[,sanitize]")
        self.name, self.binary, self.sanitize = name, str(Path(binary).resolve()), bool(flags)
        self.passed = self.failed = self.skipped = 0

    def env(self, san_dir):
        env = dict(os.environ, PYBPFPROF=self.binary,
                   PYBPFPROF_SANITIZE="1" if self.sanitize else "0")
        if self.sanitize:
            env.update(PYBPFPROF_SAN_DIR=san_dir,
                       ASAN_OPTIONS=f"{SAN_COMMON}:detect_leaks=1:log_path={san_dir}/asan",
                       UBSAN_OPTIONS=f"{SAN_COMMON}:log_path={san_dir}/ubsan",
                       LSAN_OPTIONS=f"suppressions={ROOT}/tests/lsan.supp:print_suppressions=0")
        return env


class Worker:
    """A worker process (its own session, so that a stuck one is killed with
    every workload it started) and the test it runs."""

    def __init__(self, p, sel):
        self.pass_ = p
        self.san_dir = tempfile.mkdtemp(prefix="pybpfprof-san.") if p.sanitize else None
        if self.san_dir:
            os.chmod(self.san_dir, 0o1777)  # the profiler may run as another user
        r, w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", str(w)],
                                     stdin=subprocess.PIPE, text=True, pass_fds=(w,),
                                     env=p.env(self.san_dir), start_new_session=True)
        os.close(w)
        self.results = os.fdopen(r, "r")
        self.buf = ""
        self.test = None
        self.t0 = 0.0
        sel.register(self.results, selectors.EVENT_READ, self)

    def give(self, name):
        self.test, self.t0 = name, time.monotonic()
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()

    def read(self):
        """The result of its test, once whole; None before, "" if it died."""
        chunk = os.read(self.results.fileno(), 65536).decode()
        if not chunk:
            return ""
        self.buf += chunk
        if "\n" not in self.buf:
            return None
        line, self.buf = self.buf.split("\n", 1)
        self.test = None
        return json.loads(line)

    def stop(self, sel, kill=False):
        sel.unregister(self.results)
        self.results.close()
        if kill:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self.san_dir:
            leftover = san_logs(self.san_dir)  # from processes that outlived their test
            for f in leftover:
                with open(os.path.join(self.san_dir, f), errors="replace") as fh:
                    print(f"sanitizer report after the tests ({self.san_dir}/{f}):\n"
                          f"{fh.read()[-4000:]}", flush=True)
            if leftover:
                self.pass_.failed += len(leftover)
            else:
                shutil.rmtree(self.san_dir, ignore_errors=True)


def report(p, res, tag, times):
    outcome, name, details = res["outcome"], res["name"], res["details"]
    label = f"{name}{tag}"
    if outcome == "PASS":
        p.passed += 1
        print(f"PASS {label} ({details})", flush=True)
    elif outcome == "SKIP":
        p.skipped += 1
        print(f"SKIP {label}: {details}", flush=True)
    else:
        p.failed += 1
        print(f"FAIL {label}: {details}", flush=True)
    if outcome != "SKIP":
        times.append((res["wall"], res.get("cpu", 0.0), label))


def schedule(passes, names, jobs):
    """Runs every (pass, test) with at most jobs at once, alone tests last and
    one at a time; prints each result as it comes."""
    tagged = len(passes) > 1
    queue = [(p, n) for n in names if n not in ALONE for p in passes]
    queue += [(p, n) for n in names if n in ALONE for p in passes]
    sel = selectors.DefaultSelector()
    idle = {p.name: [] for p in passes}
    busy = []
    times = []
    pos = 0
    try:
        while pos < len(queue) or busy:
            # Hand out work: an alone test waits until nothing runs, and
            # nothing is handed out beside it.
            while pos < len(queue) and len(busy) < jobs:
                p, name = queue[pos]
                if name in ALONE and busy:
                    break
                if busy and busy[0].test in ALONE:
                    break
                w = idle[p.name].pop() if idle[p.name] else Worker(p, sel)
                w.give(name)
                busy.append(w)
                pos += 1
                if name in ALONE:
                    break
            deadline = min(w.t0 for w in busy) + TEST_TIMEOUT
            for key, _ in sel.select(max(0.0, deadline - time.monotonic())):
                w = key.data
                if w not in busy:
                    continue
                res = w.read()
                if res is None:
                    continue
                busy.remove(w)
                if res == "":
                    res = {"name": w.test, "outcome": "FAIL", "wall": time.monotonic() - w.t0,
                           "details": f"its worker died ({w.proc.poll()})"}
                    w.stop(sel, kill=True)
                else:
                    idle[w.pass_.name].append(w)
                report(w.pass_, res, f" [{w.pass_.name}]" if tagged else "", times)
            for w in [w for w in busy if time.monotonic() - w.t0 > TEST_TIMEOUT]:
                busy.remove(w)
                res = {"name": w.test, "outcome": "FAIL", "wall": time.monotonic() - w.t0,
                       "details": f"still running after {TEST_TIMEOUT} s: killed with "
                                  f"everything it started"}
                w.stop(sel, kill=True)
                report(w.pass_, res, f" [{w.pass_.name}]" if tagged else "", times)
    finally:
        for w in busy:
            w.stop(sel, kill=True)
        for ws in idle.values():
            for w in ws:
                w.stop(sel)
    return times


def summary(p):
    # Skips are counted even when there are none: "0 skipped" is the claim
    # that every test ran.
    return f"{p.passed} passed, {p.failed} failed, {p.skipped} skipped"


def parse(argv):
    jobs = int(os.environ.get("PYBPFPROF_JOBS", "1") or 1)
    specs, patterns = [], []
    it = iter(argv)
    for a in it:
        if a == "-j" or a == "--pass":
            v = next(it, None)
            if v is None:
                raise SystemExit(f"run.py: {a} needs a value")
            if a == "-j":
                jobs = int(v)
            else:
                specs.append(v)
        elif a.startswith("-j") and a[2:].isdigit():
            jobs = int(a[2:])
        else:
            patterns.append(a)
    if not specs:
        binary = os.environ.get("PYBPFPROF", str(ROOT / "pybpfprof"))
        san = ",sanitize" if os.environ.get("PYBPFPROF_SANITIZE") == "1" else ""
        specs = [f"{'asan' if san else 'plain'}={binary}{san}"]
    return max(1, jobs), [Pass(s) for s in specs], patterns


def main(argv):
    if argv[:1] == ["--worker"]:
        return worker(int(argv[1]))
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nTests:", " ".join(name for name, _ in TESTS))
        return 0
    if argv == ["--list"]:
        for name, _ in TESTS:
            print(name)
        return 0
    jobs, passes, patterns = parse(argv)
    names = [n for n, _ in TESTS
             if not patterns or any(fnmatch.fnmatchcase(n, pat) for pat in patterns)]
    unmatched = [pat for pat in patterns if not any(fnmatch.fnmatchcase(n, pat) for n, _ in TESTS)]
    if unmatched:
        print(f"run.py: no test matches {', '.join(unmatched)}; tests: "
              f"{' '.join(n for n, _ in TESTS)}", file=sys.stderr)
        return 2

    t0 = time.monotonic()
    times = schedule(passes, names, jobs)
    elapsed = time.monotonic() - t0
    if times:
        times.sort(reverse=True)
        busy = sum(t for t, _, _ in times)
        print(f"slowest tests ({len(times)} in {elapsed:.0f} s with -j {jobs}; "
              f"their times add up to {busy:.0f} s):")
        for wall, cpu, label in times[:10]:
            print(f"  {wall:7.1f} s  {label}  (CPU of what it started: {cpu:.1f} s)")
    if len(passes) > 1:
        for p in passes:
            print(f"{p.name}: {summary(p)}")
    total = Pass("all=/")
    for p in passes:
        total.passed += p.passed
        total.failed += p.failed
        total.skipped += p.skipped
    line = f"{total.passed} passed, {total.failed} failed"
    if total.skipped:
        line += f", {total.skipped} skipped"
    print(line, flush=True)
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
