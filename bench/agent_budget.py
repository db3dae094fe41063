# SPDX-License-Identifier: GPL-2.0-only
"""The agent's overhead budget (issue 33.1): 50 busy CPython processes, the
agent at a rate that costs about 3 % of a core, first at a fixed -F for
BENCH_FIXED_SECONDS (120), then with --max-overhead BENCH_BUDGET (1) for
BENCH_SECONDS (600); its cost every interval (--interval 2), measured apart
from what the agent says of itself: its CPU (every thread's run time,
/proc/PID/task/*/schedstat) and its BPF programs' run time from the kernel's
statistics (pybpfprof_bpf_run_seconds_total in /metrics), against the wall
clock; and its rate (pybpfprof_sampling_rate_hz).
Goal: the budget run's cost at 1 % +- 0.1 of a core, the fixed run's more.

Run as root: python3 bench/agent_budget.py (make bench-budget). The workers
(this file with --worker) spin DEPTH (100) Python frames deep, started by this
script; the agent runs -p (this script) --subprocesses --match
agent_budget_worker, so other Python processes on a shared host stay out of
its profiles (its BPF programs run on every CPU's ticks all the same).

Environment: BENCH_SECONDS, BENCH_FIXED_SECONDS, BENCH_PROCS (50), BENCH_HZ
(999), BENCH_BUDGET (1), BENCH_DEPTH (100), BENCH_OUT (also write a Markdown
section there), BENCH_SVG (bench/agent_budget.svg), BENCH_CSV (every
interval's figures), PYBPFPROF, BENCH_PYTHON
(/usr/bin/python3.11), TMPDIR (where the agent's --output-dir goes: the
kernel's work creating the files is the agent's CPU too, and on a nearly full
ext4 disk it was about 0.4 % of a core of it; TMPDIR=/dev/shm leaves it out).
The first intervals of each run (BENCH_SETTLE, 20 s) are left out of its
figures: the budget run starts at -F and comes down.
"""
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROFILER = os.environ.get("PYBPFPROF", os.path.join(ROOT, "pybpfprof"))
PYTHON = os.environ.get("BENCH_PYTHON", "/usr/bin/python3.11")
SECONDS = float(os.environ.get("BENCH_SECONDS", "600"))
FIXED = float(os.environ.get("BENCH_FIXED_SECONDS", "120"))
PROCS = int(os.environ.get("BENCH_PROCS", "50"))
HZ = int(os.environ.get("BENCH_HZ", "999"))
BUDGET = float(os.environ.get("BENCH_BUDGET", "1"))
DEPTH = int(os.environ.get("BENCH_DEPTH", "100"))
SETTLE = float(os.environ.get("BENCH_SETTLE", "20"))
SVG = os.environ.get("BENCH_SVG", os.path.join(HERE, "agent_budget.svg"))
INTERVAL = 2


def worker(depth):
    """agent_budget_worker: spins depth frames deep until killed."""
    def nest(n):
        if n <= 1:
            x = 0
            while True:
                x = (x * 31 + 7) % 1000003
        nest(n - 1)

    sys.setrecursionlimit(depth + 100)
    nest(depth)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    bpf = sum(float(v) for v in re.findall(r"^pybpfprof_bpf_run_seconds_total\{[^}]*\} (\S+)$",
                                           text, re.M))
    rate = re.findall(r"^pybpfprof_sampling_rate_hz (\S+)$", text, re.M)
    return bpf, float(rate[0]) if rate else float("nan")


def agent_cpu(pid):
    """Its CPU so far, every thread's, in ns (schedstat's run time: /proc/PID/stat
    counts in clock ticks, 10 ms, half a percent of a 2 s interval)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended: its time is in none of the others
    return total / 1e9


def run_agent(seconds, budget, outdir):
    """One agent run: [(t, cost %, rate Hz, BPF %)] every interval, from outside it."""
    port = free_port()
    args = [PROFILER, "agent", "-p", str(os.getpid()), "--subprocesses", "--match",
            "agent_budget_worker", "-F", str(HZ), "--interval", str(INTERVAL), "--output-dir",
            outdir, "--max-disk", "20", "--metrics", f"127.0.0.1:{port}"]
    if budget:
        args += ["--max-overhead", str(budget)]
    agent = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    rows = []
    try:
        deadline = time.monotonic() + 120
        # from its first sample on: /metrics answers before the attach (a rate of 0)
        while True:
            try:
                if scrape(port)[1] > 0:
                    break
            except OSError:
                pass
            if agent.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the agent did not start: {agent.stderr.read().decode()[-400:]}")
            time.sleep(0.5)
        t0 = last_t = time.monotonic()
        last_cpu, (last_bpf, _) = agent_cpu(agent.pid), scrape(port)
        while last_t - t0 < seconds:
            time.sleep(INTERVAL - (time.monotonic() - last_t) % INTERVAL)
            t, cpu, (bpf, rate) = time.monotonic(), agent_cpu(agent.pid), scrape(port)
            rows.append((t - t0, 100 * (cpu - last_cpu + bpf - last_bpf) / (t - last_t), rate,
                         100 * (bpf - last_bpf) / (t - last_t)))
            last_t, last_cpu, last_bpf = t, cpu, bpf
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.wait()
    return rows


def summary(rows):
    kept = [r for r in rows if r[0] >= SETTLE]
    costs = [c for _, c, _, _ in kept]
    rates = [r for _, _, r, _ in kept]
    bpf = sum(b for _, _, _, b in kept) / len(kept) if kept else float("nan")
    mean = sum(costs) / len(costs) if costs else float("nan")
    within = sum(abs(c - BUDGET) <= 0.1 * BUDGET for c in costs) / len(costs) if costs else 0
    # over 10 s (5 intervals): one interval's cut of every profile falls in one
    # 2 s window or the next, as the agent's and this script's clocks go
    tens = [sum(costs[i:i + 5]) / 5 for i in range(0, len(costs) - 4, 5)]
    within10 = sum(abs(c - BUDGET) <= 0.1 * BUDGET for c in tens) / len(tens) if tens else 0
    return dict(mean=mean, lo=min(costs, default=0), hi=max(costs, default=0), within=within,
                within10=within10, lo10=min(tens, default=0), hi10=max(tens, default=0),
                rate=sum(rates) / len(rates) if rates else float("nan"), n=len(kept), bpf=bpf)


def svg(fixed, held, path):
    """Cost (left axis, %) and rate (right axis, Hz, logarithmic: the budget holds
    tens of Hz, -F is hundreds) over time, both runs end to end."""
    w, h, m = 760, 300, 50
    rows = [(t, c, r, "fixed") for t, c, r, _ in fixed] + \
        [(t + (fixed[-1][0] if fixed else 0), c, r, "budget") for t, c, r, _ in held]
    tmax = max((r[0] for r in rows), default=1)
    cmax = max(max((r[1] for r in rows), default=1), BUDGET * 1.5) * 1.1
    x = lambda t: m + (w - 2 * m) * t / tmax
    yc = lambda c: h - m - (h - 2 * m) * c / cmax
    rtop = math.log10(max(HZ, 10) * 1.1)
    yr = lambda r: h - m - (h - 2 * m) * math.log10(max(r, 1)) / rtop
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
           f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
           f'<line x1="{w - m}" y1="{m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
           f'<rect x="{m}" y="{yc(BUDGET * 1.1):.1f}" width="{w - 2 * m}" '
           f'height="{yc(BUDGET * 0.9) - yc(BUDGET * 1.1):.1f}" fill="#2a7" opacity="0.15"/>',
           f'<line x1="{m}" y1="{yc(BUDGET):.1f}" x2="{w - m}" y2="{yc(BUDGET):.1f}" '
           f'stroke="#2a7" stroke-dasharray="4 3"/>',
           f'<text x="{m + 4}" y="{yc(BUDGET) - 4:.1f}" fill="#2a7">budget {BUDGET} % '
           f'(+-10 %)</text>']
    if fixed:
        xe = x(fixed[-1][0])
        out.append(f'<line x1="{xe:.1f}" y1="{m}" x2="{xe:.1f}" y2="{h - m}" stroke="#999" '
                   f'stroke-dasharray="2 2"/>')
        out.append(f'<text x="{m + 4}" y="{m - 6}">-F {HZ} fixed</text>')
        out.append(f'<text x="{xe + 4:.1f}" y="{m - 6}">--max-overhead {BUDGET}</text>')
    for k in range(5):
        c = cmax * k / 4
        out.append(f'<text x="{m - 6}" y="{yc(c) + 4:.1f}" text-anchor="end">{c:.1f}</text>')
        r = 10 ** (rtop * k / 4)
        out.append(f'<text x="{w - m + 6}" y="{yr(r) + 4:.1f}">{r:.0f}</text>')
        t = tmax * k / 4
        out.append(f'<text x="{x(t):.1f}" y="{h - m + 16}" text-anchor="middle">{t:.0f}</text>')
    cost = " ".join(f"{x(t):.1f},{yc(c):.1f}" for t, c, _, _ in rows)
    rate = " ".join(f"{x(t):.1f},{yr(r):.1f}" for t, _, r, _ in rows if r == r)
    out += [f'<polyline points="{cost}" fill="none" stroke="#c33" stroke-width="1.5"/>',
            f'<polyline points="{rate}" fill="none" stroke="#36c" stroke-width="1.2"/>',
            f'<text x="{m - 40}" y="{m - 20}" fill="#c33">cost, % of a core (BPF + agent CPU)'
            '</text>',
            f'<text x="{w - m}" y="{m - 20}" fill="#36c" text-anchor="end">rate, Hz (log)</text>',
            f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">seconds</text>', "</svg>"]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]))
        return
    if os.geteuid():
        sys.exit("run as root (the agent loads BPF programs)")
    me = os.path.abspath(__file__)
    workers = [subprocess.Popen([PYTHON, me, "--worker", str(DEPTH), "agent_budget_worker"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
               for _ in range(PROCS)]
    tmp = tempfile.mkdtemp(prefix="agent-budget-")
    try:
        time.sleep(2)
        os.mkdir(os.path.join(tmp, "fixed"))
        os.mkdir(os.path.join(tmp, "budget"))
        fixed = run_agent(FIXED, 0, os.path.join(tmp, "fixed")) if FIXED > 0 else []
        held = run_agent(SECONDS, BUDGET, os.path.join(tmp, "budget"))
    finally:
        for w in workers:
            w.kill()
        for w in workers:
            w.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    f, b = summary(fixed), summary(held)
    svg(fixed, held, SVG)
    if os.environ.get("BENCH_CSV"):
        with open(os.environ["BENCH_CSV"], "w") as out:
            out.write("run,seconds,cost_pct,rate_hz,bpf_pct\n")
            for name, rows in (("fixed", fixed), ("budget", held)):
                out.writelines(f"{name},{t:.3f},{c:.4f},{r:g},{p:.4f}\n" for t, c, r, p in rows)
    ok = abs(b["mean"] - BUDGET) <= 0.1 * BUDGET and (not fixed or f["mean"] > b["mean"])
    text = (f"### {PROCS} busy processes, -F {HZ}, --max-overhead {BUDGET}\n\n"
            f"{PROCS} workers spinning {DEPTH} frames deep on {os.cpu_count()} CPUs, "
            f"--interval {INTERVAL}; the cost every interval from the agent's CPU "
            f"(its threads' schedstat) and its BPF programs' run time (the kernel's statistics), the "
            f"first {SETTLE:.0f} s of each run left out.\n\n"
            "| run | seconds | cost, mean (% of a core) | of it BPF | 2 s: min-max | "
            "within +-10 % | 10 s: min-max | within +-10 % | rate, mean (Hz) |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    for name, secs, x in ((f"-F {HZ} fixed", FIXED, f), (f"--max-overhead {BUDGET}", SECONDS, b)):
        if name.startswith("-F") and not fixed:
            continue
        text += (f"| {name} | {secs:.0f} | {x['mean']:.3f} | {x['bpf']:.3f} | "
                 f"{x['lo']:.2f}-{x['hi']:.2f} | "
                 f"{100 * x['within']:.0f} % | {x['lo10']:.2f}-{x['hi10']:.2f} | "
                 f"{100 * x['within10']:.0f} % | {x['rate']:.0f} |\n")
    text += ("\n"
             f"Goal: the budget run's mean within {BUDGET} +- {0.1 * BUDGET:.2f} % of a core, "
             f"the fixed run's more: {'met' if ok else 'NOT met'}. "
             f"Plot: {os.path.relpath(SVG, ROOT)}.\n")
    print(text)
    if os.environ.get("BENCH_OUT"):
        with open(os.environ["BENCH_OUT"], "a") as out:
            out.write(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
