# Many processes (issue 5): -a, launch mode, --subprocesses, short-lived
# processes. Exec'd into run.py's namespace (see the bottom of run.py).
#
# -a sees every Python on the host, including other test runs in parallel:
# every assertion here looks only at the pids this test started.


class Background:
    """A profiler run in the background (for -a): started, waited for until
    its kernel side is attached, stopped with SIGINT, its JSON read."""

    def __init__(self, args, freq):
        self.freq = freq
        self.out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([str(PROFILER), *map(str, args), "-F", str(freq), "-v",
                                   "-f", "json", "-o", self.out.name],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=self.err)

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def wait_attached(self, timeout=READY_TIMEOUT):
        # -v says how many processes the start-up scan found, after attaching.
        deadline = time.monotonic() + timeout
        while "CPython processes found" not in self.stderr():
            check(self.p.poll() is None, f"profiler exited ({self.p.returncode}): "
                  f"{self.stderr().strip()[-300:]}")
            check(time.monotonic() < deadline, f"profiler not attached after {timeout}s")
            time.sleep(0.05)

    def finish(self, timeout=RUN_SLACK, interrupt=True):
        """interrupt: stop it now with SIGINT; else let its -d run out."""
        if interrupt and self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise Fail(f"profiler still running after {timeout}s")
        check(self.p.returncode == 0, f"profiler exit {self.p.returncode}: "
              f"{self.stderr().strip()[-300:]}")
        with open(self.out.name) as f:
            rep = json.load(f)
        os.unlink(self.out.name)
        sanity(rep, self.freq)
        return rep

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
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
            expect = cpu[pid] * freq
            check(0.85 * expect - 5 <= hot <= 1.1 * expect + 5,
                  f"worker {pid}: {func} has {hot} samples, expected ~{expect:.0f} "
                  f"({cpu[pid]} s of CPU at {freq} Hz)")
        shown.append(f"{pid}:{hot}/{n}")
    return " ".join(shown)


def pool_workers(text):
    m = re.search(r"^workers: ([\d ]+)$", text, re.M)
    check(m, f"no workers line in the workload's output: {text[:300]!r}")
    pids = [int(x) for x in m.group(1).split()]
    check(len(pids) == 4, f"expected 4 distinct workers, got {pids}")
    return pids


def start_pool(wl, build, method, secs):
    """The pool workload, started and read up to its workers line."""
    interp = interpreter(build)
    err = tempfile.TemporaryFile()
    p = subprocess.Popen(interp.argv("procs_pool.py", [method, secs]), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=err, text=True)
    p.errfile = err
    wl.procs.append(p)
    line = p.stdout.readline()
    return p, pool_workers(line)


@test
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


def launch_pool(build, method, freq=199, secs=1.5):
    interp = interpreter(build)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        r = run_profiler(["--subprocesses", "-F", freq, "-f", "json", "-o", out, "--",
                          *interp.argv("procs_pool.py", [method, secs])],
                         timeout=secs + 30)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        workers = pool_workers(r.stdout)
        rep = json.loads(out.read_text())
    sanity(rep, freq)
    m = re.search(r"^done: (.*)$", r.stdout, re.M)
    check(m, f"the command's stdout did not pass through: {r.stdout[:300]!r}")
    cpu = {int(a): float(b) for a, b in (x.split(":") for x in m.group(1).split())}
    check(set(cpu) == set(workers), f"work ran in {sorted(cpu)}, not in {workers}")
    # no section without samples: a forked child that only exec'd leaves none
    empty = [p["pid"] for p in rep["processes"] if not p["samples"] and p["exited"]]
    shown = check_workers(rep, workers, "pool_work", 10, cpu, freq)
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


@test
def procs_short_lived():
    """20 Python processes of 0.3 s, one after another, during an -a run."""
    freq, count, life = 499, 20, 0.3
    py = interpreter("debian")
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
            check(r.stdout == "echo: hello\n", f"stdin/stdout not passed through: "
                  f"{r.stdout!r}")
            check("err\n" in r.stderr, f"stderr not passed through: {r.stderr!r}")
            rep = json.loads(out.read_text())
        procs = rep["processes"]
        check(len(procs) == 1, f"{len(procs)} sections for one command")
        hot = functions(procs[0]).get("exit_work", {}).get("self", 0)
        check(hot >= 0.8 * 99 * 0.5 * 0.5, f"exit_work has {hot} samples")
        shown.append(f"{code}->{r.returncode} ({hot} samples in exit_work)")
    expect_error(["--", "/nonexistent/command"], ["cannot run the command",
                                                  "no such file"])
    return "; ".join(shown)
