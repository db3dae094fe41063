"""The integration tests' harness: what every suite shares.

Outcomes (Fail, Skip, check); the interpreters under test (Interp, BUILDS,
interpreter); one way to start a workload, Workloads.spawn (start() for a
script under targets/), which waits for its "ready" line and kills and
reaps it at the end; one way to run the profiler, run_profiler to
completion or Profiler in the background (interrupt_profiler, profile_json
and expect_error are built on them); one way to read its report,
load_report, whose invariants sanity() checks; and the registry the suites
fill with @test and @per_build, which run.py runs. Suites import what they
use from here by name; this module imports no suite.

Standard library only: this runs under Debian 12's /usr/bin/python3.
"""

import hashlib
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


def rounds_from(shown, value, places, stored=4):
    """Whether shown, a figure printed with places decimals, is a rounding of
    value, read from a file that keeps stored decimals. Formatting value again
    is not the same test: a share of 24.95004 is printed -25.0 from the
    double, stored as 24.9500 and formatted back as 24.9 (CI saw it), and a
    tie rounds half-even in Python and up in JavaScript."""
    try:
        got = float(shown)
    except (TypeError, ValueError):
        return False
    slack = 0.5 * 10 ** -stored if stored is not None else 0
    return abs(got - value) <= 0.5 * 10 ** -places + slack + 1e-9


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
# pprof's own .proto, which protoc decodes the pprof files and pushes with.
PPROF_PROTO = ROOT / "tests/fixtures/profile.proto"


def parse_protoc_text(text, errors="strict", bytes_fields=()):
    """protoc --decode's text format into nested dicts of lists. errors is
    how a string field that is not UTF-8 is decoded (strict: it fails);
    bytes_fields name the fields that are bytes, kept as bytes."""
    stack = [{}]
    for raw in text.splitlines():
        s = raw.strip()
        if not s:
            continue
        if s == "}":
            stack.pop()
        elif s.endswith("{"):
            child = {}
            stack[-1].setdefault(s[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, val = s.split(":", 1)
            val = val.strip()
            if val.startswith('"'):
                val = val[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1")
                if key not in bytes_fields:
                    val = val.decode("utf-8", errors=errors)
            elif val in ("true", "false"):
                val = val == "true"
            else:
                val = int(val)
            stack[-1].setdefault(key, []).append(val)
    return stack[0]


def protoc_decode(data, message, proto=PPROF_PROTO, proto_path=None, errors="strict",
                  what="protoc --decode", bytes_fields=()):
    """data (a serialized message) decoded by protoc against the .proto file
    (proto_path: its import root, else its folder), parsed by
    parse_protoc_text; skips where protoc is not installed."""
    if not shutil.which("protoc"):
        raise Skip("protoc not installed (Debian package protobuf-compiler)")
    proto = Path(proto)
    root = Path(proto_path) if proto_path else proto.parent
    r = subprocess.run(["protoc", f"--proto_path={root}", f"--decode={message}",
                        str(proto.relative_to(root))],
                       input=data, capture_output=True, timeout=30)
    check(r.returncode == 0, f"{what} failed: {r.stderr.decode()[-300:]}")
    return parse_protoc_text(r.stdout.decode(), errors, bytes_fields)


# One folder per checkout: two checkouts' tests may run at once, each with
# its own version of a workload of the same name.
ROOT_TARGETS = f"/tmp/pybpfprof-targets-{hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]}"


def copy_whole(src, dst):
    """Copies src to dst unless dst already holds the same bytes, by a new
    file renamed over dst: a process starting from dst at that moment (a
    test running beside this one) reads the old file or the new, never a
    half-written one."""
    data = Path(src).read_bytes()
    try:
        if Path(dst).read_bytes() == data:
            return
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=Path(dst).parent, prefix=f".{Path(dst).name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, dst)


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
            return f"{self.host_path()} not installed" + (f" ({self.how})" if self.how else "") \
                + self.why_not_built()
        return None

    def why_not_built(self):
        """What tests/build-pythons.sh said when it could not build this one
        (its name is the directory under /opt/pybpfprof), or ""."""
        parts = self.python.parts
        if not self.root or len(parts) < 4 or parts[1:3] != ("opt", "pybpfprof"):
            return ""
        try:
            with open(self.root.parent / f".why-{parts[3]}", encoding="utf-8",
                      errors="replace") as f:
                why = "; ".join(ln.strip() for ln in f if ln.strip())
        except OSError:
            return ""
        return f": it could not be built: {why}" if why else ""

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
            copy_whole(src, inside / src.name)
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
        """A workload under targets/ (or a script path) run by python, an
        Interp or an executable, behind prefix (setpriv, unshare, ...)."""
        interp = python if isinstance(python, Interp) else Interp(python)
        return self.spawn([*prefix, *interp.argv(script, args)], wait_ready=wait_ready)

    def spawn(self, argv, wait_ready=True, stdin=subprocess.DEVNULL, text=False):
        """Any command as a workload, its stdout a pipe for the test to read;
        wait_ready: until it prints its "ready" line (as targets/ do)."""
        # stderr goes to a file, not a pipe: nobody drains it while the test
        # runs, and it is only read to explain a workload that died.
        err = tempfile.TemporaryFile()
        p = subprocess.Popen([*map(str, argv)], stdin=stdin, stdout=subprocess.PIPE,
                             stderr=err, text=text)
        self.procs.append(p)
        p.errfile = err
        if wait_ready:
            self.wait_ready(p)
        return p

    @staticmethod
    def wait_ready(p, timeout=READY_TIMEOUT):
        read_stdout_until(p, lambda buf: b"ready\n" in buf, "ready", timeout)


def stderr_tail(p, n=300):
    """The last n characters a workload of Workloads wrote to its stderr."""
    p.errfile.seek(0)
    return p.errfile.read().decode(errors="replace").strip()[-n:]


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
                raise Fail(f"workload {p.args[1:]} exited ({p.returncode}) "
                           f"before {what}: {stderr_tail(p)}")
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


def until_enough(run, count, need, secs, tries=3):
    """run(seconds) until count(its result) >= need, twice as long each time
    (at most tries runs): (the last result, its seconds). A loaded host
    gives a workload less CPU, so fewer samples in the same time; a test
    needing some number of samples to judge by takes longer there, rather
    than judging on too few or asking for less everywhere."""
    for k in range(tries):
        res = run(secs * 2 ** k)
        if count(res) >= need:
            break
    return res, secs * 2 ** k


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


def runq_wait(pid):
    """Seconds the process's main thread has spent runnable but waiting for
    a CPU (/proc/PID/schedstat's second field), or None where not kept."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


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


# -------------------------------------------------------------- USDT probes

class SemaphoreAddr(int):
    """A semaphore's address in its ELF file; .pie: the file is position
    independent, so a process has it at that address plus the file's load
    address (.inode tells its mapping)."""
    pie = False
    inode = 0


def usdt_semaphore_addr(py, probe):
    """Address of a python-provider probe's semaphore, from `readelf -n`
    (Debian's interpreters are non-PIE, so it is the runtime address; a PIE
    build's, as tests/build-pythons.sh makes, is resolved per process by
    usdt_semaphore)."""
    path = str(py.host_path())
    out = subprocess.run(["readelf", "-n", "-h", path], capture_output=True,
                         text=True, timeout=30).stdout
    m = re.search(rf"Provider: python\s+Name: {probe}\s+Location: \S+, Base: \S+, "
                  rf"Semaphore: (0x[0-9a-f]+)", out)
    check(m, f"no {probe} probe with a semaphore in {path}")
    addr = SemaphoreAddr(int(m.group(1), 16))
    addr.pie = re.search(r"Type:\s+DYN", out) is not None
    addr.inode = os.stat(path).st_ino
    return addr


def usdt_semaphore_runtime(pid, addr):
    """Where the semaphore is in the process: a PIE file's address plus the
    start of its mapping at file offset 0."""
    if not getattr(addr, "pie", False):
        return addr
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and int(fields[2], 16) == 0 and int(fields[4]) == addr.inode:
                return addr + int(fields[0].split("-")[0], 16)
    raise Fail(f"pid {pid} has no mapping of the file whose semaphore is at {addr:#x}")


def usdt_semaphore(pid, addr):
    """The semaphore's current value, read from the target's memory."""
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(usdt_semaphore_runtime(pid, addr))
        return int.from_bytes(f.read(2), "little")


def usdt_wait_semaphore(pid, addr, want_positive, timeout=READY_TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (usdt_semaphore(pid, addr) > 0) == want_positive:
            return
        time.sleep(0.02)
    raise Fail(f"pid {pid}: semaphore at {addr:#x} still {usdt_semaphore(pid, addr)} "
               f"after {timeout}s")


def usdt_ticktock_run(p, lines, sem):
    """usdt_ticktock.py's calls, made once the function probes are live: waits
    for the entry semaphore, lets the workload call (SIGUSR1) and waits for it
    to print "done". lines: its LineReader."""
    usdt_wait_semaphore(p.pid, sem, True)
    time.sleep(0.3)  # the entry link follows its semaphore by a few syscalls
    os.kill(p.pid, signal.SIGUSR1)
    lines.wait_for("done", timeout=60)
    time.sleep(0.3)


def usdt_ticktock_profile(wl, py, n, args):
    """pybpfprof -p on usdt_ticktock.py (started in wl with n) through its
    calls, stopped by SIGINT once the workload is done, and exited with 0.
    Returns the workload (still running) and the Profiler."""
    sem = usdt_semaphore_addr(py, "function__entry")
    p = wl.start(py, "usdt_ticktock.py", n)
    lines = LineReader(p)
    prof = Profiler(["-p", p.pid, *args])
    try:
        usdt_ticktock_run(p, lines, sem)
        prof.p.send_signal(signal.SIGINT)
        prof.wait(RUN_SLACK)
    finally:
        prof.kill()
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()}")
    return p, prof


class LineReader(threading.Thread):
    """Collects a workload's stdout lines as they come, with arrival times."""

    def __init__(self, p):
        super().__init__(daemon=True)
        self.p, self.lines = p, []
        self.start()

    def run(self):
        for raw in self.p.stdout:
            self.lines.append((time.monotonic(), raw.decode().strip()))

    def wait_for(self, text, timeout=READY_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(t == text for _, t in self.lines):
                return
            time.sleep(0.02)
        raise Fail(f"workload never printed {text!r}")


# ------------------------------------------------------------ profiler runs

def profiler_copy(directory):
    """A copy of the profiler in directory, for another user to run (who may
    not be able to traverse the checkout): its path."""
    exe = os.path.join(directory, "pybpfprof")
    shutil.copy(PROFILER, exe)
    os.chmod(exe, 0o755)
    return exe


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


def vm_hwm_kib(pid):
    """A process's peak RSS so far (VmHWM), in KiB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def own_peak_kib(ru_maxrss, spawn_hwm, polled):
    """A child's own peak RSS in KiB. wait4's ru_maxrss is the larger of the
    child's own peak and its parent's (this runner's) at the fork, which the
    exec records: above spawn_hwm it is the child's own, exact; otherwise the
    child's peak is no more than spawn_hwm and the VmHWM polled while it ran
    is the figure."""
    return ru_maxrss if ru_maxrss > spawn_hwm else max(polled, 0)


class Profiler:
    """The profiler run in the background (with -v unless verbose=False), for
    a test to act on the target while it samples. A thread reads its stderr
    as it comes and notes when -v's "attached" line arrived (sampling starts
    right after it); with capture, another reads its stdout. It is reaped
    with wait4, so that its exit time and peak RSS are known (own_peak_kib:
    its VmHWM is read at every step while it runs). A subclass may
    watch it (watch_step) while it is waited for."""

    STEP = 0.005

    def __init__(self, args, exe=None, prefix=(), stdout=subprocess.DEVNULL, verbose=True,
                 capture=False):
        self.err_lines, self.out_chunks = [], []
        self.t_start = time.monotonic()
        self.t_attached = self.t_end = self.runq_end = None
        self.rc = self.maxrss_kb = None
        argv = [*prefix, str(exe or PROFILER), *(["-v"] if verbose else []), *map(str, args)]
        self.spawn_hwm, self.polled_hwm = vm_hwm_kib(os.getpid()), 0
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE if capture else stdout,
                                  stderr=subprocess.PIPE)
        self.readers = [threading.Thread(target=self._read_stderr, daemon=True)]
        if capture:
            self.readers.append(threading.Thread(target=self._read_stdout, daemon=True))
        for t in self.readers:
            t.start()

    def _read_stderr(self):
        for raw in self.p.stderr:
            line = raw.decode(errors="replace")
            if self.t_attached is None and "attached: sampling" in line:
                self.t_attached = time.monotonic()
            self.err_lines.append(line)

    def _read_stdout(self):
        for chunk in iter(lambda: os.read(self.p.stdout.fileno(), 65536), b""):
            self.out_chunks.append(chunk)

    def _join_readers(self):
        for t in self.readers:
            t.join(timeout=5)

    def stdout(self):
        """What it printed (with capture), as UTF-8 text."""
        return b"".join(self.out_chunks).decode("utf-8", errors="replace")

    def stderr(self):
        return "".join(self.err_lines)

    def bad_lines(self):
        """stderr lines other than -v's progress notes: warnings, errors."""
        return [ln for ln in self.stderr().splitlines()
                if re.search(r"warning|error|cannot|failed|invalid", ln, re.I) and
                not ln.startswith("pybpfprof: kernel counters")]

    def watch_step(self):
        """Called every STEP while the profiler is waited for."""

    def running(self):
        """Whether it still runs; reaps it (exit status, time, peak RSS) once not."""
        if self.rc is not None:
            return False
        if self.p.returncode is not None:  # reaped by Popen (kill, poll)
            self.rc = self.p.returncode
            return False
        # Exited but not reaped yet: its run-queue wait can still be read.
        try:
            gone = os.waitid(os.P_PID, self.p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            gone = True
        if not gone:
            self.polled_hwm = max(self.polled_hwm, vm_hwm_kib(self.p.pid))
            return True
        self.t_end = time.monotonic()
        self.runq_end = runq_wait(self.p.pid)
        pid, status, ru = os.wait4(self.p.pid, 0)
        self.rc = self.p.returncode = os.waitstatus_to_exitcode(status)
        self.maxrss_kb = own_peak_kib(ru.ru_maxrss, self.spawn_hwm, self.polled_hwm)
        self._join_readers()
        return False

    def mark(self):
        """(now, the seconds it has waited for a CPU so far), for late()."""
        return time.monotonic(), runq_wait(self.p.pid)

    def late(self, mark, due):
        """How long after `due` (a time.monotonic()) it exited, less the time it
        spent waiting for a CPU since `mark` (taken at or before due): what
        the profiler itself took. A loaded machine makes a process wait for a
        CPU, and that is no lateness of its own; its own work and sleeps are."""
        t, waited = mark
        check(self.t_end is not None, "pybpfprof has not exited")
        extra = 0.0 if self.runq_end is None or waited is None else self.runq_end - waited
        return (self.t_end - due) - max(0.0, extra)

    def wait_attached(self, timeout=READY_TIMEOUT):
        """Waits for -v's "attached" line: the time it came."""
        deadline = time.monotonic() + timeout
        while self.t_attached is None:
            self.watch_step()
            check(self.running(), f"pybpfprof exited ({self.p.returncode}) before "
                  f"attaching: {self.stderr().strip()[-300:]}")
            check(time.monotonic() < deadline, f"pybpfprof not attached after {timeout} s")
            time.sleep(self.STEP)
        return self.t_attached

    def watch(self, seconds):
        """Watches for `seconds` (or until it exits); True if it still runs."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.watch_step()
            if not self.running():
                return False
            time.sleep(self.STEP)
        return True

    def wait(self, timeout):
        """Waits for its exit (killing it after timeout s): its exit status."""
        deadline = time.monotonic() + timeout
        while self.running():
            self.watch_step()
            if time.monotonic() > deadline:
                self.kill()
                raise Fail(f"pybpfprof still running {timeout} s later: killed")
            time.sleep(self.STEP)
        return self.rc

    def kill(self):
        if self.running():
            self.p.kill()
            self.p.wait(timeout=10)
        self._join_readers()


def interrupt_profiler(args, after_s, sig=signal.SIGINT, timeout=10):
    """Run the profiler in the background for after_s seconds, then stop it
    with sig: (returncode, stderr). A run that ended before the signal, or
    is still running `timeout` s after it, fails the test."""
    prof = Profiler(args, verbose=False)
    try:
        time.sleep(after_s)
        check(prof.running(), f"profiler exited early ({prof.rc})")
        prof.p.send_signal(sig)
        prof.wait(timeout)
    finally:
        prof.kill()
    return prof.rc, prof.stderr()


def profile_json(pids, duration, freq=99, extra=()):
    args = [a for pid in pids for a in ("-p", pid)]
    args += ["-d", duration, "-F", freq, "-f", "json", *extra]
    r = run_profiler(args, timeout=duration + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    rep = load_report(text=r.stdout)
    sanity(rep, freq)
    return rep


def load_report(path=None, *, text=None):
    """The profiler's JSON report, read from the file at path or from the
    text it printed; a missing, cut or invalid one fails the test."""
    try:
        if path is None:
            return json.loads(text)
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        if path is None:
            raise Fail(f"invalid JSON on stdout ({e}): {text[:200]!r}")
        raise Fail(f"{path}: no complete JSON report: {e}")


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


def line_table(text, func):
    """Rows (line, samples, %func, source) of func's line-by-line table, and
    the note lines before its header."""
    lines = text.splitlines()
    start = [i for i, s in enumerate(lines) if s.strip().startswith(f"Line by line: {func} ")]
    check(start, f"no 'Line by line: {func}' section: {text[-800:]}")
    rows, notes = [], []
    for s in lines[start[0] + 1:]:
        if not s.strip() or s.strip().startswith("Line by line:"):
            break
        m = re.match(r"\s+(\d+|\?)\s+(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)(?:\s{2}(.*))?$", s)
        if m:
            rows.append((m.group(1), int(m.group(2)), float(m.group(3)), m.group(6) or ""))
        elif s.strip().startswith("source:"):
            notes.append(s.strip())
    return rows, notes


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
# Tests that must run with no other test beside them (run.py -j): they
# measure the machine (a cost, a rate of the whole host) or follow every
# process on it (-a) and count what they see.
ALONE = set()


def test(fn=None, *, alone=False):
    """Registers a test; @test(alone=True) for one that must run alone."""
    def register(fn):
        TESTS.append((fn.__name__, fn))
        if alone:
            ALONE.add(fn.__name__)
        return fn
    return register(fn) if fn else register


def per_build(fn=None, *, builds=None, alone=False):
    """One test per interpreter the harness knows, named e.g. split_debian,
    split_sid315; @per_build(builds=(...)) for only those builds."""
    def register(fn):
        for build in builds or BUILDS:
            def bound(build=build):
                return fn(build)
            name = f"{fn.__name__}_{build}"
            TESTS.append((name, bound))
            if alone:
                ALONE.add(name)
        return fn
    return register(fn) if fn else register
