# Reports that say which thread (issue 31.2): every output names a thread
# by its Python (threading) name with its tid, and the text report's
# threads list is bounded, the rest counted. The ground truth is the
# target's own: it prints each thread's name and native id.

import gzip
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from harness import (Workloads, check, interpreter, load_report, per_build, process,
                     protoc_decode, read_stdout_until, run_profiler, RUN_SLACK, sanity, test)

# the text report's threads list: rows shown, the rest counted
THREADS_SHOWN = 8


def named_threads(p):
    """The target's own table, tid -> threading name, read up to "ready"."""
    buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
    return {tid: name for name, tid in
            (json.loads(x) for x in re.findall(r"^tid (.*)$", buf, re.M))}


def run_outputs(args, d, duration):
    """One run of the profiler writing text, JSON, speedscope and pprof into d."""
    outs = {k: os.path.join(d, "out." + k) for k in ("txt", "json", "speedscope.json", "pb.gz")}
    r = run_profiler([*args, *(a for f in outs.values() for a in ("-o", f))],
                     duration + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return outs


def thread_rows(text, pid):
    """The text section of pid: its threads header, its rows and its "more" line."""
    m = re.search(rf"^pid {pid}\b.*?\n(?=\S|\Z)", text, re.S | re.M)
    check(m, f"no section of pid {pid} in the text report")
    sect = m.group(0)
    head = re.search(r"^  threads: (\d+), busiest first \(samples, tid, name\)$", sect, re.M)
    check(head, f"no threads header in the section of pid {pid}: {sect[:600]!r}")
    rows = re.findall(r"^    +(\d+) +(\d+)  (.*)$", sect[head.end():].split("\n\n")[0], re.M)
    more = re.search(r"^    (\d+) more threads, with (\d+) samples in all$", sect, re.M)
    return int(head.group(1)), [(int(s), int(t), n) for s, t, n in rows], more


def check_text_threads(text, sect, named):
    """The text report's threads list: the JSON's threads, busiest first, at
    most THREADS_SHOWN rows, each named as the target names it; the rest
    counted exactly; every line of the list at most 100 columns."""
    n, rows, more = thread_rows(text, sect["pid"])
    threads = sect["threads"]
    check(n == len(threads), f"text says {n} threads, the JSON lists {len(threads)}")
    want = sorted(threads, key=lambda t: (-t["samples"], t["tid"]))
    check([(s, t) for s, t, _ in rows] == [(t["samples"], t["tid"]) for t in
                                           want[:THREADS_SHOWN]],
          f"text rows {rows[:10]} are not the JSON's busiest {want[:THREADS_SHOWN]}")
    for s, tid, name in rows:
        if tid in named:
            check(name == named[tid], f"text row of thread {tid}: {name!r}, it is "
                  f"{named[tid]!r}")
    rest = want[THREADS_SHOWN:]
    if rest:
        check(more and int(more.group(1)) == len(rest) and
              int(more.group(2)) == sum(t["samples"] for t in rest),
              f"the rest: {more and more.group(0)!r}, the JSON has {len(rest)} more threads "
              f"with {sum(t['samples'] for t in rest)} samples")
    else:
        check(not more, f"a 'more' line with nothing left out: {more and more.group(0)!r}")
    lines = [ln for ln in text.splitlines() if re.match(r"^  threads: |^    +\d+ +\d+  ", ln)]
    check(all(len(ln) <= 100 for ln in lines), f"a threads line wider than 100: {lines}")
    return rows


@per_build
def view_thread_names(build):
    """A thread-per-connection server (24 connections, each its own thread,
    under loopback load), a spinning hot_worker and MainThread: JSON gives
    every sampled thread its threading name (python_name) beside its comm;
    the text report lists the busiest 8 threads by those names, the rest
    counted, and names the busiest first; speedscope and pprof label each
    thread by the same name; `report` of the saved JSON keeps them."""
    py = interpreter(build)
    freq = 99
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        p = wl.start(py, "procs_conn_server.py", 24, wait_ready=False)
        named = named_threads(p)
        check(len(named) == 27, f"the target lists {len(named)} threads: {named}")
        outs = run_outputs(["-p", p.pid, "-d", 2, "-F", freq], d, 2)
        rep = load_report(outs["json"])
        sanity(rep, freq)
        sect = process(rep, p.pid)
        text = Path(outs["txt"]).read_text()
        again = run_profiler(["report", outs["json"]], RUN_SLACK)
        check(again.returncode == 0, f"report: exit {again.returncode}: {again.stderr[-300:]}")
        speedscope = json.loads(Path(outs["speedscope.json"]).read_text())
        pprof = protoc_decode(gzip.decompress(Path(outs["pb.gz"]).read_bytes()),
                              "perftools.profiles.Profile")
    hot = [tid for tid, name in named.items() if name == "hot_worker"][0]
    seen = {t["tid"]: t for t in sect["threads"]}
    check(seen.get(hot, {}).get("samples"), f"hot_worker ({hot}) has no samples: {seen}")
    for tid, t in seen.items():
        check(tid in named, f"thread {tid} is none of the target's: {t}")
        check(t.get("python_name") == named[tid],
              f"thread {tid}: python_name {t.get('python_name')!r}, it is {named[tid]!r}")
    rows = check_text_threads(text, sect, named)
    check_text_threads(again.stdout, sect, named)
    profiles = [pr["name"] for pr in speedscope["profiles"]]
    for tid, t in seen.items():
        check(any(re.search(rf"thread {tid} \({re.escape(named[tid])}\)$", n) for n in profiles),
              f"no speedscope profile of thread {tid} named {named[tid]!r}: {profiles[:5]}")
    strings = pprof["string_table"]
    labelled = {}
    for s in pprof["sample"]:
        labs = {strings[lb["key"][0]]: lb for lb in s.get("label", [])}
        labelled[labs["tid"]["num"][0]] = strings[labs["thread_name"]["str"][0]]
    check(labelled == {tid: named[tid] for tid in labelled} and set(labelled) == set(seen),
          f"pprof thread_name labels {labelled}, the threads are named {named}")
    return (f"{len(seen)} threads named; busiest {rows[0][2]} ({rows[0][0]} samples); "
            f"{len(seen) - len(rows)} counted in the rest")


STR_DROP = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


@test
def view_thread_names_hostile():
    """Threading names a hostile process (run by nobody) chose: one with an
    escape, a line break and a bidi override, one of 200 bytes, one that
    calls itself MainThread. JSON keeps each as the target holds it (the long
    one cut to at most 63 bytes, the impostor as MainThread: a name is
    shown, never believed), and the real main thread, blocked all along, as
    MainThread too; the text report shows each as one field of its row,
    cleaned. (--mode wall --idle: every thread is charged, whatever the load.)"""
    py = interpreter("debian")
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        script = os.path.join(d, "procs_hostile_names.py")
        Path(script).write_bytes((Path(__file__).parent / "targets" /
                                  "procs_hostile_names.py").read_bytes())
        os.chmod(script, 0o644)
        p = wl.spawn([*STR_DROP, str(py.host_path()), script], wait_ready=False,
                     stdin=subprocess.PIPE)
        named = named_threads(p)
        # wall mode charges every thread, run or not: none is left out by the machine's load
        outs = run_outputs(["-p", p.pid, "-d", 2, "-F", 99, "--mode", "wall", "--idle"], d, 2)
        rep = load_report(outs["json"])
        text = Path(outs["txt"]).read_text()
    sect = process(rep, p.pid)
    seen = {t["tid"]: t for t in sect["threads"]}
    long_name = "\u00e9" * 100
    for tid, name in named.items():
        check(tid in seen, f"thread {tid} ({name!r}) not sampled: {seen}")
        got = seen[tid].get("python_name")
        if name == long_name:
            check(got and len(got.replace("\ufffd", "?").encode()) <= 63 + 2 and
                  got.rstrip("\ufffd") == "\u00e9" * len(got.rstrip("\ufffd")) and
                  len(got.rstrip("\ufffd")) >= 31,
                  f"the 200-byte name kept as {got!r}")
        else:
            check(got == name, f"thread {tid}: python_name {got!r}, it is {name!r}")
    main = seen.get(p.pid, {})
    check(main.get("python_name") == "MainThread",
          f"the main thread (blocked all along): {main}")
    _, rows, _ = thread_rows(text, p.pid)
    shown = {tid: n for _, tid, n in rows}
    evil = [tid for tid, n in named.items() if n.startswith("evil")][0]
    check(shown.get(evil) == "evil?[2J?FORGED?",
          f"the escape's thread shown as {shown.get(evil)!r}")
    check(not re.search(r"^FORGED", text, re.M) and "\x1b" not in text and
          "\u202e" not in text, "the text report has a forged line or a control character")
    return f"names kept in JSON, cleaned in text: {sorted(shown.values())}"


# ------------------------------------------------------------ which process

PROC_ROW = re.compile(r"^  +(\d+) +(\d+) +(\d+) +(\d+\.\d)% +(.*?)( \(exited\))?$")


def proc_table(text):
    """The text report's process table: its count, rows (pid, parent,
    samples, role) and the line of processes without a section."""
    m = re.search(r"^processes: (\d+), busiest first \(pid, parent, samples, share, role\)\n"
                  r"((?:  .*\n)*)", text, re.M)
    check(m, f"no process table: {text[:800]!r}")
    rows = [PROC_ROW.match(ln) for ln in m.group(2).splitlines()]
    rows = [(int(r[1]), int(r[2]), int(r[3]), r[5]) for r in rows if r]
    hidden = re.search(r"^  (\d+) without a section \((\d+) idle, (\d+) under 1%: (\d+) "
                       r"samples\); --min-share 0 shows them$", m.group(2), re.M)
    return int(m.group(1)), rows, hidden, text[:m.start()].count("\n")


def section_counts(text):
    """(pid, samples) of each process section of a text report."""
    return [(int(a), int(b)) for a, b in
            re.findall(r"^pid (\d+) .*\n.*\n  (\d+) samples \(", text, re.M)]


@per_build(builds=("debian", "pyenv38", "pyenv313", "sid315"))
def view_process_table(build):
    """A multiprocessing pool, forked and spawned, of three workers working
    1.2, 0.5 and 0.25 s of CPU, run with --subprocesses: the text report's
    first screen (40 lines, 100 columns) is the process table, busiest
    first as the JSON counts them, each worker by its role ("fork of PARENT",
    "spawn worker of PARENT"), the parent by its script, the busiest the
    1.2 s worker; JSON carries each one's ppid and role; the processes under
    1% of the samples have no section, one line counts them, and `report
    --min-share 0` of the saved run gives every process its section."""
    py = interpreter(build)
    shown = []
    for method in ("fork", "spawn"):
        with tempfile.TemporaryDirectory() as d:
            outs = {k: os.path.join(d, "out." + k) for k in ("txt", "json")}
            r = run_profiler(["--subprocesses", "-F", 99, "-o", outs["txt"], "-o", outs["json"],
                              "--", *py.argv("procs_mp_pool.py", [method])], 60 + RUN_SLACK)
            check(r.returncode == 0, f"{method}: exit {r.returncode}: {r.stderr[-300:]}")
            parent = int(re.search(r"^parent (\d+)$", r.stdout, re.M).group(1))
            children = {int(a): float(b) for a, b in
                        re.findall(r"^child (\d+) (\S+)$", r.stdout, re.M)}
            text = Path(outs["txt"]).read_text()
            rep = load_report(outs["json"])
            again = run_profiler(["report", outs["json"], "--min-share", 0], RUN_SLACK)
        check(len(children) == 3, f"{method}: the pool's children {children}")
        first = text.splitlines()[:40]
        n, rows, hidden, at = proc_table(text)
        check(at < 10 and at + 1 + len(rows) <= 40, f"{method}: the table is not on the "
              f"first screen (line {at})")
        check(all(len(ln) <= 100 for ln in first[at:at + 1 + len(rows) + bool(hidden)]),
              f"{method}: a line of the process table wider than 100: {first[at:at + 20]}")
        # an exec'd pid has two images, the fork it was (a sample or two between fork and
        # exec, as 3.15's spawn shows) and what it execs: a pid's role is its last image's
        procs = {p["pid"]: p for p in sorted(rep["processes"],
                                             key=lambda p: p.get("origin") == "execed")}
        check(n == len(rep["processes"]), f"{method}: table says {n}, JSON {len(procs)}")
        want = sorted(rep["processes"], key=lambda p: -p["samples"])
        check([(pid, s) for pid, _, s, _ in rows] == [(p["pid"], p["samples"]) for p in want],
              f"{method}: rows {rows} are not the JSON's processes by samples")
        role = "fork of" if method == "fork" else "spawn worker of"
        for pid in children:
            check(pid in procs, f"{method}: worker {pid} not profiled: {sorted(procs)}")
            check(procs[pid]["ppid"] == parent and procs[pid]["role"] == f"{role} {parent}",
                  f"{method}: worker {pid}: ppid {procs[pid].get('ppid')}, role "
                  f"{procs[pid].get('role')!r}, its parent is {parent}")
        check(procs[parent]["role"] == "procs_mp_pool.py",
              f"{method}: the parent's role {procs[parent].get('role')!r}")
        busiest = max(children, key=children.get)
        check(rows[0][0] == busiest and rows[0][3] == f"{role} {parent}",
              f"{method}: first row {rows[0]}, the busiest worker is {busiest}")
        total = sum(p["samples"] for p in rep["processes"])
        small = [p for p in rep["processes"] if p["samples"] * 100 < total or not p["samples"]]
        # (pid, samples) of each: an exec'd pid has two, its images'
        sections = sorted(section_counts(text))
        check(sections == sorted((p["pid"], p["samples"]) for p in rep["processes"]
                                 if p not in small),
              f"{method}: sections {sections}, processes under 1%: "
              f"{[(p['pid'], p['samples']) for p in small]}")
        if small:
            check(hidden and int(hidden[1]) == len(small) and
                  int(hidden[4]) == sum(p["samples"] for p in small),
                  f"{method}: {len(small)} small processes, the line says "
                  f"{hidden and hidden.group(0)!r}")
        check(again.returncode == 0 and sorted(section_counts(again.stdout)) ==
              sorted((p["pid"], p["samples"]) for p in rep["processes"]),
              f"{method}: report --min-share 0 does not show every process: "
              f"{again.stderr[-300:]}")
        shown.append(f"{method}: {rows[0][3]} first ({rows[0][2]} samples), "
                     f"{len(small)} without a section")
    return "; ".join(shown)
