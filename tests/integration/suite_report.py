# `pybpfprof report FILE`: a run's JSON profile written again in every
# format. One real run of the 75/25 split workload writes run.json and every
# other format directly (-o given once per format); `pybpfprof report
# run.json -o X` must then write each of them byte for byte as the run did.
# No format differs: the only clock in any of them, pprof's time_nanos, is
# pybpfprof's start, saved in the profile. The files report wrote are also
# opened by their real consumers (pstats, protoc, go tool pprof, dot), whose
# figures must be the run's. The same for a --mem run (the memory timeline
# and folded memory stacks) and a --calls run on Debian bullseye's CPython
# 3.9 (exact call counts in pstats), and a target whose strings carry terminal
# escapes. Then the refusals, with their sentences.

import json
import pstats
import tempfile

from pathlib import Path

from harness import (RUN_SLACK, Workloads, check, functions,
                     interpreter, load_report, process, run_profiler, test,
                     usdt_ticktock_profile)
from suite_formats import go_pprof, pprof_self, render_dot

SPLIT_FREQ = 499
SPLIT_SECONDS = 3
# every format a run writes, by the file name that selects it
FILES = {"json": "p.json", "text": "p.txt", "folded": "p.folded", "flamegraph": "p.html",
         "speedscope": "p.speedscope.json", "pstats": "p.pstats", "pprof": "p.pb.gz",
         "svg": "p.svg", "tree": "p.tree", "dot": "p.dot"}
_run = {}


def report(args, timeout=60):
    return run_profiler(["report", *args], timeout=timeout)


def direct_run():
    """split.py profiled once, every format written by the run itself."""
    if _run:
        return _run
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-report-"))
    (out / "run").mkdir()
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "split.py")
        args = ["-p", p.pid, "-d", SPLIT_SECONDS, "-F", SPLIT_FREQ, "--threads"]
        for name in FILES.values():
            args += ["-o", out / "run" / name]
        r = run_profiler(args, timeout=SPLIT_SECONDS + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    rep = load_report(out / "run" / "p.json")
    proc = process(rep, p.pid)
    check(proc["samples"] > 200, f"only {proc['samples']} samples")
    _run.update(dir=out, pid=p.pid, rep=rep, proc=proc, fns=functions(proc))
    return _run


@test
def report_every_format_identical():
    """Each format from `report run.json -o X`, one command per format, then
    all of them from one command: the run's bytes."""
    run = direct_run()
    src, one, many = run["dir"] / "run", run["dir"] / "one", run["dir"] / "many"
    one.mkdir(exist_ok=True)
    many.mkdir(exist_ok=True)
    args = [src / "p.json", "--threads"]
    for name, f in FILES.items():
        r = report([*args, "-o", one / f])
        check(r.returncode == 0 and r.stdout == "" and r.stderr == "",
              f"report -o {f}: exit {r.returncode}: {r.stderr.strip()}")
        check((one / f).read_bytes() == (src / f).read_bytes(),
              f"{name}: report's {one / f} differs from the run's {src / f}")
    r = report([*args, *[x for f in FILES.values() for x in ("-o", many / f)]])
    check(r.returncode == 0, f"report with every -o: exit {r.returncode}: {r.stderr.strip()}")
    for name, f in FILES.items():
        check((many / f).read_bytes() == (src / f).read_bytes(),
              f"{name}: written with every -o at once, differs from the run's")
    # stdout: the text report by default, any format with -f
    r = report(args)
    check(r.returncode == 0 and r.stdout == (src / "p.txt").read_text(),
          "report on stdout differs from the run's text report")
    r = report([*args, "-f", "json"])
    check(r.returncode == 0 and r.stdout == (src / "p.json").read_text(),
          "report -f json on stdout differs from the run's JSON")
    sizes = ", ".join(f"{n} {(src / f).stat().st_size}" for n, f in FILES.items())
    return f"{len(FILES)} formats byte-identical, alone and together ({sizes} bytes)"


@test
def report_consumers():
    """The files report wrote, read by their own consumers: the same figures
    as the run's JSON, and slow() about 3/4 of slow and fast."""
    run = direct_run()
    one = run["dir"] / "one"
    if not (one / "p.pstats").exists():
        report_every_format_identical()
    fns, n = run["fns"], run["proc"]["samples"]
    st = pstats.Stats(str(one / "p.pstats")).stats
    tt = {k[2]: v[2] for k, v in st.items() if k[2] in ("slow", "fast")}
    for name in ("slow", "fast"):
        want = fns[name]["self"] / SPLIT_FREQ
        check(abs(tt[name] - want) < 1e-9, f"pstats tottime of {name} {tt[name]}, JSON {want}")
    share = tt["slow"] / (tt["slow"] + tt["fast"])
    check(0.65 <= share <= 0.85, f"slow is {share:.1%} of slow and fast, expected about 75%")
    self_, total, _ = pprof_self(one / "p.pb.gz")
    check(total == n, f"protoc: {total} samples in the pprof report wrote, the run {n}")
    check(self_.get("slow") == fns["slow"]["self"], f"protoc: slow {self_.get('slow')}")
    out = go_pprof(one / "p.pb.gz", "-top", "-sample_index=samples")
    check(f"Total samples = {n}" in out, f"go tool pprof: {out[:300]}")
    svg = render_dot(one / "p.dot")
    check(">slow</text>" in svg and ">fast</text>" in svg, "dot drew no slow or fast")
    return (f"pstats: slow {share:.1%} of slow+fast, tottimes = JSON self / {SPLIT_FREQ} Hz; "
            f"protoc and go tool pprof: {n} samples; dot drew the graph")


@test
def report_mem_run():
    """A --mem run: the memory timeline, the folded memory stacks (touched
    and retained) and the memory pprof from the saved profile are the run's,
    and so are the text and JSON."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        p = wl.start(interpreter("debian"), "mem_grow.py")
        r = run_profiler(["-p", p.pid, "-d", 3, "--mem", "-o", d / "m.json", "-o", d / "m.txt",
                          "--mem-timeline", d / "m.svg", "--mem-folded", d / "m.folded",
                          "--mem-retained-folded", d / "m.rfolded", "--mem-pprof", d / "m.pb.gz"],
                         timeout=3 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        (d / "r").mkdir()
        r = report([d / "m.json", "-o", d / "r/m.json", "-o", d / "r/m.txt", "--mem-timeline",
                    d / "r/m.svg", "--mem-folded", d / "r/m.folded", "--mem-retained-folded",
                    d / "r/m.rfolded", "--mem-pprof", d / "r/m.pb.gz"])
        check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
        for f in ("m.json", "m.txt", "m.svg", "m.folded", "m.rfolded", "m.pb.gz"):
            check((d / "r" / f).read_bytes() == (d / f).read_bytes(), f"{f} differs")
        proc = process(load_report(d / "m.json"), p.pid)
        touched = proc["memory"]["touched"]
        check(touched > 0, "no memory touched in the --mem run")
        folded = sum(int(ln.rsplit(" ", 1)[1]) for ln in (d / "m.folded").read_text().split("\n")
                     if ln)
    return (f"timeline, folded memory stacks ({folded} bytes), retained folded stacks, memory "
            f"pprof, text and JSON byte-identical; "
            f"{touched} bytes touched")


@test
def report_calls_bullseye39():
    """--calls on Debian bullseye's CPython 3.9: the exact call counts come
    back from the saved profile into pstats (usdt_ticktock.py: tick N times,
    tock 2N)."""
    n = 3000
    py = interpreter("bullseye39")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        usdt_ticktock_profile(wl, py, n, ["-d", 30, "--calls", "-o", d / "c.json", "-o",
                                          d / "c.pstats", "-o", d / "c.dot", "--prune", 0])
        r = report([d / "c.json", "-o", d / "r.pstats", "-o", d / "r.dot", "--prune", 0])
        check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
        for a, b in (("c.pstats", "r.pstats"), ("c.dot", "r.dot")):
            check((d / a).read_bytes() == (d / b).read_bytes(), f"{b} differs from {a}")
        st = pstats.Stats(str(d / "r.pstats")).stats
        calls = {k[2]: v[1] for k, v in st.items() if k[2] in ("tick", "tock")}
    check(calls == {"tick": n, "tock": 2 * n}, f"pstats ncalls {calls}, expected tick {n}, "
          f"tock {2 * n}")
    return f"pstats from the saved profile: tick {calls['tick']}, tock {calls['tock']} calls"


@test
def report_refusals():
    """Bad input: one sentence, exit 1 (the file) or 2 (the command line),
    nothing on stdout, no output file."""
    run = direct_run()
    src = run["dir"] / "run" / "p.json"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        out = d / "out.txt"
        cases = []

        def refused(args, want, rc=1, prefix="pybpfprof: ", end=None):
            r = report([*args, "-o", out])
            lines = r.stderr.strip().splitlines()
            check(r.returncode == rc, f"exit {r.returncode}, expected {rc}: {r.stderr!r}")
            got = lines[0] if lines else ""
            if end:  # a list in the middle that other writers may extend
                got = got[:len(prefix + want)] + " ... " + got[-len(end):]
                want = f"{want} ... {end}"
            check(got == prefix + want, f"{lines[:1]}, expected {want!r}")
            check(len(lines) == 1 or rc == 2, f"more than one line: {r.stderr!r}")
            check(r.stdout == "" and not out.exists(), "output written despite the error")
            cases.append(want)

        refused([d / "none.json"], f"{d}/none.json: cannot open it: No such file or directory")
        (d / "text.json").write_text("pid 1 samples 3\n")
        refused([d / "text.json"], f"{d}/text.json: not JSON: a value expected "
                "(line 1, column 1)")
        (d / "other.json").write_text('{"tool": "other"}')
        refused([d / "other.json"], f"{d}/other.json: not a pybpfprof profile (no \"schema\")")
        doc = json.loads(src.read_text())
        doc["schema"] = 7
        (d / "new.json").write_text(json.dumps(doc))
        refused([d / "new.json"], f"{d}/new.json: schema 7 is newer than this pybpfprof reads "
                "(1): upgrade pybpfprof")
        doc["schema"] = 1
        doc["model"]["processes"][0]["stacks"][0][2][0] = 10 ** 6
        (d / "bad.json").write_text(json.dumps(doc))
        nframes = len(doc["model"]["frames"])
        refused([d / "bad.json"], f"{d}/bad.json: not a valid pybpfprof profile: "
                f"model.processes[0].stacks[0][2][0]: frame 1000000 does not exist "
                f"({nframes} frames)")
        refused([d], f"{d}: not a regular file: give a JSON profile written by -o")
        refused([src, "--mem-timeline", d / "t.svg"], f"{src}: --mem-timeline draws the "
                "memory samples, and this profile has none: record with --mem", rc=2)
        check(not (d / "t.svg").exists(), "t.svg created")
        refused([src, "-o", d / "x.xyz"], f"unknown extension '.xyz' in -o {d}/x.xyz: use one "
                "of .txt, .json,", rc=2, prefix="pybpfprof report: ",
                end=".heat.html, or give the format with -f")
        refused([], "no profile: give the JSON file a run wrote with -o FILE.json", rc=2,
                prefix="pybpfprof report: ")
    return f"{len(cases)} refusals, each one sentence, no file left"


@test
def report_hostile_strings():
    """A target whose comm, command line, qualname, file name and source line
    carry terminal escapes (hostile_strings.py): the saved profile keeps them
    exactly (JSON escapes them), so report writes every format as the run did,
    and its text report is as safe to print."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "r").mkdir()
        p = wl.start("/usr/bin/python3", "hostile_strings.py", "\x1b]0;title\x07")
        args = ["-p", p.pid, "-d", 2, "-F", 199, "--threads"]
        for f in FILES.values():
            args += ["-o", d / f]
        r = run_profiler(args, timeout=2 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        r = report([d / "p.json", "--threads", *[x for f in FILES.values()
                                                   for x in ("-o", d / "r" / f)]])
        check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
        for name, f in FILES.items():
            check((d / "r" / f).read_bytes() == (d / f).read_bytes(),
                  f"{name}: report's file differs from the run's")
        text = (d / "r/p.txt").read_text()
    check("spin?[2J?100.0% fake ?31m" in text and "\x1b" not in text,
          "the hostile qualname is not shown with '?' for its escapes")
    return f"{len(FILES)} formats byte-identical; escapes shown as '?' in the text report"
