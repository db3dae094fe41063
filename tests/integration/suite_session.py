# A run's end and its report's head: the target exiting mid-run, SIGINT and
# SIGTERM stopping the profiler with a complete report, the first sample's
# delay, the text report's header.

import os
import re
import signal
import tempfile
import time

from harness import (CpuMeter, Profiler, RUN_SLACK, Reaper, Workloads, check, check_cpu_samples,
                     cpu_seconds, interpreter, load_report, process,
                     profile_json, python_version, run_profiler, sanity, test)


@test
def target_exits():
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "exits.py", 1.5)
        cpu0 = cpu_seconds(p.pid)
        reaper = Reaper(p)
        out = os.path.join(tmp, "x.json")
        r = run_profiler(["-p", p.pid, "-d", 20, "-o", out], timeout=20 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        check(r.elapsed < 5, f"took {r.elapsed:.1f}s after a 1.5 s target exited")
        rep = load_report(out)
        reaper.join(timeout=10)
        check(reaper.cpu is not None, "workload not reaped")
    sanity(rep, 99)
    proc = process(rep, p.pid)
    check(proc["exited"] is True, f"exited is {proc['exited']!r}")
    check(rep["duration_s"] < 5, f"duration_s {rep['duration_s']}")
    # Samples follow the CPU the workload used from the profiler's start
    # to its exit, as for a live target.
    n, cpu = proc["samples"], reaper.cpu - cpu0
    # both CPU readings come from /proc, in 10 ms ticks
    check_cpu_samples(n, cpu, 99, "the exited target", cpu_err=0.02)
    return (f"finished in {r.elapsed:.2f}s, exited true, {n} samples "
            f"for {cpu:.2f} s of CPU")


def stop_with(sig):
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        out = os.path.join(tmp, "x.json")
        with CpuMeter(p.pid) as cpu:
            prof = Profiler(["-p", p.pid, "-o", out])
            try:
                t_att = prof.wait_attached()
                check(prof.watch(2), f"profiler exited early ({prof.rc})")
                t_sig = time.monotonic()
                prof.p.send_signal(sig)
                rc = prof.wait(10)
            finally:
                prof.kill()
        check(rc == 0, f"exit {rc} after {sig.name}: {prof.stderr().strip()[-300:]}")
        rep = load_report(out)
    sanity(rep, 99)
    total, dur = rep["samples"]["total"], rep["duration_s"]
    # The sampling lasts from the attach to the signal (-v's "attached" line
    # comes just after sampling began; a loaded host may delay the line).
    want = t_sig - t_att
    check(want - 0.3 <= dur <= want + 0.3,
          f"duration_s {dur}, signal sent {want:.2f} s after the attach")
    # as many as the CPU the target got: a loaded host gives it less than one
    check(total >= 20, f"only {total} samples")
    cpu.check_samples(total, 99, dur)
    return f"exit 0, {total} samples, duration_s {dur}"


@test
def sigint():
    return stop_with(signal.SIGINT)


@test
def sigterm():
    return stop_with(signal.SIGTERM)


@test(alone=True)  # a latency: what else runs on the machine delays it
def first_sample():
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        rep = profile_json([p.pid], 1)
    ms = rep["first_sample_ms"]
    check(isinstance(ms, (int, float)) and 0 < ms < 300, f"first_sample_ms {ms!r}")
    return f"first sample after {ms} ms"


@test
def report_header():
    py = interpreter("debian")
    version = python_version(py)
    freq = 199  # not the default, so the header must really echo -F
    with Workloads() as wl:
        p = wl.start(py, "spin.py", "alpha")
        with CpuMeter(p.pid) as cpu:
            r = run_profiler(["-p", p.pid, "-d", 1, "-F", freq, "-f", "text"],
                             timeout=1 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    lines = r.stdout.splitlines()
    check(lines, "empty report")
    head = lines[0]
    hm = re.fullmatch(rf"pybpfprof \S+: cpu profile, 1 process, ([\d.]+) s at {freq} Hz", head)
    check(hm, f"header line {head!r}")
    # The header names each pid with its Python version and executable.
    pids_line = rf"pids: {p.pid} \(Python {re.escape(version)}, {re.escape(str(py))}\)"
    check(any(re.fullmatch(pids_line, ln) for ln in lines[:5]),
          f"no '{pids_line}' line near the top: {lines[:5]}")
    m = next(filter(None, (re.fullmatch(
        r"samples: (\d+) total, (\d+) dropped, (\d+) truncated, (\d+) unresolved.*", ln)
        for ln in lines[:5])), None)
    check(m, f"no samples counts line near the top: {lines[:5]}")
    total = int(m.group(1))
    cpu.check_samples(total, freq, float(hm.group(1)))
    # The per-process block names the pid and then its Python version.
    block = "\n".join(lines)
    check(re.search(rf"^pid {p.pid}\s.*\n\s+Python {re.escape(version)}\b", block, re.M),
          f"no 'pid {p.pid}' block with 'Python {version}'")
    return f"{head!r}; {m.group(0)!r}; Python {version}"
