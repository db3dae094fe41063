"""`pybpfprof agent --max-overhead`: the hard overhead budget (issue 33.1).

The agent measures each interval's cost (its BPF programs' run time, by the
kernel's statistics, and its own CPU) and sets the next interval's rate. The
workloads are bursts of known CPU (targets/budget_burst.py): asleep until
the test sends SIGUSR1, then a fixed CPU time at a known stack depth, then
asleep again, so all their work falls inside the agent's run and its total
is the workload's own measurement.
"""

import gzip
import math
import os
import re
import signal
import tempfile
import time
import urllib.request
from pathlib import Path

from harness import (Profiler, Workloads, check, expect_error, protoc_decode, read_stdout_until,
                     run_profiler, test)
from suite_agent import free_port

FREQ = 999
BURST = "budget_burst.py"
# the bursts' stack depth (frames): the deeper, the more each sample costs
DEPTH = 100
STEP_RE = re.compile(r"the last interval at (\d+) Hz cost ([0-9.]+) % of a CPU "
                     r"\(budget ([0-9.]+) %\): (\d+) Hz next")


def metrics(port):
    """/metrics as {name{labels}: value}, parsed by hand (a few gauges only)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        check(r.status == 200, f"/metrics answered {r.status}")
        text = r.read().decode()
    out = {}
    for ln in text.splitlines():
        if ln and not ln.startswith("#"):
            k, v = ln.rsplit(" ", 1)
            out[k] = float(v)
    return out


def steps(prof):
    """The agent's per-interval lines: (rate, cost %, budget %, next rate)."""
    return [(int(m[1]), float(m[2]), float(m[3]), int(m[4]))
            for m in STEP_RE.finditer(prof.stderr())]


def decode(path):
    """One profile file: its period (ns), samples, ns, and string labels."""
    prof = protoc_decode(gzip.decompress(Path(path).read_bytes()),
                         "perftools.profiles.Profile", errors="replace")
    strings = prof["string_table"]
    labels, pids = {}, set()
    n = ns = 0
    for s in prof.get("sample", []):
        n += s["value"][0]
        ns += s["value"][1]
        for lab in s.get("label", []):
            key = strings[lab["key"][0]]
            if "str" in lab:
                labels.setdefault(key, set()).add(strings[lab["str"][0]])
            elif key == "pid":
                pids.add(lab.get("num", [0])[0])
    return dict(period=prof.get("period", [0])[0], n=n, ns=ns, labels=labels, pids=pids)


def start_bursts(wl, k, seconds):
    return [wl.start("/usr/bin/python3.11", BURST, DEPTH, seconds) for _ in range(k)]


def wait_done(p, timeout=180):
    buf = read_stdout_until(p, lambda b: b"done " in b and b.endswith(b"\n"), "done", timeout)
    return float(re.findall(rb"done ([0-9.]+)", buf)[0])


# Alone: its bursts must get enough CPU to cost more than the budget, which
# a pool of other tests beside it could deny them.
@test(alone=True)
def agent_budget_rate():
    """--max-overhead under a burst that costs more than the budget: the rate
    goes down (never above -F), back up to -F once the burst is over, never
    up after an interval over the budget nor down after one under it, cut
    when one is twice over; the profiles' values in ns, at their own rates,
    add up to the CPU each burst used (across the rate changes), labelled
    with their rate and the budget's state; /metrics says the rate, the
    budget, the cost and the changes."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        # the budget: above what this agent costs idle at -F (measured by a
        # first run of it here, with a budget it cannot reach), so the rate
        # comes back, and under what two bursts cost
        out0 = Path(tmp, "calib")
        out0.mkdir()
        bursts = start_bursts(wl, 2, 4.0)
        pids = ",".join(str(b.pid) for b in bursts)
        cal = Profiler(["agent", "-v", "-F", FREQ, "--max-overhead", 100, "--interval", 1, "-p", pids,
                        "--output-dir", out0], verbose=False)
        try:
            cal.wait_attached()
            deadline = time.monotonic() + 60
            while len(steps(cal)) < 4 and time.monotonic() < deadline:
                cal.watch(0.2)
            cal.p.send_signal(signal.SIGTERM)
            check(cal.wait(30) == 0, f"calibration run: {cal.stderr()[-400:]}")
        finally:
            cal.kill()
        # its first interval holds the start of the sinks: not idle's
        idle = max([c for _, c, _, _ in steps(cal)[1:4]] or [0])
        budget = round(max(0.3, 2.5 * idle), 2)
        out = Path(tmp, "out")
        out.mkdir()
        port = free_port()
        prof = Profiler(["agent", "-v", "-F", FREQ, "--max-overhead", budget, "--interval", 1, "-p",
                         pids, "--output-dir", out, "--metrics", f"127.0.0.1:{port}"], verbose=False)
        try:
            prof.wait_attached()
            prof.watch(1.5)
            for b in bursts:
                b.send_signal(signal.SIGUSR1)
            used = {b.pid: wait_done(b) for b in bursts}
            n_burst = len(steps(prof))
            # back to -F: a few steps of at most twice each
            deadline = time.monotonic() + 150
            while time.monotonic() < deadline:
                st = steps(prof)
                if len(st) > n_burst and st[-1][3] == FREQ:
                    break
                prof.watch(0.2)
            m = metrics(port)
            prof.p.send_signal(signal.SIGTERM)
            check(prof.wait(30) == 0, f"agent: {prof.stderr()[-400:]}")
        finally:
            prof.kill()
        st = steps(prof)
        check(st, f"no budget step logged: {prof.stderr()[-400:]}")
        for rate, cost, b, nxt in st:
            check(b == budget and 1 <= nxt <= FREQ and rate <= FREQ,
                  f"step {rate} Hz, {cost} %, budget {b}: next {nxt} Hz")
            # the rate by the model of the last intervals, but never up after an interval
            # over the budget, never down after one under it, and cut when far over
            if cost > budget:
                check(nxt <= rate, f"{rate} Hz cost {cost} % > {budget} %: next {nxt} Hz")
            if cost >= 2 * budget and rate > 1:
                check(nxt < rate, f"{rate} Hz cost {cost} % >= 2 * {budget} %: next {nxt} Hz")
            if cost < budget:
                check(nxt >= rate, f"{rate} Hz cost {cost} % < {budget} %: next {nxt} Hz")
        lowest = min(nxt for _, _, _, nxt in st)
        check(lowest < FREQ, f"the rate never went down: costs {[c for _, c, _, _ in st]}, "
              f"budget {budget} % (idle {idle} %)")
        check(any(nxt == FREQ for _, _, _, nxt in st[n_burst:]),
              f"the rate not back to {FREQ} Hz after the bursts: {st[n_burst:]}")
        check(m.get("pybpfprof_overhead_budget_percent") == budget and
              m.get("pybpfprof_sampling_rate_max_hz") == FREQ and
              m.get("pybpfprof_sampling_rate_lowered_total", 0) >= 1 and
              m.get("pybpfprof_sampling_rate_raised_total", 0) >= 1 and
              0 < m.get("pybpfprof_overhead_percent", 0) < 100 and
              1 <= m.get("pybpfprof_sampling_rate_hz", 0) <= FREQ,
              f"/metrics: { {k: v for k, v in m.items() if 'rate' in k or 'overhead' in k} }")
        # the values: ns at each profile's own rate, summed, against the CPU each burst used
        files = [decode(f) for f in sorted(out.glob("*.pb.gz"))]
        report = {}
        for pid, cpu in used.items():
            mine = [f for f in files if f["pids"] == {pid}]
            rates = {int(r) for f in mine for r in f["labels"].get("sample_rate_hz", ())}
            check(len(rates) >= 2, f"pid {pid}: its profiles all at {rates} Hz: no rate change")
            for f in mine:
                (r,) = f["labels"]["sample_rate_hz"]
                check(f["period"] == 10**9 // int(r) and f["ns"] == f["n"] * f["period"],
                      f"pid {pid}: period {f['period']} ns at {r} Hz")
                check(f["labels"].get("overhead_budget", set()) <= {"full", "limited", "over"},
                      f"overhead_budget {f['labels'].get('overhead_budget')}")
            ns = sum(f["ns"] for f in mine)
            # each profile's count spreads as its square root (in ns: times its period),
            # 3 % for the burst's start and end, and two periods of the slowest rate
            sd = math.sqrt(sum(f["n"] * f["period"] ** 2 for f in mine))
            tol = 2.5 * sd + 0.03 * cpu * 1e9 + 2 * max(f["period"] for f in mine)
            check(abs(ns - cpu * 1e9) <= tol,
                  f"pid {pid}: {ns / 1e9:.3f} s in its profiles at {sorted(rates)} Hz, "
                  f"it used {cpu:.3f} s (+- {tol / 1e9:.3f})")
            report[pid] = (round(ns / 1e9, 3), round(cpu, 3), sorted(rates))
        return (f"budget {budget} % (idle {idle} %); rates {[s[3] for s in st]}; "
                f"ns vs cpu {report}")


@test
def agent_budget_refusals():
    """--max-overhead's bad values and --recorder beside it: one sentence, exit 2."""
    with tempfile.TemporaryDirectory() as tmp:
        for arg in ("0", "101", "x", "-1"):
            r = run_profiler(["agent", "--output-dir", tmp, "--max-overhead", arg], timeout=15)
            check(r.returncode == 2 and r.stderr.startswith(
                "pybpfprof agent: --max-overhead takes a percentage of one CPU from 0.01 to 100"),
                f"--max-overhead {arg}: exit {r.returncode}, {r.stderr!r}")
        expect_error(["agent", "--output-dir", tmp, "--recorder", "10", "--max-overhead", "1"],
                     ["--max-overhead cannot yet change --recorder's rate"], rc=2)
        check(not os.listdir(tmp), f"files left: {os.listdir(tmp)}")
    return "5 refusals"
