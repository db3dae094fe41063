# SPDX-License-Identifier: GPL-2.0-only
"""pybpfprof side by side with the profilers people use instead.

Run through bench/peers (root), which installs the peers first. Every tool
runs the same workload (bench/peers_workload.py) as a command it starts
itself, on the same interpreter as the pybpfprof runs it is compared with:

  host python3.11 (bookworm, static, USDT): cProfile, yappi, scalene, line_profiler
  trixie root python3.13: Austin 3.7 (its package needs python3 < 3.14)
  sid root python3.14: pyinstrument, memray (packaged in sid only)
  sid root python3.15: the call-heavy workload, cProfile and yappi (sid's
                       yappi is built for 3.15 too) against --calls (CPython
                       3.12 to 3.14 fire no function probes: `--calls` needs
                       3.8-3.10 or 3.15+); and CPython's own sampler, Tachyon
                       (`python3.15 -m profiling.sampling run`, its default
                       wall mode and --mode cpu, both at its default 1 kHz)
                       against pybpfprof, on the CPU-bound workload and on two
                       call chains that alternate quickly (the stacks a tool
                       reports that cannot have happened)

Each round runs, per comparison, the unprofiled workload and then every tool,
back to back; a tool's slowdown is the median over rounds of its time / the
unprofiled time of the same round (min and max beside it). The workload times
its own work (perf_counter for the wall time, process_time for its CPU time)
and measures the truth of its 75/25 split with time.thread_time().

    peers.py [--quick] [--rounds N] [--only COMPARISONS] [--md FILE] [--svg FILE] [--raw FILE]
    peers.py --self-test     the output parsers on canned outputs
"""
import argparse
import ast
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
PROFILER = os.environ.get("PYBPFPROF", os.path.join(TOP, "pybpfprof"))
ROOTS = os.environ.get("PYBPFPROF_ROOTS", "/var/cache/pybpfprof/roots")
WORKLOAD = os.path.join(HERE, "peers_workload.py")
INROOT_DIR = "/tmp/pybpfprof-peers"
LINE_TOOLS = {"pybpfprof", "Austin", "line_profiler", "scalene", "Tachyon"}
MAJOR = {"major", "fib", "shapes", "words", "Point", "__init__", "norm2"}
SIZES = {"full": {"cpu": 150, "calls": 3000000, "mem": 800, "chains": 8000000},
         "quick": {"cpu": 40, "calls": 600000, "mem": 200, "chains": 1000000}}
# peers_workload.py's two chains, outermost first, and the function that
# calls them in turn
CHAINS = (("a", "b", "c"), ("x", "y", "z"))
CHAIN_DRIVER = "chains"


def log(msg):
    sys.stderr.write(f"peers: {msg}\n")
    sys.stderr.flush()


# ---------------------------------------------------------------- interpreters

class Interp:
    """An interpreter, on the host (root None) or chrooted in a Debian root."""

    def __init__(self, name, python, root=None):
        self.name, self.python, self.root = name, python, root

    def argv(self, *args):
        pre = ["chroot", self.root] if self.root else []
        return pre + list(args)

    def script(self):
        return os.path.join(INROOT_DIR, "peers_workload.py") if self.root else WORKLOAD

    def host_dir(self, tmp):
        """Where tools write: a directory both the tool and the harness see."""
        if not self.root:
            return tmp
        d = self.root + INROOT_DIR
        return d

    def inside(self, host_path):
        """The path a chrooted tool is given for a host path under its root."""
        return host_path[len(self.root):] if self.root else host_path

    def version(self):
        r = subprocess.run(self.argv(self.python, "-c", "import platform; print(platform.python_version())"),
                           capture_output=True, text=True)
        return r.stdout.strip() or "?"

    def label(self):
        where = f"{os.path.basename(self.root)} root" if self.root else "host"
        return f"{self.python} ({where})"


def interps():
    return {"host": Interp("host", "/usr/bin/python3.11"),
            "trixie": Interp("trixie", "/usr/bin/python3.13", os.path.join(ROOTS, "trixie")),
            "sid": Interp("sid", "/usr/bin/python3.14", os.path.join(ROOTS, "sid")),
            "sid315": Interp("sid315", "/usr/bin/python3.15", os.path.join(ROOTS, "sid"))}


# ---------------------------------------------------------------- parsers
# Each takes what a tool wrote and returns the figures it gives for the
# workload: "major"/"minor" (time in the two halves of the split),
# "hot_line" (the hottest line of minor()), "growing_line", "calls".

def workload_functions(path=WORKLOAD):
    """line -> name of the top-level function (or class) holding it."""
    with open(path) as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for no in range(node.lineno, node.end_lineno + 1):
                out[no] = node.name
    return out


def split_of(times):
    """{"major": x, "minor": y} from per-function times (any unit)."""
    major = sum(t for f, t in times.items() if f in MAJOR)
    return {"major": major, "minor": times.get("minor", 0.0)}


def is_workload(path):
    return path.endswith("peers_workload.py")


def parse_pybpfprof(rep):
    """pybpfprof's JSON report: total samples of major and minor, the
    hottest line of minor, the line retaining most memory (--mem), the
    exact call count of tiny (--calls)."""
    out = {}
    procs = [p for p in rep.get("processes", []) if p.get("functions")]
    fns = {}
    lines = {}
    for p in procs:
        for f in p["functions"]:
            if f["qualname"] in ("major", "minor"):
                fns[f["qualname"]] = fns.get(f["qualname"], 0) + f["total"]
        for ln in p.get("lines", []):
            if ln["qualname"] == "minor":
                lines[ln["line"]] = lines.get(ln["line"], 0) + ln["self"]
    if fns:
        out.update(major=fns.get("major", 0), minor=fns.get("minor", 0))
    if lines:
        out["hot_line"] = max(lines, key=lines.get)
    model = rep.get("model", {})
    mfns, frames = model.get("functions", []), model.get("frames", [])
    grow, calls = {}, 0
    # the figure each mode's report ranks growth by: --mem=alloc's "live at
    # the end" (allocator bytes not freed), --mem's "retained" (mapped and
    # still mapped at the end)
    kind = 4 if (model.get("mem") or {}).get("alloc") else 6
    for p in model.get("processes", []):
        for st in (p.get("mem") or {}).get("stacks", []):
            frame_ids, nbytes = st[0], st[1]
            for fi in frame_ids:
                fn, line = frames[fi]
                if is_workload(mfns[fn][1]):
                    grow[line] = grow.get(line, 0) + nbytes[kind]
                    break
        for edge in p.get("calls") or []:
            if mfns[edge[0]][0] == "tiny":
                calls += edge[2]
    if grow:
        out["growing_line"] = max(grow, key=grow.get)
    if calls:
        out["calls"] = calls
    stacks = []
    for p in model.get("processes", []):
        for st in p.get("stacks") or []:
            places = [(mfns[frames[fi][0]][0], frames[fi][1]) for fi in reversed(st[2])
                      if is_workload(mfns[frames[fi][0]][1])]
            stacks.append((places, st[1]))
    chains = chain_counts(stacks)
    if chains["in_work"]:
        out["chains"] = chains
    c = rep.get("samples")
    if c:
        # lost (ring buffer full, innermost frame unreadable) or damaged
        # (partial, truncated, a code object gone before it was named)
        lost = c["dropped"] + c["unreadable"]
        out["failed"] = [lost + c["partial"] + c["truncated"] + c["unresolved"], c["total"] + lost]
    return out


def call_lines(path=WORKLOAD):
    """(caller, callee) -> the workload's lines where caller calls callee."""
    with open(path) as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                    out.setdefault((node.name, sub.func.id), set()).add(sub.lineno)
    return out


def chain_verdict(places, calls):
    """places: the workload's (function, line) on one stack, outermost
    first. None: not in the work (neither chains() nor a chain's function on
    it); "ok"; "mixed": frames of one chain under the other's, or under
    chains()'s call of the other; "impossible": any other stack that cannot
    happen (a frame missing or out of order, a chain's frame above chains(),
    a caller not at its line that calls the frame above it). A line not
    known (0 or less) is not judged."""
    names = [f for f, _ in places]
    links = set(CHAINS[0] + CHAINS[1])
    if CHAIN_DRIVER not in names and not links.intersection(names):
        return None
    if set(CHAINS[0]).intersection(names) and set(CHAINS[1]).intersection(names):
        return "mixed"
    if CHAIN_DRIVER not in names:
        return "impossible"
    i = names.index(CHAIN_DRIVER)
    under = tuple(names[i + 1:])
    if links.intersection(names[:i]) or not any(under == ch[:len(under)] for ch in CHAINS):
        return "impossible"
    for (caller, line), (callee, _) in zip(places[i:], places[i + 1:]):
        if line > 0 and line not in calls.get((caller, callee), ()):
            other = {ch[0] for ch in CHAINS} - {callee}
            calls_other = any(line in calls.get((caller, o), ()) for o in other)
            return "mixed" if caller == CHAIN_DRIVER and calls_other else "impossible"
    return "ok"


_calls = []  # call_lines() of the workload, read once


def chain_counts(stacks):
    """stacks: (the workload's (function, line) on one stack, outermost
    first; samples). Of the samples in the work, the impossible ones (see
    chain_verdict), and of them the "mixed" ones."""
    if not _calls:
        _calls.append(call_lines())
    out = {"in_work": 0, "impossible": 0, "mixed": 0}
    for places, n in stacks:
        verdict = chain_verdict(places, _calls[0])
        if verdict is None:
            continue
        out["in_work"] += n
        if verdict != "ok":
            out["impossible"] += n
            out["mixed"] += n if verdict == "mixed" else 0
    return out


def parse_pstats(rows):
    """cProfile's or yappi's pstats, as peers_workload.py pstats prints it:
    [file, line, func, ncalls, tottime, cumtime]: cumulative times."""
    cum, calls = {}, 0
    for file, _line, func, ncalls, _tot, cumtime in rows:
        if not is_workload(file):
            continue
        cum[func] = cum.get(func, 0.0) + cumtime
        if func == "tiny":
            calls += ncalls
    out = {}
    if "major" in cum or "minor" in cum:
        out.update(major=cum.get("major", 0.0), minor=cum.get("minor", 0.0))
    if calls:
        out["calls"] = calls
    return out


def parse_lprof(rows):
    """line_profiler: [file, func, line, hits, seconds] of the decorated
    functions (major, minor); a line's time includes what it called."""
    per_fn, minor_lines = {}, {}
    for _file, func, line, _hits, t in rows:
        per_fn[func] = per_fn.get(func, 0.0) + t
        if func == "minor":
            minor_lines[line] = minor_lines.get(line, 0.0) + t
    out = split_of(per_fn)
    if minor_lines:
        out["hot_line"] = max(minor_lines, key=minor_lines.get)
    return out


def parse_austin(text, fn_of_line=None):
    """Austin's collapsed stacks: "P<pid>;T<iid>:<tid>;file:func:line;... N",
    N microseconds (of CPU with -s). A function's time: the samples whose
    stack holds it; minor's hot line: its leaf samples by line."""
    t = {"major": 0, "minor": 0}
    lines = {}
    for raw in text.splitlines():
        if not raw or raw.startswith("#") or " " not in raw:
            continue
        stack, _, metric = raw.rpartition(" ")
        try:
            n = int(metric)
        except ValueError:
            continue
        frames = [f.rsplit(":", 2) for f in stack.split(";")[2:]]
        frames = [f for f in frames if len(f) == 3]
        names = {f[1] for f in frames}
        for k in t:
            if k in names:
                t[k] += n
        if frames and frames[-1][1] == "minor":
            ln = int(frames[-1][2])
            lines[ln] = lines.get(ln, 0) + n
    out = dict(t)
    if lines:
        out["hot_line"] = max(lines, key=lines.get)
    return out


def parse_tachyon(text):
    """Tachyon's collapsed stacks (--collapsed): "tid:N;file:func:line;... N",
    outermost first, N samples, each file by its base name; a frame it adds
    (<GC>, <native>) is a bare name. As Austin's: a function's samples are
    those whose stack holds it, minor's hot line its leaf samples by line;
    and the verdicts on the two chains' stacks."""
    t = {"major": 0, "minor": 0}
    lines, stacks = {}, []
    for raw in text.splitlines():
        stack, _, metric = raw.rpartition(" ")
        try:
            n = int(metric)
        except ValueError:
            continue
        if not stack.startswith("tid:"):
            continue
        frames = [f.rsplit(":", 2) for f in stack.split(";")[1:]]
        leaf = frames[-1] if frames else []
        places = [(f[1], int(f[2]) if f[2].lstrip("-").isdigit() else 0)
                  for f in frames if len(f) == 3 and is_workload(f[0])]
        names = {f for f, _ in places}
        for k in t:
            if k in names:
                t[k] += n
        if len(leaf) == 3 and leaf[1] == "minor" and leaf[2].isdigit():
            lines[int(leaf[2])] = lines.get(int(leaf[2]), 0) + n
        stacks.append((places, n))
    out = dict(t)
    if lines:
        out["hot_line"] = max(lines, key=lines.get)
    chains = chain_counts(stacks)
    if chains["in_work"]:
        out["chains"] = chains
    return out


def tachyon_summary(stdout):
    """The lines Tachyon prints when it stops: "Captured N samples in S
    seconds", "Error rate: P" (the % of them it could not read). The
    failed samples as pybpfprof's: [failed, of]."""
    taken = re.search(r"^Captured ([\d,]+) samples? in ", stdout, re.M)
    rate = re.search(r"^Error rate: ([\d.]+)", stdout, re.M)
    if not taken or not rate:
        return {}
    n = int(taken.group(1).replace(",", ""))
    return {"failed": [round(n * float(rate.group(1)) / 100), n]}


def parse_pyinstrument(rep):
    """pyinstrument's JSON renderer: a tree of frames with inclusive
    "time"; the outermost frames of major and minor are summed."""
    t = {"major": 0.0, "minor": 0.0}
    todo = [rep.get("root_frame") or {}]
    while todo:
        fr = todo.pop()
        name = fr.get("function")
        if name in t:
            t[name] += fr.get("time", 0.0)
            continue
        todo.extend(fr.get("children", []))
    return t


def scalene_pct(entry):
    return sum(entry.get(k, 0.0) for k in ("n_cpu_percent_python", "n_cpu_percent_c", "n_sys_percent"))


def parse_scalene(rep, fn_of_line):
    """scalene's JSON: CPU % (Python + native + system) per function of the
    profiled file, by qualname; minor's hot line from its per-line figures
    (scalene lists only the lines it reports)."""
    per_fn, minor_lines = {}, {}
    for fname, f in rep.get("files", {}).items():
        if not is_workload(fname):
            continue
        for fn in f.get("functions", []):
            name = fn["line"].rpartition(".")[2]
            per_fn[name] = per_fn.get(name, 0.0) + scalene_pct(fn)
        for ln in f.get("lines", []):
            if fn_of_line.get(ln["lineno"]) == "minor" and scalene_pct(ln) > 0:
                minor_lines[ln["lineno"]] = scalene_pct(ln)
    out = split_of(per_fn) if per_fn else {}
    if minor_lines:
        out["hot_line"] = max(minor_lines, key=minor_lines.get)
    return out


def parse_memray(records):
    """memray's allocations live at the high-water mark, as peers_workload.py
    memray prints them: [size, count, [[func, file, line]...]] innermost
    first; bytes by the innermost line of the workload."""
    grow = {}
    for size, _n, stack in records:
        for func, file, line in stack:
            if is_workload(file):
                grow[line] = grow.get(line, 0) + size
                break
    return {"growing_line": max(grow, key=grow.get)} if grow else {}


# ---------------------------------------------------------------- tools

def run_helper(interp, kind, host_path):
    r = subprocess.run(interp.argv(interp.python, interp.script(), kind, interp.inside(host_path)),
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise RuntimeError(f"{kind} helper failed: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout)


class Tool:
    """name, setting (shown in tables), where it runs (out-of-process:
    its own process is polled for CPU and RSS), how it is started and read;
    attach: given the pid of a workload waiting to start (-p), rather than
    starting the command itself; summary: reads what it printed on stdout."""

    def __init__(self, name, setting, external, build, parse, version, attach=False, summary=None):
        self.name, self.setting, self.external = name, setting, external
        self.build, self.parse, self.version_of = build, parse, version
        self.attach = attach
        self.summary = summary  # figures the tool prints on stdout, if any

    def key(self):
        return f"{self.name} {self.setting}".strip()


def read_file(path):
    with open(path) as f:
        return f.read()


def pybpfprof_tool(setting, flags, attach=False):
    def build(interp, wl, out):
        path = os.path.join(out, "prof.json")
        if attach:
            return [PROFILER, *flags, "-f", "json", "-o", path, "-p"], path
        return [PROFILER, *flags, "-f", "json", "-o", path, "--", *wl], path

    def parse(interp, path, fn_of_line):
        with open(path) as f:
            return parse_pybpfprof(json.load(f))

    def version(interp):
        r = subprocess.run([PROFILER, "--version"], capture_output=True, text=True)
        return (r.stdout.strip().split() or ["?"])[-1]
    return Tool("pybpfprof", setting, True, build, parse, version, attach)


def module_version(mod):
    def version(interp):
        code = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
        r = subprocess.run(interp.argv(interp.python, "-c", code, mod), capture_output=True, text=True)
        return r.stdout.strip() or "?"
    return version


def stdlib_version(interp):
    return "stdlib"


def cprofile_tool():
    def build(interp, wl, out):
        path = os.path.join(out, "prof.pstats")
        return interp.argv(interp.python, "-m", "cProfile", "-o", interp.inside(path), *wl[-3:]), path

    def parse(interp, path, fn_of_line):
        return parse_pstats(run_helper(interp, "pstats", path))
    return Tool("cProfile", "", False, build, parse, stdlib_version)


def yappi_tool():
    def build(interp, wl, out):
        path = os.path.join(out, "prof.ystat")
        return interp.argv(interp.python, "-m", "yappi", "-f", "pstat", "-o", interp.inside(path),
                           *wl[-3:]), path

    def parse(interp, path, fn_of_line):
        return parse_pstats(run_helper(interp, "pstats", path))
    return Tool("yappi", "CPU clock (default)", False, build, parse, module_version("yappi"))


def scalene_tool():
    def build(interp, wl, out):
        path = os.path.join(out, "scalene.json")
        script, kind, n = wl[-3:]
        # --program-path: else scalene reports only files under its cwd
        return interp.argv("scalene", "--json", "--cli", "--outfile", interp.inside(path),
                           "--program-path", os.path.dirname(script), script, "---", kind, n), path

    def parse(interp, path, fn_of_line):
        with open(path) as f:
            return parse_scalene(json.load(f), fn_of_line)
    return Tool("scalene", "defaults (CPU + memory)", False, build, parse, module_version("scalene"))


def kernprof_tool():
    def build(interp, wl, out):
        path = os.path.join(out, "prof.lprof")
        return interp.argv(interp.python, "-m", "kernprof", "-l", "-o", interp.inside(path),
                           *wl[-3:]), path

    def parse(interp, path, fn_of_line):
        return parse_lprof(run_helper(interp, "lprof", path))
    return Tool("line_profiler", "kernprof -l, @profile on major and minor", False, build, parse,
                module_version("line_profiler"))


def austin_tool(interval):
    def build(interp, wl, out):
        path = os.path.join(out, "austin.txt")
        return interp.argv("austin", "-s", "-i", interval, "-o", interp.inside(path),
                           *wl[-4:]), path

    def parse(interp, path, fn_of_line):
        return parse_austin(read_file(path))

    def version(interp):
        r = subprocess.run(interp.argv("austin", "--version"), capture_output=True, text=True)
        return (r.stdout.strip().split() or ["?"])[-1]
    return Tool("Austin", f"-s -i {interval}", True, build, parse, version)


def pyinstrument_tool():
    def build(interp, wl, out):
        path = os.path.join(out, "pyinstrument.json")
        return interp.argv(interp.python, "-m", "pyinstrument", "-r", "json", "-o",
                           interp.inside(path), *wl[-3:]), path

    def parse(interp, path, fn_of_line):
        with open(path) as f:
            return parse_pyinstrument(json.load(f))
    return Tool("pyinstrument", "defaults (1 ms)", False, build, parse, module_version("pyinstrument"))


def tachyon_tool(setting, flags):
    """CPython 3.15's own sampler, as its help shows it: `run` starts the
    script in a child process and samples it from its own (at 1 kHz unless
    -r says otherwise), then writes the collapsed stacks and prints its
    summary on stdout."""
    def build(interp, wl, out):
        path = os.path.join(out, "tachyon.txt")
        return interp.argv(interp.python, "-m", "profiling.sampling", "run", *flags, "--collapsed",
                           "-o", interp.inside(path), *wl[-3:]), path

    def parse(interp, path, fn_of_line):
        return parse_tachyon(read_file(path))
    return Tool("Tachyon", setting, True, build, parse, stdlib_version, summary=tachyon_summary)


def memray_tool():
    def build(interp, wl, out):
        path = os.path.join(out, "memray.bin")
        return interp.argv(interp.python, "-m", "memray", "run", "-q", "-f", "-o",
                           interp.inside(path), *wl[-3:]), path

    def parse(interp, path, fn_of_line):
        return parse_memray(run_helper(interp, "memray", path))
    return Tool("memray", "run (defaults)", False, build, parse, module_version("memray"))


def malloc_control():
    """Not a profiler: the workload with CPython's small-object allocator
    off, beside memray, whose run is faster than the unprofiled one."""
    def build(interp, wl, out):
        return ["env", "PYTHONMALLOC=malloc", *wl], None

    def parse(interp, path, fn_of_line):
        return {}
    return Tool("no profiler", "PYTHONMALLOC=malloc (control)", False, build, parse, lambda ip: "-")


def comparisons():
    """(title, workload, interpreter, tools): none runs first in each."""
    return [
        ("cpu", "cpu", "host", [pybpfprof_tool("-F 99", ["-F", "99"]),
                                pybpfprof_tool("-F 999", ["-F", "999"]),
                                cprofile_tool(), yappi_tool(), scalene_tool(), kernprof_tool()]),
        ("cpu", "cpu", "trixie", [pybpfprof_tool("-F 99", ["-F", "99"]),
                                  pybpfprof_tool("-F 999", ["-F", "999"]),
                                  austin_tool("10ms"), austin_tool("1ms")]),
        ("cpu", "cpu", "sid", [pybpfprof_tool("-F 99", ["-F", "99"]),
                               pybpfprof_tool("-F 999", ["-F", "999"]), pyinstrument_tool()]),
        ("cpu", "cpu", "sid315", [pybpfprof_tool("-F 99", ["-F", "99"]),
                                  pybpfprof_tool("-F 999", ["-F", "999"]),
                                  tachyon_tool("defaults (wall, 1 kHz)", []),
                                  tachyon_tool("--mode cpu (1 kHz)", ["--mode", "cpu"])]),
        ("chains", "chains", "sid315", [pybpfprof_tool("-F 999", ["-F", "999"]),
                                        tachyon_tool("defaults (wall, 1 kHz)", []),
                                        tachyon_tool("--mode cpu (1 kHz)", ["--mode", "cpu"])]),
        ("calls", "calls", "sid315", [pybpfprof_tool("--calls", ["--calls"]),
                                      pybpfprof_tool("-F 999", ["-F", "999"]), cprofile_tool(),
                                      yappi_tool()]),
        ("mem", "mem", "sid", [pybpfprof_tool("--mem -p", ["--mem"], attach=True),
                               pybpfprof_tool("--mem=alloc -p", ["--mem=alloc"], attach=True), memray_tool(),
                               malloc_control()]),
    ]


# ---------------------------------------------------------------- running

class Poller(threading.Thread):
    """CPU (utime + stime) and peak RSS (VmHWM) of one process, read from
    /proc every 50 ms until it is gone; the last readings are kept."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.cpu_s, self.hwm_kib, self.stop = pid, 0.0, 0, False
        self.tick = os.sysconf("SC_CLK_TCK")

    def run(self):
        while not self.stop:
            try:
                with open(f"/proc/{self.pid}/stat") as f:
                    fields = f.read().rpartition(")")[2].split()
                self.cpu_s = (int(fields[11]) + int(fields[12])) / self.tick
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.hwm_kib = max(self.hwm_kib, int(line.split()[1]))
            except (OSError, IndexError, ValueError):
                return
            time.sleep(0.05)


def run_one(interp, kind, n, tool, tmp, fn_of_line):
    out = tempfile.mkdtemp(dir=interp.host_dir(tmp))
    wl = interp.argv(interp.python, interp.script(), kind, str(n))
    argv, path = tool.build(interp, wl, out) if tool else (wl, None)
    if tool and tool.attach:
        proc, stderr = run_attached(argv, wl)
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        poller = None
        if tool and tool.external:
            poller = Poller(proc.pid)
            poller.start()
        stdout, stderr = proc.communicate(timeout=1800)
        proc.stdout_text = stdout
        if poller:
            poller.stop = True
            poller.join()
            proc.poller = poller
    poller = getattr(proc, "poller", None)
    res = None
    for line in stderr.splitlines():
        if line.startswith("PEERS_RESULT "):
            res = json.loads(line[len("PEERS_RESULT "):])
    what = tool.key() if tool else "unprofiled"
    if proc.returncode or res is None:
        shutil.rmtree(out, ignore_errors=True)
        raise RuntimeError(f"{what} on {interp.label()} {kind}: exit {proc.returncode}: "
                           f"{stderr.strip()[-800:]}")
    if tool:
        try:
            res["tool"] = tool.parse(interp, path, fn_of_line)
            if tool.summary:
                res["tool"].update(tool.summary(getattr(proc, "stdout_text", "")))
        except (OSError, ValueError, KeyError, RuntimeError) as e:
            res["tool"] = {"error": str(e)[:300]}
    if poller:
        res["tool_cpu_s"], res["tool_hwm_kib"] = poller.cpu_s, poller.hwm_kib
    shutil.rmtree(out, ignore_errors=True)
    return res


ATTACH_WAIT = 1.0


def run_attached(argv, wl):
    """The workload waits (PEERS_WAIT=1) until the profiler, given its pid,
    has had ATTACH_WAIT seconds to attach; once the work is done the
    profiler is stopped with SIGINT while the workload is still alive, then
    the workload exits. Returns the profiler's process (its return code, its
    poller) and the workload's stderr plus the profiler's."""
    env = dict(os.environ, PEERS_WAIT="1")
    wlp = subprocess.Popen(wl, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env)
    if wlp.stdout.readline().strip() != "ready":
        wlp.kill()
        raise RuntimeError(f"{' '.join(wl)}: the workload did not start: {wlp.stderr.read()[-400:]}")
    prof = subprocess.Popen(argv + [str(wlp.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    prof.poller = Poller(prof.pid)
    prof.poller.start()
    time.sleep(ATTACH_WAIT)
    wlp.stdin.write("go\n")
    wlp.stdin.flush()
    wl_err = []
    for line in wlp.stderr:
        wl_err.append(line)
        if line.startswith("PEERS_RESULT "):
            break
    prof.send_signal(signal.SIGINT)
    _, perr = prof.communicate(timeout=600)
    prof.poller.stop = True
    prof.poller.join()
    wlp.stdin.close()
    wl_err.append(wlp.stderr.read())
    wlp.wait(timeout=60)
    if wlp.returncode:
        prof.returncode = prof.returncode or wlp.returncode
    return prof, "".join(wl_err) + perr


def ensure_private_proc(ips):
    """Austin and memray read /proc inside the root: the harness runs in
    its own mount namespace (re-executed under unshare -m), where each
    root gets a /proc that goes away with the namespace."""
    if os.environ.get("PEERS_NS") != "1":
        os.environ["PEERS_NS"] = "1"
        os.execvp("unshare", ["unshare", "--mount", "--propagation", "private",
                              sys.executable, *sys.argv])
    for ip in ips.values():
        if ip.root and not os.path.ismount(ip.root + "/proc"):
            subprocess.run(["mount", "-t", "proc", "proc", ip.root + "/proc"], check=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def prepare_roots(ips):
    ensure_private_proc(ips)
    for ip in ips.values():
        if ip.root:
            os.makedirs(ip.root + INROOT_DIR, exist_ok=True)
            shutil.copy(WORKLOAD, ip.root + INROOT_DIR + "/peers_workload.py")


def comparison_name(comp):
    return f"{comp[0]}@{comp[2]}"


def run_all(rounds, sizes, only=None):
    ips = interps()
    prepare_roots(ips)
    fn_of_line = workload_functions()
    comps = [c for c in comparisons() if not only or comparison_name(c) in only]
    runs = {}       # (title, interp, tool key) -> [result per round]
    tmp = tempfile.mkdtemp(prefix="pybpfprof-peers-")
    try:
        for r in range(rounds):
            load = loadavg()
            round_loads.append(float(load.split()[0]))
            log(f"round {r + 1}/{rounds} (load {load})")
            for title, kind, ipname, tools in comps:
                ip = ips[ipname]
                for tool in [None] + tools:
                    key = (title, ipname, tool.key() if tool else "none")
                    res = run_one(ip, kind, sizes[kind], tool, tmp, fn_of_line)
                    runs.setdefault(key, []).append(res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    versions = {}
    for title, kind, ipname, tools in comps:
        ip = ips[ipname]
        versions[ipname] = ip.version()
        for tool in tools:
            versions[(ipname, tool.key())] = tool.version_of(ip)
    return comps, ips, runs, versions


# ---------------------------------------------------------------- summaries

def med(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs, fmt):
    if not xs:
        return "-"
    return f"{fmt(med(xs))} ({fmt(min(xs))} .. {fmt(max(xs))})"


def pct(x):
    return f"{(x - 1) * 100:+.1f} %"


def ratios(runs, key, field="elapsed"):
    title, ipname, _ = key
    base = runs[(title, ipname, "none")]
    return [r[field] / b[field] for r, b in zip(runs[key], base)]


def share_error(res):
    """(truth %, reported %, error pp) of major's share, or None."""
    t, got = res.get("truth"), res.get("tool", {})
    if not t or "major" not in got:
        return None
    truth = 100 * t["major"] / (t["major"] + t["minor"])
    tot = got["major"] + got["minor"]
    if tot <= 0:
        return None
    rep = 100 * got["major"] / tot
    return truth, rep, rep - truth


def summarize(comps, runs):
    rows = []
    for title, kind, ipname, tools in comps:
        base = runs[(title, ipname, "none")]
        for tool in tools:
            key = (title, ipname, tool.key())
            rs = runs[key]
            row = {"title": title, "interp": ipname, "tool": tool, "n": len(rs),
                   "wall": ratios(runs, key), "cpu": ratios(runs, key, "cpu"),
                   "base_elapsed": med([b["elapsed"] for b in base])}
            errs = [e for e in (share_error(r) for r in rs) if e]
            row["share"] = errs
            hot = [r["tool"].get("hot_line") for r in rs]
            row["hot"] = (sum(h == r["hot_line"] for h, r in zip(hot, rs)),
                          [h for h in hot if h is not None], rs[0]["hot_line"])
            grow = [r["tool"].get("growing_line") for r in rs]
            row["grow"] = (sum(g == r["growing_line"] for g, r in zip(grow, rs)),
                           [g for g in grow if g is not None], rs[0]["growing_line"])
            row["calls"] = [r["tool"].get("calls") for r in rs]
            row["calls_want"] = rs[0].get("calls")
            row["added_cpu_s"] = [r["cpu"] - b["cpu"] for r, b in zip(rs, base)]
            row["errors"] = [r["tool"]["error"] for r in rs if "error" in r["tool"]]
            row["chains"] = [r["tool"]["chains"] for r in rs if "chains" in r["tool"]]
            row["failed"] = [100 * f / of for f, of in (r["tool"]["failed"] for r in rs if "failed" in r["tool"])
                             if of]
            # how often the profiled workload itself went from one chain to the other
            row["switch_us"] = [r["elapsed"] / r["chain_calls"] * 1e6 for r in rs if r.get("chain_calls")]
            if tool.external:
                row["own_cpu"] = [r["tool_cpu_s"] / r["elapsed"] for r in rs]
                row["own_cpu_s"] = [r["tool_cpu_s"] for r in rs]
                row["own_rss"] = [r["tool_hwm_kib"] / 1024 for r in rs]
            else:
                row["own_rss"] = [(r["maxrss_kib"] - b["maxrss_kib"]) / 1024
                                  for r, b in zip(rs, base)]
            rows.append(row)
    return rows


# ---------------------------------------------------------------- tables

def tool_cells(row, comps_versions, ips):
    tool = row["tool"]
    ver = comps_versions.get((row["interp"], tool.key()), "?")
    ip = ips[row["interp"]]
    return [tool.name, ver, tool.setting or "defaults",
            f"{comps_versions.get(row['interp'], '?')} {ip.label()}"]


def fmt_pp(x):
    return f"{x:+.1f}"


def table_slowdown(rows, versions, ips, title):
    head = ["tool", "version", "setting", "interpreter", "wall-time slowdown, median (min .. max)",
            "CPU-time slowdown, median (min .. max)"]
    body = []
    for row in rows:
        if row["title"] != title:
            continue
        body.append(tool_cells(row, versions, ips) + [spread(row["wall"], pct), spread(row["cpu"], pct)])
    return head, body


def table_accuracy(rows, versions, ips):
    head = ["tool", "version", "setting", "interpreter", "truth: major() share",
            "reported", "error, pp: median (min .. max)", "hot line of minor() (right / runs)"]
    body = []
    for row in rows:
        if row["title"] != "cpu":
            continue
        errs = row["share"]
        right, got, want = row["hot"]
        if got:
            common = max(set(got), key=got.count)
            hot = f"{right} / {row['n']} (line {common}; the loop's `in` is line {want})"
        elif row["tool"].name in LINE_TOOLS:
            hot = f"0 / {row['n']} (no line of minor() in its output)"
        else:
            hot = "- (reports functions, not lines)"
        body.append(tool_cells(row, versions, ips) + [
            f"{med([e[0] for e in errs]):.1f} %" if errs else "-",
            f"{med([e[1] for e in errs]):.1f} %" if errs else "-",
            spread([e[2] for e in errs], fmt_pp) if errs else "-", hot])
    return head, body


def table_calls(rows, versions, ips):
    head = ["tool", "version", "setting", "interpreter", "wall-time slowdown, median (min .. max)",
            "CPU-time slowdown", "added CPU per call (median)", "calls of tiny() counted (exact: N)"]
    body = []
    for row in rows:
        if row["title"] != "calls":
            continue
        counted = [c for c in row["calls"] if c]
        want = row["calls_want"]
        if counted:
            exact = sum(c == want for c in counted)
            cnt = f"{exact} of {row['n']} runs exact (N = {want:,})"
        else:
            cnt = "- (samples, no counts)"
        per_call = f"{med(row['added_cpu_s']) / want * 1e9:.0f} ns" if want else "-"
        body.append(tool_cells(row, versions, ips) + [spread(row["wall"], pct), spread(row["cpu"], pct),
                                                      per_call, cnt])
    return head, body


def table_mem(rows, versions, ips):
    head = ["tool", "version", "setting", "interpreter", "wall-time slowdown, median (min .. max)",
            "CPU-time slowdown", "names the growing line (right / runs)"]
    body = []
    for row in rows:
        if row["title"] != "mem":
            continue
        right, got, want = row["grow"]
        common = max(set(got), key=got.count) if got else None
        named = f"{right} / {row['n']} (top line {common}; growing line {want})"
        if row["tool"].name == "no profiler":
            named = "-"
        body.append(tool_cells(row, versions, ips) + [
            spread(row["wall"], pct), spread(row["cpu"], pct), named])
    return head, body


def table_own(rows, versions, ips):
    head = ["tool", "version", "setting", "interpreter", "workload",
            "own CPU, ms (median) and % of the work's wall time", "peak RSS, MiB (median)", "how measured"]
    body = []
    for row in rows:
        tool = row["tool"]
        if tool.name == "no profiler":
            continue
        if tool.external:
            cpu = f"{med(row['own_cpu_s']) * 1000:.0f} ms, {med(row['own_cpu']) * 100:.1f} %"
            rss = f"{med(row['own_rss']):.1f}"
            how = ("its own process: utime + stime and VmHWM, read from /proc every 50 ms "
                   "until it exits; % of the workload's timed wall time")
        else:
            cpu = "in the target (= its slowdown)"
            rss = f"+{med(row['own_rss']):.1f}"
            how = "in-process: the target's ru_maxrss minus the unprofiled run's, same round"
        body.append(tool_cells(row, versions, ips) + [row["title"], cpu, rss, how])
    return head, body


def impossible_pct(row):
    return [100 * c["impossible"] / c["in_work"] for c in row["chains"] if c["in_work"]]


def fmt_pct2(x):
    return f"{x:.2f} %"


def table_chains(rows, versions, ips):
    head = ["tool", "version", "setting", "interpreter", "a chain called every (median)",
            "samples in the work (median)", "impossible stacks, % of them: median (min .. max)",
            "impossible stacks, all runs (of which one chain under the other)",
            "samples failed, %: median (min .. max)"]
    body = []
    for row in rows:
        if row["title"] != "chains":
            continue
        ch = row["chains"]
        if not ch:
            body.append(tool_cells(row, versions, ips) + ["-"] * 5)
            continue
        imp, mixed, seen = (sum(c[k] for c in ch) for k in ("impossible", "mixed", "in_work"))
        body.append(tool_cells(row, versions, ips) + [
            f"{med(row['switch_us']) * 1000:.0f} ns",
            f"{med([c['in_work'] for c in ch]):.0f}",
            spread(impossible_pct(row), fmt_pct2),
            f"{imp} of {seen} ({mixed})",
            spread(row["failed"], fmt_pct2) if row["failed"] else "-"])
    return head, body


def table_tachyon(rows, versions, ips):
    """The samplers on 3.15 side by side: the CPU-bound workload's figures
    and the two chains' impossible stacks, by tool and setting."""
    head = ["tool", "setting", "target's CPU-time slowdown (median)",
            "own CPU per run, ms, and % of a core (median)", "own peak RSS, MiB (median)",
            "error of major()'s share, pp (median)", "samples failed (median)",
            "impossible stacks on the two chains (median; all runs)"]
    chains = {row["tool"].key(): row for row in rows if row["title"] == "chains"}
    body = []
    for row in rows:
        if row["title"] != "cpu" or row["interp"] != "sid315":
            continue
        ch = chains.get(row["tool"].key())
        imp = "-"
        if ch and ch["chains"]:
            n, seen = sum(c["impossible"] for c in ch["chains"]), sum(c["in_work"] for c in ch["chains"])
            imp = f"{fmt_pct2(med(impossible_pct(ch)))}; {n} of {seen}"
        errs = row["share"]
        body.append([row["tool"].name, row["tool"].setting, pct(med(row["cpu"])),
                     f"{med(row['own_cpu_s']) * 1000:.0f} ms, {med(row['own_cpu']) * 100:.1f} %",
                     f"{med(row['own_rss']):.1f}",
                     fmt_pp(med([e[2] for e in errs])) if errs else "-",
                     fmt_pct2(med(row["failed"])) if row["failed"] else "-", imp])
    return head, body


def markdown_table(head, body):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out)


def text_table(head, body):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths))
    return "\n".join([line(head)] + [line(r) for r in body])


# ---------------------------------------------------------------- plot

def short_label(tool):
    if tool.name == "pybpfprof":
        return "pybpfprof " + tool.setting.replace("-F ", "") + " Hz"
    if tool.name == "Austin":
        return "Austin " + tool.setting.rpartition(" ")[2]
    if tool.name == "Tachyon":
        return "Tachyon " + ("cpu" if "cpu" in tool.setting else "wall")
    return tool.name


def own_cpu_bars(rows, versions, w, y0):
    """Below the plot: the out-of-process samplers' own CPU on the
    CPU-bound workload (in-process tools spend theirs in the target), as
    bars of % of one core over the work's wall time. Returns the SVG
    elements and their height."""
    bars = [(med(row["own_cpu"]) * 100, f"{short_label(row['tool'])} ({versions.get(row['interp'], '?')})",
             row["tool"].name == "pybpfprof")
            for row in rows if row["title"] == "cpu" and row["tool"].external and row.get("own_cpu")]
    if not bars:
        return [], 0
    ml, mr, top, step = 230, 80, 46, 20
    x1 = max(b[0] for b in bars) * 1.1 or 1.0
    o = [f'<text x="{w / 2}" y="{y0 + 22}" text-anchor="middle" font-size="13">'
         "the samplers' own CPU on the same runs, % of one core over the work's wall time (median)</text>"]
    for i, (v, label, ours) in enumerate(bars):
        y = y0 + top + i * step
        colour = "#c0392b" if ours else "#2c3e50"
        bw = v / x1 * (w - ml - mr)
        o.append(f'<text x="{ml - 6}" y="{y + 11}" text-anchor="end" fill="{colour}">{label}</text>')
        o.append(f'<rect x="{ml}" y="{y}" width="{bw:.1f}" height="14" fill="{colour}"/>')
        o.append(f'<text x="{ml + bw + 4:.1f}" y="{y + 11}">{v:.1f} %</text>')
    return o, top + len(bars) * step + 10


def svg_plot(rows, versions, ips):
    """Slowdown of the target's CPU time (log scale, 0.5 % and less at the
    left edge) against the absolute split error, one point per tool and
    setting of the CPU-bound comparison, labelled with its interpreter; the
    out-of-process samplers' own CPU in bars below."""
    import math
    pts = []
    for row in rows:
        if row["title"] != "cpu" or not row["share"]:
            continue
        slow = (med(row["cpu"]) - 1) * 100
        err = abs(med([e[2] for e in row["share"]]))
        pts.append((slow, err, f"{short_label(row['tool'])} ({versions.get(row['interp'], '?')})",
                    row["tool"].name == "pybpfprof"))
    w, h, ml, mr, mt, mb = 860, 480, 60, 30, 40, 60
    bars, bars_h = own_cpu_bars(rows, versions, w, h)
    lo = math.log10(0.5)
    hi = math.log10(max([p[0] for p in pts] + [10]) * 1.5)
    y1 = max([p[1] for p in pts] + [2.0]) * 1.15

    def X(pct_):
        return ml + (math.log10(max(pct_, 0.5)) - lo) / (hi - lo) * (w - ml - mr)

    def Y(e):
        return h - mb - e / y1 * (h - mt - mb)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + bars_h}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{w}" height="{h + bars_h}" fill="white"/>',
         f'<text x="{w / 2}" y="18" text-anchor="middle" font-size="13">'
         'bench/peers: slowdown of the CPU-bound workload against the error on its 75/25 split</text>',
         f'<line x1="{ml}" y1="{h - mb}" x2="{w - mr}" y2="{h - mb}" stroke="black"/>',
         f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{h - mb}" stroke="black"/>']
    for t in (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000):
        if math.log10(t) <= hi:
            x = X(t)
            o.append(f'<line x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{h - mb}" stroke="#ddd"/>')
            o.append(f'<text x="{x:.1f}" y="{h - mb + 14}" text-anchor="middle">'
                     f'{"≤ " if t == 0.5 else "+"}{t:g} %</text>')
    step = 1 if y1 <= 8 else (2 if y1 <= 16 else 5)
    e = 0
    while e <= y1:
        y = Y(e)
        o.append(f'<line x1="{ml}" y1="{y:.1f}" x2="{w - mr}" y2="{y:.1f}" stroke="#eee"/>')
        o.append(f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end">{e:g}</text>')
        e += step
    o.append(f'<text x="{(ml + w - mr) / 2}" y="{h - 18}" text-anchor="middle">'
             "slowdown of the target's CPU time, median of per-round ratios (log scale)</text>")
    o.append(f'<text x="16" y="{(mt + h - mb) / 2}" text-anchor="middle" '
             f'transform="rotate(-90 16 {(mt + h - mb) / 2})">'
             "|error| of major()'s share, percentage points (median)</text>")
    placed = []
    for slow, err, label, ours in sorted(pts):
        x, y = X(slow), Y(err)
        colour = "#c0392b" if ours else "#2c3e50"
        o.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>')
        right = x > w * 0.7
        ty = y - 7
        while any(abs(ty - py) < 12 and abs(x - px) < 170 for px, py in placed):
            ty -= 12
        placed.append((x, ty))
        o.append(f'<text x="{x + (-6 if right else 6):.1f}" y="{ty:.1f}" fill="{colour}" '
                 f'text-anchor="{"end" if right else "start"}">{label}</text>')
    o += bars
    o.append("</svg>")
    return "\n".join(o) + "\n"


# ---------------------------------------------------------------- report

SECTIONS = [
    ("CPU-bound mixed workload: slowdown", table_slowdown, "cpu"),
    ("Accuracy: the 75/25 split and the hot line", table_accuracy, None),
    ("CPython 3.15's own sampler (Tachyon) against pybpfprof", table_tachyon, None),
    ("Two call chains that alternate quickly: impossible stacks", table_chains, None),
    ("Call-heavy workload: tracing tools against `--calls`", table_calls, None),
    ("Memory: allocation-heavy workload", table_mem, None),
    ("The profilers' own CPU and peak RSS", table_own, None),
]


def tables(rows, versions, ips):
    out = []
    for title, fn, arg in SECTIONS:
        head, body = fn(rows, versions, ips, arg) if arg else fn(rows, versions, ips)
        if body:  # none: its comparison was left out (--only)
            out.append((title, head, body))
    return out


def environment(rounds, sizes, started, wall_s, load0, load1, ips, versions):
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    # the files this run rewrites do not make the build "uncommitted"
    dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain", "--untracked-files=no", "--",
                            ".", ":!BENCHMARKS.md", ":!bench/peers.svg"],
                           capture_output=True, text=True).stdout.strip()
    cpu_model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    return (f"{started:%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs ({cpu_model}); kernel {platform.release()}; "
            f"pybpfprof built at {commit}{' (with uncommitted changes)' if dirty else ''}; "
            f"{rounds} rounds interleaved; workload sizes cpu {sizes['cpu']}, calls {sizes['calls']:,}, "
            f"mem {sizes['mem']}, chains {sizes['chains']:,}; load average (1, 5, 15 min) {load0} at the "
            f"start and {load1} at the end, 1-min load at the rounds' starts "
            f"{min(round_loads):.2f} to {max(round_loads):.2f}; "
            f"the command took {wall_s / 60:.1f} min. Unprofiled medians: "
            + "; ".join(f"{t} on {ip} {s:.2f} s" for (t, ip), s in sorted(unprofiled_medians.items())) + ".")


unprofiled_medians = {}
round_loads = []  # the 1-min load average at each round's start


def headline(rows, versions):
    """One sentence per interpreter of the CPU comparison: each tool's
    slowdown and split error; then the call-heavy and memory figures."""
    out = []
    for ipname in ("host", "trixie", "sid", "sid315"):
        parts = []
        for row in rows:
            if row["title"] == "cpu" and row["interp"] == ipname:
                err = f", {med([e[2] for e in row['share']]):+.1f} pp" if row["share"] else ""
                parts.append(f"{row['tool'].key()} {pct(med(row['cpu']))}{err}")
        if parts:
            out.append(f"- CPython {versions.get(ipname, '?')}: " + "; ".join(parts) + ".")
    parts = [f"{row['tool'].key()} {med(row['own_cpu_s']) * 1000:.0f} ms ({med(row['own_cpu']) * 100:.1f} % "
             f"of a core), {med(row['own_rss']):.0f} MiB"
             for row in rows if row["title"] == "cpu" and row["interp"] == "sid315" and row["tool"].external]
    if parts:
        out.append(f"- Own CPU per run and peak RSS on {versions.get('sid315', '?')}'s CPU-bound workload: "
                   + "; ".join(parts) + ".")
    parts = []
    for row in rows:
        if row["title"] == "chains" and row["chains"]:
            n, seen = (sum(c[k] for c in row["chains"]) for k in ("impossible", "in_work"))
            failed = f", {fmt_pct2(med(row['failed']))} of samples failed" if row["failed"] else ""
            parts.append(f"{row['tool'].key()} {n} of {seen} ({fmt_pct2(100 * n / seen)}){failed}")
    if parts:
        out.append("- Impossible stacks on two chains alternating every "
                   f"{med([x for r in rows if r['title'] == 'chains' for x in r['switch_us']]) * 1000:.0f} ns: "
                   + "; ".join(parts) + ".")
    parts = [f"{row['tool'].key()} on {versions.get(row['interp'], '?')} {pct(med(row['cpu']))}"
             for row in rows if row["title"] == "calls"]
    if parts:
        out.append("- Call-heavy workload: " + "; ".join(parts) + ".")
    parts = [f"{row['tool'].key()} {pct(med(row['cpu']))}" +
             ("" if row["tool"].name == "no profiler" else
              f", growing line named in {row['grow'][0]} of {row['n']} runs")
             for row in rows if row["title"] == "mem"]
    if parts:
        out.append("- Memory: " + "; ".join(parts) + ".")
    return "\n".join(out)


def markdown(secs, env_line, svg_name, head_text):
    out = [env_line, "", "Headline (slowdown of the target's CPU time, median; error of major()'s "
           "share in percentage points, median; wall times in the tables):", "", head_text, ""]
    if svg_name:
        out += [f"![slowdown against the error on the 75/25 split]({svg_name})", ""]
    for title, head, body in secs:
        out += [f"#### {title}", "", markdown_table(head, body), ""]
    return "\n".join(out)


def usage_error(msg):
    sys.stderr.write(f"peers: {msg}\n")
    sys.exit(2)


BEGIN = "<!-- bench/peers: begin (written by bench/peers; do not edit by hand) -->"
END = "<!-- bench/peers: end -->"


def splice(path, section):
    """path's text with the part between BEGIN and END replaced (appended
    at the end, with the markers, when it has none)."""
    with open(path) as f:
        text = f.read()
    block = f"{BEGIN}\n{section}\n{END}"
    if BEGIN in text and END in text.split(BEGIN, 1)[1]:
        pre, rest = text.split(BEGIN, 1)
        return pre + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 rounds of short workloads (development)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 7; --quick 2)")
    ap.add_argument("--md", help="also write the tables as Markdown to this file")
    ap.add_argument("--svg", help="also draw slowdown against accuracy as SVG to this file")
    ap.add_argument("--raw", help="also write every run's figures as JSON to this file")
    ap.add_argument("--benchmarks", help="rewrite this file's section between the peers markers "
                    "(BENCHMARKS.md) with this run's tables")
    ap.add_argument("--only", help="run only these comparisons, comma-separated TITLE@INTERPRETER "
                    "(cpu@host, cpu@trixie, cpu@sid, cpu@sid315, chains@sid315, calls@sid315, mem@sid); "
                    "not with --benchmarks, whose section holds them all")
    ap.add_argument("--self-test", action="store_true", help="check the output parsers and exit")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    for path in (a.md, a.svg, a.raw, a.benchmarks):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            usage_error(f"{path}: no such directory: give a path in an existing directory")
    if a.benchmarks and not os.path.isfile(a.benchmarks):
        usage_error(f"--benchmarks {a.benchmarks}: no such file (it rewrites a section of an existing file)")
    only = set(a.only.split(",")) if a.only else None
    known = {comparison_name(c) for c in comparisons()}
    if only and not only <= known:
        usage_error(f"--only {a.only}: no comparison {', '.join(sorted(only - known))}: "
                    f"give some of {', '.join(sorted(known))}")
    if only and a.benchmarks:
        usage_error("--only and --benchmarks: the section is written from one run of every comparison; "
                    "use --md FILE for a part")
    rounds = a.rounds if a.rounds is not None else (2 if a.quick else 7)
    if rounds < 1:
        usage_error("--rounds must be at least 1")
    sizes = SIZES["quick" if a.quick else "full"]
    started, t0, load0 = datetime.datetime.now(datetime.timezone.utc), time.monotonic(), loadavg()
    comps, ips, runs, versions = run_all(rounds, sizes, only)
    wall_s, load1 = time.monotonic() - t0, loadavg()
    for (title, ipname, key), rs in runs.items():
        if key == "none":
            unprofiled_medians[(title, ipname)] = med([r["elapsed"] for r in rs])
    rows = summarize(comps, runs)
    secs = tables(rows, versions, ips)
    env_line = environment(rounds, sizes, started, wall_s, load0, load1, ips, versions)
    for title, head, body in secs:
        print(f"\n{title}\n")
        print(text_table(head, body))
    print("\n" + env_line)
    for row in rows:
        for e in sorted(set(row["errors"])):
            print(f"warning: {row['tool'].key()} on {row['interp']}: output not read: {e}")
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg_plot(rows, versions, ips))
    head_text = headline(rows, versions)
    print("\n" + head_text)
    for md_path, into in ((a.md, False), (a.benchmarks, True)):
        if not md_path:
            continue
        svg_rel = os.path.relpath(a.svg, os.path.dirname(os.path.abspath(md_path))) if a.svg else None
        text = markdown(secs, env_line, svg_rel, head_text)
        if into:
            text = splice(md_path, text)
        with open(md_path, "w") as f:
            f.write(text)
    if a.raw:
        with open(a.raw, "w") as f:
            json.dump({"env": env_line, "versions": {str(k): v for k, v in versions.items()},
                       "runs": {" | ".join(k): v for k, v in runs.items()}}, f, indent=1)
    return 0


# ---------------------------------------------------------------- self-test

def self_test():
    """The parsers on outputs shaped as each tool writes them (small, made
    here): a parser that loses a frame, a line or a unit fails it."""
    W = "/x/peers_workload.py"
    fails = []

    checks = []

    def eq(what, got, want):
        checks.append(what)
        if got != want:
            fails.append(f"{what}: got {got!r}, want {want!r}")

    austin = ("# austin: 3.7.0\n# interval: 1000\n"
              f"P1;T0:1;{W}:<module>:200;{W}:cpu:90;{W}:major:66;{W}:fib:32 300\n"
              f"P1;T0:1;{W}:<module>:200;{W}:cpu:90;{W}:minor:78 90\n"
              f"P1;T0:1;{W}:<module>:200;{W}:cpu:90;{W}:minor:77 10\n"
              "P1;T0:1 5\n")
    eq("austin", parse_austin(austin), {"major": 300, "minor": 100, "hot_line": 78})
    pyi = {"root_frame": {"function": "<module>", "time": 4.0, "children": [
        {"function": "cpu", "time": 4.0, "children": [
            {"function": "major", "time": 3.0, "children": [{"function": "major", "time": 1.0}]},
            {"function": "minor", "time": 1.0, "children": []}]}]}}
    eq("pyinstrument", parse_pyinstrument(pyi), {"major": 3.0, "minor": 1.0})
    rows = [[W, 60, "major", 5, 0.1, 3.0], [W, 70, "minor", 5, 0.9, 1.0],
            [W, 100, "tiny", 1000, 0.5, 0.5], ["~", 0, "<built-in method len>", 9, 0.2, 0.2]]
    eq("pstats", parse_pstats(rows), {"major": 3.0, "minor": 1.0, "calls": 1000})
    lp = [[W, "major", 62, 5, 2.0], [W, "major", 63, 5, 1.0], [W, "minor", 77, 9, 0.1],
          [W, "minor", 78, 9, 0.8], [W, "minor", 79, 9, 0.1]]
    eq("line_profiler", parse_lprof(lp), {"major": 3.0, "minor": 1.0, "hot_line": 78})
    fn_of_line = {32: "fib", 66: "major", 77: "minor", 78: "minor"}
    sc = {"files": {W: {"functions": [
        {"line": "fib", "lineno": 32, "n_cpu_percent_python": 50.0, "n_cpu_percent_c": 10.0},
        {"line": "Point.norm2", "lineno": 44, "n_cpu_percent_python": 5.0, "n_sys_percent": 5.0},
        {"line": "major", "lineno": 66, "n_cpu_percent_python": 5.0, "n_cpu_percent_c": 0.0},
        {"line": "minor", "lineno": 76, "n_cpu_percent_python": 20.0, "n_sys_percent": 5.0}],
        "lines": [{"lineno": 32, "n_cpu_percent_python": 50.0, "n_cpu_percent_c": 10.0},
                  {"lineno": 77, "n_cpu_percent_python": 5.0, "n_cpu_percent_c": 0.0},
                  {"lineno": 78, "n_cpu_percent_python": 10.0, "n_cpu_percent_c": 10.0}]}}}
    eq("scalene", parse_scalene(sc, fn_of_line), {"major": 75.0, "minor": 25.0, "hot_line": 78})
    mr = [[100, 1, [["churn", W, 110], ["mem", W, 119]]], [4000, 9, [["mem", W, 120]]],
          [999999, 1, [["x", "/usr/lib/python3/m.py", 1]]]]
    eq("memray", parse_memray(mr), {"growing_line": 120})
    rep = {"processes": [{"functions": [{"qualname": "major", "total": 30, "self": 1},
                                        {"qualname": "minor", "total": 10, "self": 9}],
                          "lines": [{"qualname": "minor", "line": 78, "self": 8},
                                    {"qualname": "minor", "line": 77, "self": 1},
                                    {"qualname": "major", "line": 66, "self": 20}]}],
           "model": {"functions": [["mem", W, 115, False], ["tiny", W, 100, False],
                                   ["churn", W, 107, False], ["f", "/lib/x.py", 1, False]],
                     "frames": [[0, 120], [1, 101], [2, 110], [3, 5]],
                     "processes": [{"mem": {"stacks": [[[3, 0], [0, 0, 0, 0, 0, 0, 5000], [0] * 7],
                                                       [[2, 0], [0, 0, 0, 0, 0, 0, 900], [0] * 7]]},
                                    "calls": [[1, 0, 600, 1, 1, 1], [0, -1, 1, 1, 1, 1]]}]}}
    eq("pybpfprof", parse_pybpfprof(rep),
       {"major": 30, "minor": 10, "hot_line": 78, "growing_line": 120, "calls": 600})
    rep["model"]["mem"] = {"alloc": True}
    rep["model"]["processes"][0]["mem"]["stacks"].append([[0], [0, 0, 0, 0, 70, 0, 0], [0] * 7])
    eq("pybpfprof --mem=alloc: live", parse_pybpfprof(rep)["growing_line"], 120)
    rep["model"]["processes"][0]["mem"]["stacks"][2] = [[2], [0, 0, 0, 0, 70, 0, 0], [0] * 7]
    eq("pybpfprof --mem=alloc: not retained", parse_pybpfprof(rep)["growing_line"], 110)
    cl = call_lines()
    la, lb, lc = (min(cl[k]) for k in (("chains", "a"), ("a", "b"), ("b", "c")))
    lx, ly, lz = (min(cl[k]) for k in (("chains", "x"), ("x", "y"), ("y", "z")))
    tw = ("tid:7;<frozen runpy>:_run_module_as_main:201;<frozen runpy>:_run_code:87;"
          "peers_workload.py:<module>:240;peers_workload.py:main:230")
    ta, tx = f"{tw};peers_workload.py:chains:{la}", f"{tw};peers_workload.py:chains:{lx}"
    tachyon = (f"{tw};peers_workload.py:cpu:95;peers_workload.py:major:70;peers_workload.py:fib:44 300\n"
               f"{tw};peers_workload.py:cpu:96;peers_workload.py:minor:88 90\n"
               f"{tw};peers_workload.py:cpu:96;peers_workload.py:minor:87 10\n"
               f"{tw};peers_workload.py:cpu:95;peers_workload.py:major:70;<GC> 4\n"
               f"{ta};peers_workload.py:a:{lb};peers_workload.py:b:{lc};peers_workload.py:c:150 40\n"
               f"{tx};peers_workload.py:x:{ly};peers_workload.py:y:{lz};peers_workload.py:z:150 40\n"
               f"{tx};peers_workload.py:x:{ly};peers_workload.py:b:{lc};peers_workload.py:c:150 3\n"
               f"{ta};peers_workload.py:a:{lb};peers_workload.py:c:150 1\n"
               f"{ta};peers_workload.py:a:{lb};<GC> 2\n"
               f"{ta};peers_workload.py:a:-1;peers_workload.py:b:-1 2\n"
               "tid:7;<GC> 5\nnot a stack\n\n")
    eq("tachyon", parse_tachyon(tachyon), {"major": 304, "minor": 100, "hot_line": 88,
                                           "chains": {"in_work": 88, "impossible": 4, "mixed": 3}})
    summary = ("Captured 3,005 samples in 3.01 seconds\nSample rate: 999.03 samples/sec\n"
               "Error rate: 6.30\nWarning: missed 2 samples from the expected total of 3007 (0.07%)\n"
               "Collapsed stack output written to /tmp/x/tachyon.txt\n")
    eq("tachyon summary", tachyon_summary(summary), {"failed": [189, 3005]})
    eq("tachyon summary, none", tachyon_summary("Traceback (most recent call last):\n"), {})
    m, d = [("<module>", 1), ("main", 2)], ("chains", la)
    verdicts = [(m + [d, ("a", lb), ("b", lc), ("c", 3)], "ok"), ([("chains", lx), ("x", ly), ("y", 9)], "ok"),
                ([("chains", 9)], "ok"), ([("chains", lx), ("x", ly), ("b", lc), ("c", 3)], "mixed"),
                ([("chains", lx), ("a", 0)], "mixed"), ([d, ("b", 3)], "impossible"),
                ([("a", 1), d, ("a", 9)], "impossible"), ([("c", 3)], "impossible"),
                ([d, ("a", lb + 100), ("b", 3)], "impossible"), ([d, ("a", 0), ("b", -1)], "ok"), (m, None)]
    for places, want in verdicts:
        eq(f"chain verdict {places}", chain_verdict(places, cl), want)
    rep2 = {"samples": {"total": 100, "dropped": 2, "truncated": 1, "unresolved": 3, "partial": 4,
                        "no_python": 7, "unreadable": 5},
            "model": {"functions": [["chains", W, 165, False], ["a", W, 150, False], ["b", W, 155, False],
                                    ["c", W, 145, False], ["x", W, 160, False], ["_run_code", "<frozen runpy>", 80,
                                                                                 False]],
                      "frames": [[0, la], [1, lb], [2, lc], [3, 147], [4, ly], [5, 87], [0, lx]],
                      "processes": [{"stacks": [[7, 50, [3, 2, 1, 0, 5]], [7, 2, [3, 2, 4, 6, 5]],
                                                [7, 1, [5]], [7, 4, [1, 6, 5]]]}]}}
    eq("pybpfprof: chains, failed", parse_pybpfprof(rep2),
       {"chains": {"in_work": 56, "impossible": 6, "mixed": 6}, "failed": [15, 107]})
    fails.extend(summary_self_test())
    checks.append("summaries, tables and plot of made-up runs")
    eq("split", share_error({"truth": {"major": 0.75, "minor": 0.25},
                             "tool": {"major": 70, "minor": 30}}), (75.0, 70.0, -5.0))
    tmpf = tempfile.NamedTemporaryFile("w", suffix=".md", delete=False)
    tmpf.write(f"a\n{BEGIN}\nold\n{END}\nb\n")
    tmpf.close()
    eq("splice", splice(tmpf.name, "new"), f"a\n{BEGIN}\nnew\n{END}\nb\n")
    with open(tmpf.name, "w") as f:
        f.write("a\n")
    eq("splice, no markers", splice(tmpf.name, "new"), f"a\n\n{BEGIN}\nnew\n{END}\n")
    os.unlink(tmpf.name)
    fl = workload_functions()
    eq("workload functions", (fl.get(fl_line("PEERS_HOT_LINE")), fl.get(fl_line("PEERS_GROWING_LINE"))),
       ("minor", "mem"))
    for f in fails:
        print("FAIL", f)
    print(f"peers self-test: {len(checks)} checks, {len(fails)} failed")
    return 1 if fails else 0


def summary_self_test():
    """Every table, the headline and the plot from made-up runs of every
    comparison (a run's figures as run_one returns them): what fails here
    would otherwise fail at the end of a long run."""
    comps, runs = comparisons(), {}
    for title, kind, ipname, tools in comps:
        for r in range(2):
            for tool in [None] + tools:
                res = {"elapsed": 2.0 + r, "cpu": 1.9 + r, "maxrss_kib": 20000, "hot_line": 88,
                       "growing_line": 132, "truth": {"major": 0.75, "minor": 0.25},
                       "calls": 5, "chain_calls": 8000000}
                if tool:
                    res["tool"] = {"major": 70 + r, "minor": 30, "hot_line": 88, "growing_line": 132, "calls": 5,
                                   "chains": {"in_work": 2000, "impossible": r, "mixed": r},
                                   "failed": [r, 2000]}
                    if tool.external:
                        res["tool_cpu_s"], res["tool_hwm_kib"] = 0.5, 30000
                key = (title, ipname, tool.key() if tool else "none")
                runs.setdefault(key, []).append(res)
    ips = interps()
    versions = {name: "3.x" for name in ips}
    out = []
    try:
        rows = summarize(comps, runs)
        secs = tables(rows, versions, ips)
        text = markdown(secs, "env", "peers.svg", headline(rows, versions))
        svg = svg_plot(rows, versions, ips)
    except Exception as e:  # noqa: BLE001 (any exception is the failure reported)
        return [f"summaries: {type(e).__name__}: {e}"]
    if len(secs) != len(SECTIONS):
        out.append(f"tables: {len(secs)} of {len(SECTIONS)} have rows")
    for title, head, body in secs:
        if not body or any(len(r) != len(head) for r in body):
            out.append(f"table {title!r}: {len(body)} rows, not all {len(head)} cells wide")
    for want in ("#### CPython 3.15's own sampler (Tachyon) against pybpfprof", "1 of 4000 (1)",
                 "Impossible stacks on two chains", "Tachyon defaults (wall, 1 kHz) 1 of 4000"):
        if want not in text:
            out.append(f"summaries: {want!r} not in the Markdown")
    if "Tachyon wall (3.x)" not in svg or not svg.endswith("</svg>\n"):
        out.append("plot: no point or bar for Tachyon, or not closed")
    return out


def fl_line(tag):
    with open(WORKLOAD) as f:
        for no, text in enumerate(f, 1):
            if "# " + tag in text:
                return no
    return -1


if __name__ == "__main__":
    sys.exit(main())
