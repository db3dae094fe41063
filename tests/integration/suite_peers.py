# Other profilers' test intents, as pybpfprof runs (issue 29, item 3): what
# py-spy's, Austin's and CPython's sampling-profiler tests check, each with a
# target and a check of our own (none of their scripts or text). The intents
# that tests elsewhere already cover are named here, not tested twice:
#
#   intent (whose tests)                          covered by
#   busy loop sampled, active (py-spy)            suite_cpu split_*, hotline_*
#   thread names (py-spy)                         peers_thread_names_*, dump_deadlock_*
#   unicode function and file names (py-spy)      peers_unicode_kinds_*, unicode_names
#   locals of a frame (py-spy)                    dump_locals_zoo_*, apps_dump_*
#   recursion: root frame right, depth (py-spy,   peers_consistent_stacks_*, deep_recursion
#     Austin's accuracy test)
#   subprocess discovery, zombie child, delayed   peers_subprocess_tree, procs_* (fork,
#     launch through a shell, grandchildren         spawn, forkserver, shell)
#     (py-spy, CPython's --subprocesses)
#   dump of several processes, each once (py-spy) peers_subprocess_tree
#   long sleep with --idle, none without (py-spy) peers_long_sleep_*
#   GIL held / waiting (py-spy, CPython's gil     wall_gil_*, dump_gil_*
#     mode)
#   GC (Austin's -g, CPython's <GC> frames)       usdt_gc_*, dump_gc_*, ft_gc
#   torn stacks: a generator never under its      peers_consistent_stacks_*, dump_moving_*
#     consumer's own lines (CPython's blocking
#     test), no two call chains in one stack
#   exposure: the run lasts what was asked, no    peers_exposure
#     thread is charged more than the run
#     (Austin's -x and wall-time tests)
#   CPU mode leaves idle threads out, wall mode   threads, wall_classes_*, wall_idle
#     has them (CPython's mode tests)
#   native frames between Python frames           native_between_*, apps_pandas_native_*
#     (CPython's --native, py-spy's thread
#     reuse with native unwinding)                peers_thread_churn_native
#   negative line-number steps in a multi-line    peers_negative_lines_*
#     comprehension (py-spy)
#   container-like target (Austin, unshare)       pid_namespace, dump_pidns
#   WSGI server, processes x threads (Austin's    apps_gunicorn_cpu, apps_gunicorn_all
#     uwsgi tests)
#   a target that dies while sampled (CPython)    target_exits, sec_fault_target_killed
#   qualified names of methods (Austin)           unicode_names (Ñandú.método_λ)
#   output of the program passes through, exit    procs_launch_exit_code,
#     status kept (Austin, CPython)                 procs_subprocesses_*
#   bad pid, bad format (CPython)                 suite_errors
#
# Not applicable: Austin's memory mode (pybpfprof's --mem is page faults and
# mappings, tested in suite_mem), column positions and opcodes (pybpfprof
# reports lines), CPython's exception mode, subinterpreters and its own
# collectors' file formats.

import json
import math
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness import (RUN_SLACK, TARGETS, Fail, Workloads, check, check_cpu_samples, cpu_seconds,
                     functions, interpreter, load_report, per_build, process, profile_json,
                     python_version, read_stdout_until, run_profiler, sanity, source_line, test)
from suite_apps import check_counters, descendants, kill_pids, model_stacks
from suite_dump import dump_json, thread_of
from suite_procs import Background


def python_frames(fr):
    """A model stack's Python frames, innermost first."""
    return [f for f in fr if f[3] == "python"]


def minor(py):
    return int(python_version(py).split(".")[1])


# ----------------------------------------------------------- thread names

@per_build(builds=("debian", "pyenv38", "forky314", "sid315"))
def peers_thread_names(build):
    """Ten threads with threading names of their own (two not ASCII), all
    asleep: dump names each by its threading name and shows it asleep at
    the marked line; a --mode wall --idle --threads run charges each the
    whole run under its own tid, named as /proc names it (on 3.14+ that is
    the threading name, cut to 15 bytes by the kernel)."""
    py = interpreter(build)
    line, _ = source_line("peers_threads_named.py", "# PARK")
    freq = 99
    with Workloads() as wl:
        p = wl.start(py, "peers_threads_named.py", wait_ready=False)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        named = {tid: name for name, tid in
                 (json.loads(x) for x in re.findall(r"^tid (.*)$", buf, re.M))}
        check(len(named) == 10, f"threads {named}")
        proc = dump_json(["-p", p.pid])["processes"][0]
        comms = {tid: Path(f"/proc/{p.pid}/task/{tid}/comm").read_text().rstrip("\n")
                 for tid in named}
        rep = profile_json([p.pid], 2, freq, extra=("--mode", "wall", "--idle", "--threads"))
    for tid, name in named.items():
        t = thread_of(proc, tid)
        check(t["python_name"] == name, f"thread {tid}: threading name {t['python_name']!r}, "
              f"it is {name!r}")
        f0 = t["frames"][0]
        check(f0["function"] == "park" and f0["line"] == line, f"thread {tid} at {f0}")
        if minor(py) >= 14:
            check(comms[tid] == name.encode()[:15].decode(errors="ignore"),
                  f"3.14+: thread {tid} is {comms[tid]!r} in /proc, its name {name!r}")
    sect = process(rep, p.pid)
    threads = {t["tid"]: t for t in sect["threads"]}
    whole = rep["duration_s"] * freq
    for tid in named:
        t = threads.get(tid)
        check(t and abs(t["samples"] - whole) <= 0.02 * whole + 2 and t["name"] == comms[tid],
              f"thread {tid}: {t}, the run is worth {whole:.0f}, /proc names it {comms[tid]!r}")
    return f"10 threads named as threading names them; comm e.g. {comms[min(named)]!r}"


# ---------------------------------------------------------- unicode names

UNICODE_FUNCS = ("ascii_rounds", "café_crème", "кириллица", "\U0002000b\U000200a1")


@per_build(builds=("debian", "pyenv38", "pyenv312", "bullseye39", "trixie313", "sid315"))
def peers_unicode_kinds(build):
    """Function names in each of CPython's string layouts (ASCII, Latin-1,
    2 and 4 bytes a character) in a file whose name has an emoji (4 bytes):
    JSON and folded output name each function and the file exactly, and
    the four, doing equal work, each hold 25% of their samples within
    3 sd + 5 pp."""
    py = interpreter(build)
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "peers_unicode_\U0001f4a9.py"
        script.write_bytes((TARGETS / "peers_unicode.py").read_bytes())
        with Workloads() as wl:
            p = wl.start(py, script)
            rep = profile_json([p.pid], 2, 499)
            folded = run_profiler(["-p", p.pid, "-d", 1, "-F", 499, "-f", "folded"],
                                  timeout=1 + RUN_SLACK)
    proc = process(rep, p.pid)
    fns = functions(proc)
    path = py.script_path(script)
    got = {}
    for name in UNICODE_FUNCS:
        check(name in fns, f"{name!r} not among {sorted(fns)}")
        check(fns[name]["file"] == path, f"{name!r} in {fns[name]['file']!r}, not {path!r}")
        got[name] = fns[name]["total"]
    n = sum(got.values())
    for name, k in got.items():
        bound = 3 * math.sqrt(0.25 * 0.75 / n) + 0.05
        check(abs(k / n - 0.25) <= bound, f"{name!r}: {k} of {n} samples, expected 25% "
              f"+- {bound * 100:.1f} pp")
    check(folded.returncode == 0, f"folded: exit {folded.returncode}: {folded.stderr}")
    for name in UNICODE_FUNCS:
        check(f"{name} ({path}:" in folded.stdout, f"{name!r} ({path}) not in the folded output")
    return ", ".join(f"{k}: {v}" for k, v in got.items()) + f" of {n}"


# ------------------------------------------------------------- long sleep

@per_build(builds=("debian", "pyenv38", "sid315"))
def peers_long_sleep(build):
    """A process whose one thread sleeps for an hour: --mode wall --idle
    charges it the whole run (within 2% + 2 samples), every sample in one
    stack, the sleep class at nap's sleep line under <module>'s call line;
    CPU mode gives it no sample; --gil never sees it wait for the GIL;
    dump shows it asleep there without the GIL."""
    py = interpreter(build)
    nap, _ = source_line("peers_longsleep.py", "# LONG-NAP")
    call, _ = source_line("peers_longsleep.py", "# CALL-NAP")
    freq = 199
    with Workloads() as wl:
        p = wl.start(py, "peers_longsleep.py")
        time.sleep(0.2)
        wall = profile_json([p.pid], 2, freq, extra=("--mode", "wall", "--idle"))
        cpu = profile_json([p.pid], 1, freq)
        gil = profile_json([p.pid], 1, freq, extra=("--gil",))
        th = thread_of(dump_json(["-p", p.pid])["processes"][0], p.pid)
    stacks = model_stacks(wall, p.pid)
    n = sum(c for _, c, _ in stacks)
    whole = wall["duration_s"] * freq
    check(abs(n - whole) <= 0.02 * whole + 2, f"{n} samples, the run is worth {whole:.0f}")
    want = [("<off-CPU: sleep>", None), ("nap", nap), ("<module>", call)]
    for _, c, fr in stacks:
        got = [(f[0], f[2] if f[3] == "python" else None) for f in fr]
        check(got == want, f"{c} samples in {got}, expected {want}")
    csect = [q for q in cpu["processes"] if q["pid"] == p.pid]
    check(not csect or csect[0]["samples"] <= 1, f"CPU mode: {csect[0]['samples']} samples")
    for q in gil["processes"]:
        for t in q["threads"]:
            check(t.get("gil", {}).get("waiting", 0) == 0, f"--gil: {t}")
    check(th["gil"] == "not held" and [f["function"] for f in th["frames"]] == ["nap", "<module>"]
          and th["frames"][0]["line"] == nap and th["frames"][1]["line"] == call,
          f"dump: {th['gil']}, {th['frames']}")
    return f"wall --idle: {n} samples of {whole:.0f}, all asleep at nap:{nap}; CPU mode none"


# ---------------------------------------------------- consistent stacks

def loop_line(py_fr, own, call):
    """A thread's outermost own frame, a `while True:` loop around one call:
    at that call's line under a callee, and at it or the `while` above it
    when it is the innermost frame itself."""
    line = py_fr[len(own) - 1][2]
    return line == call or (len(own) == 1 and line == call - 1)


@per_build(builds=("debian", "pyenv38", "pyenv312", "trixie313", "sid315"))
def peers_consistent_stacks(build):
    """Stacks that change all the time are never torn: the generator
    readings() is only ever the innermost Python frame, right above
    average_readings() at its loop line, and never under average_readings()
    running its own arithmetic lines; depth_sum() recursion: every stack
    is depth_sum frames at the recursive call (the innermost anywhere)
    over recursion_loop() at its call line, at most 16 deep; shared_leaf()
    sits under route_a() or route_b() at their call lines, each under
    routes_loop() at the line that calls that route. Each kind of stack
    is seen at least 5 times. A stack cut short may only be one counted as
    partial: 3.12+ unlinks a generator from its caller a moment before the
    thread's current frame leaves it, and a sample there ends at the
    generator (seen in 1 to 3 of 600 samples on 3.12 before the walk
    flagged it)."""
    py = interpreter(build)
    script = "peers_consistency.py"
    L = {m: source_line(script, m)[0] for m in (
        "GEN-LOOP", "REC-CALL", "REC-LOOP", "ROUTE-A-CALL", "ROUTE-B-CALL", "ROUTES-A",
        "ROUTES-B", "ARITH-1", "ARITH-2", "ARITH-3")}
    with Workloads() as wl:
        p = wl.start(py, script, wait_ready=False)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        tids = {n: int(t) for n, t in re.findall(r"^tid (\w+) (\d+)$", buf, re.M)}
        rep = profile_json([p.pid], 3, 999)
    seen = {"gen-yield": 0, "arith": 0, "rec": 0, "route": 0}
    bad = []
    for tid, count, fr in model_stacks(rep, p.pid):
        py_fr = python_frames(fr)
        names = [f[0] for f in py_fr]
        if not names:
            continue
        own = names[:names.index("run")] if "run" in names else names
        if not own:  # in the thread's start, before its loop
            continue
        if tid == tids["gen"]:
            if "readings" in own:
                ok = own == ["readings", "average_readings", "gen_loop"] and \
                    py_fr[2][2] == L["GEN-LOOP"]
                seen["gen-yield"] += count
            else:
                ok = own[-1] == "gen_loop" and loop_line(py_fr, own, L["GEN-LOOP"])
                if own[0] == "average_readings" and py_fr[0][2] in (
                        L["ARITH-1"], L["ARITH-2"], L["ARITH-3"]):
                    seen["arith"] += count
        elif tid == tids["rec"]:
            k = len(own) - 1
            ok = own[-1] == "recursion_loop" and loop_line(py_fr, own, L["REC-LOOP"]) and \
                set(own[:-1]) <= {"depth_sum"} and k <= 16 and \
                all(f[2] == L["REC-CALL"] for f in py_fr[1:k])
            seen["rec"] += count
        elif tid == tids["route"]:
            if "shared_leaf" in own:
                i = own.index("shared_leaf")
                ok = i == 0 and len(own) == 3 and own[2] == "routes_loop" and \
                    (own[1], py_fr[1][2], py_fr[2][2]) in (
                        ("route_a", L["ROUTE-A-CALL"], L["ROUTES-A"]),
                        ("route_b", L["ROUTE-B-CALL"], L["ROUTES-B"]))
                seen["route"] += count
            elif own[0] in ("route_a", "route_b"):
                ok = own[1:] == ["routes_loop"] and (own[0], py_fr[1][2]) in (
                    ("route_a", L["ROUTES-A"]), ("route_b", L["ROUTES-B"]))
            else:
                ok = own == ["routes_loop"] and \
                    py_fr[0][2] in (L["ROUTES-A"] - 1, L["ROUTES-A"], L["ROUTES-B"])
        else:
            continue
        if not ok:
            bad.append((count, [(f[0], f[2]) for f in py_fr]))
    # a stack cut short is honest only when it is counted so (partial)
    torn = sum(c for c, _ in bad)
    partial = process(rep, p.pid)["partial"]
    check(torn <= partial, f"{torn} samples in torn or impossible stacks, {partial} counted "
          f"partial: {bad[:3]}")
    # a loaded machine gives the threads less CPU: a few of each suffice
    check(all(v >= 5 for v in seen.values()), f"too few samples of some stacks: {seen}")
    # the stacks kept are this test's subject: at 999 Hz on three busy threads, a pool at
    # full load made both builds' runs drop 1 % and 27 % at once (counted: the check is
    # that they are counted, in the counters, not how many the machine's load cost)
    cnt = check_counters(rep, {p.pid}, dropped=0.5)
    return f"stacks seen {seen}, {torn} cut short and counted partial; counters {cnt}"


# ---------------------------------------------------------------- exposure

@test
def peers_exposure():
    """The run lasts what it was asked, and no thread is charged more than
    it: attached with -d 2, the report's duration is 2 s (+ at most 0.2 s)
    and a spinning thread's samples its CPU time x rate; launched with -d 30
    on a program that lives about 1 s, the run ends at its exit (within
    0.5 s of the life it measured itself), and --mode wall charges its main
    thread that life x rate (within 2.5 sd of its on-CPU samples, + 3% +
    0.15 s of start-up above), rest()'s 0.6 s sleep exactly (3% + 3) and
    compute() at least 90% of its 0.4 s."""
    from harness import CpuMeter
    py = interpreter("debian")
    freq = 199
    with Workloads() as wl:
        p = wl.start(py, "spin.py", "alpha")
        with CpuMeter(p.pid) as cpu:
            rep = profile_json([p.pid], 2, freq)
    d = rep["duration_s"]
    check(2.0 <= d <= 2.2, f"-d 2 ran {d} s")
    n = process(rep, p.pid)["samples"]
    cpu.check_samples(n, freq, d, "the spinner")
    check(n <= d * freq * 1.0 + 3, f"one thread got {n} samples in {d} s at {freq} Hz")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        r = run_profiler(["-d", 30, "-F", freq, "--mode", "wall", "-o", out, "--",
                          *py.argv("peers_lifetime.py")], timeout=60)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        launched = load_report(out)
    lived = float(re.search(r"^lived ([\d.]+)$", r.stdout, re.M).group(1))
    d2 = launched["duration_s"]
    check(lived <= d2 <= lived + 0.5, f"-d 30 on a program that lived {lived:.3f} s ran {d2} s")
    sect = launched["processes"][0]
    main = [t for t in sect["threads"] if t["tid"] == sect["pid"]][0]
    want = lived * freq
    # off the CPU is exact; its time on the CPU is sampled, by chance
    chance = 2.5 * math.sqrt(main.get("on_cpu", 0)) + 2
    tol = 0.03 * want + 0.15 * freq
    check(want - chance <= main["samples"] <= want + chance + tol,
          f"main thread: {main['samples']} samples for a life of {lived:.3f} s = {want:.0f} "
          f"(-{chance:.0f}, +{chance + tol:.0f}: chance on the CPU, start-up)")
    fns = functions(sect)
    comp, rest = fns.get("compute", {}).get("total", 0), fns.get("rest", {}).get("total", 0)
    check(abs(rest - 0.6 * freq) <= 0.03 * 0.6 * freq + 3,
          f"rest(): {rest} samples for its 0.6 s sleep")
    check(comp >= 0.4 * freq * 0.9, f"compute(): {comp} samples for its >= 0.4 s")
    return (f"-d 2: {d} s, {n} samples; launched -d 30: {d2} s for a life of {lived:.3f} s, "
            f"main {main['samples']}/{want:.0f}, rest {rest}, compute {comp}")


# -------------------------------------------------- subprocess discovery

@test
def peers_subprocess_tree():
    """-p PARENT --subprocesses on a tree: a child (subprocess.Popen), its
    child, a zombie child (exited, never waited for) and a child started
    after the run began through a shell that sleeps then execs Python: the
    child, grandchild and late process (once it has used 1.5 s of CPU) each
    have a section with their own work_ROLE function holding at least 70%
    of their samples; the zombie has no samples; no section is outside the
    tree. dump -p PARENT -p CHILD lists each process once."""
    py = interpreter("debian")
    freq = 199
    with Workloads() as wl:
        p = wl.spawn(py.argv("peers_tree.py"), wait_ready=False, stdin=subprocess.PIPE)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        parent, child, grand, zombie = map(int, re.search(r"^pids (.*)$", buf, re.M)
                                           .group(1).split())
        tree = descendants(p.pid)
        try:
            dumped = dump_json(["-p", parent, "-p", child])
            bg = Background(["-p", parent, "--subprocesses"], freq)
            try:
                bg.wait_attached()
                p.stdin.write(b"late\n")
                p.stdin.flush()
                buf = read_stdout_until(p, lambda b: b"late " in b and b.endswith(b"\n"),
                                        "late").decode()
                late = int(buf.split("late ", 1)[1].split()[0])
                # 1.5 s of its CPU, however loaded the machine: its start-up
                # (sh's sleep, then the interpreter's imports) stays a small share
                deadline = time.monotonic() + 120
                while cpu_seconds(late) < 1.5:
                    check(time.monotonic() < deadline,
                          f"the late process used {cpu_seconds(late):.2f} s of CPU in 120 s")
                    time.sleep(0.05)
                rep = bg.finish()
            finally:
                bg.kill()
        finally:
            kill_pids(tree | descendants(p.pid))
    pids = [q["pid"] for q in dumped["processes"]]
    check(sorted(pids) == sorted([parent, child]), f"dump -p {parent} -p {child}: {pids}")
    by = {}
    for q in rep["processes"]:
        by.setdefault(q["pid"], []).append(q)
    check(set(by) <= tree | {parent, late}, f"sections {sorted(by)} outside the tree "
          f"{sorted(tree | {parent, late})}")
    shown = []
    for role, pid in (("child", child), ("grandchild", grand), ("late", late)):
        secs = by.get(pid, [])
        n = sum(q["samples"] for q in secs)
        hot = sum(functions(q).get(f"work_{role}", {}).get("total", 0) for q in secs)
        # the late one's start-up (its imports) falls in the run
        check(n >= 10 and hot >= 0.7 * n, f"{role} {pid}: work_{role} {hot} of {n} samples")
        shown.append(f"{role} {hot}/{n}")
    z = sum(q["samples"] for q in by.get(zombie, []))
    check(z == 0, f"the zombie {zombie} has {z} samples")
    return "; ".join(shown) + f"; zombie {zombie}: none; dump listed {len(pids)} processes"


# ------------------------------------------------ thread churn, --native

@test
def peers_thread_churn_native():
    """Threads that live a few milliseconds each, one after another (their
    ids reused), with --native: the run ends cleanly with no warning,
    churn_work holds at least 70% of the samples, spread over at least 20
    threads, no sample unresolved, and under 1% counted without their
    native frames or unplaced."""
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.start(py, "peers_churn.py")
        bg = Background(["-p", p.pid, "--native", "-d", 3], 499)
        try:
            rep = bg.finish(timeout=3 + RUN_SLACK, interrupt=False)
        finally:
            bg.kill()
    check(not bg.bad_lines(), f"warnings: {bg.bad_lines()[:3]}")
    proc = process(rep, p.pid)
    n = proc["samples"]
    hot = functions(proc).get("churn_work", {}).get("total", 0)
    threads = [t for t in proc["threads"] if t["samples"]]
    check(hot >= 0.7 * n, f"churn_work {hot} of {n} samples")
    check(len(threads) >= 20, f"samples in {len(threads)} threads")
    nat = rep["model"]["native"]
    check(nat["missing"] <= 0.01 * n + 1 and nat["unplaced"] <= 0.01 * nat["stacks"] + 1,
          f"native counters {nat} of {n} samples")
    cnt = check_counters(rep, {p.pid}, unresolved=0)
    return f"churn_work {hot}/{n} over {len(threads)} threads; native {nat}; counters {cnt}"


# ------------------------------------------------ negative line steps

@per_build(builds=("pyenv38", "pyenv310", "debian", "pyenv312", "sid315"))
def peers_negative_lines(build):
    """A comprehension over five lines whose line table steps backwards
    (its test is above its body): every line sampled in build() (or its
    comprehension's own frame before 3.12) lies within the comprehension's
    lines, and <module> is at the line that calls build()."""
    py = interpreter(build)
    script = "peers_negative_lines.py"
    first, _ = source_line(script, "# COMP-FIRST")
    last, _ = source_line(script, "# COMP-LAST")
    call, _ = source_line(script, "# CALL-BUILD")
    with Workloads() as wl:
        p = wl.start(py, script)
        rep = profile_json([p.pid], 2, 499)
    seen, bad = 0, []
    for _, count, fr in model_stacks(rep, p.pid):
        py_fr = python_frames(fr)
        names = [f[0] for f in py_fr]
        if names[-1] != "<module>" or "build" not in names:
            continue
        inner = [f for f in py_fr[:-1]]
        ok = py_fr[-1][2] == call and all(first <= f[2] <= last for f in inner) and \
            set(names[:-1]) <= {"build", "build.<locals>.<listcomp>", "<listcomp>"}
        seen += count
        if not ok:
            bad.append((count, [(f[0], f[2]) for f in py_fr]))
    n = process(rep, p.pid)["samples"]
    check(n >= 20 and seen >= 0.9 * n, f"{seen} of {n} samples in build()")
    check(not bad, f"{sum(c for c, _ in bad)} samples at lines outside {first}-{last} or "
          f"<module> not at {call}: {bad[:3]}")
    return f"{seen} samples, all at lines {first}-{last}, <module> at {call}"
