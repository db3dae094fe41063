#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""What --opcodes and the exception state cost per sample (bench/opcodes.sh
runs it as root).

The same busy target (tests/integration/targets/opcodes_mix.py on Debian's
3.11) is profiled at 999 Hz for BENCH_SECONDS, plain, with --exceptions
and with --opcodes --exceptions, in alternating rounds; with PYBPFPROF_BASE
naming another build (main before the ticks' reads), that build too. Per
run: the BPF program's run time (kernel.bpf_stats_enabled, bpftool prog
show) per sample sent for the target. The differences of the medians are
the reads' cost per sample: the exception state read, and --opcodes'
instruction read. With --opcodes the program also times the reads themselves
(bpf_ktime_get_ns around each, summed in its .bss: tick_exc_ns, tick_op_ns),
figures the machine's load moves far less than the whole program's.
"""

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import (PROF, PYTHON, bpf_prog_ids, bpf_prog_stats, bss_counters,  # noqa: E402
                      set_stats)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "tests/integration/targets/opcodes_mix.py")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
BASE = os.environ.get("PYBPFPROF_BASE")
HZ = 999


def tick_counters(ids):
    """The .bss counters of the profiler's on_sample program (0 when absent)."""
    return bss_counters(ids, ("tick_exc_ns", "tick_exc_reads", "tick_op_ns", "tick_op_reads"))


def one_run(prof_exe, extra, tmp):
    # again at each run: another benchmark on a shared machine may have put it back to 0
    set_stats(1)
    wl = subprocess.Popen([PYTHON, TARGET, str(SECONDS + 30), os.path.join(tmp, "truth.json")],
                          stdout=subprocess.PIPE, text=True)
    try:
        wl.stdout.readline()  # ready
        prof = subprocess.Popen([prof_exe, "-p", str(wl.pid), "-F", str(HZ), "-o",
                                 os.path.join(tmp, "p.json"), *extra],
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:  # attached: its programs loaded
            time.sleep(0.5)
            ids = bpf_prog_ids(prof.pid)
            try:
                bpf_prog_stats(ids)
                break
            except Exception:
                if time.monotonic() > deadline or prof.poll() is not None:
                    raise
        time.sleep(1.0)
        ns0, _, ev0 = bpf_prog_stats(ids)
        c0 = tick_counters(ids)
        time.sleep(SECONDS)
        ns1, _, ev1 = bpf_prog_stats(ids)
        c1 = tick_counters(ids)
        prof.send_signal(signal.SIGINT)
        prof.wait(timeout=30)
        if prof.returncode:
            raise SystemExit("pybpfprof: exit %d: %s" % (prof.returncode, prof.stderr.read()))
    finally:
        wl.kill()
        wl.wait()
    events = ev1 - ev0
    # run time that did not advance: the stats were switched off meanwhile (not ours)
    d = {k: c1[k] - c0[k] for k in c0}
    return {"bpf_ns": (ns1 - ns0) / max(events, 1) if ns1 > ns0 else None, "events": events,
            "exc_ns": d["tick_exc_ns"] / d["tick_exc_reads"] if d["tick_exc_reads"] else None,
            "op_ns": d["tick_op_ns"] / d["tick_op_reads"] if d["tick_op_reads"] else None}


def main():
    configs = [("plain", PROF, []), ("--exceptions", PROF, ["--exceptions"]),
               ("--opcodes --exceptions", PROF, ["--opcodes", "--exceptions"])]
    if BASE:
        configs.insert(0, ("base (another build)", BASE, []))
    set_stats(1)
    runs = {name: [] for name, _, _ in configs}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(ROUNDS):
            for name, exe, extra in configs:
                x = one_run(exe, extra, tmp)
                runs[name].append(x)
                print("round %d %-22s BPF %6s ns/sample, %d samples%s"
                      % (r + 1, name, "-" if x["bpf_ns"] is None else "%.0f" % x["bpf_ns"],
                         x["events"], "" if x["op_ns"] is None else
                         "; timed inside: exception read %.0f ns, instruction read %.0f ns"
                         % (x["exc_ns"], x["op_ns"])), flush=True)

    def med(name, key):
        return statistics.median([x[key] for x in runs[name] if x[key] is not None] or [0])

    print("\nmedians of %d rounds at %d Hz, %s s each (BPF ns per target sample):"
          % (ROUNDS, HZ, SECONDS))
    for name, _, _ in configs:
        print("  %-22s %6.0f" % (name, med(name, "bpf_ns")))
    print("  the exception state read: %+.0f"
          % (med("--exceptions", "bpf_ns") - med("plain", "bpf_ns")))
    print("  --opcodes' instruction read: %+.0f"
          % (med("--opcodes --exceptions", "bpf_ns") - med("--exceptions", "bpf_ns")))
    print("  timed inside the program (--opcodes runs): exception read %.0f ns, instruction "
          "read %.0f ns" % (med("--opcodes --exceptions", "exc_ns"),
                            med("--opcodes --exceptions", "op_ns")))

if __name__ == "__main__":
    main()
