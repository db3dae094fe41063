#!/usr/bin/python3
"""Scale benchmark: N busy CPython processes profiled at once with -a.

Usage: bench/scale.py [N] [SECONDS] [HZ]   (defaults 100, 10, 99)
       SCALE_NICE=19 bench/scale.py ...     (spinners at nice 19)

Starts N processes spinning in scale_work, then runs `pybpfprof -a -d
SECONDS -F HZ -f json` and reports, from the profiler's own rusage (wait4):
its CPU use as a percentage of one core over the whole run (start-up
included: /proc scan, ELF parse, BPF load) and in the steady state (from
/proc/PID/stat between 2 s after start and 0.5 s before the end), its peak
RSS, and how many of the N processes appear in the report with samples. Root only; the
machine's other load shows in the figures, so run it on a quiet machine.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILER = ROOT / "pybpfprof"
PYTHON = "/usr/bin/python3"
# SCALE_NICE=19: on a shared machine the spinners yield to everyone else's work
WORK = """
import os
os.nice(int(os.environ.get("SCALE_NICE", "0")))
def scale_work():
    x = 0
    while True:
        x = (x * 31 + 7) % 1000003
print("ready", flush=True)
scale_work()
"""


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv):
    n = int(argv[0]) if argv else 100
    secs = float(argv[1]) if len(argv) > 1 else 10
    hz = int(argv[2]) if len(argv) > 2 else 99
    procs = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([PYTHON, "-c", WORK], stdout=subprocess.PIPE,
                                          stdin=subprocess.DEVNULL))
        for p in procs:
            p.stdout.readline()
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            t0 = time.monotonic()
            prof = subprocess.Popen([str(PROFILER), "-a", "-d", str(secs), "-F", str(hz),
                                     "-f", "json", "-o", out.name], stdin=subprocess.DEVNULL)
            time.sleep(2)
            cpu_a, t_a = proc_cpu(prof.pid), time.monotonic()
            time.sleep(max(0.1, secs - 2.5))
            cpu_b, t_b = proc_cpu(prof.pid), time.monotonic()
            _, status, ru = os.wait4(prof.pid, 0)
            wall = time.monotonic() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                print(f"pybpfprof failed: {status}", file=sys.stderr)
                return 1
            rep = json.load(open(out.name))
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
    mine = {p.pid for p in procs}
    seen = {s["pid"] for s in rep["processes"] if s["pid"] in mine and s["samples"]}
    samples = sum(s["samples"] for s in rep["processes"] if s["pid"] in mine)
    cpu = ru.ru_utime + ru.ru_stime
    print(f"processes: {n} busy, {len(seen)} in the report with samples "
          f"({samples} samples, {rep['samples']['dropped']} dropped)")
    print(f"pybpfprof CPU: {cpu:.3f} s over {wall:.1f} s wall = {100 * cpu / wall:.2f}% "
          f"of one core (user {ru.ru_utime:.3f} s, sys {ru.ru_stime:.3f} s)")
    print(f"pybpfprof CPU, steady state: {cpu_b - cpu_a:.2f} s over {t_b - t_a:.1f} s = "
          f"{100 * (cpu_b - cpu_a) / (t_b - t_a):.2f}% of one core "
          f"(clock ticks of 10 ms: +-{100 * 0.02 / (t_b - t_a):.2f}%)")
    print(f"samples per second of these processes: {samples / secs:.0f} (at most "
          f"{hz * os.cpu_count()}); of every process in the report: "
          f"{rep['samples']['total'] / secs:.0f}; ticks without a Python frame: "
          f"{rep['samples']['no_python']}")
    print(f"pybpfprof peak RSS: {ru.ru_maxrss / 1024:.1f} MB")
    return 0 if len(seen) == n else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
