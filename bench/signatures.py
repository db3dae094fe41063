#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""What --signatures costs per sample (bench/signatures.sh runs it as root).

The same busy target (tests/integration/targets/signatures.py: scale() with
an int and two numpy arrays on Debian's 3.11, whose innermost frame has
three arguments) is profiled at 999 Hz for BENCH_SECONDS, with and without
--signatures, in alternating rounds. Per run: the BPF program's run time
(kernel.bpf_stats_enabled, bpftool prog show) per sample sent for the target,
and pybpfprof's own CPU time (schedstat) per sample. The difference of the
medians is the feature's cost per sample.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import (PROF, PYTHON, bpf_prog_ids, bpf_prog_stats, bss_counters,  # noqa: E402
                      set_stats, task_cpu_ns)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "tests/integration/targets/signatures.py")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
HZ = 999


def sig_counters(ids):
    """(sig_sent, sig_ns) from the .bss of the profiler's on_sample program."""
    v = bss_counters(ids, ("sig_sent", "sig_ns"))
    return v["sig_sent"], v["sig_ns"]


def one_run(sig, tmp):
    # again at each run: another benchmark on a shared machine may have put it back to 0
    set_stats(1)
    wl = subprocess.Popen([PYTHON, TARGET, str(SECONDS + 30), os.path.join(tmp, "truth.json")],
                          stdout=subprocess.PIPE, text=True)
    try:
        wl.stdout.readline()  # ready
        out = os.path.join(tmp, "p.json")
        args = [PROF, "-p", str(wl.pid), "-F", str(HZ), "-o", out]
        prof = subprocess.Popen(args + (["--signatures"] if sig else []),
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:  # attached: its programs loaded
            time.sleep(0.5)
            ids = bpf_prog_ids(prof.pid)
            try:
                ns0, _, ev0 = bpf_prog_stats(ids)
                break
            except Exception:
                if time.monotonic() > deadline or prof.poll() is not None:
                    raise
        time.sleep(1.0)  # its first reads of new code objects done
        ns0, _, ev0 = bpf_prog_stats(ids)
        sent0, signs0 = sig_counters(ids)
        cpu0 = task_cpu_ns(prof.pid)
        time.sleep(SECONDS)
        ns1, _, ev1 = bpf_prog_stats(ids)
        sent1, signs1 = sig_counters(ids)
        cpu1 = task_cpu_ns(prof.pid)
        prof.send_signal(signal.SIGINT)
        prof.wait(timeout=30)
        if prof.returncode:
            raise SystemExit("pybpfprof: exit %d: %s" % (prof.returncode, prof.stderr.read()))
        with open(out) as f:
            rep = json.load(f)
    finally:
        wl.kill()
        wl.wait()
    events = ev1 - ev0
    n_sig = sum(len(g["signatures"]) for g in rep["processes"][0].get("signatures", []))
    # run time that did not advance: the stats were switched off meanwhile (not ours)
    return {"bpf_ns": (ns1 - ns0) / max(events, 1) if ns1 > ns0 else None, "user_ns": (cpu1 - cpu0) / max(events, 1),
            "sig_ns": (signs1 - signs0) / max(sent1 - sent0, 1), "events": events,
            "signatures": n_sig}


def main():
    set_stats(1)
    runs = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(ROUNDS):
            for sig in (False, True):
                x = one_run(sig, tmp)
                runs[sig].append(x)
                print("round %d %-14s BPF %6s ns/sample (signature read %4.0f), "
                      "pybpfprof %6.0f ns/sample, %d samples, %d signatures"
                      % (r + 1, "--signatures" if sig else "plain",
                         "-" if x["bpf_ns"] is None else "%.0f" % x["bpf_ns"], x["sig_ns"],
                         x["user_ns"], x["events"], x["signatures"]), flush=True)
    med = {s: {k: statistics.median([x[k] for x in runs[s] if x[k] is not None] or [0])
               for k in ("bpf_ns", "user_ns", "sig_ns")} for s in runs}
    lost = sum(x["bpf_ns"] is None for s in runs for x in runs[s])
    if lost:
        print("\n%d runs without BPF run-time figures (kernel.bpf_stats_enabled switched off "
              "by someone else during them): left out of the BPF medians" % lost)
    print("\nmedians of %d rounds at %d Hz, %s s each:" % (ROUNDS, HZ, SECONDS))
    print("  | | BPF ns/sample | pybpfprof ns/sample |")
    print("  |---|---:|---:|")
    for s in (False, True):
        print("  | %s | %.0f | %.0f |" % ("--signatures" if s else "plain", med[s]["bpf_ns"],
                                          med[s]["user_ns"]))
    print("  | cost of --signatures | %+.0f | %+.0f |" % (
        med[True]["bpf_ns"] - med[False]["bpf_ns"], med[True]["user_ns"] - med[False]["user_ns"]))
    print("  signature read and record, timed inside the BPF program: %.0f ns/sample (median)"
          % med[True]["sig_ns"])


if __name__ == "__main__":
    main()
