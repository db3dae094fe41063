# --mem: memory growth by Python line from page faults and memory system
# calls.
#
# Ground truth: the workloads allocate known sizes on known lines through
# paths whose system calls are known (glibc's mmap threshold, the mmap
# module), so mapped bytes are exact multiples of a known size and touched
# bytes (sampled page faults) must agree with them.

import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from pathlib import Path

from harness import (Fail, LineReader, Profiler, RUN_SLACK, Reaper, Skip, TARGETS, Workloads, check,
                     cpu_seconds, expect_error, interpreter, load_report,
                     per_build, process, profile_json, run_profiler, source_line, test)


MIB = 1 << 20
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
# A 200 MiB bytes object: one mmap of its size plus the object and malloc
# headers, rounded up to a page: 200 MiB + 4 KiB. Likewise 5 MiB + 4 KiB.
BIG_MAP = 200 * MIB + 4096
KEEP_MAP = 5 * MIB + 4096
# The static Debian build, pyenv's shared-libpython build, a chrooted 3.13.
MEM_BUILDS = ("debian", "pyenv", "trixie313")


def mem_section(rep, pid):
    proc = process(rep, pid)
    check(rep["mode"] == "cpu+mem", f"mode {rep['mode']!r}")
    mem = proc.get("memory")
    check(isinstance(mem, dict), f"no memory section: {sorted(proc)}")
    for key in ("touched", "mapped", "unmapped", "truncated", "partial", "unresolved"):
        check(isinstance(mem.get(key), int) and mem[key] >= 0, f"memory.{key}: {mem.get(key)!r}")
    check(mem["net"] == mem["mapped"] - mem["unmapped"], f"net {mem['net']} != mapped - unmapped")
    # Each fault sample stands for its own period's pages (the period varies).
    check(mem["touched"] % mem["page_size"] == 0,
          f"touched {mem['touched']} not a whole number of pages")
    for key in ("touched", "mapped", "unmapped"):
        per_line = sum(ln[key] for ln in mem["lines"])
        check(per_line == mem[key], f"lines' {key} add up to {per_line}, total {mem[key]}")
    return mem


def mem_line(mem, script_path, line, qualname=None):
    """Bytes of every kind at file:line, summed over the code objects on it
    (a comprehension or generator on a line is a function of its own), or
    only those whose qualname ends with qualname."""
    rows = [ln for ln in mem["lines"] if ln["file"] == script_path and ln["line"] == line
            and (qualname is None or ln["qualname"].endswith(qualname))]
    return {k: sum(r[k] for r in rows)
            for k in ("touched", "mapped", "unmapped", "bytes", "allocated", "live")}


@per_build(builds=MEM_BUILDS)
def mem_growth(build):
    py = interpreter(build)
    big_n, big_text = source_line("mem_grow.py", "# big line")
    keep_n, _ = source_line("mem_grow.py", "# keep line")
    drop_n, _ = source_line("mem_grow.py", "# drop line")
    with Workloads() as wl:
        p = wl.start(py, "mem_grow.py")
        rep = profile_json([p.pid], 4, 99, ["--mem"])
    mem = mem_section(rep, p.pid)
    path = py.script_path("mem_grow.py")
    big, keep, drop = (mem_line(mem, path, n) for n in (big_n, keep_n, drop_n))

    # Mapped bytes are exact: whole 200 MiB and 5 MiB objects, and as many
    # 5 MiB as 200 MiB ones (one each per round, give or take the round the
    # run started or ended in).
    rounds = big["mapped"] // BIG_MAP
    check(rounds >= 3 and big["mapped"] == rounds * BIG_MAP,
          f"big line mapped {big['mapped']} bytes, not a multiple >= 3 of {BIG_MAP}")
    # The keep line also grows the list that holds the kept objects: once in
    # a while its realloc extends the heap (brk, counted as mapped; 60 KiB
    # seen on trixie's 3.13), never by a whole 5 MiB object.
    check(keep["mapped"] % KEEP_MAP < MIB and abs(keep["mapped"] // KEEP_MAP - rounds) <= 1,
          f"keep line mapped {keep['mapped']} bytes for {rounds} rounds of {KEEP_MAP}")
    check(abs(drop["unmapped"] - big["mapped"]) <= BIG_MAP,
          f"drop line unmapped {drop['unmapped']}, big line mapped {big['mapped']}")
    # Touched bytes are sampled (one fault in 64): they must match the pages
    # mapped, within the round in flight at each end and 5% of sampling error.
    check(abs(big["touched"] - big["mapped"]) <= BIG_MAP + 0.05 * big["mapped"],
          f"big line touched {big['touched']}, mapped {big['mapped']}")
    touched = mem["touched"]
    share_two = (big["touched"] + keep["touched"]) / touched
    check(share_two >= 0.9, f"big+keep lines touched {share_two:.1%} of {touched} bytes")
    keep_share = keep["touched"] / (big["touched"] + keep["touched"])
    truth = 5 / 205
    check(abs(keep_share - truth) <= 0.01,
          f"keep line share {keep_share:.2%}, expected {truth:.2%} +- 1pp")
    # The resident peak is reached while the 200 MiB object is being built.
    top = mem["peak_stack"][0] if mem["peak_stack"] else {}
    check(top.get("line") == big_n and top.get("file") == path,
          f"peak stack starts at {top}, expected {path}:{big_n}")
    check(mem["peak_rss"] >= 200 * MIB, f"peak_rss {mem['peak_rss']}")
    return (f"{rounds} rounds; big line touched {big['touched'] / MIB:.0f} MiB for "
            f"{big['mapped'] / MIB:.0f} MiB mapped; keep share {keep_share:.2%} (truth "
            f"{truth:.2%}); big+keep {share_two:.1%}; peak {mem['peak_rss'] / MIB:.0f} MiB at "
            f"line {top.get('line')}")


def retain_run(py, rounds, tmp, extra=()):
    """pybpfprof --mem -p on mem_retain.py through its rounds (started once
    the profiler is attached), stopped by SIGINT while the workload holds
    what it kept: the JSON report, the text report and the timeline (and the
    files of extra, given as paths under tmp)."""
    out = {k: os.path.join(tmp, f"r.{k}") for k in ("json", "txt", "svg")}
    with Workloads() as wl:
        p = wl.start(py, "mem_retain.py", rounds)
        lines = LineReader(p)
        prof = Profiler(["-p", p.pid, "--mem", "-o", out["json"], "-o", out["txt"],
                         "--mem-timeline", out["svg"], *extra])
        try:
            prof.wait_attached()
            os.kill(p.pid, signal.SIGUSR1)
            lines.wait_for("done", timeout=60)
            time.sleep(1.2)  # the held level, a baseline window long
            prof.p.send_signal(signal.SIGINT)
            prof.wait(RUN_SLACK)
        finally:
            prof.kill()
        check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()}")
    with open(out["txt"]) as f:
        text = f.read()
    try:
        root = ET.parse(out["svg"]).getroot()
    except ET.ParseError as e:
        raise Fail(f"the timeline is not well-formed XML: {e}")
    return p, load_report(out["json"]), text, root


# and pyenv's 3.12 (shared libpython, another frame layout)
@per_build(builds=MEM_BUILDS + ("pyenv312",))
def mem_retained(build):
    """Issue 20's acceptance: rounds of a 200 MiB object built and dropped on
    one line and 5 MiB kept on another. Every munmap is matched to the mmap
    it undoes, so the keep line retains exactly its 5 MiB objects (>= 95% of
    all retained bytes, first in the text report), the big line retains
    nothing of what it mapped, and the timeline's baseline label names the
    keep line while the transient peaks name the big one."""
    py = interpreter(build)
    big_n, _ = source_line("mem_retain.py", "# big line")
    keep_n, keep_text = source_line("mem_retain.py", "# keep line")
    rounds = 20
    with tempfile.TemporaryDirectory() as tmp:
        p, rep, text, root = retain_run(py, rounds, tmp)
    mem = mem_section(rep, p.pid)
    path = py.script_path("mem_retain.py")
    rows = {n: [ln for ln in mem["lines"] if ln["file"] == path and ln["line"] == n]
            for n in (big_n, keep_n)}
    big, keep = ({k: sum(r[k] for r in rows[n]) for k in ("mapped", "released", "retained")}
                 for n in (big_n, keep_n))
    retained = sum(ln["retained"] for ln in mem["lines"]) + mem["retained_no_stack"]
    check(retained == mem["retained"] + mem["retained_no_stack"],
          f"lines retain {retained}, total {mem['retained']} + {mem['retained_no_stack']}")
    for ln in mem["lines"]:
        check(ln["released"] + ln["retained"] <= ln["mapped"],
              f"line {ln['line']} released {ln['released']} + retained {ln['retained']} > "
              f"mapped {ln['mapped']}")
    # Exact: each round's objects, one mapping each (the list holding the
    # kept ones may grow the heap from the keep line too, by far less).
    check(big["mapped"] == rounds * BIG_MAP and big["released"] == big["mapped"]
          and big["retained"] == 0,
          f"big line mapped {big['mapped']} (expected {rounds * BIG_MAP}), released "
          f"{big['released']}, retained {big['retained']}")
    check(keep["retained"] // KEEP_MAP == rounds and keep["retained"] % KEEP_MAP < MIB,
          f"keep line retained {keep['retained']}, expected {rounds} x {KEEP_MAP}")
    share = keep["retained"] / retained
    check(share >= 0.95, f"keep line holds {share:.1%} of {retained} retained bytes")
    check(big["retained"] <= 0.05 * big["mapped"], f"big line retains {big['retained']}")
    table = text.split("Retained at the end, by line", 1)
    check(len(table) == 2, "no retained-by-line table in the text report")
    first = table[1].splitlines()[2]
    check(f"mem_retain.py:{keep_n}" in first and keep_text.split("#")[0].strip() in first,
          f"first retained row is not line {keep_n} with its source: {first!r}")
    check(text.index("Retained at the end") < text.index("Churn") < text.index("Memory: "),
          "the memory section does not open with retained, then churn")
    ns = "{http://www.w3.org/2000/svg}"
    base = [t.text or "" for t in root.iter(ns + "text") if t.get("class") == "baseline"]
    check(len(base) == 1 and f"retained by mem_retain.py:{keep_n} round_trip" in base[0],
          f"baseline label {base}, expected it to name mem_retain.py:{keep_n} first")
    peaks = [t.text or "" for t in root.iter(ns + "text") if t.get("class") == "label"]
    check(peaks and all(lb.startswith("transient") and f"mem_retain.py:{big_n}" in lb
                        for lb in peaks[:3]),
          f"peak labels {peaks[:3]}, expected transient ones at mem_retain.py:{big_n}")
    return (f"keep line retains {keep['retained'] / MIB:.1f} MiB ({share:.1%} of "
            f"{retained / MIB:.1f} MiB); big line mapped {big['mapped'] / MIB:.0f} MiB, "
            f"retains {big['retained']}; baseline label {base[0]!r}")


def go_pprof_top(path, index):
    """go tool pprof -top by line of one sample type, in bytes: (total, rows
    of (flat bytes, "func file:line"))."""
    go = shutil.which("go") or next(iter(sorted(Path("/usr/lib").glob("go-*/bin/go"))), None)
    if not go:
        raise Skip("go not installed (Debian package golang-go): go tool pprof not run")
    r = subprocess.run([str(go), "tool", "pprof", f"-sample_index={index}", "-unit=byte",
                        "-top", "-lines", "-nodecount=100", path], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, f"go tool pprof failed: {r.stderr.strip()[-300:]}")
    m = re.search(r"of (\d+)B total", r.stdout)
    rows = re.findall(r"^\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$", r.stdout,
                      re.M)
    return (int(m.group(1)) if m else 0), [(int(b), where) for b, where in rows]


@test
def mem_retained_outputs():
    """--mem-pprof and --mem-retained-folded of the acceptance run, read by
    their real consumers: go tool pprof's inuse_space holds exactly the
    lines' retained bytes, the keep line first, and its touched_space the
    touched bytes; the folded weights add up to the retained bytes."""
    py = interpreter("debian")
    keep_n, _ = source_line("mem_retain.py", "# keep line")
    with tempfile.TemporaryDirectory() as tmp:
        pprof, folded = os.path.join(tmp, "m.pb.gz"), os.path.join(tmp, "m.folded")
        p, rep, _, _ = retain_run(py, 10, tmp, ["--mem-pprof", pprof,
                                                "--mem-retained-folded", folded])
        mem = mem_section(rep, p.pid)
        total, rows = go_pprof_top(pprof, "inuse_space")
        touched, _ = go_pprof_top(pprof, "touched_space")
        with open(folded) as f:
            weights = [int(ln.rpartition(" ")[2]) for ln in f.read().splitlines()]
    path = py.script_path("mem_retain.py")
    check(total == mem["retained"] and total > 0,
          f"go tool pprof inuse_space total {total}, the JSON's retained {mem['retained']}")
    check(rows and rows[0][1].endswith(f"{path}:{keep_n}"),
          f"go tool pprof's top inuse_space line {rows[:1]}, expected {path}:{keep_n}")
    check(touched == mem["touched"], f"touched_space {touched}, JSON touched {mem['touched']}")
    check(sum(weights) == mem["retained"],
          f"retained folded weights add up to {sum(weights)}, JSON retained {mem['retained']}")
    return (f"inuse_space {total / MIB:.1f} MiB, top {rows[0][0] / MIB:.1f} MiB at line "
            f"{keep_n}; touched_space {touched / MIB:.0f} MiB; {len(weights)} folded stacks")


@test
def mem_balance():
    py = interpreter("debian")
    lines = {k: source_line("mem_churn.py", f"# {k} line")[0]
             for k in ("map", "touch", "unmap", "heap", "free")}
    with Workloads() as wl:
        p = wl.start(py, "mem_churn.py")
        rep = profile_json([p.pid], 3, 99, ["--mem"])
    mem = mem_section(rep, p.pid)
    path = py.script_path("mem_churn.py")
    row = {k: mem_line(mem, path, n) for k, n in lines.items()}
    chunk = 48 * MIB
    maps = row["map"]["mapped"]
    check(maps >= 2 * chunk and maps % chunk == 0,
          f"map line mapped {maps}, expected a multiple (>= 2) of {chunk}")
    check(row["unmap"]["unmapped"] % chunk == 0 and
          abs(row["unmap"]["unmapped"] - maps) <= chunk,
          f"unmap line unmapped {row['unmap']['unmapped']}, map line mapped {maps}")
    check(abs(row["touch"]["touched"] - maps) <= chunk + 0.05 * maps,
          f"touch line touched {row['touch']['touched']}, {maps} mapped")
    # The heap grows by brk on one line and is trimmed on another.
    heap, freed = row["heap"]["mapped"], row["free"]["unmapped"]
    check(heap >= 2 * 200 * 100_000 and freed > 0,
          f"heap line mapped {heap} (brk), free line unmapped {freed}")
    check(abs(heap - freed) <= 200 * 100_000 + 2 * MIB,
          f"heap line mapped {heap}, free line unmapped {freed}: no balance")
    # Whole process: at most the round in flight at each end is unbalanced.
    check(abs(mem["net"]) <= chunk + 200 * 100_000 + 2 * MIB,
          f"net {mem['net']} bytes (mapped {mem['mapped']}, unmapped {mem['unmapped']})")
    return (f"mmap {maps // chunk} x 48 MiB, munmap {row['unmap']['unmapped'] // chunk}; "
            f"brk +{heap / MIB:.1f} MiB -{freed / MIB:.1f} MiB; net "
            f"{mem['net'] / MIB:+.1f} MiB")


@test
def mem_text_report():
    py = interpreter("debian")
    big_n, big_text = source_line("mem_grow.py", "# big line")
    with Workloads() as wl:
        p = wl.start(py, "mem_grow.py")
        r = run_profiler(["-p", p.pid, "-d", 2, "--mem"], timeout=2 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    out = r.stdout
    check("Memory growth by line" in out, "no memory-by-line table")
    table = out.split("Memory growth by line", 1)[1].splitlines()[2]
    check(f"mem_grow.py:{big_n}" in table and big_text.split("#")[0].strip() in table,
          f"first memory row is not line {big_n} with its source: {table!r}")
    check("stack at the peak" in out, "no peak stack in the text report")
    return f"top row: {table.strip()[:90]}"


@test
def mem_timeline():
    py = interpreter("debian")
    big_n, _ = source_line("mem_grow.py", "# big line")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        svg = os.path.join(tmp, "rss.svg")
        p = wl.start(py, "mem_grow.py")
        r = run_profiler(["-p", p.pid, "-d", 3, "--mem-timeline", svg, "-f", "json"],
                         timeout=3 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        try:
            root = ET.parse(svg).getroot()
        except ET.ParseError as e:
            raise Fail(f"{svg} is not well-formed XML: {e}")
    rep = load_report(text=r.stdout)
    mem = mem_section(rep, p.pid)
    ns = "{http://www.w3.org/2000/svg}"
    check(root.tag == ns + "svg", f"root element {root.tag}")
    # the resident size, and the baseline under it (mem_retained checks that one)
    lines = [pl for pl in root.findall(f".//{ns}polyline") if pl.get("class") == "rss"]
    check(len(lines) == 1, f"{len(lines)} resident-size polylines")
    points = lines[0].get("points").split()
    # One reading every 50 ms, minus start-up: at least 40 in 3 s.
    check(len(points) >= 40 and len(points) == len(mem["rss_timeline"]),
          f"{len(points)} points drawn, {len(mem['rss_timeline'])} readings")
    labels = [t.text or "" for t in root.iter(ns + "text") if t.get("class") == "label"]
    check(labels, "no labelled rise")
    # The largest rises are the 200 MiB object being written.
    check(f"mem_grow.py:{big_n} round_trip" in labels[0],
          f"largest rise labelled {labels[0]!r}, expected mem_grow.py:{big_n}")
    return f"{len(points)} readings, {len(labels)} labels, first {labels[0]!r}"


@test
def mem_folded():
    """--mem-folded: one line per stack, outermost first, weights adding up
    to the touched bytes of the JSON report of the same run."""
    py = interpreter("debian")
    big_n, _ = source_line("mem_grow.py", "# big line")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "mem.folded")
        p = wl.start(py, "mem_grow.py")
        rep = profile_json([p.pid], 2, 99, ["--mem-folded", out])
        with open(out) as f:
            rows = f.read().splitlines()
    mem = mem_section(rep, p.pid)
    stacks = {}
    for row in rows:
        stack, _, weight = row.rpartition(" ")
        check(stack and weight.isdigit(), f"malformed folded line {row!r}")
        stacks[stack] = stacks.get(stack, 0) + int(weight)
    check(sum(stacks.values()) == mem["touched"],
          f"folded weights add up to {sum(stacks.values())}, touched {mem['touched']}")
    top = max(stacks, key=stacks.get)
    frames = top.split(";")
    path = py.script_path("mem_grow.py")
    check(frames[0].startswith(f"pid {p.pid} (") and frames[-1] == f"round_trip ({path}:{big_n})"
          and frames[1].startswith("<module>"), f"heaviest stack {top!r}")
    return f"{len(rows)} stacks, heaviest {top!r} {stacks[top] >> 20} MiB"


@test
def mem_error_usage():
    expect_error(["-p", os.getpid(), "--mem-period", "0"], ["--mem-period"], rc=2)
    expect_error(["-p", os.getpid(), "--mem=bogus"], ["--mem"], rc=2)
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "missing", "rss.svg")
        expect_error(["-p", os.getpid(), "--mem-timeline", bad], ["cannot write", bad],
                     out=bad)
    return "bad period, bad mode and unwritable timeline refused"


@per_build(builds=MEM_BUILDS)
def mem_alloc_leak(build):
    """--mem=alloc: the 5 MiB kept per round is the top live line at the end;
    the 200 MiB object built and dropped on another line is not live."""
    py = interpreter(build)
    big_n, _ = source_line("mem_grow.py", "# big line")
    keep_n, _ = source_line("mem_grow.py", "# keep line")
    with Workloads() as wl:
        p = wl.start(py, "mem_grow.py", 0)     # 0: keep every block
        rep = profile_json([p.pid], 4, 99, ["--mem=alloc"])
    mem = mem_section(rep, p.pid)
    path = py.script_path("mem_grow.py")
    check(mem["alloc_period"] == 512 * 1024, f"alloc_period {mem['alloc_period']}")
    live = mem["live_at_end"]
    check(live, f"nothing live at the end; allocated {mem['allocated']}")
    top = live[0]
    check(top["file"] == path and top["line"] == keep_n,
          f"top live line {top['file']}:{top['line']}, expected {path}:{keep_n}; {live[:3]}")
    # Allocations of at least the period are recorded with their own size,
    # and nothing kept is freed: live is what the line allocated, block by
    # block (5 MiB plus the object's header each).
    blocks = round(top["bytes"] / (5 * MIB))
    check(blocks >= 2 and 0 <= top["bytes"] - blocks * 5 * MIB <= blocks * 64,
          f"keep line live {top['bytes']} bytes is not a whole number of 5 MiB blocks")
    check(top["bytes"] == top["allocated"],
          f"keep line live {top['bytes']} != allocated {top['allocated']}")
    big = mem_line(mem, path, big_n)
    check(big["allocated"] >= 2 * 200 * MIB and big["live"] <= 200 * MIB + 64,
          f"big line allocated {big['allocated']}, live {big['live']}")
    return (f"keep line live {blocks} x 5 MiB, big line allocated "
            f"{big['allocated'] / MIB:.0f} MiB, live {big['live'] / MIB:.0f} MiB")


@test
def mem_alloc_sampling():
    """Allocations far below the period are seen by bytes: ten times more
    churned than leaked, and only the leaked ones live at the end."""
    py = interpreter("debian")
    churn_n, _ = source_line("mem_leak.py", "# churn line")
    leak_n, _ = source_line("mem_leak.py", "# leak line")
    path = py.script_path("mem_leak.py")
    # 50 samples of the leak line to judge by: a loaded host lets the
    # workload allocate less, so the run is made longer rather than judged
    for secs in (4, 8, 16):
        with Workloads() as wl:
            p = wl.start(py, "mem_leak.py")
            rep = profile_json([p.pid], secs, 99, ["--mem=alloc"])
        mem = mem_section(rep, p.pid)
        churn, leak = mem_line(mem, path, churn_n), mem_line(mem, path, leak_n)
        period = mem["alloc_period"]
        if leak["allocated"] >= 50 * period:
            break
    check(leak["allocated"] >= 50 * period,
          f"leak line allocated {leak['allocated']} bytes, under 50 samples")
    ratio = churn["allocated"] / leak["allocated"]
    check(8 <= ratio <= 12.5, f"churn/leak allocated {ratio:.2f}, expected 10 (+-20%)")
    top = mem["live_at_end"][0]
    check(top["line"] == leak_n, f"top live line {top['line']}, expected {leak_n}")
    # Every sampled leaked block is still live (the blocks are made in the
    # generator; the list's own array on that line is reallocated as it grows,
    # so it is not); a churn sample is live only if its round was in flight
    # when the run ended.
    blocks = mem_line(mem, path, leak_n, "<genexpr>")
    check(blocks["allocated"] >= 40 * period and blocks["live"] == blocks["allocated"],
          f"leaked blocks live {blocks['live']}, allocated {blocks['allocated']}")
    check(churn["live"] <= 500 * 8192 + period,
          f"churn line live {churn['live']} bytes, more than one round")
    return (f"churn/leak {ratio:.2f}; leak live {leak['live'] / MIB:.1f} MiB of "
            f"{leak['allocated'] / MIB:.1f} MiB; churn live {churn['live'] / 1024:.0f} KiB")


@test
def mem_sigint():
    """Ctrl-C ends a --mem=alloc run with the full report: the probes are
    detached, the live allocations collected, the memory section written."""
    py = interpreter("debian")
    keep_n, _ = source_line("mem_grow.py", "# keep line")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(py, "mem_grow.py", 0)
        out = os.path.join(tmp, "m.json")
        prof = Profiler(["-p", p.pid, "--mem=alloc", "-o", out])
        try:
            # the 3 s from the attach: loading the probes may take that long
            prof.wait_attached()
            check(prof.watch(3), f"pybpfprof exited early ({prof.rc})")
            prof.p.send_signal(signal.SIGINT)
            prof.wait(10)
        finally:
            prof.kill()
        rc, err = prof.rc, prof.stderr()
        check(rc == 0, f"exit {rc}: {err.strip()[-400:]}")
        rep = load_report(out)
        # The target lives on, still allocating, after the probes are gone.
        cpu0 = cpu_seconds(p.pid)
        time.sleep(0.5)
        check(p.poll() is None and cpu_seconds(p.pid) > cpu0,
              f"target {p.pid} stopped after the profiler's exit")
    mem = mem_section(rep, p.pid)
    live = mem["live_at_end"]
    check(live and live[0]["line"] == keep_n, f"top live line {live[:1]}, expected {keep_n}")
    return f"exit 0; {len(live)} live lines, top {live[0]['bytes'] >> 20} MiB at line {keep_n}"


@test
def mem_target_exits():
    """A target that exits during a --mem=alloc run: the run ends by itself
    and its memory section is kept."""
    py = interpreter("debian")
    with Workloads() as wl:
        # its 1.5 s start once pybpfprof is attached (a loaded machine may
        # take longer than that to load the probes)
        p = wl.start(py, "exits.py", 1.5, "signal")
        Reaper(p)
        prof = Profiler(["-p", p.pid, "-d", 20, "--mem=alloc", "-f", "json"], capture=True)
        try:
            prof.wait_attached()
            t0 = time.monotonic()
            os.kill(p.pid, signal.SIGUSR1)
            prof.wait(20 + RUN_SLACK)
        finally:
            prof.kill()
    elapsed = prof.t_end - t0
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()[-400:]}")
    check(elapsed < 8, f"took {elapsed:.1f}s after a 1.5 s target exited")
    rep = load_report(text=prof.stdout())
    proc = process(rep, p.pid)
    check(proc["exited"] is True, f"exited is {proc['exited']!r}")
    mem = mem_section(rep, p.pid)
    check(mem["rss_timeline"], "no resident-size reading before the exit")
    return f"finished in {elapsed:.2f}s; {len(mem['rss_timeline'])} readings"


@test
def mem_threads():
    """Memory events of two threads, each on its own lines: every line gets
    exactly its own thread's mmaps, munmaps and page touches."""
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.start(py, "mem_threads.py")
        rep = profile_json([p.pid], 3, 99, ["--mem"])
    mem = mem_section(rep, p.pid)
    path = py.script_path("mem_threads.py")
    figures = []
    for name, size in (("big", 3 * MIB), ("small", MIB)):
        row = {k: mem_line(mem, path, source_line("mem_threads.py", f"# {name} {k} line")[0])
               for k in ("map", "touch", "unmap")}
        maps, unmaps = row["map"]["mapped"], row["unmap"]["unmapped"]
        check(maps >= 10 * size and maps % size == 0,
              f"{name} map line mapped {maps}, expected a multiple (>= 10) of {size}")
        check(unmaps % size == 0 and abs(unmaps - maps) <= size,
              f"{name} unmap line unmapped {unmaps}, map line mapped {maps}")
        touched = row["touch"]["touched"]
        # One sample per 256 KiB touched, so up to a sample either way per
        # round in flight, and 10% of sampling error.
        check(abs(touched - maps) <= size + 0.1 * maps + 512 * 1024,
              f"{name} touch line touched {touched}, {maps} mapped")
        figures.append(f"{name}: {maps // size} maps, touched {touched / MIB:.0f} MiB")
    return "; ".join(figures)


@test
def mem_merge():
    """--merge: the memory stacks of two processes add up in the merged
    section, the same lines as each would show alone."""
    py = interpreter("debian")
    big_n, _ = source_line("mem_grow.py", "# big line")
    with Workloads() as wl:
        a = wl.start(py, "mem_grow.py")
        b = wl.start(py, "mem_grow.py")
        rep = profile_json([a.pid, b.pid], 3, 99, ["--mem", "--merge"])
    check(len(rep["processes"]) == 1, f"{len(rep['processes'])} processes after --merge")
    mem = mem_section(rep, rep["processes"][0]["pid"])
    big = mem_line(mem, py.script_path("mem_grow.py"), big_n)
    rounds = big["mapped"] // BIG_MAP
    check(rounds >= 4 and big["mapped"] == rounds * BIG_MAP,
          f"merged big line mapped {big['mapped']}, not a multiple (>= 4) of {BIG_MAP}")
    check(big["touched"] >= 0.9 * mem["touched"], f"big line {big['touched']} of {mem['touched']}")
    check(mem["peak_stack"] and mem["peak_stack"][0]["line"] == big_n,
          f"merged peak stack {mem['peak_stack'][:1]}")
    return f"{rounds} rounds of both processes on the big line, peak at line {big_n}"


@test
def mem_counters_apart():
    """CPU samples and memory records keep their own counts: the 300 munmaps
    of mem_exit.py's finalization have no Python frame and are counted in
    memory_records, while the CPU "no_python" count stays with CPU ticks."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "exit.json"
        r = run_profiler(["--mem", "-F", 99, "-o", out, "--", "/usr/bin/python3",
                          TARGETS / "mem_exit.py", 1], timeout=1 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        rep = load_report(out)
    cpu, mem = rep["samples"], rep.get("memory_records")
    check(mem is not None, "no memory_records in the JSON report")
    check(mem["no_python"] >= 300,
          f"memory records without a Python frame: {mem['no_python']}, expected >= 300 "
          f"(the finalization's munmaps)")
    check(cpu["no_python"] <= 20,
          f"CPU ticks without a Python frame: {cpu['no_python']} ({cpu['total']} samples): "
          f"memory records counted as CPU ticks?")
    check(cpu["dropped"] == 0 and mem["dropped"] == 0,
          f"dropped: {cpu['dropped']} CPU samples, {mem['dropped']} memory records")
    return (f"memory records without Python frame {mem['no_python']}; CPU: {cpu['total']} "
            f"samples, {cpu['no_python']} without Python frame")


@test
def mem_lockstep():
    """Page faults in a fixed pattern (16 on one line, 112 on another, every
    round) sampled 1 in 64 on average: with a fixed period the first line had
    0% of the touched bytes; with the period redrawn at random it has its
    12.5% (+- 2pp: 12.2-13.0% in 14 runs, 7 of them beside two busy loops;
    a block whose random period happens to be near 64 still samples one
    point of the round, which widens the spread beyond that of independent
    samples). The two lines' bytes add up to the faults made (+- 0.5%: each
    sample weighs the faults since the last on its CPU, from the event's
    counter; at most 0.06% off in those runs), and 3 sd more when other
    processes fault meanwhile: a sample then also weighs their faults, and
    theirs the target's (the sum keeps its mean, its sd is about
    sqrt(f / samples) of it, f the others' share of the machine's faults;
    1.08% off once with f unknown, in a fresh run beside two busy loops)."""
    py = interpreter("debian")
    few_n, _ = source_line("mem_lockstep.py", "# few line")
    many_n, _ = source_line("mem_lockstep.py", "# many line")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lockstep.json"
        faults0 = vmstat("pgfault")
        r = run_profiler(["--mem", "-o", out, "--", *py.argv("mem_lockstep.py", [3])],
                         timeout=3 + RUN_SLACK)
        faults = vmstat("pgfault") - faults0
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        rep = load_report(out)
    rounds = int(r.stdout.split("rounds")[1].split()[0])
    mem = mem_section(rep, rep["processes"][0]["pid"])
    path = py.script_path("mem_lockstep.py")
    few = mem_line(mem, path, few_n)["touched"]
    many = mem_line(mem, path, many_n)["touched"]
    share = few / (few + many)
    check(abs(share - 0.125) <= 0.02,
          f"few line {share:.1%} of the two lines' touched bytes, expected 12.5% +- 2pp")
    truth = rounds * 128 * PAGE_SIZE
    others = max(0.0, 1 - rounds * 128 / faults) if faults else 1.0
    tol = 0.005 + 3 * math.sqrt(others / (rounds * 128 / 64))
    check(abs(few + many - truth) <= tol * truth,
          f"the two lines touched {(few + many) / MIB:.1f} MiB, the workload faulted "
          f"{truth / MIB:.1f} MiB ({rounds} rounds of 128 pages; +- {tol:.2%}: other "
          f"processes made {others:.0%} of the machine's {faults} faults); memory records "
          f"{rep.get('memory_records')}")
    return (f"few line {share:.1%} (truth 12.5%); touched {(few + many) / MIB:.0f} MiB of "
            f"{truth / MIB:.0f} MiB faulted in {rounds} rounds (others' faults {others:.0%}, "
            f"bound +- {tol:.2%})")


def vmstat(key):
    """A counter of /proc/vmstat (the whole machine's)."""
    with open("/proc/vmstat") as f:
        for line in f:
            name, value = line.split()
            if name == key:
                return int(value)
    raise Fail(f"no {key} in /proc/vmstat")


def inflight_expect(rounds, end_ns, size, exists, span):
    """The (least, most) bytes a line retains at end_ns, and of them recent
    (mapped less than 1 s before it), from each round's own windows:
    exists(i) is (surely, maybe) round i's object was there at end_ns,
    span(i) the (earliest, latest) moment it was mapped. A moment within a
    window of the end or of the 1 s boundary may go either way."""
    lo = hi = rlo = rhi = 0
    for i in range(len(rounds)):
        surely, maybe = exists(i)
        first, last = span(i)
        young_surely, young_maybe = first + 10**9 > end_ns, last + 10**9 > end_ns
        lo += size if surely else 0
        hi += size if maybe else 0
        rlo += size if surely and young_surely else 0
        rhi += size if maybe and young_maybe else 0
    return lo, hi, rlo, rhi


@per_build(builds=MEM_BUILDS)
def mem_retained_ages(build):
    """A run that ends while a 200 MiB temporary is in flight: "retained at
    the end" tells it apart from what is held. The temporary's line retains
    it, all of it mapped in the last second (retained_recent); the line
    that keeps 5 MiB a round retains every round's, only the last round's
    recent; the text report puts the held line first. Bounds from the
    workload's own clock and the run's end (retained_at_ns)."""
    import json
    py = interpreter(build)
    keep_n, _ = source_line("wall_mem_inflight.py", "# keep line")
    temp_n, _ = source_line("wall_mem_inflight.py", "# temp line")
    lines = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(py, "wall_mem_inflight.py")
        reader = LineReader(p)
        out, txt = Path(tmp) / "m.json", Path(tmp) / "m.txt"
        prof = Profiler(["-p", p.pid, "--mem", "-F", 99, "-o", out, "-o", txt])
        try:
            prof.wait_attached()
            os.kill(p.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 60
            while sum(t.startswith("holding") for _, t in reader.lines) < 3:
                check(time.monotonic() < deadline, f"workload: {reader.lines}")
                time.sleep(0.01)
            prof.p.send_signal(signal.SIGINT)
            prof.wait(RUN_SLACK)
        finally:
            prof.kill()
        check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()[-300:]}")
        time.sleep(0.2)
        lines = [t.split() for _, t in reader.lines]
        rep = load_report(out)
        text = txt.read_text()
    mem = mem_section(rep, p.pid)
    end = mem["retained_at_ns"]
    rounds, drops = [], {}
    for ln in lines:
        if ln[0] == "holding":
            rounds.append([int(x) for x in ln[1:]])
        elif ln[0] == "dropped":
            drops[len(rounds) - 1] = [int(x) for x in ln[1:]]
    never = (1 << 63, 1 << 63)
    keep = inflight_expect(rounds, end, KEEP_MAP,
                           lambda i: (rounds[i][1] <= end, rounds[i][0] <= end),
                           lambda i: (rounds[i][0], rounds[i][1]))
    temp = inflight_expect(rounds, end, BIG_MAP,
                           lambda i: (rounds[i][2] <= end < drops.get(i, never)[0],
                                      rounds[i][1] <= end < drops.get(i, never)[1]),
                           lambda i: (rounds[i][1], rounds[i][2]))
    path = py.script_path("wall_mem_inflight.py")
    out = []
    for name, n, (lo, hi, rlo, rhi) in (("keep", keep_n, keep), ("temp", temp_n, temp)):
        rows = [ln for ln in mem["lines"] if ln["file"] == path and ln["line"] == n]
        got = sum(r["retained"] for r in rows)
        recent = sum(r.get("retained_recent", -1) for r in rows)
        check(lo <= got <= hi and rlo <= recent <= rhi,
              f"{name} line: retained {got} (expected {lo}-{hi}), of it recent {recent} "
              f"(expected {rlo}-{rhi}); the run ended at {end}, rounds {rounds}")
        out.append(f"{name} {got >> 20} MiB, {recent >> 20} MiB recent")
    # held first: the line that keeps 5 MiB a round, not the 200 MiB in flight
    table = text.split("Retained at the end, by line", 1)[1].splitlines()[2]
    if temp[2] == BIG_MAP:
        check(f"wall_mem_inflight.py:{keep_n} " in table, f"first retained row: {table}")
    return "; ".join(out) + f"; {len(rounds)} rounds"
