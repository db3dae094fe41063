#!/usr/bin/python3
"""Root integration tests for pybpfprof: profile real CPython processes.

Usage: run.py [PATTERN...]   (shell-style patterns over test names; default all)

Every workload under targets/ has a known ground truth (a CPU split, a hot
line, a stack depth, ...), so the assertions are exact values or tight
bounds, not "it printed something". Each test prints one line, PASS with the
figures it measured, FAIL with the reason, or SKIP when an interpreter under
test is not installed; the last line is "N passed, N failed[, N skipped]".

Standard library only: this runs under Debian 12's /usr/bin/python3.
"""

import fnmatch
import json
import math
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TARGETS = HERE / "targets"
PROFILER = Path(os.environ.get("PYBPFPROF", ROOT / "pybpfprof"))

# Generous enough for a loaded CI machine, short enough that a hang is
# reported as a failure long before any CI job timeout.
READY_TIMEOUT = 15
# Slack over the requested duration before a profiler run counts as hung.
RUN_SLACK = 20


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


# ---------------------------------------------------------------- interpreters

def pyenv_root():
    # Ask pyenv itself when it is on PATH (PYENV_ROOT may be customised);
    # otherwise fall back to the conventional location used on the test hosts.
    exe = shutil.which("pyenv")
    if exe:
        try:
            out = subprocess.run([exe, "root"], capture_output=True, text=True,
                                 timeout=10, stdin=subprocess.DEVNULL)
            if out.returncode == 0 and out.stdout.strip():
                return Path(out.stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    return Path(os.environ.get("PYENV_ROOT", "/root/.pyenv"))


PYENV = pyenv_root()

# Where tests/debian-roots.sh caches Debian release directories (chroot targets).
DEBIAN_ROOTS = Path(os.environ.get("PYBPFPROF_ROOTS", "/var/cache/pybpfprof/roots"))
# Where the workloads are copied inside a root: the path the process sees.
ROOT_TARGETS = "/tmp/pybpfprof-targets"


class Interp:
    """A CPython to run workloads with: a host executable, or an executable
    inside a Debian release directory, run with chroot like a container."""

    def __init__(self, python, root=None, how=None):
        self.python = Path(python)
        self.root = Path(root) if root else None
        self.how = how  # how to get it, for the skip message when it is missing

    def __str__(self):
        return str(self.python)

    def host_path(self):
        """The executable as the host sees it (inside its root if chrooted)."""
        return self.root / self.python.relative_to("/") if self.root else self.python

    def missing(self):
        """Why this interpreter cannot run here, or None when it can."""
        # os.path.exists, not Path.exists: an unreadable directory is a
        # missing root, not an exception out of the harness.
        if self.root and not os.path.exists(self.root / ".ready"):
            return (f"no Debian release root {self.root} (tests/install-deps.sh or "
                    f"tests/debian-roots.sh prepares it)")
        if not os.access(self.host_path(), os.X_OK):
            return f"{self.host_path()} not installed" + (f" ({self.how})" if self.how else "")
        return None

    def available(self):
        return self.missing() is None

    def script_path(self, script):
        """The workload's path as the process itself sees it."""
        script = Path(script)
        if self.root:
            return f"{ROOT_TARGETS}/{script.name}"
        return str(script if script.is_absolute() else TARGETS / script)

    def argv(self, script, args=()):
        if self.root:
            inside = self.root / ROOT_TARGETS.lstrip("/")
            src = Path(script) if Path(script).is_absolute() else TARGETS / script
            inside.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, inside / src.name)
            return ["chroot", str(self.root), str(self.python), self.script_path(script),
                    *map(str, args)]
        return [str(self.python), self.script_path(script), *map(str, args)]


# Every build is listed whether or not it is installed, so the test names are
# the same on every machine, and a test whose interpreter is missing here
# skips, saying which and how to get it. The chrooted Debian builds,
# (release, CPython minor), whose roots tests/debian-roots.sh makes:
DEBIAN_BUILDS = (("bullseye", "3.9"), ("trixie", "3.13"), ("forky", "3.14"),
                 ("sid", "3.14"), ("sid", "3.15"))
# pyenv's shared-libpython builds besides 3.11 (any X.Y.Z of the minor):
PYENV_MINORS = ("3.8", "3.9", "3.10", "3.12", "3.13")


def pyenv_versions(pyenv, minor):
    """pyenv's installed X.Y.Z directories of a minor version, oldest first.
    Variants such as -dev builds are not them; an unreadable pyenv (root's,
    for another user) has none."""
    try:
        dirs = sorted(pyenv.glob(f"versions/{minor}.*"))
    except OSError:
        return []
    return [d for d in dirs if re.fullmatch(r"\d+\.\d+\.\d+", d.name)]


def _builds(pyenv, roots):
    """Every interpreter the tests know, by test-name suffix. The 3.11 pair
    (Debian's static build, pyenv's shared-libpython build) comes first;
    then pyenv's other shared builds and the chrooted Debian releases."""
    builds = {"debian": Interp("/usr/bin/python3.11", how="Debian package python3.11"),
              "pyenv": Interp(pyenv / "versions/3.11.7/bin/python3.11",
                              how=f"pyenv 3.11.7, built with --enable-shared, under {pyenv}")}
    for minor in PYENV_MINORS:
        found = pyenv_versions(pyenv, minor)
        version = found[0] if found else pyenv / f"versions/{minor}.*"
        builds["pyenv" + minor.replace(".", "")] = Interp(
            version / f"bin/python{minor}",
            how=f"pyenv {minor}.x, built with --enable-shared, under {pyenv}")
    for suite, minor in DEBIAN_BUILDS:
        builds[f"{suite}{minor.replace('.', '')}"] = Interp(f"/usr/bin/python{minor}",
                                                            roots / suite)
    return builds


BUILDS = _builds(PYENV, DEBIAN_ROOTS)
CHROOTED = tuple(name for name, py in BUILDS.items() if py.root)

_versions = {}


def interpreter(build):
    """The build's interpreter; a test needing one that is missing is skipped
    with the reason. A name no build could have is the test's own error."""
    interp = BUILDS.get(build)
    if interp is None:
        raise Fail(f"the test asks for interpreter {build!r}, which the harness does not "
                   f"know (builds: {', '.join(BUILDS)})")
    why = interp.missing()
    if why:
        raise Skip(why)
    return interp


def available(build):
    """Whether the build is known and runnable here (for tests that fall back)."""
    return build in BUILDS and BUILDS[build].available()


def python_version(python):
    """The interpreter's own full version: the ground truth for the report."""
    interp = python if isinstance(python, Interp) else Interp(python)
    key = (str(interp.python), str(interp.root))
    if key not in _versions:
        argv = [str(interp.python), "-c", "import platform; print(platform.python_version())"]
        if interp.root:
            argv = ["chroot", str(interp.root)] + argv
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL)
        check(out.returncode == 0, f"{interp} --version failed: {out.stderr.strip()}")
        _versions[key] = out.stdout.strip()
    return _versions[key]


def unsupported_interpreters():
    """pyenv interpreters of the versions the profiler must refuse."""
    found = []
    for minor in ("2.7", "3.6", "3.7"):
        for d in pyenv_versions(PYENV, minor):
            exe = d / "bin" / f"python{minor}"
            if os.access(exe, os.X_OK):
                found.append((minor, exe))
                break
    return found


# ------------------------------------------------------------------ workloads

class Workloads:
    """Starts target processes; on exit kills and reaps every one of them,
    whether the test passed, failed or raised."""

    def __init__(self):
        self.procs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                print(f"warning: pid {p.pid} survived SIGKILL", file=sys.stderr)
            for f in (p.stdout, getattr(p, "errfile", None)):
                if f:
                    f.close()
        return False

    def start(self, python, script, *args, wait_ready=True, prefix=()):
        # stderr goes to a file, not a pipe: nobody drains it while the test
        # runs, and it is only read to explain a workload that died.
        err = tempfile.TemporaryFile()
        interp = python if isinstance(python, Interp) else Interp(python)
        p = subprocess.Popen([*prefix, *interp.argv(script, args)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=err)
        self.procs.append(p)
        p.errfile = err
        if wait_ready:
            self.wait_ready(p)
        return p

    def start_cmd(self, argv):
        """A non-Python workload (e.g. sleep): nothing to wait for."""
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    @staticmethod
    def wait_ready(p, timeout=READY_TIMEOUT):
        read_stdout_until(p, lambda buf: b"ready\n" in buf, "ready", timeout)


def read_stdout_until(p, done, what, timeout=READY_TIMEOUT):
    """Reads a workload's stdout until done(what was read) is true, and returns
    it. Raw reads with select(), so a workload that never writes it (or dies
    first) fails the test after `timeout` instead of blocking."""
    fd = p.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while not done(buf):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fail(f"workload {p.args[1:]} not {what} after {timeout}s")
        r, _, _ = select.select([fd], [], [], left)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                p.wait(timeout=5)
                p.errfile.seek(0)
                tail = p.errfile.read().decode(errors="replace").strip()[-300:]
                raise Fail(f"workload {p.args[1:]} exited ({p.returncode}) "
                           f"before {what}: {tail}")
            buf += chunk
    return buf


class Reaper(threading.Thread):
    """Reaps a workload the moment it exits, like a real parent would, so the
    profiler sees the pid vanish rather than linger as a zombie; keeps the
    CPU time the workload used in its whole life (from its rusage)."""

    def __init__(self, p):
        super().__init__(daemon=True)
        self.p = p
        self.cpu = None
        self.start()

    def run(self):
        try:
            _, status, ru = os.wait4(self.p.pid, 0)
        except ChildProcessError:  # Workloads reaped it first, on failure
            return
        self.cpu = ru.ru_utime + ru.ru_stime
        self.p.returncode = os.waitstatus_to_exitcode(status)


def workload_split(p, timeout=READY_TIMEOUT):
    """A workload's own measure of its thread CPU time in fast() and slow(),
    in ns since it started (split.py, tick.py): asked with SIGUSR1, answered
    on its stdout."""
    os.kill(p.pid, signal.SIGUSR1)
    buf = read_stdout_until(p, lambda buf: buf.endswith(b"\n"), "answering SIGUSR1",
                            timeout)
    word, fast, slow = buf.decode().split()
    check(word == "cpu", f"split.py answered {buf!r}")
    return int(fast), int(slow)


def source_line(script, marker):
    """1-based number of the line containing `marker`: the ground truth for
    line attribution, found in the source rather than hard-coded."""
    for n, text in enumerate((TARGETS / script).read_text().splitlines(), 1):
        if marker in text:
            return n, text.strip()
    raise Fail(f"marker {marker!r} not in {script}")


def cpu_seconds(pid):
    """CPU time the process (all its threads) has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        # Split after the ")" closing comm, which may contain spaces; the
        # state (field 3) is then index 0, utime (14) and stime (15) 11 and 12.
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def check_cpu_samples(n, cpu, freq, what, cpu_err=0.0):
    """n samples of code that ran cpu seconds, sampled at freq Hz: about
    cpu x freq, give or take chance. Whether a tick finds the code on its CPU
    is luck, so the count spreads as the square root of itself: measured on
    this suite's checks, sd 0.27 x sqrt (105 checks) on an idle 2-CPU machine,
    0.39 x sqrt (84 checks) beside two busy loops and 0.70 x sqrt (18 checks)
    beside three. The bound is 2.5 x sqrt plus 3% for the work's start and
    end (together at least 4.5 sd beside three busy loops), plus cpu_err (the
    CPU figure's own resolution, in seconds)."""
    expect = cpu * freq
    tol = 2.5 * math.sqrt(expect) + 0.03 * expect + cpu_err * freq + 2
    check(abs(n - expect) <= tol,
          f"{what} has {n} samples, expected {expect:.0f} +- {tol:.0f} "
          f"({cpu:.3f} s of CPU at {freq} Hz)")
    return expect


class CpuMeter:
    """The CPU time a workload got while the profiler sampled it.

    CPU-mode sampling sees a thread only while it runs, so the expected
    sample count is rate x its CPU time. Measuring that, rather than
    assuming a whole CPU, keeps the bounds tight yet correct when something
    else loads the machine. A thread reads the target's CPU time every 20 ms
    from start to the profiler's exit; the sampling is the report's
    duration_s just before that exit (the report itself is written after
    it), so the CPU of that window is what counts: the profiler's start-up,
    long on a loaded host, falls outside it."""

    STEP = 0.02

    def __init__(self, pid):
        self.pid = pid
        self.readings = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)

    def _read(self):
        while True:
            try:
                self.readings.append((time.monotonic(), cpu_seconds(self.pid)))
            except OSError:
                return
            if self.done.wait(self.STEP):
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        try:
            self.readings.append((time.monotonic(), cpu_seconds(self.pid)))
        except OSError:
            pass
        return False

    def cpu_between(self, t0, t1):
        """CPU seconds used from t0 to t1, interpolated between readings."""
        def at(t):
            r = self.readings
            if t <= r[0][0]:
                return r[0][1]
            for (ta, ca), (tb, cb) in zip(r, r[1:]):
                if t <= tb:
                    return ca + (cb - ca) * (t - ta) / max(tb - ta, 1e-9)
            return r[-1][1]
        return at(t1) - at(t0)

    def check_samples(self, n, freq, duration, what="the process"):
        check(len(self.readings) >= 2, f"no CPU readings of pid {self.pid}")
        end = self.readings[-1][0]
        cpu = self.cpu_between(end - duration, end)
        # utime/stime count 10 ms ticks: two readings, one tick each
        check_cpu_samples(n, cpu, freq, f"pid {self.pid}: {what}", cpu_err=0.02)
        return cpu * freq


# ------------------------------------------------------------ profiler runs

def run_profiler(args, timeout, prefix=(), exe=None):
    """Run the profiler to completion; a hang becomes a test failure."""
    argv = [*prefix, str(exe or PROFILER), *map(str, args)]
    t0 = time.monotonic()
    try:
        # Reports are UTF-8 whatever the runner's locale.
        r = subprocess.run(argv, capture_output=True, encoding="utf-8",
                           errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Fail(f"`{' '.join(argv)}` still running after {timeout}s")
    r.elapsed = time.monotonic() - t0
    return r


def interrupt_profiler(args, after_s, sig=signal.SIGINT, timeout=10):
    """Run the profiler in the background for after_s seconds, then stop it
    with sig: (returncode, stdout, stderr). A run that ended before the
    signal, or is still running `timeout` s after it, fails the test."""
    prof = subprocess.Popen([str(PROFILER), *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            encoding="utf-8", errors="replace")
    try:
        time.sleep(after_s)
        check(prof.poll() is None, f"profiler exited early ({prof.returncode})")
        prof.send_signal(sig)
        try:
            out, err = prof.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Fail(f"still running {timeout} s after {sig.name}")
    finally:
        if prof.poll() is None:
            prof.kill()
            prof.wait(timeout=10)
    return prof.returncode, out, err


def profile_json(pids, duration, freq=99, extra=()):
    args = [a for pid in pids for a in ("-p", pid)]
    args += ["-d", duration, "-F", freq, "-f", "json", *extra]
    r = run_profiler(args, timeout=duration + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    try:
        rep = json.loads(r.stdout)
    except ValueError as e:
        raise Fail(f"invalid JSON on stdout ({e}): {r.stdout[:200]!r}")
    sanity(rep, freq)
    return rep


def sanity(rep, freq):
    """Invariants every report must satisfy, whatever the workload."""
    check(rep.get("tool") == "pybpfprof", f"tool is {rep.get('tool')!r}")
    check(rep.get("frequency_hz") == freq,
          f"frequency_hz {rep.get('frequency_hz')} != requested {freq}")
    for key in ("total", "dropped", "truncated", "unresolved", "partial", "no_python"):
        check(isinstance(rep["samples"].get(key), int) and rep["samples"][key] >= 0,
              f"samples.{key} missing or negative: {rep['samples']}")
    # Ticks in threads with no Python frame are counted apart (no_python);
    # every other sample belongs to exactly one process and one thread.
    per_proc = sum(p["samples"] for p in rep["processes"])
    check(per_proc == rep["samples"]["total"],
          f"processes' samples add up to {per_proc}, total is {rep['samples']['total']}")
    for proc in rep["processes"]:
        n = proc["samples"]
        per_thread = sum(t["samples"] for t in proc["threads"])
        check(per_thread == n, f"pid {proc['pid']}: threads' samples add up to "
              f"{per_thread}, process has {n}")
        for fn in proc["functions"]:
            # total counts a sample once however often the function recurs,
            # so it can never exceed the process's samples.
            check(0 <= fn["self"] <= fn["total"] <= n,
                  f"pid {proc['pid']} {fn['qualname']}: self {fn['self']} "
                  f"total {fn['total']} process samples {n}")
        self_sum = sum(fn["self"] for fn in proc["functions"])
        check(self_sum <= n, f"pid {proc['pid']}: functions' self sum {self_sum} > samples {n}")


def process(rep, pid):
    procs = [p for p in rep["processes"] if p["pid"] == pid]
    check(len(procs) == 1, f"pid {pid} appears {len(procs)} times in processes "
          f"(pids: {[p['pid'] for p in rep['processes']]})")
    return procs[0]


def functions(proc):
    return {fn["qualname"]: fn for fn in proc["functions"]}


def expect_error(args, must_contain, out=None, rc=1, timeout=15, prefix=(), exe=None):
    """Run a command that must fail cleanly: exit `rc`, a "pybpfprof: ..."
    message naming the cause on stderr, nothing on stdout, no output file."""
    r = run_profiler(args, timeout=timeout, prefix=prefix, exe=exe)
    msg = r.stderr.strip()
    check(r.returncode == rc, f"exit {r.returncode}, expected {rc}; stderr: {msg!r}")
    lines = msg.splitlines()
    check(lines and lines[0].startswith("pybpfprof: "), f"stderr {msg!r}")
    if rc == 1:
        check(len(lines) == 1, f"expected one line on stderr, got {msg!r}")
    for want in must_contain:
        check(want.lower() in lines[0].lower(), f"{want!r} not in message {lines[0]!r}")
    check(r.stdout == "", f"stdout not empty: {r.stdout[:200]!r}")
    if out is not None:
        check(not os.path.lexists(out), f"{out} created despite the error")
    return lines[0], r.elapsed


# ---------------------------------------------------------------------- tests

TESTS = []


def test(fn):
    TESTS.append((fn.__name__, fn))
    return fn


def per_build(fn):
    # One test per interpreter found, named e.g. split_debian, split_sid315.
    for build in BUILDS:
        def bound(build=build):
            return fn(build)
        TESTS.append((f"{fn.__name__}_{build}", bound))
    return fn


@per_build
def split(build):
    py = interpreter(build)
    freq, secs = 999, 4
    with Workloads() as wl:
        p = wl.start(py, "split.py")
        fast0, slow0 = workload_split(p)
        with CpuMeter(p.pid) as cpu:
            rep = profile_json([p.pid], secs, freq)
        fast1, slow1 = workload_split(p)
    proc = process(rep, p.pid)
    check(proc["python"] == python_version(py),
          f"python {proc['python']!r}, interpreter says {python_version(py)!r}")
    fns = functions(proc)
    check("slow" in fns and "fast" in fns, f"slow/fast missing: {sorted(fns)}")
    for name in ("slow", "fast"):
        line, _ = source_line("split.py", f"def {name}(")
        check(fns[name]["file"] == py.script_path("split.py") and fns[name]["line"] == line,
              f"{name} at {fns[name]['file']}:{fns[name]['line']}, expected split.py:{line}")
    n = proc["samples"]
    # Well below rate x CPU time means lost samples, above it double counting.
    cpu.check_samples(n, freq, rep["duration_s"])
    slow, fast = fns["slow"]["self"], fns["fast"]["self"]
    check(slow + fast >= 0.95 * n, f"slow+fast only {slow + fast} of {n} samples")
    share = slow / (slow + fast)
    # The truth is what the workload measured of its own CPU time while the
    # profiler ran; 75% is only what its design aims at, so it gets a looser
    # bound that still catches a workload that no longer splits as designed.
    truth = (slow1 - slow0) / ((slow1 - slow0) + (fast1 - fast0))
    check(abs(truth - 0.75) <= 0.08,
          f"the workload itself measured a slow share of {truth:.1%}, designed 75%")
    check(abs(share - truth) <= 0.02,
          f"slow share {share:.1%} (slow {slow}, fast {fast}), the workload "
          f"measured {truth:.1%} of its CPU time in slow(): expected +- 2pp")
    return (f"slow share {share:.1%} (slow {slow}, fast {fast}, {n} samples), "
            f"workload measured {truth:.1%}, python {proc['python']}")


@test
def lockstep():
    """A program that repeats itself every 10 ms, sampled at 100 Hz: with a
    fixed period the samples fell at the same point of every tick and fast()
    had 0% of them. The period is redrawn at random, so fast() gets its real
    share: the workload's own measure, +- 8pp (24.4-27.7% in 10 runs against
    25.0%; a sampler in step gives 0% or 50%)."""
    freq, secs = 100, 8
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "tick.py")
        fast0, slow0 = workload_split(p)
        with CpuMeter(p.pid) as cpu:
            rep = profile_json([p.pid], secs, freq)
        fast1, slow1 = workload_split(p)
    fns = functions(process(rep, p.pid))
    slow, fast = fns.get("slow", {}).get("self", 0), fns.get("fast", {}).get("self", 0)
    # the CPU it got, not a whole CPU: a busy host takes some
    cpu.check_samples(slow + fast, freq, rep["duration_s"], "fast() and slow()")
    share = fast / (slow + fast)
    truth = (fast1 - fast0) / ((fast1 - fast0) + (slow1 - slow0))
    check(abs(share - truth) <= 0.08,
          f"fast share {share:.1%} (fast {fast}, slow {slow}), the workload measured "
          f"{truth:.1%}: expected +- 8pp")
    return f"fast share {share:.1%} of {slow + fast} samples at {freq} Hz, workload measured {truth:.1%}"


@test
def many_threads():
    """The main thread is the last of 401 in CPython's thread list: it is
    found, and its ticks are busy()'s, not lost as "no Python frame"."""
    freq, secs = 99, 3
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "many_threads.py")
        with CpuMeter(p.pid) as cpu:
            rep = profile_json([p.pid], secs, freq)
    proc = process(rep, p.pid)
    busy = functions(proc).get("busy", {}).get("self", 0)
    expect = cpu.check_samples(proc["samples"], freq, rep["duration_s"])
    check(busy >= 0.95 * proc["samples"],
          f"busy() has {busy} of {proc['samples']} samples")
    check(rep["samples"]["no_python"] <= 0.05 * expect,
          f"{rep['samples']['no_python']} ticks without a Python frame: the main thread "
          f"was not found among 401")
    return f"busy() {busy} of {proc['samples']} samples; {rep['samples']['no_python']} no_python"


@test
def leader_exit():
    """The main thread exits mid-run and a worker thread goes on: the process
    stays profiled (its exit is its last thread's), code first run after that
    is read through the worker, and the run ends when the worker returns."""
    after_s, freq = 2, 99
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "leader_exit.py", after_s)
        prof = subprocess.Popen([str(PROFILER), "-p", str(p.pid), "-d", "30", "-F", str(freq),
                                 "-f", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True)
        time.sleep(1)
        os.kill(p.pid, signal.SIGUSR1)
        try:
            out, err = prof.communicate(timeout=30 + RUN_SLACK)
        except subprocess.TimeoutExpired:
            prof.kill()
            raise Fail("pybpfprof still running after the workload ended")
    check(prof.returncode == 0, f"exit {prof.returncode}: {err.strip()}")
    rep = json.loads(out)
    proc = process(rep, p.pid)
    fns = functions(proc)
    after = fns.get("after", {}).get("self", 0)
    check(after, f"after() has no samples: profiling stopped when the main thread "
          f"exited? (functions: {sorted(fns)})")
    check_cpu_samples(after, after_s, freq, "after()")
    check(proc["exited"], "the process is not marked exited after its last thread ended")
    # about 1 + after_s on an idle host; the -d 30 if the end was missed
    check(rep["duration_s"] < 20,
          f"the run lasted {rep['duration_s']} s: the end of the last thread was missed")
    check(proc["unresolved"] <= 2, f"{proc['unresolved']} unresolved samples")
    return (f"after() {after} samples after the main thread exited; run ended at "
            f"{rep['duration_s']:.1f} s with the process")


@per_build
def hotline(build):
    py = interpreter(build)
    line, text = source_line("hotline.py", "# membership")
    code = text.split("#")[0].strip()          # "if i in haystack:"
    with Workloads() as wl:
        p = wl.start(py, "hotline.py")
        rep = profile_json([p.pid], 3, 999)
        txt = run_profiler(["-p", p.pid, "-d", 1, "-f", "text"], timeout=1 + RUN_SLACK)
    proc = process(rep, p.pid)
    hot_lines = [ln for ln in proc["lines"] if ln["qualname"] == "hot"]
    hot_self = sum(ln["self"] for ln in hot_lines)
    fn_self = functions(proc).get("hot", {}).get("self", 0)
    check(hot_self > 0.9 * proc["samples"],
          f"hot() lines hold {hot_self} of {proc['samples']} samples")
    # hot() has only a few lines, all within the listed top 20, so they
    # must add up to the function's self count exactly.
    check(hot_self == fn_self, f"hot() lines sum {hot_self} != function self {fn_self}")
    member = sum(ln["self"] for ln in hot_lines if ln["line"] == line)
    share = member / hot_self
    check(share >= 0.85, f"membership line {line} has {share:.1%} of hot() "
          f"({member}/{hot_self}); lines: {hot_lines}")

    check(txt.returncode == 0, f"text run exit {txt.returncode}: {txt.stderr.strip()}")
    rows = [r for r in txt.stdout.splitlines() if f"hotline.py:{line}" in r]
    check(rows and any(code in r for r in rows),
          f"text report has no row for hotline.py:{line} showing {code!r}: {rows}")
    return f"line {line} holds {share:.1%} of hot() ({member}/{hot_self}); text shows {code!r}"


def child_pid(pid, timeout=5):
    """The first child of pid (the process unshare --fork starts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            kids = []
        if kids:
            return int(kids[0])
        time.sleep(0.05)
    raise Fail(f"pid {pid} has no child after {timeout}s")


@test
def pid_namespace():
    # A container-like target: its own pid namespace, and a chroot when a
    # Debian root is cached. It must be reported with its host pid and the
    # pid it has inside its namespace (1: the first process there).
    chrooted = [b for b in ("trixie313", "sid315", "bullseye39") if available(b)]
    py = interpreter(chrooted[0]) if chrooted else interpreter("debian")
    with Workloads() as wl:
        outer = wl.start(py, "spin.py", "alpha", prefix=("unshare", "--pid", "--fork"))
        inner = child_pid(outer.pid)
        try:
            rep = profile_json([inner], 2)
        finally:
            # Killing unshare leaves its child running: kill the namespace's init.
            os.kill(inner, signal.SIGKILL)
    proc = process(rep, inner)
    check(proc["nspid"] == 1, f"nspid {proc['nspid']}, expected 1 (pid {inner} on the host)")
    fns = functions(proc)
    n = proc["samples"]
    # 198 on an idle host; fewer when the host is loaded
    check(n >= 20 and fns.get("spin_alpha", {}).get("self", 0) >= 0.95 * n,
          f"spin_alpha {fns.get('spin_alpha')} of {n} samples")
    check(fns["spin_alpha"]["file"] == py.script_path("spin.py"),
          f"file {fns['spin_alpha']['file']!r}, expected {py.script_path('spin.py')!r}")
    return (f"host pid {inner}, pid 1 inside, python {proc['python']}"
            f"{' chrooted' if py.root else ''}, spin_alpha {fns['spin_alpha']['self']}/{n}")


@test
def two_processes():
    # Mix the two builds when both exist: one session, two symbol layouts.
    py_a = interpreter("debian")
    py_b = BUILDS["pyenv"] if available("pyenv") else py_a
    with Workloads() as wl:
        a = wl.start(py_a, "spin.py", "alpha")
        b = wl.start(py_b, "spin.py", "beta")
        with CpuMeter(a.pid) as cpu_a, CpuMeter(b.pid) as cpu_b:
            rep = profile_json([a.pid, b.pid], 2)
    check(sorted(p["pid"] for p in rep["processes"]) == sorted([a.pid, b.pid]),
          f"processes {[p['pid'] for p in rep['processes']]}, expected {a.pid}, {b.pid}")
    got = []
    for p, cpu, mine, other in ((a, cpu_a, "spin_alpha", "spin_beta"),
                                (b, cpu_b, "spin_beta", "spin_alpha")):
        proc = process(rep, p.pid)
        fns = functions(proc)
        n = proc["samples"]
        # Each process's samples match its own CPU time: none was starved
        # or credited with the other's samples.
        cpu.check_samples(n, 99, rep["duration_s"])
        check(mine in fns and fns[mine]["self"] >= 0.95 * n,
              f"pid {p.pid}: {mine} self {fns.get(mine, {}).get('self')} of {n}")
        check(other not in fns, f"pid {p.pid} shows the other process's {other}")
        check([t["tid"] for t in proc["threads"]] == [p.pid],
              f"pid {p.pid} threads {proc['threads']}")
        got.append(f"{p.pid}: {mine} {fns[mine]['self']}/{n}")
    return "; ".join(got)


@test
def deep_recursion():
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.start(py, "deep.py")
        cut = profile_json([p.pid], 2, 499)
        full = profile_json([p.pid], 2, 499, extra=["--max-depth", 1024])
        # Off-by-one guard: a limit of exactly the stack depth keeps it all.
        frames = int(re.search(r"^DEPTH = (\d+)", (TARGETS / "deep.py").read_text(),
                               re.M).group(1)) + 3
        short = profile_json([p.pid], 1, 199, extra=["--max-depth", frames - 1])
        exact = profile_json([p.pid], 1, 199, extra=["--max-depth", frames])

    # Default depth 127 < 303 frames: every sample is truncated, at the root,
    # so the innermost frames (leaf and recurse) survive and the outermost
    # (main, <module>) are gone.
    proc = process(cut, p.pid)
    n = proc["samples"]
    fns = functions(proc)
    check(n > 0, "no samples at default depth")
    top = max(proc["functions"], key=lambda f: f["self"])["qualname"]
    check(top == "leaf", f"most self samples in {top}, expected leaf")
    # The workload never leaves leaf(), so every stack is too deep.
    check(cut["samples"]["truncated"] == cut["samples"]["total"],
          f"truncated {cut['samples']['truncated']} of {cut['samples']['total']}")
    check(proc["truncated"] == n, f"process truncated {proc['truncated']} of {n}")
    check("<module>" not in fns and "main" not in fns,
          f"root frames kept although cut at the root: {sorted(fns)}")

    proc2 = process(full, p.pid)
    n2 = proc2["samples"]
    fns2 = functions(proc2)
    check(full["samples"]["truncated"] == 0 and proc2["truncated"] == 0,
          f"truncated {full['samples']['truncated']} with --max-depth 1024")
    # Every complete stack holds recurse (300 times, counted once), leaf on
    # top and <module> at the root; only partial stacks may lack them.
    whole = n2 - proc2["partial"]
    rec = fns2.get("recurse", {}).get("total", 0)
    check(whole <= rec <= n2, f"recurse total {rec}, samples {n2}")
    check(whole <= fns2.get("leaf", {}).get("self", 0),
          f"leaf self {fns2.get('leaf')} of {n2}")
    check(whole <= fns2.get("<module>", {}).get("total", 0),
          f"<module> total {fns2.get('<module>')} of {n2}: full stacks not reached")

    s, e = process(short, p.pid), process(exact, p.pid)
    check(s["samples"] > 0 and s["truncated"] == s["samples"]
          and "<module>" not in functions(s) and "main" in functions(s),
          f"--max-depth {frames - 1}: truncated {s['truncated']} of {s['samples']}, "
          f"functions {sorted(functions(s))}")
    check(e["samples"] > 0 and e["truncated"] == 0 and "<module>" in functions(e),
          f"--max-depth {frames}: truncated {e['truncated']} of {e['samples']}")
    return (f"depth 127: {proc['truncated']}/{n} truncated, top leaf; "
            f"depth 1024: 0 truncated, recurse total {rec}/{n2}; "
            f"limit {frames - 1} cuts <module> only, {frames} keeps all")


@test
def threads():
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.start(py, "threads.py")
        rep = profile_json([p.pid], 2, 499)
    proc = process(rep, p.pid)
    n = proc["samples"]
    fns = functions(proc)
    a = fns.get("thread_a_work", {}).get("self", 0)
    b = fns.get("thread_b_work", {}).get("self", 0)
    # The GIL lets one worker run at a time, so each gets about half.
    check(a > 0.2 * n and b > 0.2 * n, f"thread_a_work {a}, thread_b_work {b} of {n}")
    busy = [t for t in proc["threads"] if t["samples"] > 0]
    check(len(busy) >= 2, f"threads with samples: {proc['threads']}")
    main = sum(t["samples"] for t in proc["threads"] if t["tid"] == p.pid)
    # The main thread sleeps in join(); CPU sampling must not see it.
    check(main <= 0.05 * n, f"main thread (tid {p.pid}) has {main} of {n} samples")
    return (f"a {a/n:.0%}, b {b/n:.0%}, main thread {main} of {n}; "
            f"{len(busy)} threads sampled")


@test
def unicode_names():
    # Run a copy from a directory whose name is non-ASCII and needs escaping
    # in JSON; names and paths must come back byte for byte.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, 'dír "q" \\ tab\there\nnewline')
        os.mkdir(d)
        script = os.path.join(d, "ünï.py")
        shutil.copy(TARGETS / "unicode.py", script)
        p = wl.start(interpreter("debian"), script)
        rep = profile_json([p.pid], 1)
        txt = run_profiler(["-p", p.pid, "-d", 1, "-f", "text"], timeout=1 + RUN_SLACK)
    proc = process(rep, p.pid)
    n = proc["samples"]
    fns = functions(proc)
    check(set(fns) >= {"Ñandú.método_λ", "热点", "<module>"},
          f"functions {sorted(fns)}")
    files = {fn["file"] for fn in proc["functions"]} | {ln["file"] for ln in proc["lines"]}
    check(files == {script}, f"files {files}, expected {{{script!r}}}")
    check(proc["cmdline"] == f"{BUILDS['debian']} {script}", f"cmdline {proc['cmdline']!r}")
    hot = fns["Ñandú.método_λ"]["self"]
    check(n > 0 and hot >= 0.95 * n, f"Ñandú.método_λ self {hot} of {n}")
    check(fns["热点"]["total"] == n, f"热点 total {fns['热点']['total']} of {n}")
    check(txt.returncode == 0 and "Ñandú.método_λ" in txt.stdout,
          f"text report (exit {txt.returncode}) lacks Ñandú.método_λ")
    return f"Ñandú.método_λ {hot}/{n}, path with quote/backslash/tab/newline intact"


@test
def code_reuse():
    # reuse.py runs 40 generations of freshly compiled functions gen_N (file
    # "<gen N>"), each doing the same work, whose code objects tend to reuse
    # one address. A stale name cache would credit one generation's samples
    # to another's name, or pair a name with the wrong file.
    gens = 40
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "reuse.py", gens, 300000, 0.5)
        rep = profile_json([p.pid], 20, 999)
        try:
            rest, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            raise Fail("reuse.py did not finish")
    proc = process(rep, p.pid)
    check(proc["exited"] is True, f"exited is {proc['exited']!r}")
    m = re.search(rb"addresses (\d+)", rest)
    check(m, f"reuse.py printed no address count: {rest!r}")
    addresses = int(m.group(1))
    gen = {}
    for fn in proc["functions"]:
        mm = re.fullmatch(r"gen_(\d+)", fn["qualname"])
        if mm:
            check(fn["file"] == f"<gen {mm.group(1)}>",
                  f"{fn['qualname']} reported in file {fn['file']!r}")
            gen[int(mm.group(1))] = fn["self"]
    missing = sorted(set(range(gens)) - set(gen))
    # Each generation expects ~15 samples at 999 Hz; none seen at all is
    # ~e^-15 unlikely unless its samples went to another name.
    check(not missing, f"generations with no samples: {missing}")
    mean = sum(gen.values()) / gens
    worst = max(gen, key=gen.get)
    check(gen[worst] <= 3 * mean,
          f"gen_{worst} has {gen[worst]} samples, mean {mean:.1f}: absorbed others'")
    check(sum(gen.values()) >= 0.8 * proc["samples"],
          f"gen_* self {sum(gen.values())} of {proc['samples']} samples")
    return (f"{gens} generations over {addresses} code address(es), "
            f"{min(gen.values())}-{max(gen.values())} samples each, names match files")


@test
def error_thread_id():
    # A worker thread's id is a valid pid for /proc but not a process: the
    # profiler must say which process to give instead.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "threads.py")
        tids = [int(t) for t in os.listdir(f"/proc/{p.pid}/task") if int(t) != p.pid]
        check(tids, "threads.py has no worker threads")
        out = os.path.join(tmp, "x.json")
        msg, t = expect_error(["-p", tids[0], "-d", 1, "-o", out],
                              [str(tids[0]), f"-p {p.pid}"], out=out)
    return f"{t:.2f}s: {msg}"


@test
def error_no_such_pid():
    # A pid that surely does not exist: one that just exited and was reaped
    # (pids are allocated upwards, so it is not reused within a second).
    p = subprocess.Popen(["true"])
    p.wait(timeout=10)
    pid = p.pid
    check(not os.path.exists(f"/proc/{pid}"), f"pid {pid} reused already")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.json")
        msg, t = expect_error(["-p", pid, "-d", 1, "-o", out], [str(pid)], out=out)
    return f"{t:.2f}s: {msg}"


@test
def error_not_python():
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start_cmd(["sleep", "60"])
        time.sleep(0.2)  # let exec() finish so /proc/PID/exe is sleep
        out = os.path.join(tmp, "x.json")
        msg, t = expect_error(["-p", p.pid, "-d", 1, "-o", out],
                              [str(p.pid), "not a CPython process"], out=out)
    return f"{t:.2f}s: {msg}"


@test
def error_unsupported_version():
    found = unsupported_interpreters()
    if not found:
        raise Skip(f"no pyenv 2.7/3.6/3.7 under {PYENV}")
    msgs = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        for minor, exe in found:
            p = wl.start(exe, "idle.py")
            out = os.path.join(tmp, f"{minor}.json")
            msg, _ = expect_error(["-p", p.pid, "-d", 1, "-o", out],
                                  [str(p.pid), f"Python {minor}", "supported: 3.8 to 3.15"],
                                  out=out)
            msgs.append(msg)
    return f"{len(found)} refused ({', '.join(m for m, _ in found)}); e.g. {msgs[0]}"


@test
def error_no_privilege():
    if not shutil.which("setpriv"):
        raise Fail("setpriv (util-linux) not found")
    # Work on copies: nobody may not be able to traverse the checkout, and
    # the output directory must be writable by nobody so that only the
    # missing privilege can explain the failure.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)
        exe = os.path.join(tmp, "pybpfprof")
        shutil.copy(PROFILER, exe)
        os.chmod(exe, 0o755)
        out = os.path.join(tmp, "x.json")
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        drop = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all"]
        msg, t = expect_error(["-p", p.pid, "-d", 1, "-o", out], [], out=out,
                              prefix=drop, exe=exe)
    check("cap_bpf" in msg.lower() or "root" in msg.lower(),
          f"message names neither CAP_BPF nor root: {msg!r}")
    return f"{t:.2f}s: {msg}"


@test
def error_output_path():
    msgs = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        # -d 5: a check made only after profiling would take > 5 s.
        bad = "/nonexistent-dir/x.json"
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", bad], [bad], out=bad)
        check(t < 2, f"failed only after {t:.1f}s: output checked after profiling")
        msgs.append(f"{t:.2f}s: {msg}")
        # A directory as output: must be refused, and left untouched.
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", tmp], [tmp])
        check(t < 2, f"directory refused only after {t:.1f}s")
        check(os.path.isdir(tmp) and not os.listdir(tmp),
              f"{tmp} modified: {os.listdir(tmp)}")
        msgs.append(msg)
        # An existing file that cannot be written. Root ignores permission
        # bits, so make it immutable instead; it must keep its content.
        ro = os.path.join(tmp, "ro.json")
        with open(ro, "w") as f:
            f.write("keep")
        if shutil.which("chattr") and subprocess.run(
                ["chattr", "+i", ro], capture_output=True, timeout=10).returncode == 0:
            try:
                msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", ro], [ro])
                check(t < 2, f"immutable file refused only after {t:.1f}s")
            finally:
                subprocess.run(["chattr", "-i", ro], capture_output=True, timeout=10)
            with open(ro) as f:
                check(f.read() == "keep", f"{ro} was altered")
            msgs.append(msg)
        else:
            msgs.append("immutable file case not run: chattr unsupported here")
    return " | ".join(msgs)


@test
def error_keeps_existing_output():
    # Checking -o early must not mean truncating it early: a run that fails
    # on its target leaves an existing report as it was.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start_cmd(["sleep", "60"])
        time.sleep(0.2)
        out = os.path.join(tmp, "old.json")
        with open(out, "w") as f:
            f.write('{"old": true}\n')
        msg, _ = expect_error(["-p", p.pid, "-d", 1, "-o", out], ["not a CPython process"])
        with open(out) as f:
            check(f.read() == '{"old": true}\n', f"{out} changed by a failed run")
    return "existing -o file untouched by a failed run"


@test
def error_usage():
    # Bad command lines exit 2 before touching anything, output file included.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.json")
        cases = [([], "-p"), (["-p", "abc"], "abc"), (["-p", "1", "--max-depth", "2000"], "2000"),
                 (["-p", "1", "-f", "xml"], "xml"), (["-p", "1", "-F", "0"], "0"),
                 (["-p", "1", "-d", "0"], "0")]
        for args, word in cases:
            expect_error([*args, "-o", out], [word], out=out, rc=2)
    return f"{len(cases)} bad command lines exit 2"


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
        with open(out) as f:
            rep = json.load(f)
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
            rc, _, err = interrupt_profiler(["-p", p.pid, "-o", out], 2, sig)
        check(rc == 0, f"exit {rc} after {sig.name}: {err.strip()}")
        try:
            with open(out) as f:
                rep = json.load(f)
        except (OSError, ValueError) as e:
            raise Fail(f"{out}: {e}")
    sanity(rep, 99)
    total, dur = rep["samples"]["total"], rep["duration_s"]
    check(1.5 <= dur <= 2.3, f"duration_s {dur}, signal sent 2 s after start")
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


@test
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


# ------------------------------------------------------------- more suites

# Each feature's tests live in their own file, suite_<feature>.py, run in this
# module's namespace so they share its helpers (Interp, Workloads, run_profiler,
# check, @test ...) without an import cycle. Loaded in name order.
for _suite in sorted(HERE.glob("suite_*.py")):
    exec(compile(_suite.read_text(), str(_suite), "exec"), globals())


# --------------------------------------------------------------------- runner

def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nTests:", " ".join(name for name, _ in TESTS))
        return 0
    selected = [(n, f) for n, f in TESTS
                if not argv or any(fnmatch.fnmatchcase(n, pat) for pat in argv)]
    unmatched = [pat for pat in argv if not any(fnmatch.fnmatchcase(n, pat) for n, _ in TESTS)]
    if unmatched:
        print(f"run.py: no test matches {', '.join(unmatched)}; tests: "
              f"{' '.join(n for n, _ in TESTS)}", file=sys.stderr)
        return 2

    passed = failed = skipped = 0
    for name, fn in selected:
        try:
            details = fn()
        except Skip as e:
            skipped += 1
            print(f"SKIP {name}: {e}", flush=True)
        except Fail as e:
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
        except Exception as e:  # a crash in the test is a failure, not an abort
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        else:
            passed += 1
            print(f"PASS {name} ({details})", flush=True)
    summary = f"{passed} passed, {failed} failed"
    if skipped:
        summary += f", {skipped} skipped"
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
