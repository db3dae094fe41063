# Issue 31's leftovers: the text report's first screen holds in 100 columns
# for real services (a dask-like spawn pool whose code lives deep in
# site-packages, a thread-per-connection server of 120 threads), paths cut
# from the left with their line numbers whole. The ground truth is the workloads' own:
# the pids, paths and lines they print.

import os
import re
import tempfile
from pathlib import Path

from harness import (RUN_SLACK, Workloads, check, interpreter, load_report, process,
                     read_stdout_until, run_profiler, test)

SCREEN_WIDTH = 100  # REPORT_SCREEN_WIDTH in include/report/report_common.h
FIRST_SCREEN = 60   # lines of the text report that must hold in it


def wide_lines(text):
    """The lines of the first screen wider than SCREEN_WIDTH."""
    return [ln for ln in text.splitlines()[:FIRST_SCREEN] if len(ln) > SCREEN_WIDTH]


# a row of the functions table: self%, total%, self s, total s, function, location
FUNC_ROW = re.compile(r"^ +[\d.]+% +[\d.]+% +[\d.]+ +[\d.]+  (.+?)  +(\S+)$")
# a row of the hottest lines: samples, self%, location, function[, source]
LINE_ROW = re.compile(r"^ +\d+ +[\d.]+%  (\S+) +(\S+)(?:  (.*))?$")


def check_pids_line(text, rep):
    """The header's pids line: the pids it shows and the N more it counts are
    the run's processes."""
    line = [ln for ln in text.splitlines()[:4] if ln.startswith("pids: ")]
    check(line, f"no pids line: {text[:400]!r}")
    shown = [int(x) for x in re.findall(r"(?:^pids:|,) (\d+)\b(?! more)", line[0])]
    more = re.search(r", (\d+) more$", line[0])
    n = len(shown) + (int(more[1]) if more else 0)
    check(n == len(rep["processes"]) and set(shown) <= {q["pid"] for q in rep["processes"]},
          f"pids line {line[0]!r}: {n} processes, the run had {len(rep['processes'])}")
    return line[0]


@test
def top_view_text_first_screen():
    """The text report's first 60 lines hold in 100 columns: a dask-like
    spawn pool (top31_dask.py: 6 workers, 10 tasks of 0.3 s, its code in
    site-packages/top31_distributed/protocol/serialize/compression/
    partitioned_chunk_codecs/core.py under a temporary directory, methods
    of 70 characters) under --subprocesses, and procs_conn_server.py with
    120 connection threads; the pids line shows the pids that fit and counts
    the rest; the long paths are cut from the left, the line numbers kept
    (before: the samples line alone was 110 columns, the pids line and the
    rows of the functions and hottest lines tables longer)."""
    py = interpreter("debian")
    with tempfile.TemporaryDirectory() as d:
        outs = [os.path.join(d, "pool.txt"), os.path.join(d, "pool.json")]
        r = run_profiler(["--subprocesses", "-F", 99, "-o", outs[0], "-o", outs[1], "--",
                          *py.argv("top31_dask.py", [d, 6, 10, 0.3])], 120 + RUN_SLACK)
        check(r.returncode == 0 and "done" in r.stdout,
              f"pool: exit {r.returncode}: {r.stderr[-300:]} {r.stdout[-300:]}")
        pool = Path(outs[0]).read_text()
        pool_rep = load_report(outs[1])
    lines = dict((t, int(n)) for n, t in re.findall(r"^line (\d+) (.*)$", r.stdout, re.M))
    wide = wide_lines(pool)
    check(not wide, f"pool: {len(wide)} of the first {FIRST_SCREEN} lines wider than "
          f"{SCREEN_WIDTH}: {wide[:3]}")
    pids = check_pids_line(pool, pool_rep)
    first = pool.splitlines()[:FIRST_SCREEN]
    task = "def deserialize_and_compute_partition_chunk(self, cpu_s):"
    funcs = [FUNC_ROW.match(ln) for ln in first]
    row = [m for m in funcs if m and m[1].startswith("ChunkedSerializationWorkerPool.")]
    check(row and row[0][1].endswith("...") and row[0][2].startswith("...") and
          row[0][2].endswith(f"/core.py:{lines[task]}"),
          f"pool: the task's row in the functions table: {row and row[0][0]!r}")
    # the loop's lines: its test (a call to C) or its body
    loop = {f"/core.py:{lines[t]}" for t in ("while time.thread_time() < end:",
                                              "x += 1  # the hot line")}
    hot = [LINE_ROW.match(ln) for ln in first]
    hot = [m for m in hot if m and any(m[1].endswith(x) for x in loop)]
    check(hot and hot[0][1].startswith("..."), f"pool: no hottest-lines row of the loop's "
          f"lines {sorted(loop)}: {first[:60]}")
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        p = wl.start(py, "procs_conn_server.py", 120, wait_ready=False)
        named = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        nthreads = len(re.findall(r"^tid ", named, re.M))
        outs = [os.path.join(d, "conn.txt"), os.path.join(d, "conn.json")]
        r = run_profiler(["-p", p.pid, "-d", 2, "-F", 99, "-o", outs[0], "-o", outs[1]],
                         2 + RUN_SLACK)
        check(r.returncode == 0, f"server: exit {r.returncode}: {r.stderr[-300:]}")
        conn = Path(outs[0]).read_text()
        sect = process(load_report(outs[1]), p.pid)
    check(nthreads >= 120, f"the server lists {nthreads} threads")
    wide = wide_lines(conn)
    check(not wide, f"server: {len(wide)} of the first {FIRST_SCREEN} lines wider than "
          f"{SCREEN_WIDTH}: {wide[:3]}")
    more = re.search(r"^    (\d+) more threads, with \d+ samples in all$", conn, re.M)
    check(len(sect["threads"]) <= 8 or (more and int(more[1]) == len(sect["threads"]) - 8),
          f"server: {len(sect['threads'])} threads sampled, the list says "
          f"{more and more[0]!r}")
    return (f"pool: {pids!r}, widest {max(map(len, pool.splitlines()[:FIRST_SCREEN]))}; "
            f"server: {len(sect['threads'])} threads, widest "
            f"{max(map(len, conn.splitlines()[:FIRST_SCREEN]))}")
