"""Cost of pybpfprof's USDT modes, per interpreter: the BPF run time per probe
hit (kernel.bpf_stats_enabled: run_time_ns / run_cnt of on_func_entry and
on_func_return) and the slowdown of a call-heavy loop under --calls (which
also includes the uprobe traps themselves, not counted in run_time_ns).
Run by bench/usdt.sh as root; prints a Markdown table."""

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILER = os.environ.get("PYBPFPROF", str(ROOT / "pybpfprof"))
ROOTS = Path(os.environ.get("PYBPFPROF_ROOTS", "/var/cache/pybpfprof/roots"))
N = int(os.environ.get("BENCH_CALLS", "200000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
# (label, chroot or None, python, extra pybpfprof flags)
BUILDS = [("Debian 11 (bullseye) 3.9", "bullseye", "/usr/bin/python3.9", []),
          ("Debian sid 3.15", "sid", "/usr/bin/python3.15", []),
          ("Debian 12 3.11 (--calls-py311-line)", None, "/usr/bin/python3.11",
           ["--calls-py311-line"])]


def start(root, python):
    script = ROOT / "bench/usdt_calls.py"
    if root:
        inside = ROOTS / root / "tmp/pybpfprof-targets"
        inside.mkdir(parents=True, exist_ok=True)
        shutil.copy(script, inside / "usdt_bench_calls.py")
        argv = ["chroot", str(ROOTS / root), python, "/tmp/pybpfprof-targets/usdt_bench_calls.py"]
    else:
        argv = [python, str(script)]
    p = subprocess.Popen(argv + [str(N)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    return p


def prog_stats():
    out = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                                    text=True).stdout)
    return {p["name"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for p in out
            if p.get("name") in ("on_func_entry", "on_func_return")}


def one(root, python, flags, traced):
    p = start(root, python)
    prof = None
    try:
        if traced:
            prof = subprocess.Popen([PROFILER, "-p", str(p.pid), "--calls", *flags, "-f", "json",
                                     "-o", "/dev/null"], stdin=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(1.0)
        p.send_signal(signal.SIGUSR1)
        secs = float(p.stdout.readline())
        stats = prog_stats() if traced else {}
        return secs, stats
    finally:
        if prof:
            prof.send_signal(signal.SIGINT)
            prof.wait()
        p.kill()
        p.wait()


def main():
    print(f"| interpreter | {N} calls, CPU s, no tracing | with --calls | slowdown | "
          "BPF ns per entry | BPF ns per return |")
    print("|---|---|---|---|---|---|")
    for label, root, python, flags in BUILDS:
        host = (ROOTS / root / python.lstrip("/")) if root else Path(python)
        if not host.exists():
            print(f"| {label} | not installed | | | | |")
            continue
        base, traced, entry, ret = [], [], [], []
        for _ in range(ROUNDS):
            base.append(one(root, python, flags, False)[0])
            secs, st = one(root, python, flags, True)
            traced.append(secs)
            for name, acc in (("on_func_entry", entry), ("on_func_return", ret)):
                ns, cnt = st.get(name, (0, 0))
                if cnt:
                    acc.append(ns / cnt)
        b, t = statistics.median(base), statistics.median(traced)
        print(f"| {label} | {b:.3f} s | {t:.3f} s | {t / b:.1f}x | "
              f"{statistics.median(entry) if entry else float('nan'):.0f} | "
              f"{statistics.median(ret) if ret else float('nan'):.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
