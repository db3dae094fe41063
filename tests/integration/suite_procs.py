# Many processes (issue 5): -a, launch mode, --subprocesses, short-lived
# processes.
#
# -a sees every Python on the host, including other test runs in parallel:
# every assertion here looks only at the pids this test started.

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from pathlib import Path

from harness import (Fail, PROFILER, Profiler, READY_TIMEOUT, ROOT_TARGETS, RUN_SLACK, Skip, Workloads,
                     check, check_cpu_samples, expect_error, functions, interpreter,
                     load_report, per_build, process, profile_json, python_version,
                     read_stdout_until, run_profiler, sanity, test)


class Background(Profiler):
    """A profiler run in the background (for -a): started, waited for until
    its kernel side is attached, stopped with SIGINT, its JSON read."""

    def __init__(self, args, freq):
        self.freq = freq
        self.out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
        super().__init__([*args, "-F", freq, "-f", "json", "-o", self.out.name])

    def finish(self, timeout=RUN_SLACK, interrupt=True):
        """interrupt: stop it now with SIGINT; else let its -d run out."""
        if interrupt and self.running():
            self.p.send_signal(signal.SIGINT)
        self.wait(timeout)
        check(self.rc == 0, f"profiler exit {self.rc}: {self.stderr().strip()[-300:]}")
        rep = load_report(self.out.name)
        os.unlink(self.out.name)
        sanity(rep, self.freq)
        return rep

    def kill(self):
        super().kill()
        if os.path.exists(self.out.name):
            os.unlink(self.out.name)


def sections(rep, pids):
    """The report's sections of these pids, by pid (an exec'd pid may have
    two: its sections' samples are summed into the last one's view)."""
    by = {}
    for proc in rep["processes"]:
        if proc["pid"] in pids:
            by.setdefault(proc["pid"], []).append(proc)
    return by


def check_workers(rep, workers, func, min_samples, cpu=None, freq=None):
    """Every worker appears, and func holds most of its samples; with cpu
    (pid -> CPU seconds the worker spent in func), as many as it got."""
    by = sections(rep, set(workers))
    check(set(by) == set(workers), f"workers {sorted(set(workers) - set(by))} missing "
          f"from the report (pids: {sorted(p['pid'] for p in rep['processes'])})")
    shown = []
    for pid in workers:
        n = sum(p["samples"] for p in by[pid])
        hot = sum(functions(p).get(func, {}).get("self", 0) for p in by[pid])
        check(n >= min_samples, f"worker {pid}: {n} samples, expected >= {min_samples}")
        check(hot > 0.5 * n, f"worker {pid}: {func} has {hot} of {n} samples")
        if cpu:
            # the workload's figure is rounded to 1 ms
            check_cpu_samples(hot, cpu[pid], freq, f"worker {pid}: {func}", cpu_err=0.001)
        shown.append(f"{pid}:{hot}/{n}")
    return " ".join(shown)


def pool_workers(text):
    m = re.search(r"^workers: ([\d ]+)$", text, re.M)
    check(m, f"no workers line in the workload's output: {text[:300]!r}")
    pids = [int(x) for x in m.group(1).split()]
    check(len(pids) == 4, f"expected 4 distinct workers, got {pids}")
    return pids


def start_pool(wl, build, method, secs, mode=None):
    """The pool workload, started and read up to its workers line (LATE:
    up to its ready line, no workers yet)."""
    interp = interpreter(build)
    p = wl.spawn(interp.argv("procs_pool.py", [method, secs, *([mode] if mode else [])]),
                 wait_ready=False, stdin=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if mode == "LATE":
        check(line == "ready\n", f"workload said {line!r}")
        return p, None
    return p, pool_workers(line)


def done_cpu(text):
    """pid -> CPU seconds in pool_work, from the workload's done line."""
    m = re.search(r"^done: (.*)$", text, re.M)
    check(m, f"no done line in the workload's output: {text[:300]!r}")
    return {int(a): float(b) for a, b in (x.split(":") for x in m.group(1).split())}


@test
def procs_pid_subprocesses_existing():
    """-p PARENT --subprocesses: workers forked before the profiler started."""
    freq, secs = 199, 2
    with Workloads() as wl:
        p, workers = start_pool(wl, "debian", "fork", secs + 4)
        rep = profile_json([p.pid], secs, freq, ["--subprocesses"])
    return check_workers(rep, workers, "pool_work", 10)


@test
def procs_pid_subprocesses_late():
    """-p PARENT --subprocesses: a spawn pool started after the profiler;
    the run ends by itself when the parent and its workers have exited."""
    freq, secs = 199, 1.5
    with Workloads() as wl:
        p, _ = start_pool(wl, "debian", "spawn", secs, "LATE")
        bg = Background(["-p", p.pid, "--subprocesses"], freq)
        try:
            bg.wait_attached()
            p.stdin.write("go\n")
            p.stdin.flush()
            out, _ = p.communicate(timeout=60)
            rep = bg.finish(interrupt=False)
        finally:
            bg.kill()
    workers = pool_workers(out)
    cpu = done_cpu(out)
    return check_workers(rep, workers, "pool_work", 10, cpu, freq)


@test(alone=True)
def procs_all_pool():
    freq, secs = 199, 2
    with Workloads() as wl:
        p, workers = start_pool(wl, "debian", "fork", secs + 4)
        bg = Background(["-a", "-d", secs], freq)
        try:
            bg.wait_attached()
            rep = bg.finish(timeout=secs + RUN_SLACK, interrupt=False)
        finally:
            bg.kill()
    return check_workers(rep, workers, "pool_work", 10)


def launch_pool(build, method, freq=499, secs=1.5):
    interp = interpreter(build)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        r = run_profiler(["--subprocesses", "-v", "-F", freq, "-f", "json", "-o", out, "--",
                          *interp.argv("procs_pool.py", [method, secs])],
                         timeout=secs + 120)  # the pool's CPU seconds, on a loaded machine
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        workers = pool_workers(r.stdout)
        rep = load_report(out)
    sanity(rep, freq)
    m = re.search(r"^done: (.*)$", r.stdout, re.M)
    check(m, f"the command's stdout did not pass through: {r.stdout[:300]!r}")
    cpu = {int(a): float(b) for a, b in (x.split(":") for x in m.group(1).split())}
    check(set(cpu) == set(workers), f"work ran in {sorted(cpu)}, not in {workers}")
    # no section without samples: a forked child that only exec'd leaves none
    empty = [p["pid"] for p in rep["processes"] if not p["samples"] and p["exited"]]
    try:
        shown = check_workers(rep, workers, "pool_work", 10, cpu, freq)
    except Fail as e:
        # how each process was found and profiled, and the run's counters
        notes = [ln for ln in r.stderr.splitlines() if "pid " in ln or "counters" in ln or
                 "processes:" in ln]
        raise Fail(f"{e}; -v said: {notes[:20]}")
    total = rep["samples"]["total"]
    # spawned workers import a lot at start-up, and module bodies are freed
    # right after they run: a loaded machine may read some of them too late
    check(rep["samples"]["unresolved"] <= 0.15 * total,
          f"{rep['samples']['unresolved']} of {total} samples unresolved")
    check(not empty, f"sections without samples: {empty}")
    return (f"{shown}; {len(rep['processes'])} sections, "
            f"{rep['samples']['unresolved']}/{total} unresolved")


@test
def procs_subprocesses_fork():
    return launch_pool("debian", "fork")


@test
def procs_subprocesses_spawn():
    return launch_pool("debian", "spawn")


@test
def procs_subprocesses_forkserver():
    return launch_pool("debian", "forkserver")


@test
def procs_subprocesses_spawn_pyenv():
    return launch_pool("pyenv", "spawn")


def short_lived(build):
    """20 Python processes of 0.3 s, one after another, during an -a run."""
    freq, count, life = 499, 20, 0.3
    py = interpreter(build)
    pids = []
    bg = Background(["-a"], freq)
    try:
        bg.wait_attached()
        for _ in range(count):
            p = subprocess.run(py.argv("procs_short.py", [life]), stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=30)
            check(p.returncode == 0, f"workload failed: {p.stderr[-300:]!r}")
        # subprocess.run hides the pid: ask the kernel's view instead, by cmdline
        rep = bg.finish()
    finally:
        bg.kill()
    script = py.script_path("procs_short.py")
    mine = [proc for proc in rep["processes"] if script in proc["cmdline"]]
    seen = {proc["pid"] for proc in mine if proc["samples"]}
    samples = sum(proc["samples"] for proc in mine)
    unresolved = sum(proc["unresolved"] for proc in mine)
    hot = sum(functions(proc).get("short_work", {}).get("self", 0) for proc in mine)
    check(len(seen) >= 18, f"only {len(seen)} of {count} short-lived processes appear")
    check(samples and unresolved <= 0.05 * samples,
          f"{unresolved} of {samples} samples unresolved")
    check(hot >= 0.7 * samples, f"short_work holds {hot} of {samples} samples")
    return (f"{len(seen)}/{count} processes, {samples} samples, {unresolved} unresolved, "
            f"short_work {hot}")


@test(alone=True)
def procs_short_lived():
    return short_lived("debian")


@test(alone=True)
def procs_short_lived_pyenv():
    """The same with a shared-libpython build: registered once libpython is mapped."""
    return short_lived("pyenv")


@test
def procs_launch_exit_code():
    py = interpreter("debian")
    shown = []
    for code, want in ((7, 7), (0, 0), (-9, 128 + 9)):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "rep.json"
            argv = [str(PROFILER), "-f", "json", "-o", str(out), "--",
                    *py.argv("procs_exit.py", [code])]
            r = subprocess.run(argv, input="hello\n", capture_output=True, text=True,
                               timeout=30)
            check(r.returncode == want, f"exit code {r.returncode}, expected {want} "
                  f"(command exit {code}): {r.stderr.strip()[-300:]}")
            m = re.fullmatch(r"echo: hello\ncpu: ([\d.]+)\n", r.stdout)
            check(m, f"stdin/stdout not passed through: {r.stdout!r}")
            check("err\n" in r.stderr, f"stderr not passed through: {r.stderr!r}")
            rep = load_report(out)
        procs = rep["processes"]
        check(len(procs) == 1, f"{len(procs)} sections for one command")
        hot = functions(procs[0]).get("exit_work", {}).get("self", 0)
        check_cpu_samples(hot, float(m.group(1)), 99, "exit_work", cpu_err=0.001)
        shown.append(f"{code}->{r.returncode} ({hot} samples in exit_work)")
    expect_error(["--", "/nonexistent/command"], ["cannot run the command",
                                                  "no such file"])
    return "; ".join(shown)


@test
def procs_threads():
    freq, secs = 499, 1
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "threads.py")
        time.sleep(0.1)  # both threads named
        rep = profile_json([p.pid], secs, freq, ["--threads"])
        # A loaded machine may leave a worker without a sample in a short
        # run; the blocks are checked on a run where both have some.
        for _ in range(3):
            txt = run_profiler(["-p", p.pid, "-d", 0.5, "-F", freq, "--threads"],
                               timeout=RUN_SLACK)
            counts = dict(re.findall(r" (worker-[ab]) \((\d+)\)", txt.stdout))
            if txt.returncode or all(int(counts.get(n, 0)) for n in ("worker-a", "worker-b")):
                break
    proc = process(rep, p.pid)
    by_name = {t["name"]: t for t in proc["thread_functions"]}
    shown = []
    for name, func in (("worker-a", "thread_a_work"), ("worker-b", "thread_b_work")):
        check(name in by_name, f"no thread named {name}: {sorted(by_name)}")
        t = by_name[name]
        own = {f["qualname"]: f["self"] for f in t["functions"]}
        check(t["samples"] > 0.2 * proc["samples"], f"{name}: {t['samples']} of "
              f"{proc['samples']} samples")
        check(own.get(func, 0) >= 0.95 * t["samples"], f"{name}: {func} has "
              f"{own.get(func, 0)} of {t['samples']}: {own}")
        check(sum(own.values()) == t["samples"], f"{name}: self sums to "
              f"{sum(own.values())}, thread has {t['samples']}")
        shown.append(f"{name} {own[func]}/{t['samples']}")
    check(sum(t["samples"] for t in proc["thread_functions"]) == proc["samples"],
          "threads' samples do not add up to the process's")
    check(txt.returncode == 0, f"text run exit {txt.returncode}: {txt.stderr.strip()}")
    for name in ("worker-a", "worker-b"):
        # its Python name, then the name it gave itself (prctl)
        check(re.search(rf"^  Thread \d+ (.+ \(comm {name}\)|{name}): \d+ samples", txt.stdout,
                        re.M),
              f"no text block for thread {name}: {txt.stdout[:600]!r}")
    return "; ".join(shown)



def renamed_late(mode):
    """procs_rename_late.py MODE run with --threads at 199 Hz, told to start
    once attached, the profiler stopped once the thread is done (and, for
    "python", gone): its thread's entry in the report, with 0.6 s of CPU
    (a third of it is plenty on any load)."""
    freq = 199
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        p = wl.start(interpreter("debian"), "procs_rename_late.py", mode, 0.3)
        out = Path(d) / "r.json"
        prof = Profiler(["-p", p.pid, "-F", freq, "--threads", "-o", out])
        try:
            prof.wait_attached()
            os.kill(p.pid, signal.SIGUSR1)
            said = [read_stdout_until(p, lambda b: b.endswith(b"\n"), what,
                                      timeout=60).decode()
                    for what in (("done", "gone") if mode == "python" else ("done",))]
            prof.p.send_signal(signal.SIGINT)
            prof.wait(RUN_SLACK)
        finally:
            prof.kill()
        check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()[-300:]}")
        rep = load_report(out)
    m = re.fullmatch(r"done (\d+)\n", said[0])
    check(m and all(s == f"{w} {m.group(1)}\n" for s, w in zip(said[1:], ["gone"])),
          f"the workload said {said!r}")
    tid = int(m.group(1))
    threads = {t["tid"]: t for t in process(rep, p.pid)["threads"]}
    check(tid in threads, f"thread {tid} not in the report: {sorted(threads)}")
    t = threads[tid]
    check(t["samples"] >= 0.6 * freq / 3, f"thread {tid}: {t['samples']} samples")
    return t


@test
def procs_thread_renamed_late():
    """A thread sampled under the name it was born with, then renamed (as
    threading's workers name themselves once started): the report names it
    as it is at the end of the run, with all its samples."""
    t = renamed_late("comm")
    check(t["name"] == "renamed-late", f"thread {t['tid']} named {t['name']!r}, "
          f"not the name it took")
    return f"thread {t['tid']} {t['name']}: {t['samples']} samples"


@test
def procs_thread_pyname_late():
    """A thread sampled under threading's default name ("Thread-1 (late)"),
    that then names itself (as a server's handler does once it knows its
    connection) and ends before the run does: the report has the name it
    took, read while it lived, not the default one."""
    t = renamed_late("python")
    check(t.get("python_name") == "pyname-late", f"thread {t['tid']}'s Python name "
          f"{t.get('python_name')!r}, not the one it took")
    return f"thread {t['tid']} {t['python_name']}: {t['samples']} samples"


@test
def procs_merge():
    freq, secs = 199, 1
    py = interpreter("debian")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        r = run_profiler(["--subprocesses", "--merge", "-F", freq, "-o", out, "--",
                          *py.argv("procs_pool.py", ["fork", secs])], timeout=secs + 120)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        workers = pool_workers(r.stdout)
        rep = load_report(out)
    sanity(rep, freq)
    check(len(rep["processes"]) == 1, f"{len(rep['processes'])} sections with --merge")
    proc = rep["processes"][0]
    cpu = sum(float(x.split(":")[1])
              for x in re.search(r"^done: (.*)$", r.stdout, re.M).group(1).split())
    hot = functions(proc).get("pool_work", {}).get("self", 0)
    expect = check_cpu_samples(hot, cpu, freq, "merged pool_work", cpu_err=0.004)
    for pid in workers:
        check(f" {pid}" in proc["cmdline"], f"worker {pid} not named in {proc['cmdline']!r}")
    tids = {t["tid"] for t in proc["threads"]}
    check(set(workers) <= tids, f"workers' threads {workers} not all in {sorted(tids)}")
    return f"pool_work {hot} samples (~{expect:.0f}); {proc['cmdline']!r}"


def tmux(*args, check_rc=True):
    r = subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10,
                       stdin=subprocess.DEVNULL)
    check(not check_rc or r.returncode == 0, f"tmux {args[0]} failed: {r.stderr.strip()}")
    return r.stdout


def top_rows(screen):
    """(name, last-second self %, since-start self %) of each function row."""
    rows = re.findall(r"^\s+([\d.]+)%\s+[\d.]+%\s+([\d.]+)%\s+[\d.]+%\s+(\S+) \(",
                      screen, re.M)
    return [(name, float(now), float(all_)) for now, all_, name in rows]


@test
def procs_top_tmux():
    if not shutil.which("tmux"):
        raise Skip("tmux not installed (Debian package tmux)")
    session = f"pybpfprof-top-{os.getpid()}"
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        # after top: its exit code, and whether it gave the terminal its echo back
        cmd = (f"{PROFILER} top -p {p.pid}; echo top-exited-$?; "
               "stty -a | grep -qw -- -echo && echo echo-off || echo echo-on; sleep 60")
        t0 = time.monotonic()
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", cmd)
        try:
            screen, shown = "", None
            while time.monotonic() - t0 < 3:
                screen = tmux("capture-pane", "-p", "-t", session)
                if any(row[0] == "spin_alpha" for row in top_rows(screen)):
                    shown = time.monotonic() - t0
                    break
                time.sleep(0.1)
            check(shown is not None, f"spin_alpha not shown within 3 s: {screen[-800:]!r}")
            check(re.search(r"pybpfprof top: 1 process \(1 running\), \d+ samples/s", screen),
                  f"no header line: {screen[:300]!r}")
            check(re.search(rf"^ +[\d.]+% +100\.0% +{p.pid}  spin\.py: {p.pid} ", screen, re.M),
                  f"no process row naming pid {p.pid} by its script: {screen[:600]!r}")
            tmux("send-keys", "-t", session, "q")
            deadline = time.monotonic() + 3
            while "top-exited-" not in screen and time.monotonic() < deadline:
                time.sleep(0.1)
                screen = tmux("capture-pane", "-p", "-t", session)
            check("top-exited-0" in screen, f"top did not quit on q: {screen[-500:]!r}")
            check("echo-on" in screen, f"terminal not restored after q: {screen[-300:]!r}")
        finally:
            tmux("kill-session", "-t", session, check_rc=False)
        # Ctrl-C quits too, and restores the terminal as well
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", cmd)
        try:
            deadline = time.monotonic() + 5
            screen = ""
            while "spin_alpha" not in screen and time.monotonic() < deadline:
                time.sleep(0.1)
                screen = tmux("capture-pane", "-p", "-t", session)
            tmux("send-keys", "-t", session, "C-c")
            deadline = time.monotonic() + 3
            while "echo-o" not in screen and time.monotonic() < deadline:
                time.sleep(0.1)
                screen = tmux("capture-pane", "-p", "-t", session)
            check("top-exited-0" in screen and "echo-on" in screen,
                  f"Ctrl-C: top did not quit cleanly: {screen[-300:]!r}")
        finally:
            tmux("kill-session", "-t", session, check_rc=False)
    return f"spin_alpha shown after {shown:.2f} s; q and Ctrl-C quit with exit 0"


@test
def procs_top_hot_now():
    """top orders functions by the last second: once top has shown first()
    for 5 s, phases.py is told to move to second(); within 5 s second() is
    the first row, with at least 90 % of the last second, while first()
    still has more samples since the start (the switch is counted from what
    top shows, not from the target's start, so a slow start changes
    nothing)."""
    if not shutil.which("tmux"):
        raise Skip("tmux not installed (Debian package tmux)")
    session = f"pybpfprof-top-now-{os.getpid()}"
    lead_s = 5
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "phases.py")
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40",
             f"{PROFILER} top -p {p.pid}; sleep 60")
        try:
            def watch(want, timeout):
                end = time.monotonic() + timeout
                rows = []
                while time.monotonic() < end:
                    rows = top_rows(tmux("capture-pane", "-p", "-t", session))
                    if rows and rows[0][0] == want and rows[0][1] >= 90.0:
                        return rows, time.monotonic()
                    time.sleep(0.1)
                return rows, None

            rows, shown = watch("first", 60)
            check(shown is not None, f"first() not on top 60 s after top started: {rows}")
            time.sleep(lead_s)
            os.kill(p.pid, signal.SIGUSR1)
            switch = time.monotonic()
            rows, seen = watch("second", lead_s)
            check(seen is not None, f"second() not on top {lead_s} s after the switch: {rows}")
            byname = {name: (now, all_) for name, now, all_ in rows}
            check("first" in byname and byname["first"][1] > byname["second"][1],
                  f"first() should still lead since the start: {rows}")
        finally:
            tmux("kill-session", "-t", session, check_rc=False)
    return (f"second() on top {seen - switch:.1f} s after the switch, "
            f"{byname['second'][0]}% of the last second; since the start first() "
            f"{byname['first'][1]}%, second() {byname['second'][1]}%")


@test
def procs_status_line():
    """Recording to a file on a terminal: a one-line status on stderr."""
    if not shutil.which("tmux"):
        raise Skip("tmux not installed (Debian package tmux)")
    session = f"pybpfprof-status-{os.getpid()}"
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        out = Path(d) / "rep.json"
        cmd = f"{PROFILER} -p {p.pid} -d 2.5 -o {out}; echo status-exited-$?; sleep 60"
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "20", cmd)
        try:
            deadline = time.monotonic() + 2 + RUN_SLACK
            screen = ""
            while "status-exited-" not in screen and time.monotonic() < deadline:
                time.sleep(0.2)
                screen = tmux("capture-pane", "-p", "-t", session)
        finally:
            tmux("kill-session", "-t", session, check_rc=False)
        check("status-exited-0" in screen, f"profiler did not finish: {screen[-300:]!r}")
        rep = load_report(out)
    # rewritten in place: one line, holding the last second's figures
    lines = [ln for ln in screen.splitlines() if re.match(r"pybpfprof: \d+ s, ", ln)]
    check(len(lines) == 1, f"expected one status line, got {lines}: {screen[-500:]!r}")
    m = re.fullmatch(r"pybpfprof: (\d+) s, (\d+) samples, 1 process \(1 running\), "
                     r"(\d+) dropped\s*", lines[0])
    check(m and int(m.group(1)) == 2, f"status line {lines[0]!r}")
    total = rep["samples"]["total"]
    check(0 < int(m.group(2)) <= total, f"status says {m.group(2)} samples, report {total}")
    return f"{lines[0].strip()!r}; report {total} samples"


@test
def procs_launch_sigterm():
    """A SIGTERM to pybpfprof in launch mode goes to the command; the
    report is written and pybpfprof exits with the command's status."""
    py = interpreter("debian")
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        prof = Profiler(["-o", out, "--", *py.argv("spin.py", ["alpha"])], capture=True)
        try:
            deadline = time.monotonic() + READY_TIMEOUT
            while "ready" not in prof.stdout() and time.monotonic() < deadline:
                time.sleep(0.02)
            check("ready" in prof.stdout(), "the command never said ready")
            time.sleep(1)
            prof.p.send_signal(signal.SIGTERM)
            prof.wait(15)
        finally:
            prof.kill()
        check(prof.rc == 128 + signal.SIGTERM,
              f"exit {prof.rc}, expected {128 + signal.SIGTERM}: {prof.stderr().strip()[-300:]}")
        rep = load_report(out)
    sanity(rep, 99)
    check(len(rep["processes"]) == 1, f"{len(rep['processes'])} sections")
    proc = rep["processes"][0]
    hot = functions(proc).get("spin_alpha", {}).get("self", 0)
    # (a few samples of its start-up outside spin_alpha weigh more when a
    # loaded host leaves it few samples in all)
    check(proc["exited"] and hot >= 0.9 * proc["samples"] - 3 and hot >= 10,
          f"spin_alpha {hot} of {proc['samples']} samples, exited {proc['exited']}")
    return f"exit {prof.rc}; spin_alpha {hot}/{proc['samples']}"


@test
def procs_subprocesses_shell():
    """A command that is not Python (sh) with Python children, one of them
    a shared-libpython build: both are followed through the shell."""
    builds = [interpreter("debian"), interpreter("pyenv")]
    script = [b.argv("procs_short.py", [0.5]) for b in builds]
    line = f"{' '.join(script[0])} & {' '.join(script[1])}; wait"
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        r = run_profiler(["--subprocesses", "-F", 199, "-o", out, "--", "sh", "-c", line],
                         timeout=40)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        rep = load_report(out)
    sanity(rep, 199)
    shown = []
    for b in builds:
        version = python_version(b)
        procs = [p for p in rep["processes"] if p["python"] == version and
                 "procs_short.py" in p["cmdline"]]
        check(len(procs) == 1, f"{len(procs)} sections of Python {version}: "
              f"{[(p['pid'], p['python']) for p in rep['processes']]}")
        n = procs[0]["samples"]
        hot = functions(procs[0]).get("short_work", {}).get("self", 0)
        check(n >= 10 and hot > 0.5 * n, f"Python {version}: short_work {hot} of {n}")
        shown.append(f"{version}: short_work {hot}/{n}")
    return "; ".join(shown)


PROCS_MODULES = 150


@per_build(builds=("debian", "pyenv312", "sid315"))
def procs_import_bodies_named(build):
    """A launched program importing modules whose bodies do their work at
    import time (as a data pipeline's or a web app's start-up does): each
    module body's code object is freed as its import ends, often before
    pybpfprof could read it; the samples in those bodies are still charged
    to "<module>" in the module's own file, not to "[unresolved]"."""
    py = interpreter(build)
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        # the modules inside the program's root (a chroot sees them there)
        pkg = Path(d) / "pkg"
        inside = py.root / ROOT_TARGETS.lstrip("/") if py.root else pkg
        inside = inside / f"imports_{os.getpid()}" if py.root else pkg
        inside.mkdir(parents=True, exist_ok=True)
        try:
            for i in range(PROCS_MODULES):
                # 4 ms of CPU in the body itself, then the import is over
                (inside / f"startup_mod{i}.py").write_text(
                    "import time\n"
                    "_t = time.thread_time()\n"
                    "_n = 0\n"
                    "while time.thread_time() - _t < 0.004:\n"
                    "    _n += 1  # marker: module body\n")
            where = (f"{ROOT_TARGETS}/imports_{os.getpid()}" if py.root else str(inside))
            prog = (f"import sys; sys.path.insert(0, {where!r}); "
                    + "; ".join(f"import startup_mod{i}" for i in range(PROCS_MODULES)))
            out = Path(d) / "rep.json"
            argv = [*(["chroot", str(py.root)] if py.root else []), str(py.python), "-c", prog]
            r = run_profiler(["-F", 999, "-f", "json", "-o", out, "--", *argv], timeout=60)
            check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
            rep = load_report(out)
        finally:
            if py.root:
                shutil.rmtree(inside, ignore_errors=True)
    sanity(rep, 999)
    proc = rep["processes"][0]
    fns = functions(proc)
    bodies = {f["file"].rsplit("/", 1)[-1]: f["self"] for f in proc["functions"]
              if f["qualname"] == "<module>" and "startup_mod" in f["file"]}
    in_bodies = sum(bodies.values())
    unresolved = fns.get("[unresolved]", {}).get("self", 0)
    # 150 x 4 ms of CPU at 999 Hz: about 600 samples in the bodies
    check(in_bodies >= 300, f"the module bodies hold {in_bodies} samples; "
          f"[unresolved] {unresolved}")
    check(len(bodies) >= PROCS_MODULES * 0.9,
          f"{len(bodies)} of {PROCS_MODULES} module bodies named: {sorted(bodies)}")
    # (without BPF's names: 7 to 28 of about 680 on these builds, idle host)
    check(unresolved <= 0.005 * proc["samples"] + 1,
          f"{unresolved} of {proc['samples']} samples [unresolved], the bodies {in_bodies}")
    return (f"{len(bodies)} module bodies named, {in_bodies} samples in them; "
            f"[unresolved] {unresolved} of {proc['samples']}")
