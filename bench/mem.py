# SPDX-License-Identifier: GPL-2.0-only
"""--mem overhead: slowdown of an allocation-heavy workload in each memory mode.

Run through bench/mem.sh (root). Modes, interleaved in every round so the
machine's drift cancels: no profiler; CPU sampling only (-F 99); --mem (page
faults 1 in 64 + memory system calls, with CPU sampling at 99 Hz);
--mem --mem-period 8; --mem=alloc (plus allocator uprobes). The slowdown of a
mode is the median over rounds of its time / the unprofiled time of the same
round, for the wall time and for the workload's own CPU time (less sensitive
to other load on a shared machine: waiting for a CPU is not counted, while
the faults, system calls, traps and BPF programs run in the workload's own
time). Then one run per memory mode with kernel.bpf_stats_enabled=1 gives the
BPF programs' run counts and average cost per run.

Environment: BENCH_ROUNDS (5), BENCH_ITERATIONS (60), BENCH_ATTACH_WAIT (2.0 s:
pybpfprof is started, then the work begins this much later, in every mode),
BENCH_OUT (also write a Markdown section there), PYBPFPROF, BENCH_PYTHON.
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
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
ITERATIONS = os.environ.get("BENCH_ITERATIONS", "60")
ATTACH_WAIT = float(os.environ.get("BENCH_ATTACH_WAIT", "2.0"))

MODES = [
    ("none", None),
    ("cpu 99 Hz", []),
    ("--mem", ["--mem"]),
    ("--mem --mem-period 8", ["--mem", "--mem-period", "8"]),
    ("--mem=alloc", ["--mem=alloc"]),
]
PROGS = ("on_sample", "on_page_fault", "on_sys_enter", "on_sys_exit", "on_malloc", "on_calloc",
         "on_realloc", "on_free", "on_alloc_return")


def prog_ids(pid):
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_stats(ids):
    out = {}
    for i in ids:
        r = subprocess.run(["bpftool", "prog", "show", "id", str(i), "-j"],
                           capture_output=True, text=True)
        if r.returncode:
            continue
        p = json.loads(r.stdout)
        name = p.get("name", "")
        if name in PROGS:
            t, n = out.get(name, (0, 0))
            out[name] = (t + p.get("run_time_ns", 0), n + p.get("run_cnt", 0))
    return out


def run(flags, stats=False):
    wl = subprocess.Popen([PYTHON, os.path.join(HERE, "mem_workload.py"), ITERATIONS],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert wl.stdout.readline().strip() == "ready"
    prof = None
    if flags is not None:
        prof = subprocess.Popen([PROFILER, "-p", str(wl.pid), "-f", "json", *flags],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(ATTACH_WAIT)
    if prof and prof.poll() is not None:
        sys.exit(f"pybpfprof {flags} exited early: {prof.stderr.read().strip()}")
    before = prog_stats(prog_ids(prof.pid)) if stats else None
    wl.stdin.write("go\n")
    wl.stdin.flush()
    line = wl.stdout.readline().split()
    elapsed, cpu, checksum = float(line[1]), float(line[3]), line[5]
    after = prog_stats(prog_ids(prof.pid)) if stats else None
    rep = None
    if prof:
        prof.send_signal(signal.SIGINT)
        out, err = prof.communicate(timeout=60)
        if prof.returncode:
            sys.exit(f"pybpfprof {flags} failed: {err.strip()}")
        rep = json.loads(out)
    wl.stdin.close()
    wl.wait(timeout=30)
    cost = None
    if stats:
        cost = {k: (after[k][0] - before.get(k, (0, 0))[0], after[k][1] - before.get(k, (0, 0))[1])
                for k in after}
    return (elapsed, cpu, checksum), rep, cost


def set_stats(v):
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(str(v))


def main():
    times = {name: [] for name, _ in MODES}
    cpus = {name: [] for name, _ in MODES}
    sums = set()
    for r in range(ROUNDS):
        for name, flags in MODES:
            (elapsed, cpu, checksum), rep, _ = run(flags)
            times[name].append(elapsed)
            cpus[name].append(cpu)
            sums.add(checksum)
            extra = ""
            if rep and "memory" in rep["processes"][0]:
                m = rep["processes"][0]["memory"]
                extra = (f" touched {m['touched'] >> 20} MiB mapped {m['mapped'] >> 20} MiB "
                         f"allocated {m['allocated'] >> 20} MiB, dropped "
                         f"{rep['samples']['dropped']}")
            print(f"round {r + 1} {name:22s} {elapsed:.3f} s, cpu {cpu:.3f} s{extra}",
                  file=sys.stderr)
    if len(sums) != 1:
        sys.exit(f"the workload's checksum changed between runs: {sums}")
    rows = []
    for name, _ in MODES:
        ratios = [t / b for t, b in zip(times[name], times["none"])]
        cratios = [t / b for t, b in zip(cpus[name], cpus["none"])]
        rows.append((name, statistics.median(times[name]), statistics.median(ratios) - 1,
                     min(ratios) - 1, max(ratios) - 1, statistics.median(cpus[name]),
                     statistics.median(cratios) - 1))
    costs, stat_cpu = {}, {}
    set_stats(1)
    try:
        for name, flags in MODES[1:]:
            (_, cpu, _), rep, cost = run(flags, stats=True)
            costs[name], stat_cpu[name] = cost, cpu
    finally:
        set_stats(0)

    lines = ["| mode | wall (median) | wall slowdown: median | min | max | CPU (median) "
             "| CPU slowdown: median |",
             "|---|---|---|---|---|---|---|"]
    for name, t, med, lo, hi, c, cmed in rows:
        lines.append(f"| {name} | {t:.3f} s | {med:+.1%} | {lo:+.1%} | {hi:+.1%} | {c:.3f} s "
                     f"| {cmed:+.1%} |")
    lines += ["", "BPF programs in one run per mode with kernel.bpf_stats_enabled=1 (the system"
              " call programs run for every process on the machine; the others for the target"
              " only, after a one-lookup filter):", "",
              "| mode | program | runs | avg ns per run | total ms | share of the workload's CPU |",
              "|---|---|---|---|---|---|"]
    for name, cost in costs.items():
        for prog, (ns, n) in sorted(cost.items()):
            if n:
                lines.append(f"| {name} | {prog} | {n} | {ns / n:.0f} | {ns / 1e6:.1f} | "
                             f"{ns / 1e9 / stat_cpu[name]:.2%} |")
    text = "\n".join(lines)
    print(text)
    out = os.environ.get("BENCH_OUT")
    if out:
        with open(out, "w") as f:
            f.write(f"{ROUNDS} rounds, {ITERATIONS} iterations, {PYTHON}\n\n{text}\n")


if __name__ == "__main__":
    main()
