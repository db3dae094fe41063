# Issue 31's leftovers: `top` names each process by its role and its busiest
# threads by tid and Python name, as the report's process table and threads
# lists do; and the text report's first screen holds in 100 columns for real
# services (a dask-like spawn pool whose code lives deep in site-packages, a
# thread-per-connection server of 120 threads), paths cut from the left with
# their line numbers whole. The ground truth is the workloads' own: the
# pids, tids, paths and lines they print.

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from harness import (PROFILER, RUN_SLACK, Skip, Workloads, check, interpreter, load_report,
                     process, read_stdout_until, run_profiler, test)
from suite_procs import tmux

SCREEN_WIDTH = 100  # REPORT_SCREEN_WIDTH in include/report/report_common.h
FIRST_SCREEN = 60   # lines of the text report that must hold in it

# top's process rows: last second %, since start %, pid, "role: tid name, ..."
TOP_PROC = re.compile(r"^  +([\d.]+)% +([\d.]+)% +(\d+)  (.*?):(?: (.*))?$")


def top_procs(screen):
    """top's process rows, busiest first: (pid, role, threads text)."""
    lines = screen.splitlines()
    at = [i for i, ln in enumerate(lines) if ln.startswith("   last s  since start      pid")]
    if not at:
        return []
    rows = []
    for ln in lines[at[0] + 1:]:
        m = TOP_PROC.match(ln)
        if not m:
            break
        rows.append((int(m[3]), m[4], m[5] or ""))
    return rows


@test
def top_view_roles_threads():
    """`top -p PARENT --subprocesses` in tmux (200x50) on top31_mix.py: the
    parent's row names it by its script and its busiest thread as
    "TID top31-cruncher" (its threading name); once it starts a spawn and a
    fork pool, their workers' rows say "spawn worker of PARENT" and "fork
    of PARENT", each with its tid first, and the busiest row is a worker,
    by its role (before: one line of pids and comms, "python3.11", no
    thread)."""
    if not shutil.which("tmux"):
        raise Skip("tmux not installed (Debian package tmux)")
    session = f"pybpfprof-top31-{os.getpid()}"
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.spawn(py.argv("top31_mix.py"), wait_ready=False, stdin=subprocess.PIPE)
        buf = read_stdout_until(p, lambda b: b"waiting\n" in b, "waiting").decode()
        cruncher = int(re.search(r"^cruncher (\d+)$", buf, re.M)[1])
        tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50",
             f"{PROFILER} top --subprocesses -p {p.pid}; sleep 60")
        try:
            screen, seen = "", {}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and "parent" not in seen:
                screen = tmux("capture-pane", "-p", "-t", session)
                for pid, role, threads in top_procs(screen):
                    if pid == p.pid and role == "top31_mix.py" and \
                            re.match(rf"{cruncher} top31-cruncher(,|$)", threads):
                        seen["parent"] = threads
                time.sleep(0.2)
            check("parent" in seen, f"no row of pid {p.pid} as top31_mix.py with its thread "
                  f"{cruncher} top31-cruncher first: {screen[:1500]!r}")
            p.stdin.write(b"go\n")
            p.stdin.flush()
            buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready", 120).decode()
            spawned = set(map(int, re.search(r"^spawn (.*)$", buf, re.M)[1].split()))
            forked = set(map(int, re.search(r"^fork (.*)$", buf, re.M)[1].split()))
            want = {"spawn": f"spawn worker of {p.pid}", "fork": f"fork of {p.pid}"}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not {"spawn", "fork", "first"} <= set(seen):
                screen = tmux("capture-pane", "-p", "-t", session)
                rows = top_procs(screen)
                for pid, role, threads in rows:
                    for k, pids in (("spawn", spawned), ("fork", forked)):
                        if pid in pids and role == want[k] and threads.startswith(f"{pid} "):
                            seen[k] = f"{pid} {role}: {threads}"
                # the busiest row a worker (four of the five busy processes), by its role
                if rows and rows[0][1] == want["spawn" if rows[0][0] in spawned else "fork"] \
                        and rows[0][0] in spawned | forked:
                    seen["first"] = f"{rows[0][0]} {rows[0][1]}"
                time.sleep(0.2)
            tmux("send-keys", "-t", session, "q")
        finally:
            tmux("kill-session", "-t", session, check_rc=False)
    for k in ("spawn", "fork", "first"):
        check(k in seen, f"no {k} row as expected (spawn {sorted(spawned)}, fork "
              f"{sorted(forked)}, parent {p.pid}): {screen[:2000]!r}")
    return "; ".join(f"{k}: {v}" for k, v in seen.items())


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
