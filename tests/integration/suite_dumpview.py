"""pybpfprof dump as a debugger's view (issue 31 item 6), and --subprocesses
through parents that are not Python.

The ground truth is the workloads' own: the thread ids they print, the
values they pass, the C calls they wait in, the worker pids they start and
the CPU time each worker measures itself; the C server is our own program,
compiled here.
"""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness import (BUILDS, TARGETS, Profiler, Workloads, check, check_cpu_samples,
                     expect_error, interpreter, load_report, per_build, read_stdout_until,
                     run_profiler, sanity, test, until_enough)
from suite_dump import DumpRun, dump_json, start_flood, start_nobody, thread_of

LOCKS = "dumpview_locks.py"
NATIVE = "dumpview_native.py"
WORK = "dumpview_work.py"


def ready_line(p, word, timeout=30):
    """The workload's output up to its "ready" line: the words after `word`."""
    buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready", timeout).decode()
    line = [ln for ln in buf.splitlines() if ln.startswith(word + " ")]
    check(line, f"no {word!r} line in {buf!r}")
    return line[0][len(word) + 1:]


def frame_named(thread, func):
    found = [f for f in thread["frames"] if f.get("kind", "python") == "python" and
             (f["function"] or "").rsplit(".", 1)[-1] == func]
    check(len(found) == 1, f"thread {thread['tid']}: {len(found)} frames of {func}: "
          f"{[f['function'] for f in thread['frames']]}")
    return found[0]


def locals_of(frame):
    return {loc["name"]: loc for loc in frame["locals"]}


# --------------------------------------------------- arguments, unbound, locks, numpy

ZOO_ARGS = [("a", "positional_only", "1"), ("b", "positional_only", "'two'"),
            ("c", "positional_or_keyword", "3.0"), ("rest", "var_positional", "(4, 5)"),
            ("d", "keyword_only", "None"), ("e", "keyword_only", "5"),
            ("kw", "var_keyword", "{'f': 6}")]
NUMPY = {"i8": "np.int8(-5)", "f64": "np.float64(2.5)", "yes": "np.True_",
         "u16": "np.uint16(65535)", "f32": "np.float32(0.1)", "no": "np.False_"}


def check_lock(loc, kind, locked, owner=None):
    lock = loc.get("lock")
    check(lock and lock["kind"] == kind and lock["locked"] is locked,
          f"{loc['name']}: lock {lock} ({loc['value']!r}), expected {kind} locked={locked}")
    if owner:
        check(lock["owner_tid"] == owner[0] and lock["owner_name"] == owner[1] and
              lock["count"] == 2, f"{loc['name']}: owner {lock}, expected {owner}, count 2")
        check(f"owner=thread {owner[0]} ({owner[1]}) count=2 " in loc["value"],
              f"{loc['name']}: {loc['value']!r}")


def check_zoo(frame, truth, unbound):
    """zoo's arguments in signature order with their kinds, then its locals."""
    args = [(loc["name"], loc["argument"], loc["value"]) for loc in frame["locals"]
            if loc["argument"]]
    check(args == ZOO_ARGS, f"zoo's arguments {args}")
    loc = locals_of(frame)
    check_lock(loc["mine"], "lock", True)
    check_lock(loc["spare"], "lock", False)
    check_lock(loc["rmine"], "RLock", True, (truth["holder"], "holder"))
    check_lock(loc["rspare"], "RLock", False)
    for name, want in NUMPY.items():
        if truth["numpy"]:
            check(loc[name]["value"] == want, f"{name} = {loc[name]['value']!r}, not {want}")
    # later, and the numpy names where numpy is missing, are not bound yet
    hidden = 1 + (0 if truth["numpy"] else len(NUMPY))
    if unbound:
        check(loc["later"]["unbound"] and loc["later"]["value"] == "<unbound>",
              f"--unbound: later {loc.get('later')}")
        check(frame["locals_unbound_hidden"] == 0, f"hidden {frame['locals_unbound_hidden']}")
    else:
        check("later" not in loc and frame["locals_unbound_hidden"] == hidden,
              f"later shown ({loc.get('later')}) or {frame['locals_unbound_hidden']} hidden, "
              f"expected {hidden}")
    check(frame["locals_total"] == len(ZOO_ARGS) + 4 + len(NUMPY) + 1,
          f"locals_total {frame['locals_total']}")


@per_build
def dumpview_locals(build):
    """Issue 31.6: a frame's arguments marked with their kind (positional-only,
    *args, keyword-only, **kwargs) in signature order, locals not bound yet
    hidden and counted (shown with --unbound), a lock held and one free, an
    RLock held twice by a thread named by its tid and threading name, a lock
    another thread waits for, an argument an inner function captures, and
    numpy scalars by value where numpy is installed."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, LOCKS, wait_ready=False)
        truth = json.loads(ready_line(p, "expect"))
        for unbound in (False, True):
            proc = dump_json(["-p", p.pid, "--locals", *(["--unbound"] if unbound else [])])
            proc = proc["processes"][0]
            check_zoo(frame_named(thread_of(proc, truth["main"]), "zoo"), truth, unbound)
        holder = frame_named(thread_of(proc, truth["holder"]), "holder")
        loc = locals_of(holder)
        check([(n, loc[n]["argument"]) for n in ("lock", "rlock", "depth")] ==
              [(n, "positional_or_keyword") for n in ("lock", "rlock", "depth")],
              f"holder's arguments {holder['locals']}")
        check_lock(loc["lock"], "lock", True)
        check_lock(loc["rlock"], "RLock", True, (truth["holder"], "holder"))
        waiter = frame_named(thread_of(proc, truth["waiter"]), "waiter")
        check_lock(locals_of(waiter)["lock"], "lock", True)
        captor = [t for t in proc["threads"] if t["python_name"] == "captor"]
        check(len(captor) == 1, f"captor threads {len(captor)}")
        arg = locals_of(frame_named(captor[0], "captured"))["arg"]
        # up to 3.10 in a cell after the locals, from 3.11 a cell in its own slot
        check(arg["value"] == "'cell-arg'" and arg["argument"] == "positional_or_keyword",
              f"captured argument {arg}")
        r = run_profiler(["dump", "-p", p.pid, "--locals"], timeout=30)
        check(r.returncode == 0, f"text: exit {r.returncode}: {r.stderr.strip()}")
        want = ("        arguments:\n          a = 1\n          b = 'two'\n          c = 3.0\n"
                "          *rest = (4, 5)\n          d = None\n          e = 5\n"
                "          **kw = {'f': 6}\n        locals:\n")
        check(want in r.stdout, f"zoo's text:\n{r.stdout[:1500]}")
        hidden = 1 + (0 if truth["numpy"] else len(NUMPY))
        check(f"        ({hidden} not bound yet, not shown: --unbound shows them)\n" in r.stdout,
              f"no count of the unbound locals:\n{r.stdout[:1500]}")
    return "numpy scalars by value" if truth["numpy"] else "no numpy here: scalars not tried"


@test
def dumpview_impostors():
    """Classes named _thread.lock, _thread.RLock and numpy.int8 (run by
    nobody) are shown as the objects they are, never read as locks or
    scalars; a real lock beside them is."""
    with Workloads() as wl:
        p, _ = start_nobody(wl, interpreter("debian"), "dumpview_impostors.py")
        proc = dump_json(["-p", p.pid, "--locals"])["processes"][0]
        loc = locals_of(frame_named(thread_of(proc, p.pid), "hold"))
        for name, cls in (("fake_lock", "_thread.lock"), ("fake_int8", "numpy.int8"),
                          ("fake_rlock", "_thread.RLock")):
            check(loc[name]["value"].startswith(f"<{cls} at 0x") and "lock" not in loc[name],
                  f"{name}: {loc[name]}")
        check_lock(loc["real"], "lock", True)


# ------------------------------------------------------------------------- --native

def libc(frame):
    """A frame of the C library (before glibc 2.34, its threads' part is libpthread)."""
    return os.path.basename(frame["file"] or "").startswith(("libc", "libpthread"))


def libc_names(frames):
    """The names of the C library's frames at the top of frames (a newer C
    library waits in cancellation helpers of its own, inside recv or pause)."""
    names = []
    for f in frames:
        if not libc(f):
            break
        names.append(f["function"])
    return names


def interp_file(frame):
    base = os.path.basename(frame["file"] or "")
    return base.startswith("python3") or base.startswith("libpython3")


def natives_before(thread, func):
    """The native frames shown between the Python frame before func's and func's."""
    out = []
    for f in thread["frames"]:
        if f["kind"] == "python":
            if (f["function"] or "").rsplit(".", 1)[-1] == func:
                return out
            out = []
        else:
            out.append(f)
    raise AssertionError(f"no frame {func}")


def syscall_of(pid, tid):
    try:
        return Path(f"/proc/{pid}/task/{tid}/syscall").read_text()
    except OSError:
        return ""


@per_build
def dumpview_native(build):
    """Issue 31.6, dump --native: each thread waiting in a C call shows its
    native frames where they ran, read from its stack pointer without
    stopping it: under time.sleep the C library's sleep and the interpreter's
    own functions (by name where the build has them), under a socket's recv
    libc's recv, between a Python comparison and the Python line that called
    libc's qsort through ctypes qsort's and libffi's frames, a thread of the
    C library's own its whole stack down from pause(); a running thread is
    said to be running, with no frame guessed."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, NATIVE, wait_ready=False)
        tids = dict(w.split("=") for w in ready_line(p, "tids").split())
        tids = {k: int(v) for k, v in tids.items()}
        # the C thread in pause() (34) before the dump looks
        deadline = time.monotonic() + 10
        while not syscall_of(p.pid, tids["c"]).startswith("34 ") and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        proc = dump_json(["-p", p.pid, "--native"])["processes"][0]
        for name in ("nap", "reader", "sorter"):
            t = thread_of(proc, tids[name])
            check(t["native"]["status"] == "placed", f"{name}: native {t['native']}")
        nap = natives_before(thread_of(proc, tids["nap"]), "nap")
        check(nap and libc(nap[0]) and any(interp_file(f) for f in nap),
              f"nap's native frames {[(f['function'], f['file']) for f in nap]}")
        if BUILDS[build].root is None and "pyenv" in build:
            check(any(f["function"] == "time_sleep" for f in nap),
                  f"no time_sleep in {[f['function'] for f in nap]}")
        rd = natives_before(thread_of(proc, tids["reader"]), "read_one")
        check(any("recv" in name for name in libc_names(rd)),
              f"recv's native frames {[(f['function'], f['file']) for f in rd]}")
        between = natives_before(thread_of(proc, tids["sorter"]), "sort_with_qsort")
        names = [(f["function"], os.path.basename(f["file"] or "")) for f in between]
        check(any(n.startswith("qsort") and b.startswith("libc") for n, b in names) and
              any(b.startswith("libffi") for _, b in names),
              f"between compare and sort_with_qsort: {names}")
        c = thread_of(proc, tids["c"])
        check(not c["python"] and c["native"]["status"] == "whole" and c["frames"] and
              "pause" in libc_names(c["frames"]),
              f"the C thread: {c['native']}, {c['frames'][:2]}")
        spin = thread_of(proc, tids["spinner"])
        check(spin["native"]["status"] == "running" and
              all(f["kind"] == "python" for f in spin["frames"]),
              f"spinner: {spin['state']} {spin['native']}")
        main = thread_of(proc, p.pid)
        check(main["native"]["status"] == "placed", f"main: {main['native']}")
        r = run_profiler(["dump", "-p", p.pid, "--native"], timeout=30)
        check(r.returncode == 0 and re.search(r"\n    \[native\] \S*recv\S* \(\S+\)\n", r.stdout),
              f"text: exit {r.returncode}:\n{r.stdout[:2000]}")
    return f"{len(nap)} native frames under nap, {len(between)} between compare and its caller"


@test
def dumpview_native_flood():
    """--native on a hostile process (nobody's): 256 idle threads 130 frames
    deep. Each thread's stack read is bounded (256 KiB), so is the whole
    dump by its time and bytes; every thread says how its native frames
    were read."""
    with Workloads() as wl:
        p, threads, depth, nlocals = start_flood(wl)
        run = DumpRun(["-p", p.pid, "--native", "-f", "json"], 120).ok()
        proc = json.loads(run.out)["processes"][0]
        statuses = {}
        for t in proc["threads"]:
            statuses[t["native"]["status"]] = statuses.get(t["native"]["status"], 0) + 1
        check(sum(statuses.values()) == len(proc["threads"]) == threads + 1,
              f"{statuses} for {len(proc['threads'])} threads")
        # the Python threads past the 256 read, and tasks without one, show whole stacks
        check(set(statuses) <= {"placed", "partial", "whole", "cut"}, f"statuses {statuses}")
        check(run.took <= 10 + 20, f"the dump took {run.took:.1f} s")
        return f"{statuses} in {run.took:.1f} s, peak RSS {run.rss >> 10} MiB"


# -------------------------------------------------------------- --subprocesses: dump

@per_build(builds=("debian", "sid315"))
def dumpview_dump_pool(build):
    """dump --subprocesses of a multiprocessing pool: the parent and each of
    its 3 workers, each waiting in the pool's worker loop, and no other."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, "dumpview_pool.py", wait_ready=False)
        workers = sorted(map(int, ready_line(p, "workers").split()))
        rep = dump_json(["-p", p.pid, "--subprocesses"])
        pids = [q["pid"] for q in rep["processes"]]
        check(sorted(pids) == sorted([p.pid, *workers]) and pids[0] == p.pid,
              f"dumped {pids}, the pool is {p.pid} and {workers}")
        for q in rep["processes"][1:]:
            names = [f["function"].rsplit(".", 1)[-1] for f in q["threads"][0]["frames"]]
            check("worker" in names, f"worker {q['pid']}: {names}")
        check(rep["found"] == 4 and rep["dumped"] == 4, f"found {rep['found']}")


def compile_master(d):
    exe = Path(d) / "dumpview_master"
    r = subprocess.run(["gcc", "-O2", "-Wall", "-o", exe, TARGETS / "dumpview_master.c"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"gcc: {r.stderr}")
    return exe


def through(kind, d, py, worker_args, early, late):
    """A root of kind bash, unshare or master starting `early` workers at
    once and `late` more after a line on its stdin, each running WORK with
    worker_args (argv)."""
    argv = py.argv(WORK, worker_args)
    cmd = " ".join(f"'{a}'" for a in argv)
    if kind == "bash":
        return ["bash", "-c", f"for i in $(seq {early}); do {cmd} & done; echo ready; "
                f"read go; for i in $(seq {late}); do {cmd} & done; wait"]
    if kind == "unshare":
        # unshare's child is a shell until the line comes, then execs Python
        return ["unshare", "--fork", "sh", "-c",
                f"for i in $(seq {early}); do {cmd} & done; echo ready; read go; "
                f"for i in $(seq {late}); do {cmd} & done; wait"]
    return [compile_master(d), str(early), str(late), *argv]


def descendants(pid):
    """Every process below pid now, from each process's parent in /proc."""
    kids = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                # bytes: any process's name may be anything (other tests' hostile ones)
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            kids.setdefault(int(stat.rsplit(b")", 1)[1].split()[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for kid in kids.get(todo.pop(), []):
            out.append(kid)
            todo.append(kid)
    return out


class Tree:
    """The root's workers (and the shells between) are not Workloads' own:
    killed here, before Workloads kills and reaps the root, however the test
    ends."""

    def __init__(self, root):
        self.root = root

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for pid in descendants(self.root.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return False


def worker_pids(buf):
    """The pids of the workers' whole "ready PID" lines in buf."""
    return sorted(map(int, re.findall(rb"(?m)^ready (\d+)\n", buf)))


@test
def dumpview_dump_through():
    """dump --subprocesses through parents that are not Python: bash -c,
    unshare --fork and a server's master in C (ours), each with two idle
    Python workers: both dumped, the parents (and the shells between) not,
    and the exit status is 0."""
    py = interpreter("debian")
    shown = []
    with tempfile.TemporaryDirectory() as d:
        for kind in ("bash", "unshare", "master"):
            with Workloads() as wl:
                root = wl.spawn(through(kind, d, py, ["--idle"], 2, 0), wait_ready=False,
                                stdin=subprocess.PIPE)
                with Tree(root):
                    shown.append(dump_through(kind, root))
    return ", ".join(shown)


def dump_through(kind, root):
    """dump --subprocesses of a root of kind, once its two idle workers are ready."""
    workers = ready_workers(root, 2)
    check(len(workers) == 2, f"{kind}: workers {workers}")
    rep = dump_json(["-p", root.pid, "--subprocesses"])
    pids = sorted(q["pid"] for q in rep["processes"])
    check(pids == workers and rep["found"] == 2, f"{kind}: dumped {pids}, "
          f"found {rep['found']}, the workers are {workers}")
    for q in rep["processes"]:
        names = [f["function"] for f in q["threads"][0]["frames"]]
        check(names[:1] == ["idle"], f"{kind}: worker {q['pid']}: {names}")
    return f"{kind}: {len(pids)}"


@test
def dumpview_dump_through_none():
    """A parent with no Python descendant: no output, exit 1, one sentence."""
    with Workloads() as wl:
        sleeper = wl.spawn(["sleep", "60"], wait_ready=False)
        expect_error(["dump", "-p", sleeper.pid, "--subprocesses"],
                     ["no CPython process found among the processes given and their "
                      "descendants"])
        expect_error(["-p", sleeper.pid, "-d", 1], ["not a CPython process", "--subprocesses"])
        r = run_profiler(["dump", "-p", sleeper.pid, "--unbound"], timeout=15)
        check(r.returncode == 2 and "--unbound goes with --locals" in r.stderr and not r.stdout,
              f"--unbound alone: exit {r.returncode}, {r.stderr!r}")


# --------------------------------------------------------- --subprocesses: sampling

def ready_workers(root, n):
    """The pids of the root's first n workers once they (and the root) are ready."""
    return worker_pids(read_stdout_until(root, lambda b: len(worker_pids(b)) >= n and
                                         re.search(rb"(?m)^ready\n", b), "ready", 30))


def profile_tree(root, d, freq, secs):
    """-p ROOT --subprocesses while its late workers start and every worker
    works: (the report, each worker's CPU in work(), the early and the late)."""
    early, go, out = ready_workers(root, 1), os.path.join(d, "go"), os.path.join(d, "rep.json")
    prof = Profiler(["-p", root.pid, "--subprocesses", "-F", freq, "-f", "json", "-o", out])
    try:
        prof.wait_attached()
        root.stdin.write(b"go\n")
        root.stdin.flush()
        # the late workers running Python before the work starts
        late = worker_pids(read_stdout_until(root, lambda b: len(worker_pids(b)) >= 2,
                                             "the late workers' ready lines", 30))
        Path(go).touch()
        text, _ = root.communicate(timeout=secs * 4 + 60)
        prof.wait(60)
    finally:
        prof.kill()
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()[-400:]}")
    cpu = {int(a): float(b) for a, b in re.findall(r"(?m)^cpu (\d+) ([\d.]+)$", text.decode())}
    return load_report(out), cpu, early, late


def sample_through(kind):
    """pybpfprof -p ROOT --subprocesses, ROOT not Python: one worker runs
    already, two are started once it is attached (exec'd later); each
    worker's work() gets its CPU time in samples, and the run ends by
    itself when the root has exited."""
    py, freq = interpreter("debian"), 199

    def run(secs):
        with Workloads() as wl, tempfile.TemporaryDirectory() as d:
            root = wl.spawn(through(kind, d, py, [os.path.join(d, "go"), secs], 1, 2),
                            wait_ready=False, stdin=subprocess.PIPE)
            with Tree(root):
                return profile_tree(root, d, freq, secs)

    (rep, cpu, early, late), _ = until_enough(
        run, lambda res: min((res[1] or {0: 0}).values()) * freq, 40, 0.5)
    sanity(rep, freq)
    workers = early + late
    check(len(workers) == 3 and sorted(cpu) == sorted(workers),
          f"{kind}: workers {workers}, CPU measured for {sorted(cpu)}")
    shown = []
    for pid in workers:
        procs = [q for q in rep["processes"] if q["pid"] == pid]
        check(procs, f"{kind}: worker {pid} not in the report "
              f"({[q['pid'] for q in rep['processes']]})")
        hot = sum(fn["self"] for q in procs for fn in q["functions"] if fn["qualname"] == "work")
        check_cpu_samples(hot, cpu[pid], freq, f"{kind}: worker {pid}'s work()", cpu_err=0.001)
        shown.append(f"{pid}:{hot}")
    check(not [q for q in rep["processes"] if q["pid"] not in workers],
          f"{kind}: sections of other processes: {[q['pid'] for q in rep['processes']]}")
    return f"{kind}: " + " ".join(shown)


@test
def dumpview_sample_through_bash():
    return sample_through("bash")


@test
def dumpview_sample_through_unshare():
    return sample_through("unshare")


@test
def dumpview_sample_through_master():
    return sample_through("master")
