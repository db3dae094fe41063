# Issue 11, point 4 and the second stop signal of point 6: a target that
# floods pybpfprof with fresh code objects, each carrying a 1 MiB line table
# (targets/sec_code_flood.py, run as nobody), must not take pybpfprof's
# memory past its cache budget plus a fixed overhead, nor hold a run past
# -d or a stop signal by more than a second; the report counts what the
# budget cost; a second SIGINT/SIGTERM ends pybpfprof at once.

import fcntl
import os
import select
import signal
import subprocess
import tempfile
import time

from harness import (Fail, Profiler, RUN_SLACK, Workloads, check, functions, interpreter,
                     load_report, process, source_line, test, vm_hwm_kib)


BUD_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
BUD_DEFAULT_MIB = 64
# pybpfprof with an empty cache: its code and libraries, libbpf and the BPF
# maps' pages (about 20 MiB measured on a small target), the 8 MiB sample ring
# once the flood has gone all round it, the 1 MiB buffer a line table is
# decoded in, and the profile of a few thousand flood functions.
BUD_FIXED_MIB = 40
BUD_DEPTH = 6


def bud_flood(wl, *extra):
    return wl.start(interpreter("debian"), "sec_code_flood.py", BUD_DEPTH, "mixed", *extra,
                    prefix=BUD_NOBODY)


class BudRun(Profiler):
    """pybpfprof in the background with -v (the time its "attached" line came:
    sampling starts right after it) and its peak RSS, read from VmHWM at every
    step while it is waited for. Over rss_cap_mib it is killed at once: the
    unbounded binary would take the whole host's memory (20 GB in 8 s at
    depth 4)."""

    def __init__(self, args, rss_cap_mib, stdout=subprocess.DEVNULL):
        # Under ASan (make SANITIZE=1 check) every allocation carries redzones
        # and freed memory waits in a quarantine: its RSS says nothing of the
        # budget, so the cap only keeps an unbounded build off the host's memory.
        if os.environ.get("PYBPFPROF_SANITIZE") == "1":
            rss_cap_mib = 3 * rss_cap_mib + 128
        self.cap = rss_cap_mib
        self.peak_kib = 0
        super().__init__(args, stdout=stdout)

    def watch_step(self):
        self.peak_kib = max(self.peak_kib, vm_hwm_kib(self.p.pid))
        if self.peak_kib > self.cap * 1024:
            self.kill()
            raise Fail(f"pybpfprof's peak RSS reached {self.peak_kib // 1024} MiB, over "
                       f"the bound of {self.cap} MiB: killed")

    def wait_exit(self, timeout):
        """Waits for the exit, watching the RSS; the time it exited."""
        self.wait(timeout)
        return self.t_end


def bud_check_names(rep, pid):
    """The flood's functions are named (none unresolved: every code object is
    kept alive by the target, so an evicted one reads again), a fill table's
    frames have their real lines, a refused table's frames no line at all
    (but the def line of a frame not started yet)."""
    proc = process(rep, pid)
    names = functions(proc)
    check(proc["unresolved"] == 0, f"{proc['unresolved']} samples unresolved")
    fills = [n for n in names if n.startswith("flood_link_fill_")]
    refused = [n for n in names if n.startswith("flood_link_refuse_")]
    leaves = [n for n in names if n.startswith("flood_leaf_")]
    check(fills and refused and leaves,
          f"flood functions missing: {len(fills)} fill, {len(refused)} refuse, "
          f"{len(leaves)} leaf among {sorted(names)[:8]}")
    call, _ = source_line("sec_code_flood.py", "# link-call")
    # A frame caught before its first instruction is on its def line, as
    # CPython says too: that needs no table.
    link_def = source_line("sec_code_flood.py", "def flood_link(")[0]
    first = source_line("sec_code_flood.py", "def flood_leaf(")[0]
    body = set(range(first + 1, source_line("sec_code_flood.py", "# leaf-body")[0] + 2))
    for row in proc["lines"]:
        q = row["qualname"]
        if q.startswith("flood_link_fill_"):
            # or, caught before its first instruction, its def line (seen in fresh25)
            check(row["line"] in (call, link_def),
                  f"{q} at line {row['line']}, the call is on {call}")
        elif q.startswith("flood_link_refuse_"):
            check(row["line"] in (-1, link_def),
                  f"{q} at line {row['line']}: its table was refused")
        elif q.startswith("flood_leaf_"):
            check(row["line"] in body, f"{q} at line {row['line']}, its body is {body}")
    return len(fills) + len(refused) + len(leaves)


@test
def sec_bud_flood_d8():
    cap = BUD_DEFAULT_MIB + BUD_FIXED_MIB
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = bud_flood(wl)
        out = os.path.join(tmp, "flood.json")
        run = BudRun(["-p", p.pid, "-d", 8, "-o", out], cap)
        try:
            t0 = run.wait_attached()
            t1 = run.wait_exit(8 + RUN_SLACK)
        finally:
            run.kill()
        took = t1 - t0
        check(run.p.returncode == 0,
              f"exit {run.p.returncode}: {run.stderr().strip()[-300:]}")
        check(took <= 9.0, f"-d 8 took {took:.2f} s from attaching to exit (at most 9)")
        rep = load_report(out)
    cache = rep["cache"]
    check(cache["budget_bytes"] == BUD_DEFAULT_MIB << 20, f"cache {cache}")
    check(0 < cache["peak_bytes"] <= cache["budget_bytes"], f"cache {cache}")
    check(cache["refused"] > 0 and cache["reads"] >= cache["refused"], f"cache {cache}")
    check(rep["samples"]["total"] > 0, f"no samples: {rep['samples']}")
    named = bud_check_names(rep, p.pid)
    return (f"peak RSS {run.peak_kib / 1024:.1f} MiB (bound {cap}), -d 8 took {took:.2f} s, "
            f"{cache['reads']} code objects read, {cache['refused']} tables refused, "
            f"{named} flood functions named")


@test
def sec_bud_evict():
    budget = 2
    cap = budget + BUD_FIXED_MIB
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = bud_flood(wl)
        out, txt = os.path.join(tmp, "flood.json"), os.path.join(tmp, "flood.txt")
        run = BudRun(["-p", p.pid, "-d", 5, "--max-cache-mb", budget, "-o", out, "-o", txt],
                     cap)
        try:
            t0 = run.wait_attached()
            mark = run.mark()
            t1 = run.wait_exit(5 + RUN_SLACK)
        finally:
            run.kill()
        check(run.p.returncode == 0,
              f"exit {run.p.returncode}: {run.stderr().strip()[-300:]}")
        late = run.late(mark, t0 + 5)
        check(late <= 1.0, f"-d 5 took {t1 - t0:.2f} s from attaching to exit, {late:.2f} s "
              f"past -d its own")
        rep = load_report(out)
        with open(txt) as f:
            text = f.read()
    cache = rep["cache"]
    check(cache["budget_bytes"] == budget << 20, f"cache {cache}")
    check(cache["evicted"] > 0 and cache["refused"] > 0, f"nothing evicted or refused: {cache}")
    check(cache["peak_bytes"] <= budget << 20, f"peak over the budget: {cache}")
    want = (f"cache: {cache['evicted']} code objects evicted, {cache['refused']} line tables "
            f"refused (budget {budget} MiB)")
    header = text.split("\n\n", 1)[0].splitlines()
    check(want in header, f"text header lacks {want!r}: {header}")
    named = bud_check_names(rep, p.pid)
    return (f"{cache['evicted']} evicted, {cache['refused']} refused of {cache['reads']} read, "
            f"peak {cache['peak_bytes']} B, RSS {run.peak_kib / 1024:.1f} MiB, "
            f"{named} flood functions named")


@test
def sec_bud_sigint():
    cap = BUD_DEFAULT_MIB + BUD_FIXED_MIB
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = bud_flood(wl)
        out = os.path.join(tmp, "flood.json")
        run = BudRun(["-p", p.pid, "-o", out], cap)
        try:
            run.wait_attached()
            check(run.watch(4), f"pybpfprof exited early ({run.p.returncode})")
            sent = time.monotonic()
            run.p.send_signal(signal.SIGINT)
            took = run.wait_exit(RUN_SLACK) - sent
        finally:
            run.kill()
        check(run.p.returncode == 0,
              f"exit {run.p.returncode}: {run.stderr().strip()[-300:]}")
        check(took <= 1.0, f"{took:.2f} s from SIGINT to exit (at most 1)")
        rep = load_report(out)
    check(3.5 <= rep["duration_s"] <= 5.0, f"duration_s {rep['duration_s']}, SIGINT after 4 s")
    check(rep["samples"]["total"] > 0, f"no samples: {rep['samples']}")
    named = bud_check_names(rep, p.pid)
    return (f"exit 0 {took:.2f} s after SIGINT, {rep['samples']['total']} samples, "
            f"{named} flood functions named, peak RSS {run.peak_kib / 1024:.1f} MiB")


@test
def sec_bud_slow_decode():
    """Code objects that each need a whole 1 MiB table decoded (their first
    lines differ, so nothing decoded before serves): pybpfprof may fall
    behind, and still ends -d 5 within a second, counting what it could not
    convert as dropped, and a SIGINT within a second too."""
    cap = BUD_DEFAULT_MIB + BUD_FIXED_MIB
    figures = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = bud_flood(wl, 10, "vary")
        for how in ("-d", "SIGINT"):
            out = os.path.join(tmp, "slow.json")
            args = ["-p", p.pid, "-o", out] + (["-d", 5] if how == "-d" else [])
            run = BudRun(args, cap)
            try:
                t0 = run.wait_attached()
                mark = run.mark()
                if how == "SIGINT":
                    check(run.watch(5), f"pybpfprof exited early ({run.p.returncode})")
                    mark = run.mark()
                    t0 = time.monotonic()
                    run.p.send_signal(signal.SIGINT)
                    t1 = run.wait_exit(RUN_SLACK)
                else:
                    t1 = run.wait_exit(5 + RUN_SLACK)
                    t0 += 5
            finally:
                run.kill()
            check(run.p.returncode == 0,
                  f"exit {run.p.returncode}: {run.stderr().strip()[-300:]}")
            # its own lateness: the time it waited for a CPU is the machine's
            late = run.late(mark, t0)
            check(late <= 1.0, f"{t1 - t0:.2f} s from the end ({how}) to exit, {late:.2f} s "
                  f"of it its own (at most 1)")
            rep = load_report(out)
            proc = process(rep, p.pid)
            check(proc["unresolved"] == 0, f"{proc['unresolved']} samples unresolved")
            check(any(n.startswith("flood_leaf_") for n in functions(proc)),
                  f"no flood function named: {sorted(functions(proc))[:5]}")
            figures.append(f"{how}: exit {t1 - t0:.2f} s after the end, "
                           f"{rep['samples']['total']} samples, "
                           f"{rep['samples']['dropped']} dropped")
    return "; ".join(figures) + f"; peak RSS {run.peak_kib / 1024:.1f} MiB"


def bud_second_signal(sig):
    """First sig: the run ends and the report is written, to a pipe of one
    page that nobody reads, so writing it blocks; a second sig must end
    pybpfprof at once, with no report and 128 + sig. The target is an
    ordinary one with a large report (not the flood), so that what is tested
    is the second signal alone."""
    cap = BUD_DEFAULT_MIB + BUD_FIXED_MIB
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "sec_long_names.py", prefix=BUD_NOBODY)
        run = BudRun(["-p", p.pid, "-f", "json"], cap, stdout=subprocess.PIPE)
        try:
            fcntl.fcntl(run.p.stdout.fileno(), 1031, 4096)  # F_SETPIPE_SZ
            run.wait_attached()
            check(run.watch(2), f"pybpfprof exited early ({run.p.returncode})")
            run.p.send_signal(sig)
            # the report has started once the pipe holds something
            r, _, _ = select.select([run.p.stdout], [], [], 5)
            check(r, f"no report on stdout 5 s after {sig.name}")
            check(run.watch(0.5), f"pybpfprof exited ({run.p.returncode}) with its "
                  f"report in a full pipe")
            with open(f"/proc/{run.p.pid}/wchan") as f:
                wchan = f.read().strip()
            sent = time.monotonic()
            run.p.send_signal(sig)
            took = run.wait_exit(RUN_SLACK) - sent
        finally:
            run.kill()
            run.p.stdout.close()
    rc = run.p.returncode
    check(rc == 128 + sig, f"exit {rc} after a second {sig.name}, want {128 + sig}: "
          f"{run.stderr().strip()[-300:]}")
    check(took <= 0.5, f"{took:.2f} s from the second {sig.name} to exit (at most 0.5)")
    check("second stop signal" in run.stderr(), f"no message: {run.stderr().strip()[-300:]}")
    return f"{sig.name}: exit {rc} {took * 1000:.0f} ms after the second (blocked in {wchan})"


@test
def sec_bud_second_sigint():
    return bud_second_signal(signal.SIGINT)


@test
def sec_bud_second_sigterm():
    return bud_second_signal(signal.SIGTERM)
