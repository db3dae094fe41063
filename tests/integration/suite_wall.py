# --mode wall and --gil against workloads that know their own truth: a loop
# that computes half the time and sleeps the other half (it measures both
# itself), one thread per kind of wait (sleep, pipe read, lock), threads
# fighting for the GIL next to one that sleeps, a thread blocked for the
# whole run (--idle), and a C thread that never runs Python.

import json

from harness import (Fail, Workloads, available, check, functions, interpreter, load_report,
                     per_build, process, profile_json, read_stdout_until, run_profiler, test)

WALL_BUILDS = ("debian", "pyenv38", "pyenv312", "pyenv313", "sid314", "sid315")


def start_with_tids(wl, py, script):
    """Starts a workload that prints "tid NAME NATIVE_ID" lines before
    "ready"; returns the process and {name: tid}."""
    p = wl.start(py, script, wait_ready=False)
    buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready")
    tids = {}
    for line in buf.decode().splitlines():
        if line.startswith("tid "):
            _, name, tid = line.split()
            tids[name] = int(tid)
    return p, tids


def wall_split(p):
    """wall_half.py's own measure (ns) of its time in compute() and pause()."""
    import os
    import signal
    os.kill(p.pid, signal.SIGUSR1)
    buf = read_stdout_until(p, lambda b: b.endswith(b"\n"), "answering SIGUSR1")
    word, comp, pause = buf.decode().split()
    check(word == "wall", f"wall_half.py answered {buf!r}")
    return int(comp), int(pause)


def thread(proc, tid):
    ts = [t for t in proc["threads"] if t["tid"] == tid]
    check(len(ts) == 1, f"thread {tid} appears {len(ts)} times: "
          f"{[t['tid'] for t in proc['threads']]}")
    return ts[0]


@per_build(builds=WALL_BUILDS)
def wall_half(build):
    """The compute/sleep loop: in wall mode compute() and pause() split the
    time as the workload measured it itself (+- 5pp), and the two together
    hold the whole run; in CPU mode pause() has (almost) nothing."""
    py = interpreter(build)
    freq, secs = 99, 5
    with Workloads() as wl:
        p = wl.start(py, "wall_half.py")
        c0, s0 = wall_split(p)
        rep = profile_json([p.pid], secs, freq, extra=("--mode", "wall"))
        c1, s1 = wall_split(p)
        cpu = profile_json([p.pid], 3, freq)
    proc = process(rep, p.pid)
    check(rep["mode"] == "wall", f"mode {rep.get('mode')!r}")
    fns = functions(proc)
    check("compute" in fns and "pause" in fns, f"compute/pause missing: {sorted(fns)}")
    comp, pause = fns["compute"]["total"], fns["pause"]["total"]
    share = comp / (comp + pause)
    truth = (c1 - c0) / ((c1 - c0) + (s1 - s0))
    check(abs(truth - 0.5) <= 0.1, f"the workload measured a compute share of {truth:.1%}")
    check(abs(share - truth) <= 0.05,
          f"compute share {share:.1%} (compute {comp}, pause {pause} samples), the "
          f"workload measured {truth:.1%}: expected +- 5pp")
    # every sample's worth of the run is charged: main thread on or off the CPU
    whole = secs * freq
    check(0.9 * whole <= comp + pause <= 1.1 * whole,
          f"compute+pause {comp + pause} samples, the run is worth {whole}")
    check(fns["pause"]["off_cpu_by_class"]["sleep"] >= 0.9 * pause,
          f"pause's off-CPU by class: {fns['pause']['off_cpu_by_class']}")
    cfns = functions(process(cpu, p.pid))
    ccomp = cfns.get("compute", {}).get("total", 0)
    cpause = cfns.get("pause", {}).get("total", 0)
    # a sleep call's own CPU, at most 5% (+3 samples of chance: a loaded host
    # gives compute fewer samples, and pause's few weigh more among them)
    check(ccomp > 0 and cpause <= 0.05 * (ccomp + cpause) + 3,
          f"CPU mode: compute {ccomp}, pause {cpause} samples (expected at most 5% + 3: "
          f"the CPU a sleep call costs)")
    return (f"wall: compute share {share:.1%} (truth {truth:.1%}), {comp + pause} of {whole} "
            f"samples; cpu: compute {ccomp}, pause {cpause}")


@per_build(builds=WALL_BUILDS)
def wall_classes(build):
    """Each waiting thread's off-CPU time is in its own class: do_sleep()
    sleep, do_read() (os.read on a pipe) I/O, do_lock() (threading.Lock)
    lock, each for at least 90% of its off-CPU samples; and in the JSON's
    lines at the line that waits, with its own samples (main: the lines
    left out every line whose samples were all off the CPU, and listed the
    off-CPU pseudo-function as a line of its own instead)."""
    py = interpreter(build)
    with Workloads() as wl:
        p, tids = start_with_tids(wl, py, "wall_classes.py")
        rep = profile_json([p.pid], 3, 99, extra=("--mode", "wall", "--idle"))
    proc = process(rep, p.pid)
    fns = functions(proc)
    pseudo = [ln for ln in proc["lines"] if ln["file"] == "<off-CPU>"]
    check(not pseudo, f"off-CPU pseudo-functions among the lines: {pseudo[:2]}")
    out = []
    for fn, cls in (("do_sleep", "sleep"), ("do_read", "I/O"), ("do_lock", "lock")):
        check(fn in fns, f"{fn} missing: {sorted(fns)}")
        by = fns[fn]["off_cpu_by_class"]
        off = fns[fn]["off_cpu"]
        check(off >= 0.8 * 3 * 99, f"{fn}: only {off} off-CPU samples in a 3 s run")
        check(by[cls] >= 0.9 * off, f"{fn}: {by}, expected mostly {cls}")
        # the function waits at one line: its wait is that line's own
        rows = [ln for ln in proc["lines"] if ln["qualname"] == fn]
        top = max(rows, key=lambda ln: ln["self"], default=None)
        check(top and top["off_cpu_by_class"][cls] >= 0.9 * off and
              top["self"] >= top["off_cpu"] >= 0.9 * off,
              f"{fn}: its lines {rows}, {off} off-CPU samples in the function")
        out.append(f"{fn} {by[cls]}/{off} {cls}, line {top['line']} {top['self']}")
    return ", ".join(out)


@per_build(builds=WALL_BUILDS)
def wall_gil(build):
    """--gil (without --mode wall): the two spinning threads hold the GIL in
    their samples and wait for it (each about as long as the other holds
    it); the thread asleep in one long sleep never waits for it."""
    py = interpreter(build)
    with Workloads() as wl:
        p, tids = start_with_tids(wl, py, "wall_gil.py")
        rep = profile_json([p.pid], 4, 99, extra=("--gil",))
    proc = process(rep, p.pid)
    out = []
    gils = {name: thread(proc, tids[name])["gil"] for name in ("spin1", "spin2")}
    for name, other in (("spin1", "spin2"), ("spin2", "spin1")):
        g = gils[name]
        # on CPU a spinner holds the GIL (a few samples may fall in a hand-over)
        check(g["held"] >= 10, f"{name}: {g}: held in too few samples")
        check(g["released"] <= 0.05 * g["held"] + 1, f"{name}: {g}: runs without the GIL?")
        # while the other holds it, it waits: at least half as long (the machine's
        # other load preempts the holder too, which only lengthens the wait)
        check(g["waiting"] >= 0.5 * gils[other]["held"],
              f"{name}: {g}, the other spinner held it {gils[other]['held']}: waits too little")
        out.append(f"{name} {g}")
    sl = [t for t in proc["threads"] if t["tid"] == tids["sleeper"]]
    check(not sl or sl[0]["gil"]["waiting"] == 0, f"sleeper: {sl[0]['gil'] if sl else ''}")
    fns = functions(proc)
    check(fns.get("spin", {}).get("gil", {}).get("waiting", 0) > 0,
          f"spin's gil: {fns.get('spin')}")
    return "; ".join(out) + "; sleeper waited 0"


@test
def wall_gil_free_threaded():
    """--gil on a free-threaded build (3.13t) is refused with one sentence."""
    from suite_freethreaded import ft_interp
    with Workloads() as wl:
        p = wl.start(ft_interp("trixie313t"), "idle.py")
        r = run_profiler(["-p", p.pid, "-d", 1, "--gil"], timeout=30)
    check(r.returncode != 0 and "no GIL" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          f"rc {r.returncode}: {r.stderr}")
    return r.stderr.strip()


@test
def wall_idle():
    """A thread blocked on a lock for the whole run is left out by default
    (and counted as left out); --idle shows it, charged the whole run."""
    py = interpreter("debian")
    freq, secs = 99, 3
    with Workloads() as wl:
        p, tids = start_with_tids(wl, py, "wall_classes.py")
        hidden = profile_json([p.pid], secs, freq, extra=("--mode", "wall"))
        shown = profile_json([p.pid], secs, freq, extra=("--mode", "wall", "--idle"))
    lock = tids["lock"]
    h = process(hidden, p.pid)
    check(all(t["tid"] != lock or t["samples"] == 0 for t in h["threads"]),
          f"default: the blocked thread is shown: {h['threads']}")
    check("do_lock" not in functions(h), "default: do_lock is shown")
    s = thread(process(shown, p.pid), lock)
    check(0.9 * secs * freq <= s["off_cpu"] <= 1.1 * secs * freq,
          f"--idle: the blocked thread has {s['off_cpu']} off-CPU samples, "
          f"the run is worth {secs * freq}")
    return f"hidden by default; --idle: {s['off_cpu']} off-CPU samples of {secs * freq}"


@test
def wall_every_format():
    """A --mode wall --gil run written in every format by the run, then by
    `pybpfprof report run.json -o X`: byte for byte the same; every format
    carries the off-CPU weight (folded lines ending in an off-CPU frame, the
    flame graphs' blue frames, pprof's wall value type), and the text shows
    the wall and GIL sections."""
    import tempfile
    from pathlib import Path
    from suite_report import FILES, report
    py = interpreter("debian")
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-wall-"))
    (out / "run").mkdir()
    (out / "one").mkdir()
    with Workloads() as wl:
        p, tids = start_with_tids(wl, py, "wall_gil.py")
        args = ["-p", p.pid, "-d", 2, "--mode", "wall", "--gil", "--threads"]
        for name in FILES.values():
            args += ["-o", out / "run" / name]
        r = run_profiler(args, timeout=30)
    check(r.returncode == 0, f"rc {r.returncode}: {r.stderr}")
    for name, f in FILES.items():
        r = report([out / "run" / "p.json", "--threads", "-o", out / "one" / f])
        check(r.returncode == 0, f"report -o {f}: {r.stderr}")
        check((out / "one" / f).read_bytes() == (out / "run" / f).read_bytes(),
              f"{name}: report's output differs from the run's")
    folded = (out / "run" / "p.folded").read_text().splitlines()
    off = [l for l in folded if "<off-CPU: " in l.rsplit(";", 1)[-1]]
    check(off, "no off-CPU stacks in the folded output")
    check(("rgb(" in (out / "run" / "p.svg").read_text()
           and "blue: frames mostly off the CPU" in (out / "run" / "p.svg").read_text()),
          "no off-CPU legend in the SVG")
    # the HTML flame graph's names: every off-CPU pseudo-frame flagged (drawn blue),
    # and spin's frame, which ran on the CPU mostly, not
    import json
    import re
    html = (out / "run" / "p.html").read_text()
    m = re.search(r'<script type="application/json" id="profile">(.*?)</script>', html, re.S)
    names = json.loads(m.group(1))["names"]
    pseudo = [n for n in names if n[0].startswith("<off-CPU: ")]
    check(pseudo and all(len(n) == 3 and n[2] == 1 for n in pseudo),
          f"off-CPU frames not flagged: {pseudo}")
    check("blue: frames mostly off the CPU" in json.loads(m.group(1))["title"],
          "no legend in the HTML flame graph's title")
    text = (out / "run" / "p.txt").read_text()
    for section in ("Wall time by thread", "Functions by wall time", "Lines by off-CPU time",
                    "Functions that waited most for the GIL"):
        check(section in text, f"no {section!r} section in the text report")
    return f"{len(FILES)} formats byte-identical; {len(off)} off-CPU folded stacks"


@test
def wall_refusals():
    """--mode, --idle and --gil misused: exit 2 with one sentence saying what to do,
    and no output file."""
    import os
    import tempfile
    from harness import expect_error
    out = os.path.join(tempfile.mkdtemp(prefix="pybpfprof-wall-"), "p.json")
    cases = [(["--mode", "bogus"], ["--mode", "cpu, wall or exception"]),
             (["--idle"], ["--idle", "--mode wall"]),
             (["--mode", "wall", "--merge"], ["--mode wall", "--merge"])]
    for extra, words in cases:
        expect_error(["-p", os.getpid(), "-d", 1, "-o", out, *extra], words, out=out, rc=2)
    return f"{len(cases)} refusals"


def wall_run_until(pid, args, act):
    """pybpfprof --mode wall on pid until act(profiler) returns, then
    Ctrl-C: (report, monotonic ns when the SIGINT was sent, ns when the
    profiler was started, ns when it had exited, act's result)."""
    import json
    import signal
    import tempfile
    import time
    from harness import RUN_SLACK, Profiler
    out = tempfile.mkdtemp(prefix="pybpfprof-wall-") + "/w.json"
    t_start = time.monotonic_ns()
    prof = Profiler(["-p", pid, "--mode", "wall", "-F", 99, "-o", out, *args])
    try:
        prof.wait_attached()
        got = act(prof)
        t_stop = time.monotonic_ns()
        prof.p.send_signal(signal.SIGINT)
        prof.wait(RUN_SLACK)
    finally:
        prof.kill()
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()[-300:]}")
    with open(out) as f:
        rep = json.load(f)
    return rep, t_stop, t_start, int(prof.t_end * 1e9), got


def wall_truth(p, word):
    """The workload's line "WORD JSON-or-number", read from its stdout."""
    import json
    buf = read_stdout_until(p, lambda b: f"{word} ".encode() in b and b.endswith(b"\n"), word)
    line = [ln for ln in buf.decode().splitlines() if ln.startswith(f"{word} ")][0]
    return json.loads(line.split(" ", 1)[1])


@per_build(builds=("debian", "pyenv38", "pyenv312", "sid315"))
def wall_open_repeat(build):
    """A thread asleep at the end of the run where it slept before (the
    kernel sent no stack for that block), and idle pool workers in their
    queue's get(), are charged up to the end: the sleeper's sleep time is
    its two finished sleeps plus the open one from its start (its own
    clock) to the Ctrl-C, each worker's off-CPU time at least the time from
    its last task to the Ctrl-C, and nothing is counted as lost."""
    import os
    import signal
    import time
    py = interpreter(build)

    def act(prof):
        os.kill(p.pid, signal.SIGUSR1)
        truth = wall_truth(p, "truth")
        time.sleep(1.5)
        return truth

    with Workloads() as wl:
        p = wl.start(py, "wall_repeat.py")
        rep, t_stop, t_start, t_exit, truth = wall_run_until(p.pid, (), act)
    proc = process(rep, p.pid)
    sl = thread(proc, truth["sleeper"])
    done = truth["sleeps"]
    long_start = truth["long_start"]
    # a 0.1 s nanosleep is off the CPU at least 0.1 s but the few us before it
    # leaves; the long one from (just after) its start to the end
    low = len(done) * 99_000_000 + (t_stop - long_start) - 10_000_000
    high = sum(e - s for s, e in done) + (t_exit - long_start)
    got = sl["off_cpu_ns"]["sleep"]
    wall = rep["model"]["wall"]
    check(low <= got <= high,
          f"sleeper: {got / 1e9:.3f} s asleep, expected {low / 1e9:.3f}-{high / 1e9:.3f} s "
          f"(finished sleeps {[round((e - s) / 1e9, 3) for s, e in done]}, then "
          f"{(t_stop - long_start) / 1e9:.3f} s to the Ctrl-C); its off-CPU ns "
          f"{sl['off_cpu_ns']}, wall counters {wall}")
    out = [f"sleeper {got / 1e9:.3f} s of {low / 1e9:.3f}-{high / 1e9:.3f}"]
    for tid, end in truth["workers"].items():
        w = thread(proc, int(tid))
        off = sum(w["off_cpu_ns"].values())
        # after its last task a worker runs a few lines of the pool's code
        check(t_stop - end - 20_000_000 <= off <= t_exit - t_start,
              f"worker {tid}: {off / 1e9:.3f} s off the CPU, idle "
              f"{(t_stop - end) / 1e9:.3f} s before the Ctrl-C: {w['off_cpu_ns']}")
        out.append(f"worker {off / 1e9:.2f}/{(t_stop - end) / 1e9:.2f} s")
    check(wall["unmatched"] == 0 and wall["dropped"] == 0, f"intervals lost: {wall}")
    return ", ".join(out)


@test
def wall_pid_namespace():
    """A thread blocked in os.read() at attach, in a process of its own pid
    namespace (unshare --pid), is charged from the run's start: its time
    off the CPU until it woke (its own clock) is there, not only what
    follows."""
    import os
    import signal
    import time
    from pathlib import Path
    from suite_cpu import child_pid
    chrooted = [b for b in ("trixie313", "sid315", "bullseye39") if available(b)]
    py = interpreter(chrooted[0]) if chrooted else interpreter("debian")
    with Workloads() as wl:
        outer = wl.start(py, "wall_nsblocked.py", wait_ready=False,
                         prefix=("unshare", "--pid", "--fork"))
        buf = read_stdout_until(outer, lambda b: b"ready\n" in b, "ready")
        nstid = int(buf.decode().split("tid ", 1)[1].split()[0])
        inner = child_pid(outer.pid)
        try:
            host = [int(t.name) for t in Path(f"/proc/{inner}/task").iterdir()
                    if f"NSpid:\t{t.name}\t{nstid}\n" in (t / "status").read_text()]
            check(len(host) == 1, f"no task of pid {inner} is {nstid} in its namespace")

            def act(prof):
                t_att = time.monotonic_ns()
                time.sleep(1.5)
                os.kill(inner, signal.SIGUSR1)
                woke = wall_truth(outer, "woke")
                time.sleep(0.3)
                return t_att, woke

            rep, t_stop, t_start, t_exit, (t_att, woke) = wall_run_until(inner, (), act)
        finally:
            # killing unshare leaves its child running: kill the namespace's init
            os.kill(inner, signal.SIGKILL)
    proc = process(rep, inner)
    check(proc["nspid"] == 1, f"nspid {proc['nspid']}")
    ns = thread(proc, host[0])["off_cpu_ns"]
    before = sum(v for k, v in ns.items() if k != "sleep")
    # blocked from the attach (before the -v line was read) to its wakeup;
    # the few ms it ran since cannot be off the CPU
    check(woke - t_att - 20_000_000 <= before and ns["I/O"] <= woke - t_start,
          f"reader (tid {nstid} inside, {host[0]} on the host): {ns}; blocked "
          f"{(woke - t_att) / 1e9:.3f}-{(woke - t_start) / 1e9:.3f} s before it woke")
    return (f"{py}{' chrooted' if py.root else ''}: {ns['I/O'] / 1e9:.3f} s in os.read() of "
            f"{(woke - t_att) / 1e9:.3f}-{(woke - t_start) / 1e9:.3f} s")


@test
def wall_headers():
    """A --mode wall section counts on-CPU and off-CPU samples together: the
    text, call tree and call graph say so ("s of thread time: A s on the
    CPU, B s off it", A and B the JSON's on_cpu and off_cpu samples of its
    threads over the rate), never "s of CPU"."""
    import json
    import re
    import tempfile
    from pathlib import Path
    freq = 99
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "wall_half.py")
        tmp = Path(tmp)
        names = ("p.txt", "p.tree", "p.dot", "p.json")
        args = ["-p", p.pid, "-d", 2, "-F", freq, "--mode", "wall"]
        for name in names:
            args += ["-o", tmp / name]
        r = run_profiler(args, timeout=2 + 20)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        files = {n: (tmp / n).read_text() for n in names}
    proc = process(json.loads(files["p.json"]), p.pid)
    on = sum(t["on_cpu"] for t in proc["threads"])
    off = sum(t["off_cpu"] for t in proc["threads"])
    check(on + off == proc["samples"], f"on {on} + off {off} != {proc['samples']} samples")
    want = (f"{proc['samples']} samples ({proc['samples'] / freq:.2f} s of thread time: "
            f"{on / freq:.2f} s on the CPU, {off / freq:.2f} s off it)")
    for name in ("p.txt", "p.tree", "p.dot"):
        body = files[name]
        check(want in body, f"{name}: no {want!r} in "
              f"{re.findall(r'[0-9]+ samples [(][^)]*[)]', body)}")
        check("s of CPU" not in body, f"{name} says 's of CPU'")
    return want


def task_switches(pid, tid):
    """The voluntary and involuntary context switches of a task so far."""
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return (int(fields["voluntary_ctxt_switches"]) +
            int(fields["nonvoluntary_ctxt_switches"]))


@test
def wall_no_python():
    """A thread that never runs Python (faulthandler's watchdog, a C thread
    blocking every 50 ms) is not charged, and its blocks are counted as
    such: model.wall.no_python is the switches it made during the run (its
    /proc counters, read just after the attach and after the end, give or
    take 0.3 s of them and 2), the text says how many, and the main thread
    alone is in the profile."""
    import tempfile
    from pathlib import Path
    from harness import Profiler
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p, tids = start_with_tids(wl, interpreter("debian"), "wall_c_thread.py")
        dog = tids["watchdog"]
        txt, js = Path(tmp) / "w.txt", Path(tmp) / "w.json"
        prof = Profiler(["-p", p.pid, "--mode", "wall", "-d", 2, "-o", txt, "-o", js])
        prof.wait_attached()
        s0 = task_switches(p.pid, dog)
        rc = prof.wait(2 + 20)
        s1 = task_switches(p.pid, dog)
        check(rc == 0, f"exit {rc}: {prof.stderr().strip()[-300:]}")
        rep = load_report(js)
        text = txt.read_text()
    w = rep["model"]["wall"]
    made = s1 - s0
    check(abs(w["no_python"] - made) <= 0.3 * made / 2.0 + 2,
          f"{w['no_python']} blocks without Python counted, the watchdog switched {made} times")
    check(w["unreadable"] == 0 and w["dropped"] == 0, f"wall counters {w}")
    want = f"{w['no_python']} off-CPU intervals of threads with no Python frame then"
    check(want in text, f"the text does not say {want!r}")
    tids_seen = [t["tid"] for t in process(rep, p.pid)["threads"]]
    check(tids_seen == [p.pid], f"threads in the profile: {tids_seen} (main {p.pid}, "
          f"watchdog {dog})")
    return f"{w['no_python']} of the watchdog's {made} switches counted, none charged"


@per_build(builds=("debian", "pyenv38", "pyenv312", "trixie313", "sid315"))
def wall_gil_launch(build):
    """--gil on a launched command: every CPU sample of every thread, from
    the interpreter's first bytecode on, says whether its thread held the
    GIL (held + released + unknown = its CPU samples, exactly), and none is
    left unknown: the sampler finds the GIL itself as soon as the
    interpreter has made it, before its first Python frame."""
    import json
    import tempfile
    from harness import TARGETS
    py = interpreter(build)
    out = tempfile.mkdtemp(prefix="pybpfprof-wall-") + "/g.json"
    r = run_profiler(["--gil", "-F", 199, "-o", out, "--", *py.argv(TARGETS / "wall_gil_burst.py")],
                     timeout=60)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    with open(out) as f:
        rep = json.load(f)
    procs = [p for p in rep["processes"] if p["samples"]]
    check(len(procs) == 1, f"{len(procs)} sections with samples: {[p['pid'] for p in procs]}")
    proc = procs[0]
    out = []
    for t in proc["threads"]:
        g = t["gil"]
        check("unknown" in g and g["held"] + g["released"] + g["unknown"] == t["on_cpu"],
              f"thread {t['tid']}: {t['on_cpu']} CPU samples, GIL {g}")
        check(g["unknown"] == 0, f"thread {t['tid']}: {g['unknown']} of {t['on_cpu']} CPU "
              f"samples with no GIL state (the GIL not found yet)")
        out.append(f"{g['held']}+{g['released']}/{t['on_cpu']}")
    check(sum(t["on_cpu"] for t in proc["threads"]) >= 50,
          f"only {proc['samples']} samples of 1 s of CPU at 199 Hz")
    return f"Python {proc['python']}: held+released/CPU samples per thread: {', '.join(out)}"


@per_build(builds=("debian", "pyenv38", "pyenv312", "sid315"))
def wall_young_threads(build):
    """A new thread's first wait: 200 threads started one after another
    while both CPUs are busy (a new thread waits for one before it has run a
    line), each sleeping 50 ms first thing. Every thread's sleep is in the
    timeline, once, between the stamps the thread took around it, and ends
    at least 50 ms after the first. (main: a thread that waited for a CPU before its thread
    state knew its id was believed to have none for 10 ms, and its sleep was
    lost: 2-3 threads of 200 in each of 2 runs, 1-2 of 100 in 3 of 5.)"""
    import tempfile
    from pathlib import Path
    from harness import TARGETS, source_line
    py, n, script = interpreter(build), 200, "wall_young_threads.py"
    at = f"sleep at {py.script_path(script)}:{source_line(script, 'wall: young sleep')[0]}"
    with tempfile.TemporaryDirectory() as tmp:
        js, trace = Path(tmp) / "y.json", Path(tmp) / "y.trace.json"
        # A switch the kernel does not report (model.wall.unseen: now and then
        # this kernel lets one pass without its tracepoint) may be one of the
        # sleeps: the run is made again, twice at most.
        for _ in range(3):
            r = run_profiler(["--mode", "wall", "-F", 99, "-o", js, "-o", trace, "--",
                              *py.argv(script, [n])], timeout=60)
            check(r.returncode == 0 and "done" in r.stdout,
                  f"exit {r.returncode}: {r.stderr.strip()[-300:]}; {r.stdout[-200:]!r}")
            rep = load_report(js)
            if not rep["model"]["wall"]["unseen"]:
                break
        tr = json.loads(trace.read_text())
    stamps = {int(t): (int(b), int(a)) for t, b, a in
              (ln.split()[1:] for ln in r.stdout.splitlines() if ln.startswith("sleep "))}
    check(len(stamps) == n, f"{len(stamps)} threads' stamps of {n}")
    zero = tr["otherData"]["start_monotonic_ns"]
    slices = {}
    for e in tr["traceEvents"]:
        if e["ph"] == "X" and e["name"] == at:
            start = zero + round(e["ts"] * 1000)
            slices.setdefault(e["tid"], []).append((start, start + round(e["dur"] * 1000)))
    lost = sorted(set(stamps) - set(slices))
    check(not lost, f"{len(lost)} of {n} threads' first sleep missing: {lost[:5]}; "
          f"wall counters {rep['model']['wall']}")
    for tid, (before, after) in stamps.items():
        got = slices[tid]
        # the trace's times are whole ns rounded from its microseconds: 1 ns of slack
        # time.sleep sleeps until a deadline 50 ms after its call: a wait for
        # a CPU on its way in (a slice of its own) shortens the sleep, not its end
        check(len(got) == 1 and before - 1 <= got[0][0] and got[0][1] <= after + 1 and
              got[0][1] >= before + 50_000_000 - 1,
              f"thread {tid}: its sleep {got}, stamped between {before} and {after}")
    return f"{n} of {n} threads' first sleeps, each between its stamps; {rep['model']['wall']}"
