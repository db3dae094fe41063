#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Overhead benchmark of pybpfprof (run through bench/overhead.sh, as root).

Measures, against a CPU-bound pure-Python workload (bench/workload.py):
  1. the workload's slowdown with pybpfprof attached at 99 Hz and 999 Hz,
     runs interleaved (none, 99, 999, none, ...) over BENCH_ROUNDS rounds,
     reported as the median of the per-round ratios profiled/unprofiled;
  2. the BPF program's own cost (kernel.bpf_stats_enabled=1, one extra run at
     999 Hz): run_time_ns / run_cnt, and total BPF time as % of wall time;
  3. time from pybpfprof's start to its first sample (first_sample_ms);
  4. pybpfprof's own CPU use (while sampling, and over its whole life) and
     its peak RSS.

Only the standard library of /usr/bin/python3. Environment:
  BENCH_ROUNDS (7), BENCH_CONTROL (1: add to each round a control run with
  bare cpu-clock perf events at 999 Hz and no BPF; 0 to skip), BENCH_QUIET_TIMEOUT (60: before each round, wait up to
  this many seconds for the machine to be idle; 0 to not wait), BENCH_PIN=1 (diagnostic: workload pinned to CPU 1 and
  pybpfprof to CPU 0), BENCH_NICE (nice value for the workload and pybpfprof,
  e.g. -10 to keep other processes of a shared machine out of the way), BENCH_ATTACH_WAIT (0.5 s between starting pybpfprof and
  starting the work), BENCH_ITERATIONS (workload size, default in
  workload.py), BENCH_PYTHON (/usr/bin/python3.11), PYBPFPROF (./pybpfprof),
  BENCH_OUT (write the results as a Markdown section there), BENCH_RAW (write
  every run's figures as JSON there), BENCH_STRICT=1 (exit 3 if a goal is missed).
"""
import ctypes
import datetime
import json
import os
import platform
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROF = os.environ.get("PYBPFPROF", os.path.join(ROOT, "pybpfprof"))
PYTHON = os.environ.get("BENCH_PYTHON", "/usr/bin/python3.11")
WORKLOAD = os.path.join(HERE, "workload.py")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
WAIT_S = float(os.environ.get("BENCH_ATTACH_WAIT", "0.5"))
ITERATIONS = os.environ.get("BENCH_ITERATIONS")
CONTROL = os.environ.get("BENCH_CONTROL", "1") == "1"
PIN = os.environ.get("BENCH_PIN") == "1"   # diagnostic: workload on CPU 1, pybpfprof on CPU 0
NICE = int(os.environ.get("BENCH_NICE", "0"))  # nice value of the workload and pybpfprof
STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"

RATES = (99, 999)
CONTROL_HZ = -999                        # mode key of the control run (timer only)
MODE_NAME = {0: "none", CONTROL_HZ: "timer-only 999 Hz"}
GOAL_SLOWDOWN = {99: 0.5, 999: 2.0}     # percent
GOAL_FIRST_MS = 300.0
FOREIGN_WARN = 25.0                      # % of one core used by others during a run
QUIET_PCT = 10.0                         # a round is "quiet" below this (others' CPU)
QUIET_TIMEOUT = float(os.environ.get("BENCH_QUIET_TIMEOUT", "60"))
CLK_TCK = os.sysconf("SC_CLK_TCK")


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- /proc readers

def task_sched_ns(pid):
    """(CPU time, run-queue wait) of every thread of pid, ns, from schedstat;
    None if the process is gone."""
    run = wait = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                v = f.read().split()
                run += int(v[0])
                wait += int(v[1])
    except (OSError, ValueError, IndexError):
        return None
    return run, wait


def task_cpu_ns(pid):
    v = task_sched_ns(pid)
    return v[0] if v else None


def system_cpu():
    """(busy, steal) ticks over all CPUs from /proc/stat. Busy is task time only
    (user, nice, system): irq and softirq time is left out because the sampling
    interrupts and the BPF program itself are accounted there."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (8 - len(v))
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = v[:8]
    return user + nice + system, steal


def wait_quiet():
    """Waits (at most QUIET_TIMEOUT s) until the machine is idle for 0.5 s, since
    nothing of ours runs between runs. Returns the seconds waited, or None on timeout."""
    start = time.monotonic()
    while True:
        b0 = system_cpu()[0]
        time.sleep(0.5)
        busy = (system_cpu()[0] - b0) / CLK_TCK / 0.5 * 100
        if busy < QUIET_PCT:
            return time.monotonic() - start
        if time.monotonic() - start > QUIET_TIMEOUT:
            return None


def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def bss_counters(ids, names):
    """{name: value} of the .bss variables names of the profiler's on_sample
    program among the BPF programs ids (each 0 when absent)."""
    for i in sorted(ids):
        p = bpftool_json("prog", "show", "id", str(i))
        if not p or p.get("name") != "on_sample":
            continue
        for m in p.get("map_ids", []):
            info = bpftool_json("map", "show", "id", str(m))
            if not info or not info.get("name", "").endswith(".bss"):
                continue
            for e in bpftool_json("map", "dump", "id", str(m)) or []:
                v = {}
                for d in e["formatted"]["value"][".bss"]:
                    v.update(d)
                return {k: v.get(k, 0) for k in names}
    return {k: 0 for k in names}


def bpf_prog_ids(pid):
    """Ids of the BPF programs whose fds pid holds (from /proc/PID/fdinfo)."""
    ids = set()
    d = "/proc/%d/fdinfo" % pid
    try:
        fds = os.listdir(d)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return ids


def bpftool_json(*args):
    r = subprocess.run(["bpftool"] + list(args) + ["-j"], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def target_events(map_ids):
    """Counter 0 (PYPROF_CNT_EVENTS: ticks that hit a profiled process), all CPUs."""
    for m in map_ids:
        info = bpftool_json("map", "show", "id", str(m))
        if not info or info.get("name") != "counters":
            continue
        for e in bpftool_json("map", "dump", "id", str(m)) or []:
            f = e.get("formatted", e)
            if f.get("key") == 0:
                return sum(v["value"] for v in f["values"])
    return None


def bpf_prog_stats(ids, name="on_sample"):
    """Summed (run_time_ns, run_cnt, target events) of the programs in ids called name.

    Matching by the ids the profiler's own fds hold, not by name alone: other
    pybpfprof instances on the machine load programs with the same name."""
    run_ns = cnt = events = found = 0
    for i in sorted(ids):
        p = bpftool_json("prog", "show", "id", str(i))
        if not p or p.get("name") != name:
            continue
        found += 1
        run_ns += p.get("run_time_ns", 0)
        cnt += p.get("run_cnt", 0)
        events += target_events(p.get("map_ids", [])) or 0
    if not found:
        raise BenchError("no BPF program named %s among ids %s" % (name, sorted(ids)))
    return run_ns, cnt, events


# ---------------------------------------------------------------- one run

def read_line(proc, timeout, what):
    r, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if r else ""
    if not line:
        raise BenchError("workload: no %s line within %.0f s (exit status %s)"
                         % (what, timeout, proc.poll()))
    return line.strip()


def stop_profiler(prof, timeout=15.0):
    """SIGINT, then reap with wait4 for the child's rusage."""
    prof.send_signal(signal.SIGINT)
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(prof.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            prof.kill()
            pid, status, ru = os.wait4(prof.pid, 0)
            prof.returncode = os.waitstatus_to_exitcode(status)
            raise BenchError("pybpfprof did not stop within %.0f s of SIGINT" % timeout)
        time.sleep(0.01)
    prof.returncode = os.waitstatus_to_exitcode(status)
    return ru


class TimerControl:
    """The control run: the same cpu-clock perf events pybpfprof opens (one per
    CPU, period 1e9/hz ns) with nothing attached, so the timer interrupts fire
    and do nothing. Its slowdown is the floor that any sampler at that rate
    pays on this machine, before a single BPF instruction."""
    NR = {"x86_64": 298, "aarch64": 241}

    def __init__(self, hz):
        nr = self.NR.get(platform.machine())
        if nr is None:
            raise BenchError("control run: no perf_event_open number for %s"
                             % platform.machine())
        libc = ctypes.CDLL(None, use_errno=True)
        # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type SOFTWARE,
        # config CPU_CLOCK, sample_period, then zeros (enabled, no sample_type).
        attr = ctypes.create_string_buffer(struct.pack("=IIQQ", 1, 64, 0, 1000000000 // hz)
                                           + bytes(40))
        self.fds = []
        for cpu in range(os.cpu_count()):
            fd = libc.syscall(nr, attr, -1, cpu, -1, 8)    # PERF_FLAG_FD_CLOEXEC
            if fd < 0:
                e = ctypes.get_errno()
                if e == 19:                                 # ENODEV: offline CPU
                    continue
                self.close()
                raise BenchError("control run: perf_event_open on CPU %d: %s"
                                 % (cpu, os.strerror(e)))
            self.fds.append(fd)

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def child_setup(cpu):
    """preexec_fn for the workload (cpu 1) and pybpfprof (cpu 0): BENCH_PIN, BENCH_NICE."""
    if not PIN and not NICE:
        return None

    def setup():
        if PIN:
            os.sched_setaffinity(0, {cpu})
        if NICE:
            os.setpriority(os.PRIO_PROCESS, 0, NICE)
    return setup


def run_once(hz, tmpdir, tag, bpf_stats=False, control=False):
    """One workload run: unprofiled (hz=0), with pybpfprof -F hz attached, or
    (control) with bare cpu-clock events at hz and no profiler."""
    timer = None
    try:
        if control:
            timer = TimerControl(hz)
        return run_workload(0 if control else hz, tmpdir, tag, bpf_stats)
    finally:
        if timer:
            timer.close()


def run_workload(hz, tmpdir, tag, bpf_stats):
    cmd = [PYTHON, WORKLOAD] + (["--iterations", ITERATIONS] if ITERATIONS else [])
    w = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         preexec_fn=child_setup(1))
    prof = None
    res = {"hz": hz, "tag": tag}
    try:
        if read_line(w, 30, "ready") != "ready":
            raise BenchError("workload: expected 'ready'")
        if hz:
            out = os.path.join(tmpdir, "%s.json" % tag)
            errpath = os.path.join(tmpdir, "%s.err" % tag)
            with open(errpath, "w") as errf:
                t_launch = time.monotonic()
                prof = subprocess.Popen([PROF, "-p", str(w.pid), "-F", str(hz), "-f", "json",
                                         "-o", out], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=errf,
                                        preexec_fn=child_setup(0))
        time.sleep(WAIT_S)
        if prof and prof.poll() is not None:
            with open(errpath) as f:
                raise BenchError("pybpfprof exited early (status %s): %s"
                                 % (prof.returncode, f.read().strip()))
        ids = bpf_prog_ids(prof.pid) if bpf_stats else None

        # The timed window: from "go" to the result line.
        b0 = bpf_prog_stats(ids) if bpf_stats else None
        sys0 = system_cpu()
        wq0 = task_sched_ns(w.pid)
        wc0 = wq0[0] if wq0 else None
        pc0 = task_cpu_ns(prof.pid) if prof else 0
        t0 = time.monotonic()
        w.stdin.write("go\n")
        w.stdin.flush()
        line = read_line(w, 600, "result")
        t1 = time.monotonic()
        wq1 = task_sched_ns(w.pid)
        wc1 = wq1[0] if wq1 else None
        pc1 = task_cpu_ns(prof.pid) if prof else 0
        sys1 = system_cpu()
        b1 = bpf_prog_stats(ids) if bpf_stats else None

        f = line.split()
        if len(f) != 6 or f[0] != "elapsed" or f[4] != "chunks":
            raise BenchError("workload: unexpected line %r" % line)
        res["elapsed_s"] = float(f[1])
        res["checksum"] = int(f[3])
        chunks = sorted(float(x) for x in f[5].split(",")) if f[5] != "-" else []
        # Speed when the host left the vCPU alone: the median of the 3 fastest chunks.
        res["fast_chunk_s"] = statistics.median(chunks[:3]) if chunks else res["elapsed_s"]
        window_ns = (t1 - t0) * 1e9
        res["window_s"] = t1 - t0
        # Time the workload was runnable but not running: others (or pybpfprof) had its CPU.
        res["runq_wait_ms"] = (wq1[1] - wq0[1]) / 1e6 if wq0 and wq1 else float("nan")
        busy = (sys1[0] - sys0[0]) * 1e9 / CLK_TCK
        ours = (wc1 - wc0) + (pc1 - pc0) if None not in (wc0, wc1, pc0, pc1) else 0
        res["foreign_cpu_pct"] = max(0.0, (busy - ours) / window_ns * 100)
        res["steal_pct"] = (sys1[1] - sys0[1]) * 1e9 / CLK_TCK / window_ns * 100
        if prof:
            if pc0 is None or pc1 is None:
                raise BenchError("pybpfprof exited during the timed work")
            res["prof_cpu_sampling_pct"] = (pc1 - pc0) / window_ns * 100
            res["vm_hwm_kb"] = vm_hwm_kb(prof.pid)
            ru = stop_profiler(prof)
            res["prof_life_s"] = time.monotonic() - t_launch
            res["prof_cpu_life_ms"] = (ru.ru_utime + ru.ru_stime) * 1e3
            res["maxrss_kb"] = ru.ru_maxrss
            if prof.returncode:
                with open(errpath) as fe:
                    raise BenchError("pybpfprof exited with status %d: %s"
                                     % (prof.returncode, fe.read().strip()))
            with open(out) as fj:
                rep = json.load(fj)
            res["first_sample_ms"] = rep["first_sample_ms"]
            res["samples"] = rep["samples"]["total"]
            res["dropped"] = rep["samples"]["dropped"]
            if res["samples"] <= 0:
                raise BenchError("%s: pybpfprof took no sample: the profiler was not on"
                                 % tag)
            if bpf_stats:
                res["bpf_run_ns"] = b1[0] - b0[0]
                res["bpf_run_cnt"] = b1[1] - b0[1]
                res["bpf_events"] = b1[2] - b0[2]
                res["bpf_window_ns"] = window_ns
        w.stdin.write("\n")
        w.stdin.close()
        w.wait(timeout=30)
        return res
    finally:
        if prof and prof.returncode is None:
            prof.kill()
            prof.wait()
        if w.poll() is None:
            w.kill()
            w.wait()


# ---------------------------------------------------------------- figures

def pct(ratio):
    return (ratio - 1.0) * 100.0


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(runs, stats_run):
    none = [r for r in runs if r["hz"] == 0]
    s = {"rounds": len(none), "unprofiled_median_s": median([r["elapsed_s"] for r in none])}
    t_none = [r["elapsed_s"] for r in none]
    # Noise floor: how much two back-to-back unprofiled runs differ.
    s["noise_pct"] = median([abs(b / a - 1) * 100 for a, b in zip(t_none, t_none[1:])])
    s["none_range_pct"] = ((max(t_none) - min(t_none)) / s["unprofiled_median_s"] * 100
                           if t_none else float("nan"))
    for hz in RATES:
        prof = [r for r in runs if r["hz"] == hz]
        sl = [pct(p["elapsed_s"] / n["elapsed_s"]) for p, n in zip(prof, none)]
        fc = [pct(p["fast_chunk_s"] / n["fast_chunk_s"]) for p, n in zip(prof, none)]
        s[hz] = {
            "slowdown": sl,
            "slowdown_median": median(sl),
            "fast": fc,
            "first_ms": [p["first_sample_ms"] for p in prof],
            "cpu_sampling_pct": median([p["prof_cpu_sampling_pct"] for p in prof]),
            "cpu_life_ms": median([p["prof_cpu_life_ms"] for p in prof]),
            "life_s": median([p["prof_life_s"] for p in prof]),
            "maxrss_kb": max(p["maxrss_kb"] for p in prof),
            "hwm_kb": max(p["vm_hwm_kb"] or 0 for p in prof),
            "samples": median([p["samples"] for p in prof]),
            "dropped": sum(p["dropped"] for p in prof),
        }
    by = {}
    for r in runs:
        by.setdefault(r["round"], []).append(r["foreign_cpu_pct"])
    quiet = [rd for rd in sorted(by) if max(by[rd]) < QUIET_PCT]
    s["quiet_rounds"] = quiet
    for hz in RATES:
        q = [pct(p["elapsed_s"] / n["elapsed_s"]) for p, n in zip(
            [r for r in runs if r["hz"] == hz], none) if p["round"] in quiet]
        s[hz]["slowdown_quiet"] = q
    ctl = [r for r in runs if r["hz"] == CONTROL_HZ]
    s["control"] = [pct(c["elapsed_s"] / n["elapsed_s"]) for c, n in zip(ctl, none)]
    s["control_fast"] = [pct(c["fast_chunk_s"] / n["fast_chunk_s"]) for c, n in zip(ctl, none)]
    fn = [r["fast_chunk_s"] for r in none]
    s["fast_noise_pct"] = median([abs(b / a - 1) * 100 for a, b in zip(fn, fn[1:])])
    s["first_ms"] = [x for hz in RATES for x in s[hz]["first_ms"]]
    s["late_attach"] = sum(1 for x in s["first_ms"] if x >= WAIT_S * 1000)
    s["foreign_max"] = max(r["foreign_cpu_pct"] for r in runs)
    s["foreign_median"] = median([r["foreign_cpu_pct"] for r in runs])
    s["steal_max"] = max(r["steal_pct"] for r in runs)
    if stats_run:
        cnt = stats_run["bpf_run_cnt"]
        s["bpf_ns_per_run"] = stats_run["bpf_run_ns"] / cnt if cnt else float("nan")
        s["bpf_run_cnt"] = cnt
        s["bpf_events"] = stats_run["bpf_events"]
        s["bpf_ns_per_event"] = (stats_run["bpf_run_ns"] / s["bpf_events"]
                                 if s["bpf_events"] else float("nan"))
        s["bpf_window_s"] = stats_run["bpf_window_ns"] / 1e9
        s["bpf_cpu_pct"] = stats_run["bpf_run_ns"] / stats_run["bpf_window_ns"] * 100
        s["bpf_share_of_work_pct"] = stats_run["bpf_run_ns"] / 1e9 / stats_run["elapsed_s"] * 100
    return s


def verdict_slowdown(s, hz):
    m = s[hz]["slowdown_median"]
    v = "met" if m <= GOAL_SLOWDOWN[hz] else "NOT met"
    if abs(m) <= s["noise_pct"]:
        v += " (below noise floor)"
    return v


def rows(s):
    """(figure, measured, spread, goal, status) for the table."""
    out = []
    for hz in RATES:
        d = s[hz]
        out.append(("slowdown at %d Hz" % hz, "%+.2f %%" % d["slowdown_median"],
                    "min %+.2f, max %+.2f" % (min(d["slowdown"]), max(d["slowdown"])),
                    "<= %.1f %%" % GOAL_SLOWDOWN[hz], verdict_slowdown(s, hz)))
    if s["control"]:
        c = s["control"]
        out.append(("control: 999 Hz timer alone", "%+.2f %%" % median(c),
                    "min %+.2f, max %+.2f; cpu-clock events, no BPF" % (min(c), max(c)),
                    "", "reference"))
    for hz in RATES:
        f = s[hz]["fast"]
        out.append(("fastest-chunks slowdown, %d Hz" % hz, "%+.2f %%" % median(f),
                    "min %+.2f, max %+.2f; 3 fastest of ~85 ms chunks" % (min(f), max(f)),
                    "", "cross-check"))
    if s["control_fast"]:
        c = s["control_fast"]
        out.append(("fastest-chunks, timer alone", "%+.2f %%" % median(c),
                    "min %+.2f, max %+.2f" % (min(c), max(c)), "", "reference"))
    if len(s["quiet_rounds"]) < s["rounds"]:
        for hz in RATES:
            q = s[hz]["slowdown_quiet"]
            out.append(("  same, quiet rounds only, %d Hz" % hz,
                        "%+.2f %%" % median(q) if q else "-",
                        ("min %+.2f, max %+.2f (%d of %d rounds)"
                         % (min(q), max(q), len(q), s["rounds"])) if q else
                        "no round had others' CPU < %.0f %%" % QUIET_PCT, "", ""))
    fm = s["first_ms"]
    out.append(("first sample", "%.1f ms" % median(fm),
                "min %.1f, max %.1f (n=%d)" % (min(fm), max(fm), len(fm)),
                "<= %.0f ms" % GOAL_FIRST_MS,
                "met" if median(fm) <= GOAL_FIRST_MS else "NOT met"))
    if "bpf_ns_per_run" in s:
        out.append(("BPF program, mean per run (999 Hz)", "%.0f ns" % s["bpf_ns_per_run"],
                    "run_time_ns / run_cnt; run_cnt %d in %.2f s, all CPUs"
                    % (s["bpf_run_cnt"], s["bpf_window_s"]), "", ""))
        out.append(("BPF program, per target sample", "<= %.0f ns" % s["bpf_ns_per_event"],
                    "run_time_ns / %d ticks that hit the target" % s["bpf_events"], "", ""))
        out.append(("BPF CPU time (999 Hz)", "%.2f %% of wall" % s["bpf_cpu_pct"],
                    "run_time_ns / window, as %% of one core (%.2f %% of the work time)"
                    % s["bpf_share_of_work_pct"], "", ""))
    for hz in RATES:
        out.append(("pybpfprof CPU while sampling, %d Hz" % hz,
                    "%.2f %% of a core" % s[hz]["cpu_sampling_pct"], "median", "", ""))
    for hz in RATES:
        out.append(("pybpfprof CPU whole life, %d Hz" % hz,
                    "%.0f ms" % s[hz]["cpu_life_ms"],
                    "median, over %.1f s (start, sample, report)" % s[hz]["life_s"], "", ""))
    for hz in RATES:
        out.append(("pybpfprof peak RSS, %d Hz" % hz, "%.1f MiB" % (s[hz]["maxrss_kb"] / 1024),
                    "max ru_maxrss; VmHWM before stop %.1f MiB" % (s[hz]["hwm_kb"] / 1024),
                    "", ""))
    for hz in RATES:
        out.append(("samples per run, %d Hz" % hz, "%.0f" % s[hz]["samples"],
                    "median; %d dropped in all runs" % s[hz]["dropped"], "", ""))
    out.append(("noise floor (unprofiled vs unprofiled)", "%.2f %%" % s["noise_pct"],
                "median abs. difference of consecutive runs; range %.2f %%" % s["none_range_pct"],
                "", ""))
    out.append(("  same, fastest chunks", "%.2f %%" % s["fast_noise_pct"],
                "median abs. difference of consecutive runs", "", ""))
    return out


def notes(s):
    n = []
    if s["late_attach"]:
        n.append("%d profiled run(s) got their first sample after the work had started "
                 "(first_sample_ms >= BENCH_ATTACH_WAIT %.0f ms)"
                 % (s["late_attach"], WAIT_S * 1000))
    if s["foreign_max"] > FOREIGN_WARN:
        n.append("other processes used up to %.0f %% of a core during some runs (median "
                 "%.0f %%): the machine was not quiet; rounds where they stayed under %.0f %% "
                 "are summarized separately" % (s["foreign_max"], s["foreign_median"],
                                                QUIET_PCT))
    if s["steal_max"] > 5:
        n.append("hypervisor steal time reached %.0f %% of a core" % s["steal_max"])
    return n


def text_table(s, header):
    r = rows(s)
    w = [max(len(x[i]) for x in r + [("figure", "measured", "spread", "goal", "")])
         for i in range(5)]
    lines = [header, ""]
    fmt = "  ".join("%%-%ds" % x for x in w)
    lines.append(fmt % ("figure", "measured", "spread", "goal", "status"))
    lines.append(fmt % tuple("-" * x for x in w))
    for x in r:
        lines.append((fmt % x).rstrip())
    for n in notes(s):
        lines.append("note: " + n)
    return "\n".join(lines)


def markdown(s, runs, env):
    md = ["### Overhead, %s" % env["date"], ""]
    md.append("%s; kernel %s; %s; %d rounds interleaved (none, 99 Hz, 999 Hz%s); workload "
              "%.2f s unprofiled (median); %.1f s between starting pybpfprof and starting "
              "the work%s." % (env["machine"], env["kernel"], env["python"], s["rounds"],
                               ", timer-only control" if s["control"] else "",
                               s["unprofiled_median_s"], WAIT_S,
                               ("; workload pinned to CPU 1, pybpfprof to CPU 0" if PIN else "")
                               + ("; workload and pybpfprof at nice %d" % NICE if NICE else "")))
    md.append("")
    md.append("| figure | measured | spread | goal | status |")
    md.append("|---|---|---|---|---|")
    for x in rows(s):
        md.append("| " + " | ".join(x) + " |")
    md.append("")
    for n in notes(s):
        md.append("- note: " + n)
    if notes(s):
        md.append("")
    md.append("Per round: workload seconds; slowdown against the same round's unprofiled "
              "run; first sample; run-queue wait of the workload during the timed work "
              "(none / 99 / 999, ms: time it was runnable but another task had its CPU); "
              "highest CPU use of other processes during the round's runs, % of a core"
              + ("; the control run's slowdown (cpu-clock events at 999 Hz on every CPU, "
                 "nothing attached)" if s["control"] else "")
              + "; the same slowdowns computed from each run's 3 fastest ~85 ms chunks.")
    md.append("")
    md.append("| round | none (s) | 99 Hz (s) | 99 Hz | 999 Hz (s) | 999 Hz | first sample "
              "99 / 999 (ms) | run-queue wait (ms) | others' CPU |"
              + (" timer-only 999 Hz |" if s["control"] else "")
              + " fastest chunks 99 / 999" + (" / timer" if s["control"] else "") + " |")
    md.append("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if s["control"] else ""))
    by = {}
    for r in runs:
        by.setdefault(r["round"], {})[r["hz"]] = r
    for rd in sorted(by):
        a, b, c = by[rd][0], by[rd][99], by[rd][999]
        md.append("| %d | %.3f | %.3f | %+.2f %% | %.3f | %+.2f %% | %.1f / %.1f "
                  "| %.0f / %.0f / %.0f | %.0f %% |" % (
                      rd, a["elapsed_s"], b["elapsed_s"], pct(b["elapsed_s"] / a["elapsed_s"]),
                      c["elapsed_s"], pct(c["elapsed_s"] / a["elapsed_s"]),
                      b["first_sample_ms"], c["first_sample_ms"], a["runq_wait_ms"],
                      b["runq_wait_ms"], c["runq_wait_ms"],
                      max(a["foreign_cpu_pct"], b["foreign_cpu_pct"], c["foreign_cpu_pct"]))
                  + (" %+.2f %% |" % pct(by[rd][CONTROL_HZ]["elapsed_s"] / a["elapsed_s"])
                     if CONTROL_HZ in by[rd] else "")
                  + " " + " / ".join("%+.2f %%" % pct(by[rd][k]["fast_chunk_s"]
                                                      / a["fast_chunk_s"])
                                     for k in (99, 999, CONTROL_HZ) if k in by[rd]) + " |")
    md.append("")
    return "\n".join(md)


def environment():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    py = subprocess.run([PYTHON, "-c", "import sys, platform; print('CPython', "
                         "platform.python_version(), sys.executable)"],
                        capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "kernel": platform.release(),
            "machine": "%d CPUs (%s)" % (os.cpu_count(), model),
            "python": py}


# ---------------------------------------------------------------- main

def set_stats(value):
    with open(STATS_SYSCTL, "w") as f:
        f.write("%d\n" % value)


def main():
    if os.geteuid() != 0:
        log("overhead: needs root (BPF, perf events): run `sudo make bench`")
        return 2
    for path in (PROF, PYTHON):
        if not os.access(path, os.X_OK):
            log("overhead: %s is missing or not executable" % path)
            return 2
    env = environment()
    t_start = time.monotonic()
    runs = []
    stats_run = None
    with tempfile.TemporaryDirectory(prefix="pybpfprof-bench.") as tmpdir:
        log("overhead: %s, kernel %s, %s" % (env["machine"], env["kernel"], env["python"]))
        log("overhead: warm-up run (discarded)")
        warm = run_once(0, tmpdir, "warmup")
        log("overhead: workload %.3f s unprofiled; %d rounds of none / 99 Hz / 999 Hz"
            % (warm["elapsed_s"], ROUNDS))
        noisy_starts = 0
        for rd in range(1, ROUNDS + 1):
            waited = wait_quiet() if QUIET_TIMEOUT > 0 else 0
            if waited is None:
                noisy_starts += 1
                log("  round %d: the machine did not go quiet within %.0f s; running anyway"
                    % (rd, QUIET_TIMEOUT))
            elif waited > 1:
                log("  round %d: waited %.0f s for the machine to go quiet" % (rd, waited))
            line = []
            for hz in (0,) + RATES + ((CONTROL_HZ,) if CONTROL else ()):
                control = hz == CONTROL_HZ
                r = run_once(999 if control else hz, tmpdir, "r%d-%d" % (rd, hz),
                             control=control)
                r["hz"] = hz
                r["round"] = rd
                if r["checksum"] != warm["checksum"]:
                    raise BenchError("workload checksum changed: %d != %d"
                                     % (r["checksum"], warm["checksum"]))
                runs.append(r)
                line.append("%s %.3f s" % (MODE_NAME.get(hz, "%d Hz" % hz), r["elapsed_s"]) +
                            " [rq %.0f ms, others %.0f %%]" % (r["runq_wait_ms"],
                                                             r["foreign_cpu_pct"]) +
                            ("" if hz in MODE_NAME else " (first %.0f ms, %d samples)"
                             % (r["first_sample_ms"], r["samples"])))
            log("  round %d: %s" % (rd, "; ".join(line)))
        with open(STATS_SYSCTL) as f:
            prev = int(f.read().strip() or 0)
        log("overhead: BPF run-time stats run at 999 Hz (kernel.bpf_stats_enabled=1, "
            "was %d)" % prev)
        if QUIET_TIMEOUT > 0:
            wait_quiet()
        try:
            set_stats(1)
            stats_run = run_once(999, tmpdir, "bpfstats", bpf_stats=True)
        finally:
            set_stats(prev)
    s = summarize(runs, stats_run)
    took = time.monotonic() - t_start
    header = ("pybpfprof overhead: %d rounds interleaved, workload %.2f s unprofiled "
              "(median), %s, kernel %s; benchmark took %.0f s"
              % (s["rounds"], s["unprofiled_median_s"], env["python"].split(" /")[0],
                 env["kernel"], took) + ("; PINNED (workload CPU 1, pybpfprof CPU 0)"
                                         if PIN else "")
              + ("; workload and pybpfprof at nice %d" % NICE if NICE else ""))
    print()
    print(text_table(s, header))
    if os.environ.get("BENCH_OUT"):
        with open(os.environ["BENCH_OUT"], "w") as f:
            f.write(markdown(s, runs, env))
        log("overhead: Markdown written to %s" % os.environ["BENCH_OUT"])
    if os.environ.get("BENCH_RAW"):
        with open(os.environ["BENCH_RAW"], "w") as f:
            json.dump({"env": env, "runs": runs, "bpf_stats_run": stats_run}, f, indent=1)
    missed = [hz for hz in RATES if s[hz]["slowdown_median"] > GOAL_SLOWDOWN[hz]]
    if median(s["first_ms"]) > GOAL_FIRST_MS:
        missed.append("first sample")
    if missed and os.environ.get("BENCH_STRICT") == "1":
        return 3
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        log("overhead: error: %s" % e)
        sys.exit(1)
    except KeyboardInterrupt:
        log("overhead: interrupted")
        sys.exit(130)
