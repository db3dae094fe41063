# CPU sampling of running programs, each with a known ground truth: the
# sample count follows the CPU time the target got, the split between its
# functions is the one it measured itself, the hot line is the one in its
# source; across threads, pid namespaces, deep stacks, non-ASCII names and
# code objects that reuse one address.

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from pathlib import Path

from harness import (BUILDS, CpuMeter, Fail, Profiler, RUN_SLACK, TARGETS, Workloads,
                     available, check, check_cpu_samples, functions, interpreter, load_report,
                     per_build, process, profile_json, python_version, run_profiler,
                     source_line, test, until_enough, workload_split)


@per_build
def split(build):
    return check_split(interpreter(build))


def check_split(py, suffix=""):
    """split.py's 75/25 split on py (an Interp), within 2pp of what the
    workload measured of its own CPU time. The report's version is the
    interpreter's with suffix ("t": free-threaded)."""
    freq, secs = 999, 4
    with Workloads() as wl:
        p = wl.start(py, "split.py")
        fast0, slow0 = workload_split(p)
        with CpuMeter(p.pid) as cpu:
            rep = profile_json([p.pid], secs, freq)
        fast1, slow1 = workload_split(p)
    proc = process(rep, p.pid)
    check(proc["python"] == python_version(py) + suffix,
          f"python {proc['python']!r}, interpreter says {python_version(py)!r}{suffix}")
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
        prof = Profiler(["-p", p.pid, "-d", 60, "-F", freq, "-f", "json"], capture=True)
        try:
            prof.wait_attached()
            os.kill(p.pid, signal.SIGUSR1)
            prof.wait(60 + RUN_SLACK)
        finally:
            prof.kill()
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()}")
    rep = load_report(text=prof.stdout())
    proc = process(rep, p.pid)
    fns = functions(proc)
    after = fns.get("after", {}).get("self", 0)
    check(after, f"after() has no samples: profiling stopped when the main thread "
          f"exited? (functions: {sorted(fns)})")
    check_cpu_samples(after, after_s, freq, "after()")
    check(proc["exited"], "the process is not marked exited after its last thread ended")
    # about after_s on an idle host (its CPU seconds: longer on a loaded
    # one); the -d 60 if the end was missed
    check(rep["duration_s"] < 50,
          f"the run lasted {rep['duration_s']} s: the end of the last thread was missed")
    check(proc["unresolved"] <= 2, f"{proc['unresolved']} unresolved samples")
    return (f"after() {after} samples after the main thread exited; run ended at "
            f"{rep['duration_s']:.1f} s with the process")


@per_build
def hotline(build):
    return check_hotline(interpreter(build))


def check_hotline(py):
    """hotline.py on py (an Interp): the membership line holds >= 85% of hot()."""
    line, text = source_line("hotline.py", "# membership")
    code = text.split("#")[0].strip()          # "if i in haystack:"
    with Workloads() as wl:
        p = wl.start(py, "hotline.py")
        rep = profile_json([p.pid], 3, 999)
        # a sample at least, however loaded the machine
        txt, _ = until_enough(lambda secs: run_profiler(["-p", p.pid, "-d", secs, "-f", "text"],
                                                        timeout=secs + RUN_SLACK),
                              lambda r: r.returncode or "Ñandú.método_λ" in r.stdout, 1, 1)
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
        rep, _ = until_enough(lambda secs: profile_json([p.pid], secs),
                              lambda r: process(r, p.pid)["samples"], 20, 1)
        # a sample at least, however loaded the machine
        txt, _ = until_enough(lambda secs: run_profiler(["-p", p.pid, "-d", secs, "-f", "text"],
                                                        timeout=secs + RUN_SLACK),
                              lambda r: r.returncode or "Ñandú.método_λ" in r.stdout, 1, 1)
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
    gens, work = 40, 1000000
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "reuse.py", gens, work, 0.5)
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
    unresolved = proc["unresolved"]
    # Each generation is ~25 ms of CPU, ~25 samples at 999 Hz: none under
    # its name is ~e^-25 unlikely, unless its code object was gone (and its
    # address reused) before the profiler read it, a busy machine delaying
    # the profiler; then its samples are counted unresolved, never given
    # another's name. So each generation missing has unresolved samples.
    check(len(missing) <= unresolved, f"generations with no samples: {missing}, "
          f"{unresolved} unresolved samples")
    mean = sum(gen.values()) / max(1, len(gen))
    worst = max(gen, key=gen.get)
    check(gen[worst] <= 3 * mean,
          f"gen_{worst} has {gen[worst]} samples, mean {mean:.1f}: absorbed others'")
    check(sum(gen.values()) + unresolved >= 0.8 * proc["samples"],
          f"gen_* self {sum(gen.values())} + {unresolved} unresolved of {proc['samples']} "
          f"samples")
    return (f"{gens} generations over {addresses} code address(es), "
            f"{min(gen.values())}-{max(gen.values())} samples each, names match files; "
            f"{len(missing)} missing, {unresolved} unresolved")


@per_build(builds=("debian", "pyenv", "pyenv310"))
def lines_unlined_jump(build):
    """A hot loop whose closing jump has no line in the line table (3.10,
    3.11, as the workload's own co_lines says): the samples taken there are
    charged to the line before it, as CPython 3.12+ charges that jump, in
    every format: no line -1 in JSON, no frame without a line in folded
    stacks or speedscope, no "?" in the text's line-by-line table, and the
    function's lines add up to its self samples."""
    import json
    from harness import line_table, read_stdout_until
    py = interpreter(build)
    freq, secs = 999, 2
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        p = wl.start(py, "wall_lines_backedge.py", wait_ready=False)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        unl = json.loads(buf.split("unlined ", 1)[1].splitlines()[0])
        names = ("p.json", "p.folded", "p.txt", "p.speedscope.json")
        args = ["-p", p.pid, "-d", secs, "-F", freq, "--line-report", 1]
        for n in names:
            args += ["-o", tmp / n]
        r = run_profiler(args, timeout=secs + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        files = {n: (tmp / n).read_text() for n in names}
    jumps = [u for u in unl if "JUMP" in u[1]]
    check(jumps, f"spin() has no jump without a line on this build: {unl}")
    proc = process(json.loads(files["p.json"]), p.pid)
    spin = functions(proc)["spin"]
    lines = [ln for ln in proc["lines"] if ln["qualname"] == "spin"]
    check(all(ln["line"] >= 1 for ln in lines),
          f"spin's lines: {[(ln['line'], ln['self']) for ln in lines]}")
    check(sum(ln["self"] for ln in lines) == spin["self"],
          f"spin's lines hold {sum(ln['self'] for ln in lines)} of its {spin['self']} samples")
    for ln in files["p.folded"].splitlines():
        check(not re.search(r"spin \([^;:]*\)", ln), f"folded frame without a line: {ln}")
    frames = json.loads(files["p.speedscope.json"])["shared"]["frames"]
    check(all(f.get("line", -1) >= 1 for f in frames if f["name"] == "spin"),
          f"speedscope frames of spin: {[f for f in frames if f['name'] == 'spin']}")
    rows, _ = line_table(files["p.txt"], "spin")
    check(rows and all(row[0] != "?" for row in rows), f"spin's line-by-line rows: {rows}")
    # the jump's samples went to the line before it (its own co_lines)
    before = {u[2] for u in jumps}
    got = {ln["line"]: ln["self"] for ln in lines}
    check(all(got.get(b, 0) > 0 for b in before),
          f"no samples on line(s) {sorted(before)} before the jump: {got}")
    return (f"{spin['self']} samples of spin() on lines {got}; jump(s) without a line at "
            f"{[u[0] for u in jumps]} charged to line(s) {sorted(before)}")
