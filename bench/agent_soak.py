# SPDX-License-Identifier: GPL-2.0-only
"""Soak of `pybpfprof agent`: 50 CPython processes with churn, sampled at
99 Hz, for BENCH_SECONDS (1800); the agent's resident memory and CPU time
every BENCH_STEP (10) seconds, plotted over time in an SVG.

Run as root: python3 bench/agent_soak.py. The processes (bench/soak_worker.py)
each compute WORK_MS (0.5) every 100 ms and live a random 20 to 120 s; each
one that exits is replaced at once, so about 0.7 new processes a second and
1300 over 30 minutes. The agent runs -p (this script) --subprocesses (so
that other Python processes on a shared machine stay out of the figures)
--match soak_worker --interval 10
with two sinks: --output-dir (--max-disk 20) and --push to a loopback
receiver that accepts and discards; --metrics gives its own counters. Goals
(issue 14): resident memory flat within 10 % after the first 5 minutes,
CPU at most 1 % of a core.

Environment: BENCH_SECONDS, BENCH_STEP, BENCH_PROCS (50), BENCH_OUT (also
write a Markdown section there), BENCH_SVG (bench/agent_soak.svg, or
bench/agent_soak_mem.svg with BENCH_MEM), PYBPFPROF, BENCH_PYTHON
(/usr/bin/python3.11), BENCH_MEM (0; N: the agent runs with --mem and each
worker also builds and drops an N MiB object every step and keeps 256 KiB
every 10th), BENCH_RECORDER (0; N: the agent also runs --recorder N at its
default 999 Hz, and is sent SIGUSR1 before the end: the capture's size and
time, the ring's figures and each BPF program's run time are reported).
"""
import http.server
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROFILER = os.environ.get("PYBPFPROF", os.path.join(ROOT, "pybpfprof"))
PYTHON = os.environ.get("BENCH_PYTHON", "/usr/bin/python3.11")
SECONDS = float(os.environ.get("BENCH_SECONDS", "1800"))
STEP = float(os.environ.get("BENCH_STEP", "10"))
PROCS = int(os.environ.get("BENCH_PROCS", "50"))
WARMUP = min(300.0, SECONDS / 6)
MEM = int(os.environ.get("BENCH_MEM", "0"))
RECORDER = int(os.environ.get("BENCH_RECORDER", "0"))
SVG = os.environ.get("BENCH_SVG", os.path.join(HERE, "agent_soak_mem.svg" if MEM else
                                               "agent_soak.svg"))
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGESIZE")


class Discard(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.pushes += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def agent_figures(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    with open(f"/proc/{pid}/statm") as f:
        rss = int(f.read().split()[1]) * PAGE
    return cpu, rss


def metrics(port):
    out = {}
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                m = re.match(r"^([a-z_]+(?:\{[^}]*\})?) (\S+)$", line)
                if m:
                    out[m.group(1)] = float(m.group(2))
    except OSError:
        pass
    return out


class Workers:
    """PROCS workers; each one that exits is replaced."""

    def __init__(self):
        self.procs, self.started = [], 0

    def spawn(self):
        p = subprocess.Popen([PYTHON, os.path.join(HERE, "soak_worker.py"),
                              str(random.uniform(20, 120)), os.environ.get("WORK_MS", "0.5"),
                              str(self.started), *([str(MEM)] if MEM else [])],
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.started += 1
        return p

    def keep_up(self):
        self.procs = [p for p in self.procs if p.poll() is None]
        while len(self.procs) < PROCS:
            self.procs.append(self.spawn())

    def stop(self):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def run():
    random.seed(14)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Discard)
    srv.pushes = 0
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    out = tempfile.mkdtemp(prefix="pybpfprof-soak-")
    port = free_port()
    workers = Workers()
    workers.keep_up()
    # this script and its descendants only: the workers, not the host's other Pythons
    agent = subprocess.Popen([PROFILER, "agent", "-p", str(os.getpid()), "--subprocesses",
                              "--match", "soak_worker", "-F", "99",
                              "--interval", "10", "--output-dir", out, "--max-disk", "20",
                              "--push", f"http://127.0.0.1:{srv.server_address[1]}",
                              "--metrics", f"127.0.0.1:{port}", *(["--mem"] if MEM else []),
                              *(["-v", "--recorder", str(RECORDER)] if RECORDER else [])],
                             stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rows, t0 = [], time.monotonic()
    try:
        while time.monotonic() - t0 < SECONDS:
            time.sleep(max(0.0, t0 + (len(rows) + 1) * STEP - time.monotonic()))
            workers.keep_up()
            if agent.poll() is not None:
                sys.exit(f"agent exited ({agent.returncode}): {agent.stderr.read().decode()}")
            cpu, rss = agent_figures(agent.pid)
            m = metrics(port)
            rows.append((time.monotonic() - t0, cpu, rss, m, workers.started))
            print(f"{rows[-1][0]:7.0f} s  cpu {cpu:6.2f} s  rss {rss / 1e6:6.1f} MB  "
                  f"records {m.get('pybpfprof_process_records', 0):.0f}  "
                  f"seen {m.get('pybpfprof_processes_seen_total', 0):.0f}  "
                  f"started {workers.started}", flush=True)
        if RECORDER:
            agent.send_signal(signal.SIGUSR1)
            time.sleep(2)
            m = metrics(port)
            caps = [os.path.getsize(os.path.join(out, n)) for n in os.listdir(out)
                    if n.endswith(".capture.pb.gz")]
            rows[-1] = rows[-1][:3] + (m,) + rows[-1][4:]
            m["capture_bytes"] = caps[0] if caps else 0
    finally:
        agent.send_signal(signal.SIGTERM)
        rc = agent.wait(timeout=60)
        if RECORDER:
            for line in agent.stderr.read().decode(errors="replace").splitlines():
                if "capture 1:" in line or "attached" in line:
                    print(line)
        workers.stop()
        srv.shutdown()
        shutil.rmtree(out, ignore_errors=True)
    return rows, rc, srv.pushes, workers.started


def svg(rows):
    """Two panels over time: RSS (MB) and CPU (% of a core, per step)."""
    w, h, left, top, gap = 720, 220, 60, 30, 50
    ts = [r[0] for r in rows]
    rss = [r[2] / 1e6 for r in rows]
    cpu = [0.0] + [100 * (b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(rows, rows[1:])]
    tmax = max(ts)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + left + 20}" '
             f'height="{2 * h + 2 * top + gap + 30}" font-family="sans-serif" font-size="12">',
             '<rect width="100%" height="100%" fill="white"/>']

    def panel(y0, values, ymax, title, unit, colour):
        parts.append(f'<text x="{left}" y="{y0 - 10}" font-weight="bold">{title}</text>')
        parts.append(f'<rect x="{left}" y="{y0}" width="{w}" height="{h}" fill="none" '
                     f'stroke="#888"/>')
        for k in range(5):
            v = ymax * k / 4
            y = y0 + h - h * k / 4
            parts.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{v:.{1 if ymax < 10 else 0}f}</text>')
            parts.append(f'<line x1="{left}" x2="{left + w}" y1="{y}" y2="{y}" stroke="#eee"/>')
        pts = " ".join(f"{left + w * t / tmax:.1f},{y0 + h - h * min(v, ymax) / ymax:.1f}"
                       for t, v in zip(ts, values))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                     f'stroke-width="1.5"/>')
        parts.append(f'<text x="{left + w}" y="{y0 - 10}" text-anchor="end">{unit}</text>')

    panel(top, rss, max(rss) * 1.25, "pybpfprof agent: resident memory", "MB", "#1f77b4")
    panel(top + h + gap, cpu, max(2.0, max(cpu) * 1.25),
          f"CPU, % of one core (per {STEP:.0f} s)", "%", "#d62728")
    for k in range(7):
        t = tmax * k / 6
        parts.append(f'<text x="{left + w * k / 6:.1f}" y="{2 * h + top + gap + 20}" '
                     f'text-anchor="middle">{t / 60:.0f} min</text>')
    parts.append("</svg>")
    with open(SVG, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    if os.geteuid():
        sys.exit("bench/agent_soak.py: run as root")
    rows, rc, pushes, started = run()
    svg(rows)
    after = [r for r in rows if r[0] >= WARMUP]
    rss = [r[2] for r in after]
    flat = (max(rss) - min(rss)) / min(rss)
    cpu_pct = 100 * (rows[-1][1] - rows[0][1]) / (rows[-1][0] - rows[0][0])
    m = rows[-1][3]
    push_drops = m.get('pybpfprof_sink_dropped_total{sink="push"}', 0)
    ring_drops = m.get('pybpfprof_samples_dropped_total{cause="ring_buffer_full"}', 0)
    lines = [
        f"- {SECONDS / 60:.0f} minutes, {PROCS} processes at a time, {started} in all "
        f"(each {os.environ.get('WORK_MS', '0.5')} ms of work per 100 ms, living 20 to 120 s), "
        f"-F 99, --interval 10, --output-dir (--max-disk 20) and --push"
        + (f", --mem (each worker: {MEM} MiB built and dropped per step, 256 KiB kept per "
           f"10)" if MEM else "") + f"; exit status {rc}",
        f"- resident memory after the first {WARMUP / 60:.0f} min: {min(rss) / 1e6:.1f} to "
        f"{max(rss) / 1e6:.1f} MB, a spread of {100 * flat:.1f} % (goal: within 10 %)",
        f"- CPU: {cpu_pct:.2f} % of one core over the run (goal: at most 1 %)",
        f"- {m.get('pybpfprof_intervals_total', 0):.0f} profiles closed, {pushes} pushed, "
        f"{m.get('pybpfprof_samples_total', 0):.0f} samples; process records held at the "
        f"end: {m.get('pybpfprof_process_records', 0):.0f} of "
        f"{m.get('pybpfprof_processes_seen_total', 0):.0f} processes seen; drops: "
        f"{push_drops:.0f} push, {ring_drops:.0f} ring buffer",
    ]
    if MEM:
        lines.append(
            f"- --mem: {m.get('pybpfprof_memory_intervals_total', 0):.0f} memory profiles, "
            f"{m.get('pybpfprof_memory_ranges', 0):.0f} ranges followed at the end, "
            f"{m.get('pybpfprof_memory_ranges_untracked_total', 0):.0f} untracked, "
            f"{m.get('pybpfprof_memory_range_records_lost_total', 0):.0f} range records lost")
    bpf = sum(v for k, v in m.items() if k.startswith("pybpfprof_bpf_run_seconds_total"))
    lines.append(f"- BPF programs: {bpf:.3f} s of run time in all, "
                 f"{m.get('pybpfprof_kernel_events_total', 0):.0f} timer ticks on the workers")
    if RECORDER:
        lines.append(
            f"- --recorder {RECORDER} at 999 Hz: ring {m.get('pybpfprof_recorder_ring_bytes', 0):.0f}"
            f" bytes, {m.get('pybpfprof_recorder_ring_samples', 0):.0f} samples, "
            f"{m.get('pybpfprof_recorder_ring_evicted_total', 0):.0f} evicted; a capture of "
            f"{m.get('capture_bytes', 0)} bytes")
    print("\n".join(lines))
    if os.environ.get("BENCH_OUT"):
        with open(os.environ["BENCH_OUT"], "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
