# SPDX-License-Identifier: GPL-2.0-only
"""BPF time of the cpu-clock program per second of a busy target, per binary.

Run as root: PYBPFPROF_BINS=BEFORE/pybpfprof:./pybpfprof bench/native_bpf.py.
For each workload of bench/native_workload.py (half on Debian's 3.11, half
on pyenv's 3.10 where every Python call is an eval call of its own, callback
on 3.11), each binary and each mode (plain sampling, --native), BENCH_ROUNDS
interleaved runs: the workload runs flat out, pybpfprof samples it at
BENCH_HZ, and on_sample's run_time_ns grows by so much over BENCH_SECONDS
(kernel.bpf_stats_enabled=1, bpftool prog show). Per second, not per run:
the run count includes the other CPU's ticks, whose share varies with load.
"""
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from native import prog_stats, set_stats  # noqa: E402

BINS = os.environ.get("PYBPFPROF_BINS", os.path.join(os.path.dirname(HERE), "pybpfprof"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
HZ = os.environ.get("BENCH_HZ", "999")
SECONDS = float(os.environ.get("BENCH_SECONDS", "6"))
PYENV310 = os.environ.get("BENCH_PYTHON310", "/root/.pyenv/versions/3.10.13/bin/python3.10")
WORKLOADS = [("half", "/usr/bin/python3.11"), ("half", PYENV310),
             ("callback", "/usr/bin/python3.11")]


def bpf_ms_per_s(binary, python, workload, flags):
    wl = subprocess.Popen([python, os.path.join(HERE, "native_workload.py"), "1000000", workload],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    wl.stdout.readline()
    wl.stdin.write("go\n")
    wl.stdin.flush()
    prof = subprocess.Popen([binary, "-p", str(wl.pid), "-F", HZ, "-f", "json", *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(2)
        t0, _ = prog_stats(prof.pid)
        time.sleep(SECONDS)
        t1, _ = prog_stats(prof.pid)
    finally:
        prof.send_signal(signal.SIGINT)
        prof.wait()
        wl.kill()
        wl.wait()
    return (t1 - t0) / SECONDS / 1e6


def main():
    bins = BINS.split(":")
    res = {}
    set_stats(1)
    try:
        for _ in range(ROUNDS):
            for workload, python in WORKLOADS:
                for binary in bins:
                    for flags in ([], ["--native"]):
                        key = (workload, os.path.basename(python), binary,
                               " ".join(flags) or f"cpu {HZ} Hz")
                        res.setdefault(key, []).append(
                            bpf_ms_per_s(binary, python, workload, flags))
                        print(key, f"{res[key][-1]:.2f} ms/s", file=sys.stderr)
    finally:
        set_stats(0)
    print("| workload | python | binary | mode | BPF ms per second: median | runs |")
    print("|---|---|---|---|---|---|")
    for (workload, python, binary, mode), v in res.items():
        print(f"| {workload} | {python} | {binary} | {mode} | {statistics.median(v):.2f} | "
              f"{', '.join(f'{x:.2f}' for x in v)} |")


if __name__ == "__main__":
    main()
