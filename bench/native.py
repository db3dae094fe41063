# SPDX-License-Identifier: GPL-2.0-only
"""--native and --kernel overhead: slowdown of a half-native workload.

Run through bench/native.sh (root). Modes, interleaved in every round so the
machine's drift cancels: no profiler; CPU sampling at 99 Hz; --native;
--native --kernel. The slowdown of a mode is the median over rounds of its
time / the unprofiled time of the same round, for the wall time and for the
workload's own CPU time (in which the BPF programs run, and which waiting
for a CPU on a shared machine does not inflate). pybpfprof's own CPU time
(user + system, from wait4) per sample whose user stack it unwound,
against plain sampling's, is the userspace cost of unwinding. Then one run
per mode with kernel.bpf_stats_enabled=1 gives the BPF program's cost per
run: the stack copy is what --native adds to it.

Environment: BENCH_ROUNDS (7), BENCH_ITERATIONS (100), BENCH_HZ (99),
BENCH_ATTACH_WAIT (2.0 s), BENCH_OUT (also write a Markdown section there),
PYBPFPROF, BENCH_PYTHON, BENCH_WORKLOAD (half, or callback: see
bench/native_workload.py).
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROFILER = os.environ.get("PYBPFPROF", os.path.join(ROOT, "pybpfprof"))
PYTHON = os.environ.get("BENCH_PYTHON", "/usr/bin/python3.11")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
ITERATIONS = os.environ.get("BENCH_ITERATIONS", "100")
HZ = os.environ.get("BENCH_HZ", "99")
ATTACH_WAIT = float(os.environ.get("BENCH_ATTACH_WAIT", "2.0"))
WORKLOAD = os.environ.get("BENCH_WORKLOAD", "half")

MODES = [
    ("none", None),
    (f"cpu {HZ} Hz", []),
    ("--native", ["--native"]),
    ("--native --kernel", ["--native", "--kernel"]),
]


def prog_stats(pid):
    """on_sample's (run_time_ns, run_cnt) in the BPF object pybpfprof pid holds."""
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                ids.update(int(ln.split()[1]) for ln in f if ln.startswith("prog_id:"))
        except OSError:
            pass
    t = n = 0
    for i in ids:
        r = subprocess.run(["bpftool", "prog", "show", "id", str(i), "-j"],
                           capture_output=True, text=True)
        p = json.loads(r.stdout) if not r.returncode else {}
        if p.get("name") == "on_sample":
            t += p.get("run_time_ns", 0)
            n += p.get("run_cnt", 0)
    return t, n


def run(flags, stats=False):
    wl = subprocess.Popen([PYTHON, os.path.join(HERE, "native_workload.py"), ITERATIONS,
                           WORKLOAD],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert wl.stdout.readline().strip() == "ready"
    prof = None
    if flags is not None:
        prof = subprocess.Popen([PROFILER, "-p", str(wl.pid), "-F", HZ, "-f", "json", *flags],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(ATTACH_WAIT)
    if prof and prof.poll() is not None:
        sys.exit(f"pybpfprof {flags} exited early: {prof.stderr.read().strip()}")
    before = prog_stats(prof.pid) if stats else None
    wl.stdin.write("go\n")
    wl.stdin.flush()
    line = wl.stdout.readline().split()
    elapsed, cpu, checksum = float(line[1]), float(line[3]), line[5]
    after = prog_stats(prof.pid) if stats else None
    rep, prof_cpu = None, 0.0
    if prof:
        prof.send_signal(signal.SIGINT)
        out = prof.stdout.read()
        err = prof.stderr.read()
        _, status, ru = os.wait4(prof.pid, 0)
        prof.returncode = os.waitstatus_to_exitcode(status)
        if prof.returncode:
            sys.exit(f"pybpfprof {flags} failed: {err.strip()}")
        rep = json.loads(out)
        prof_cpu = ru.ru_utime + ru.ru_stime
    wl.stdin.close()
    wl.wait(timeout=30)
    cost = (after[0] - before[0], after[1] - before[1]) if stats else None
    return (elapsed, cpu, checksum), rep, prof_cpu, cost


def set_stats(v):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(str(v))


def main():
    times = {name: [] for name, _ in MODES}
    cpus = {name: [] for name, _ in MODES}
    prof_cpu = {name: [] for name, _ in MODES}
    samples = {name: [] for name, _ in MODES}
    unwound = {name: [] for name, _ in MODES}
    sums = set()
    for r in range(ROUNDS):
        for name, flags in MODES:
            (elapsed, cpu, checksum), rep, pcpu, _ = run(flags)
            times[name].append(elapsed)
            cpus[name].append(cpu)
            sums.add(checksum)
            if rep:
                prof_cpu[name].append(pcpu)
                samples[name].append(rep["samples"]["total"])
                unwound[name].append(rep["model"].get("native", {}).get("stacks", 0))
            print(f"round {r + 1} {name:20s} {elapsed:.3f} s, cpu {cpu:.3f} s, pybpfprof cpu "
                  f"{pcpu:.3f} s", file=sys.stderr)
    if len(sums) != 1:
        sys.exit(f"the workload's checksum changed between runs: {sums}")
    lines = ["| mode | wall (median) | wall slowdown: median | min | max | CPU slowdown: median "
             "| pybpfprof CPU (median) | samples (median) | stacks unwound (median) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, _ in MODES:
        ratios = [t / b for t, b in zip(times[name], times["none"])]
        cratios = [t / b for t, b in zip(cpus[name], cpus["none"])]
        pc = f"{statistics.median(prof_cpu[name]):.3f} s" if prof_cpu[name] else "-"
        sm = f"{statistics.median(samples[name]):.0f}" if samples[name] else "-"
        uw = f"{statistics.median(unwound[name]):.0f}" if unwound[name] else "-"
        lines.append(f"| {name} | {statistics.median(times[name]):.3f} s | "
                     f"{statistics.median(ratios) - 1:+.1%} | {min(ratios) - 1:+.1%} | "
                     f"{max(ratios) - 1:+.1%} | {statistics.median(cratios) - 1:+.1%} | {pc} | "
                     f"{sm} | {uw} |")
    base = statistics.median(prof_cpu[MODES[1][0]])
    lines += ["", "pybpfprof's own CPU per unwound stack, beyond plain sampling's (median "
              "over rounds):", ""]
    for name, _ in MODES[2:]:
        per = [(c - base) / u for c, u in zip(prof_cpu[name], unwound[name]) if u]
        if per:
            lines.append(f"- {name}: {statistics.median(per) * 1e6:.0f} us per unwound stack")
    set_stats(1)
    try:
        rows = []
        for name, flags in MODES[1:]:
            _, _, _, (ns, n) = run(flags, stats=True)
            rows.append(f"| {name} | {n} | {ns / n:.0f} |" if n else f"| {name} | 0 | - |")
    finally:
        set_stats(0)
    lines += ["", "on_sample (the cpu-clock program), one run per mode with "
              "kernel.bpf_stats_enabled=1 (runs on every CPU, for every thread):", "",
              "| mode | runs | avg ns per run |", "|---|---|---|", *rows]
    text = "\n".join(lines)
    print(text)
    out = os.environ.get("BENCH_OUT")
    if out:
        with open(out, "w") as f:
            f.write(f"{ROUNDS} rounds, {ITERATIONS} iterations of {WORKLOAD}, {HZ} Hz, "
                    f"{PYTHON}\n\n{text}\n")


if __name__ == "__main__":
    main()
