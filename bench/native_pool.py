#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""--native over a pool of processes of one program: pybpfprof's own cost.

Starts BENCH_WORKERS (8) copies of bench/native_workload.py (zlib.compress
and a Python loop) under /usr/bin/python3.11, profiles all of them at once
with `pybpfprof -p PID,PID,... --native -F BENCH_HZ -d BENCH_SECONDS -f json`
(what -a does on a host running such a pool, without the host's other
processes), once per binary named in PYBPFPROF_BINS (colon-separated; default
./pybpfprof), and prints each binary's own CPU time (user + system) and peak
RSS from wait4, the stacks it unwound and the native functions it named.
Root.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PYTHON = os.environ.get("BENCH_PYTHON", "/usr/bin/python3.11")
WORKERS = int(os.environ.get("BENCH_WORKERS", "8"))
HZ = os.environ.get("BENCH_HZ", "99")
SECONDS = os.environ.get("BENCH_SECONDS", "10")
BINS = os.environ.get("PYBPFPROF_BINS", os.path.join(ROOT, "pybpfprof")).split(":")


def start_workers():
    workers = []
    for _ in range(WORKERS):
        w = subprocess.Popen([PYTHON, os.path.join(HERE, "native_workload.py"), "100000"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if w.stdout.readline().strip() != "ready":
            sys.exit("a worker did not start")
        w.stdin.write("go\n")
        w.stdin.flush()
        workers.append(w)
    return workers


def native_frames(path):
    """The native functions (name, file) and the unwound stacks of a saved run."""
    with open(path) as f:
        model = json.load(f)["model"]
    funcs = {(fn[0], fn[1]) for fn in model["functions"] if len(fn) > 4 and fn[4] == "native"}
    return funcs, model.get("native", {}).get("stacks", 0)


def run(binary, pids, out):
    prof = subprocess.Popen([binary, "-p", ",".join(map(str, pids)), "--native", "-F", HZ,
                             "-d", SECONDS, "-f", "json", "-o", out],
                            stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(prof.pid, 0)
    err = prof.stderr.read()
    if status:
        sys.exit(f"{binary} failed: {err.strip()}")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def main():
    workers = start_workers()
    pids = [w.pid for w in workers]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i, binary in enumerate(BINS):
                out = os.path.join(tmp, f"run{i}.json")
                cpu, rss = run(binary, pids, out)
                funcs, stacks = native_frames(out)
                unnamed = sum(1 for name, _ in funcs if "+0x" in name)
                print(f"{binary}: {WORKERS} processes, {SECONDS} s at {HZ} Hz: cpu {cpu:.3f} s, "
                      f"peak rss {rss:.1f} MiB, stacks unwound {stacks}, native functions "
                      f"{len(funcs)} ({unnamed} lib+0xoffset)", flush=True)
    finally:
        for w in workers:
            w.kill()
            w.wait()


if __name__ == "__main__":
    main()
