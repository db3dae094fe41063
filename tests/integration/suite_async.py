"""pybpfprof dump --async: asyncio task trees read from outside.

The ground truth is the workload's: the names it gives its tasks, which
awaits which, the lines its markers are on, and the line of asyncio.sleep's
own await in the interpreter's tasks.py; on 3.14 and 3.15, the tree
`python -m asyncio pstree` prints for the same process.
"""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness import (Skip, Workloads, check, interpreter, python_version, run_profiler,
                     source_line, test, per_build)

SCRIPT = "async_tree.py"
ASYNC_BUILDS = ("debian", "pyenv", "pyenv312", "pyenv313", "trixie313", "forky314", "sid314",
                "sid315")


def dump(pid, *more):
    r = run_profiler(["dump", "-p", pid, "--async", *more], timeout=30)
    check(r.returncode == 0, f"dump exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def tasks_json(pid):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "dump.json")
        dump(pid, "-f", "json", "-o", out)
        with open(out) as f:
            return json.load(f)["processes"][0]["asyncio"]


def sleep_line(py, out):
    """The `sleep FILE:LINE` frame dump shows, checked against that file: the
    line must be asyncio.sleep's `return await future`."""
    m = re.search(r"  sleep (\S+/asyncio/tasks\.py):(\d+)\n", out)
    check(m, f"no asyncio.sleep frame in:\n{out}")
    path, line = m.group(1), int(m.group(2))
    host = Path(str(py.root) + path) if py.root else Path(path)
    lines = host.read_text().splitlines()
    check(lines[line - 1].strip() == "return await future",
          f"{path}:{line} is {lines[line - 1].strip()!r}, not sleep's await")
    start = max(i for i in range(line) if lines[i].startswith("async def "))
    check(lines[start].startswith("async def sleep("), f"{path}:{line} is not in sleep()")
    return f"sleep {path}:{line}"


def frame(py, marker, func):
    line, _ = source_line(SCRIPT, marker)
    return f" {func} {py.script_path(SCRIPT)}:{line}"


def expected_chain(py, sleep):
    """outer-A > middle-B > inner-C under the main task, as pstree draws it."""
    rows = [("(T) Task-1", 0), (frame(py, "# MAIN", "main"), 1), ("(T) outer-A", 2),
            (frame(py, "# AWAIT-B", "outer_a"), 3), ("(T) middle-B", 4),
            (frame(py, "# AWAIT-C", "middle_b"), 5), ("(T) inner-C", 6),
            (frame(py, "# SLEEP-C", "inner_c"), 7), (" " + sleep, 8)]
    return [" " * 4 * depth + "└── " + text for text, depth in rows]


def expected_gather(py, sleep):
    out = ["└── (T) gatherer", "    └── " + frame(py, "# GATHER", "gatherer")]
    for i in range(3):
        bar, pad = ("└── ", "    ") if i == 2 else ("├── ", "│   ")
        out += [f"        {bar}(T) leaf-{i}",
                f"        {pad}└── " + frame(py, "# LEAF", "leaf"),
                f"        {pad}    └──  " + sleep]
    return out


def block(lines, first, n):
    check(first in lines, f"{first!r} not in the tree:\n" + "\n".join(lines))
    at = lines.index(first)
    return lines[at:at + n]


@per_build(builds=ASYNC_BUILDS)
def async_tree(build):
    """A chain of three named tasks, a gather() of three and a cycle of two
    show as pstree's tree, each coroutine at its file:line; the JSON's
    awaited_by lists are exactly who awaits whom."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, SCRIPT)
        out = dump(p.pid)
        sleep = sleep_line(py, out)
        tree = out.split("\nasyncio tasks: ", 1)[1].splitlines()
        check(tree[0] == "10 pending", f"tasks line {tree[0]!r}")
        want = expected_chain(py, sleep)
        check(block(tree, want[0], len(want)) == want,
              "chain:\n" + "\n".join(block(tree, want[0], len(want))) + "\nwanted:\n" +
              "\n".join(want))
        want = expected_gather(py, sleep)
        check(block(tree, want[0], len(want)) == want,
              "gather:\n" + "\n".join(block(tree, want[0], len(want))) + "\nwanted:\n" +
              "\n".join(want))
        cyc = frame(py, "# CYCLE", "cycle")
        first = [t for t in tree if t.startswith("└── (T) cycle-")]
        check(len(first) == 1, f"cycle roots {first}")
        a, b = ("X", "Y") if first[0].endswith("X") else ("Y", "X")
        want = [f"└── (T) cycle-{a}", "    └── " + cyc, f"        └── (T) cycle-{b}",
                "            └── " + cyc,
                f"                └── (T) cycle-{a} (awaits itself through the tasks above: "
                "cycle)"]
        check(block(tree, want[0], 5) == want, "cycle:\n" + "\n".join(block(tree, want[0], 5)))
        check(len(tree) == 1 + 9 + 11 + 5, f"{len(tree)} lines:\n" + "\n".join(tree))

        js = tasks_json(p.pid)
        check(js["error"] is None and js["left_out"] is False and js["unreadable"] == 0 and
              js["not_c_tasks"] == 0, f"asyncio {dict((k, js[k]) for k in js if k != 'tasks')}")
        by = {t["name"]: t for t in js["tasks"]}
        check(len(by) == 10 == len(js["tasks"]), f"tasks {sorted(by)}")
        ids = {t["id"]: t["name"] for t in js["tasks"]}
        names = lambda lst: sorted(ids[i] for i in lst)  # noqa: E731
        for name, by_, awaits in (
                ("Task-1", [], ["outer-A"]), ("outer-A", ["Task-1"], ["middle-B"]),
                ("middle-B", ["outer-A"], ["inner-C"]), ("inner-C", ["middle-B"], []),
                ("gatherer", [], ["leaf-0", "leaf-1", "leaf-2"]),
                ("leaf-0", ["gatherer"], []), ("leaf-1", ["gatherer"], []),
                ("leaf-2", ["gatherer"], []),
                ("cycle-X", ["cycle-Y"], ["cycle-Y"]), ("cycle-Y", ["cycle-X"], ["cycle-X"])):
            t = by[name]
            check(names(t["awaited_by"]) == by_ and names(t["awaits"]) == awaits,
                  f"{name}: awaited_by {names(t['awaited_by'])} awaits {names(t['awaits'])}")
        check(by["gatherer"]["awaits_gather"] and not by["outer-A"]["awaits_gather"],
              "awaits_gather")
        line, _ = source_line(SCRIPT, "# SLEEP-C")
        c = by["inner-C"]["coroutine_stack"]
        check([(f["function"], f["line"]) for f in c][:1] == [("inner_c", line)] and
              len(c) == 2 and c[1]["function"] == "sleep", f"inner-C stack {c}")


def pstree(py, pid):
    """python -m asyncio pstree PID, run inside the build's root with /proc
    and the root's own path visible, in a mount namespace of its own."""
    root = str(py.root)
    sh = (f"mount --bind /proc {root}/proc && mount -t tmpfs none {root}/var/cache && "
          f"mkdir -p {root}{root} && mount --bind {root} {root}{root} && "
          f"exec chroot {root} {py.python} -m asyncio pstree {pid}")
    r = subprocess.run(["unshare", "-m", "sh", "-c", sh], capture_output=True, text=True,
                       timeout=60)
    if r.returncode and "unshare" in r.stderr:
        raise Skip(f"cannot make a mount namespace to run pstree in: {r.stderr.strip()}")
    check(r.returncode == 0, f"pstree exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


@per_build(builds=("forky314", "sid314", "sid315"))
def async_same_as_pstree(build):
    """On 3.14+, the tree is the one CPython's own pstree prints, byte for
    byte (the process without its cycle, which pstree refuses to draw)."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, SCRIPT, "nocycle")
        ours = dump(p.pid).split("\nasyncio tasks: ", 1)[1].split("\n", 1)[1]
        theirs = pstree(py, p.pid)
        check(ours == theirs, f"dump --async:\n{ours}\npstree:\n{theirs}")


@per_build(builds=("pyenv310", "bullseye39"))
def async_unsupported(build):
    """Before 3.11 the tasks are not read, and dump says so (exit 0: the
    threads are still dumped)."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, SCRIPT)
        out = dump(p.pid)
        check("\nasyncio tasks: unreadable (not supported for this Python build)\n" in out,
              f"no refusal in:\n{out}")
        js = tasks_json(p.pid)
        check(js["error"] == "not supported for this Python build" and js["tasks"] == [],
              f"json {js}")


@test
def async_no_asyncio():
    """A process that never imported asyncio has no tasks, and dump says why."""
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.start(py, "idle.py")
        out = dump(p.pid)
        check("\nasyncio tasks: none (asyncio.tasks is not imported)\n" in out, out)


def async_cpu_s(pid):
    """The process's CPU seconds so far (/proc/PID/stat's utime and stime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def folded(pid, *more, cpu_s=1.5):
    """pybpfprof -v (and more) on pid until it has used cpu_s of CPU, then a
    SIGINT (a fixed -d gives a loaded machine's target few samples): its
    folded stacks summed by stack, and its stderr."""
    from harness import Profiler, RUN_SLACK
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "s.folded"
        run = Profiler(["-p", pid, "-F", "199", "-o", out, *more])
        try:
            run.wait_attached()
            start = async_cpu_s(pid)
            deadline = time.monotonic() + 180
            while async_cpu_s(pid) - start < cpu_s:
                check(run.watch(0.05), f"pybpfprof exited early ({run.rc})")
                check(time.monotonic() < deadline, f"pid {pid}: too little CPU in 180 s")
            run.p.send_signal(signal.SIGINT)
            run.wait(RUN_SLACK)
        finally:
            run.kill()
        check(run.rc == 0, f"exit {run.rc}: {run.stderr().strip()[-300:]}")
        text = out.read_text()
    stacks = {}
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        stacks[stack] = stacks.get(stack, 0) + int(count)
    return stacks, run.stderr()


@per_build(builds=("debian", "pyenv312", "pyenv313", "forky314", "sid315"))
def async_sampling(build):
    """Sampling --async: the samples of a CPU-busy coroutine are charged
    under its task chain, spin-outer > spinner > burn, in place of the event
    loop's frames; without --async the same stacks have no task in them."""
    py = interpreter(build)
    path = py.script_path(SCRIPT)
    at = lambda marker: source_line(SCRIPT, marker)[0]  # noqa: E731
    chain = (f"spin-outer (<asyncio task>);spin_outer ({path}:{at('# AWAIT-SPIN')});"
             f"spinner (<asyncio task>);spinner ({path}:{at('# CALL-BURN')});burn ({path}:")
    with Workloads() as wl:
        p = wl.start(py, SCRIPT, "spin", "nocycle")
        stacks, err = folded(p.pid, "--async")
        total = sum(stacks.values())
        burn = sum(n for s, n in stacks.items() if ";burn (" in s)
        under = sum(n for s, n in stacks.items() if s.startswith(chain))
        check(total >= 80, f"only {total} samples")
        check(burn >= 0.9 * total, f"burn has {burn} of {total} samples")
        check(under == burn, f"{under} of burn's {burn} samples under the task chain:\n" +
              "\n".join(f"{n} {s}" for s, n in stacks.items()))
        m = re.search(r"--async: (\d+) samples charged to task chains \((\d+) of them", err)
        check(m and int(m.group(1)) >= burn and int(m.group(2)) == 0,
              f"--async counts: {m and m.group(0)}")
        plain, _ = folded(p.pid)
        check(not any("<asyncio task>" in s for s in plain), "tasks without --async")
        check(any(s.endswith(f"asyncio/base_events.py:{s.rsplit(':', 1)[1]}") or
                  "run_forever" in s for s in plain if ";burn (" in s),
              "without --async, burn's stacks do not go through the event loop")


@per_build(builds=("debian", "pyenv313", "forky314", "sid315"))
def async_hostile(build):
    """Tasks damaged in place (a name pointing nowhere, a bytes object for a
    coroutine, a task awaiting itself or a wild pointer, a coroutine awaiting
    itself, a task list looping on itself) are shown as far as they read:
    bounded, in well under a second, and the process goes on."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, "async_corrupt.py")
        t0 = time.monotonic()
        out = dump(p.pid)
        took = time.monotonic() - t0
        check(took < 10, f"dump took {took:.1f} s")
        tree = out.split("\nasyncio tasks: ", 1)[1].splitlines()
        check(tree[0].startswith("7 pending"), f"tasks line {tree[0]!r}")
        looped = int(python_version(py).split(".")[1]) >= 14  # the task list loops
        check(("more left out" in tree[0]) == looped, f"tasks line {tree[0]!r}")
        outer = f"  outer {py.script_path('async_corrupt.py')}:"
        roots = [i for i, line in enumerate(tree) if line.startswith("└── (T) ")]
        blocks = {tree[i][8:]: tree[i + 1:j] for i, j in zip(roots, roots[1:] + [len(tree)])}
        check(set(blocks) == {"Task-1", "<unreadable at 0x10>", "bad-coro", "wild-waiter",
                              "loop-coro", "ring", "self-wait"}, f"roots {sorted(blocks)}")
        check(len(blocks["<unreadable at 0x10>"]) == 2, "bad-name's coroutine stack")
        check(blocks["bad-coro"] == [], f"bad-coro shows {blocks['bad-coro']}")
        check(len(blocks["wild-waiter"]) == 2, f"wild-waiter {blocks['wild-waiter']}")
        loop = blocks["loop-coro"]
        check(len(loop) == 32 and all(outer in line for line in loop) and
              loop[-1].endswith("(coroutine stack truncated)"), "loop-coro:\n" + "\n".join(loop))
        check(blocks["self-wait"][-1].endswith(
            "└── (T) self-wait (awaits itself through the tasks above: cycle)"),
            f"self-wait {blocks['self-wait']}")
        js = tasks_json(p.pid)
        check(len(js["tasks"]) == 7 and js["left_out"] == looped,
              f"{len(js['tasks'])} tasks in JSON, left_out {js['left_out']}")
        sw = [t for t in js["tasks"] if t["name"] == "self-wait"][0]
        check(sw["awaits"] == [sw["id"]] == sw["awaited_by"], f"self-wait {sw}")
        check(p.poll() is None, "the target died")
        state = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[0]
        check(state in "SR", f"the target is in state {state}")


def async_huge_run(how, cpu_s=1.0, secs=2):
    """The huge graph's target (run as nobody) and a bystander under --async,
    until -d SECS or until each has used cpu_s of CPU and a SIGINT: (report,
    Profiler, seconds from the end to the exit, kept share of each)."""
    from harness import Profiler, RUN_SLACK, load_report, process
    py = interpreter("debian")
    nobody = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        h = wl.start(py, "native_async_huge.py", prefix=nobody)
        b = wl.start(py, "spin.py", "beta")
        out = Path(d) / "a.json"
        run = Profiler(["-p", h.pid, "-p", b.pid, "--async", "-o", out] +
                       (["-d", secs] if how == "-d" else []))
        try:
            run.wait_attached()
            cpu0 = async_cpu_s(h.pid), async_cpu_s(b.pid)
            used = lambda: min(async_cpu_s(h.pid) - cpu0[0], async_cpu_s(b.pid) - cpu0[1])
            if how == "SIGINT":
                deadline = time.monotonic() + 180
                while used() < cpu_s:
                    check(run.watch(0.05), f"pybpfprof exited early ({run.rc})")
                    check(time.monotonic() < deadline, f"only {used():.2f} s of CPU in 180 s")
                t0 = time.monotonic()
                cpu1 = async_cpu_s(h.pid), async_cpu_s(b.pid)
                run.p.send_signal(signal.SIGINT)
            else:
                t0 = run.t_attached + secs
                run.watch(t0 - time.monotonic())
                cpu1 = async_cpu_s(h.pid), async_cpu_s(b.pid)
            run.wait(secs + RUN_SLACK)
        finally:
            run.kill()
        check(run.rc == 0, f"exit {run.rc}: {run.stderr().strip()[-400:]}")
        rep = load_report(out)
    # a few samples of slack: on a loaded machine the counts are small and noisy
    kept = [(process(rep, pid)["samples"] + 3) / max((c1 - c0) * 99, 1e-9)
            for pid, c0, c1 in ((h.pid, cpu0[0], cpu1[0]), (b.pid, cpu0[1], cpu1[1]))]
    return rep, run, run.t_end - t0, kept


@test
def async_huge_graph():
    """--async on a target run as nobody whose graph is 5000 suspended tasks
    31 coroutines deep (targets/native_async_huge.py), with a bystander,
    until each has used a second of CPU, then a SIGINT: a graph read stops
    at its 20 ms of CPU and reads are spaced by ten times that, so both keep
    at least 70% of the samples their CPU time calls for (main: 1 and 0 of
    about 300), pybpfprof exits within a second of the SIGINT and the cut
    reads are counted in a warning; with -d 2 it ends within a second of -d
    (main: 17 s late)."""
    # under ASan the report and the exit (its leak check) take longer on a loaded machine
    most = 3.0 if os.environ.get("PYBPFPROF_SANITIZE") == "1" else 1.0
    rep, run, late, kept = async_huge_run("SIGINT")
    check(late <= most, f"exit {late:.2f} s after the SIGINT (at most {most:g})")
    check(min(kept) >= 0.7, f"kept {kept[0]:.0%} of the target's samples and {kept[1]:.0%} "
          f"of the bystander's (at least 70%): {rep['samples']}")
    cut = [ln for ln in run.err_lines if "task graph reads were cut" in ln]
    check(cut, f"no warning of cut graph reads: {run.bad_lines()}")
    _, _, late_d, _ = async_huge_run("-d")
    check(late_d <= most, f"exit {late_d:.2f} s after -d's end (at most {most:g})")
    return (f"{late:.2f} s after SIGINT, {late_d:.2f} s after -d, kept {kept[0]:.0%} and "
            f"{kept[1]:.0%}; {cut[0].strip()}")
