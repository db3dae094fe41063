# Figures with error bars (issue 32, item 5): every share carries its 95 %
# sampling interval (Wilson's, from the number of samples), and `diff` gives
# each change its interval (Newcombe's hybrid score) and, with --fail-above
# PP, exits 3 when a function's self share grew by more than PP even at the
# low end of it.
#
# The workload is targets/diff_ratio.py, whose slow() takes a share of its
# thread CPU time it measures itself (thread_time, asked by SIGUSR1 before
# and after each run): the ground truth. Its slow() and fast() alternate in
# rounds of 20 to 60 ms of CPU drawn at random, so the ticks fall at random
# points of the split and a share's count is binomial.
#
# Bounds, so that a verdict is wrong by chance less than 1 time in 10^4:
# - the measured share lies within the reported interval widened from
#   z = 1.96 to z = 4.06 (two-sided 5e-5 a check, two checks a test), plus
#   SYSTEMATIC_PP for what is not sampling error (main()'s own ticks between
#   rounds, the last round cut by the run's end);
# - the 99 Hz interval is wider than the 999 Hz one as the square root of
#   their sample counts (Wilson's width, within 10 %), and those counts are in
#   the ratio of the rates per CPU second the workload measured (999/99 =
#   10.09) within 15 %, so for one CPU second the width is about sqrt(10)
#   times within 10 %: 3 sd of a count of at least 600 samples is 8.6 %
#   (0.7 sqrt(n) under load, harness.check_cpu_samples), 4.3 % of its root;
# - two runs of the unchanged program: --fail-above 5 trips when the low end
#   of a change is above 5 pp; with n >= 1500 samples a run and a 70 % share
#   that needs a change of 8.3 pp, 5 sd of it: 3.5e-7 a pair and function;
# - a growth of 30 pp (30 % to 60 %): its low end is about 26.6 pp with 1500
#   samples a run: above 5 pp at 13 sd, below 35 pp at 5 sd.
# Runs end by sample counts (harness.until_enough), never by the machine's
# speed: a loaded host makes them longer, not less certain.

import json
import math
import shutil
import tempfile
from pathlib import Path

from harness import (HERE, RUN_SLACK, TARGETS, Profiler, Workloads, check, interpreter,
                     load_report, run_profiler, test, until_enough, workload_split)

Z95 = 1.959963984540054
Z_TEST = 4.06  # two-sided 5e-5
SYSTEMATIC_PP = 1.0
FIXTURE = HERE.parent / "fixtures" / "errbars_saved_153d97e.json"


def wilson(k, n):
    """Wilson's 95 % score interval of k of n, in percent: computed here
    from its formula, apart from the C code it checks."""
    p = k / n
    d = 1 + Z95 * Z95 / n
    c = (p + Z95 * Z95 / (2 * n)) / d
    h = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n)) / d
    return (100 * max(0.0, c - h) if k else 0.0, 100 * min(1.0, c + h) if k < n else 100.0)


def app(directory, name="app.py"):
    """A copy of diff_ratio.py in a directory of its own, as a changed
    program would be (diff matches the copies by their trailing path)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(TARGETS / "diff_ratio.py", directory / name)
    return str(directory / name)


def profile(p, freq, need, secs, out):
    """Profiles workload p at freq Hz to out until it has `need` samples:
    (its JSON, slow()'s share of the CPU the workload measured meanwhile in
    percent, that CPU time in seconds, and the run's -d)."""
    def run(seconds):
        # the CPU the workload used while it was sampled: from -v's "attached"
        # (sampling starts right after it) to the profiler's exit, the report
        # written (a loaded machine can take seconds to start one, which the
        # sampling rate must not be charged with)
        prof = Profiler(["-p", p.pid, "-d", seconds, "-F", freq, "-o", out])
        try:
            prof.wait_attached()
            f0, s0 = workload_split(p)
            rc = prof.wait(seconds + RUN_SLACK)
        finally:
            prof.kill()
        f1, s1 = workload_split(p)
        check(rc == 0, f"-F {freq}: exit {rc}: {prof.stderr().strip()[-400:]}")
        rep = load_report(out)
        return rep, 100 * (s1 - s0) / max(1, s1 - s0 + f1 - f0), (s1 - s0 + f1 - f0) / 1e9

    # a workload given a sixth of a CPU under load still gets there (2 s at 999 Hz: 32 s)
    res, secs = until_enough(run, lambda res: res[0]["samples"]["total"], need, secs, tries=5)
    n = res[0]["samples"]["total"]
    check(n >= need, f"-F {freq}: {n} samples, fewer than the {need} the bounds need")
    return (*res, secs)


def func(rep, name):
    fns = [f for f in rep["processes"][0]["functions"] if f["qualname"] == name]
    check(len(fns) == 1, f"{name}: {len(fns)} rows in {rep['processes'][0]['functions']}")
    return fns[0]


def check_interval(rep, truth, what):
    """slow()'s self_ci95 is Wilson's of its counts, and holds the share the
    workload measured (widened to Z_TEST, plus SYSTEMATIC_PP); every
    function's and line's interval is its counts'. Its half width, in pp."""
    proc = rep["processes"][0]
    n = proc["samples"]
    for row in proc["functions"] + proc["lines"]:
        kinds = ("self", "total") if "total" in row else ("self",)
        for kind in kinds:
            key = f"{kind}_ci95"
            check(key in row, f"{what}: no {key} in {row}")
            want = wilson(row[kind], n)
            check(all(abs(a - b) < 1e-3 for a, b in zip(row[key], want)),
                  f"{what}: {row['qualname']} {key} {row[key]}, Wilson's of {row[kind]} of "
                  f"{n} is [{want[0]:.4f}, {want[1]:.4f}]")
    slow = func(rep, "slow")
    lo, hi = slow["self_ci95"]
    share = 100 * slow["self"] / n
    grow = Z_TEST / Z95
    low, high = share - grow * (share - lo), share + grow * (hi - share)
    check(low - SYSTEMATIC_PP <= truth <= high + SYSTEMATIC_PP,
          f"{what}: slow() measured {truth:.2f}% of its CPU, reported {share:.2f}% "
          f"[{lo:.2f}, {hi:.2f}] of {n} samples; even widened to z = {Z_TEST} "
          f"([{low:.2f}, {high:.2f}]) +- {SYSTEMATIC_PP} pp it is out")
    return (hi - lo) / 2, share


def diff(*args):
    return run_profiler(["diff", *map(str, args)], timeout=60)


@test
def errbars_interval_rates():
    """One workload at 70 %, profiled at 99 Hz and at 999 Hz: each interval
    holds the measured share; the 99 Hz one about sqrt(10) times wider, as
    the sample counts say; and diff of the two, --fail-above 5, exits 0."""
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-errbars-"))
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.spawn(["nice", "-n", "-10", py.python, app(out / "v1"), "0.7"])
        r99, t99, cpu99, secs = profile(p, 99, 600, 8, out / "r99.json")
        # as long, so that both windows have the same start and end effects
        r999, t999, cpu999, _ = profile(p, 999, 2500, secs, out / "r999.json")
    half99, s99 = check_interval(r99, t99, "99 Hz")
    half999, s999 = check_interval(r999, t999, "999 Hz")
    n99, n999 = r99["samples"]["total"], r999["samples"]["total"]
    # Wilson's width goes as sqrt(p(1-p)/n), nearly exactly at these n
    want = math.sqrt(n999 / n99 * s99 * (100 - s99) / (s999 * (100 - s999)))
    check(abs(half99 / half999 / want - 1) < 0.10,
          f"99 Hz: +-{half99:.2f} pp of {n99} samples, 999 Hz: +-{half999:.2f} pp of {n999}: "
          f"ratio {half99 / half999:.2f}, the counts say {want:.2f}")
    # and the counts go as the rates per CPU second the workload measured
    rate = (n999 / cpu999) / (n99 / cpu99)
    check(abs(rate / (999 / 99) - 1) < 0.15,
          f"samples per CPU second: {n99 / cpu99:.1f} at 99 Hz, {n999 / cpu999:.1f} at 999 Hz, "
          f"ratio {rate:.2f}, not about {999 / 99:.2f}")
    # so for the same CPU time the 99 Hz interval is about sqrt(10) times wider
    per_cpu = half99 * math.sqrt(cpu99) / (half999 * math.sqrt(cpu999))
    want = math.sqrt(999 / 99 * s99 * (100 - s99) / (s999 * (100 - s999)))
    check(abs(per_cpu / want - 1) < 0.10,
          f"for one CPU second the 99 Hz interval is {per_cpu:.2f} times the 999 Hz one, not "
          f"about sqrt(10) ({want:.2f} at these shares): +-{half99:.2f} pp of {n99} samples in "
          f"{cpu99:.1f} s of CPU, +-{half999:.2f} pp of {n999} in {cpu999:.1f} s")
    note = (f"slow() measured {t99:.1f}%: {s99:.1f}% +-{half99:.2f} of {n99} at 99 Hz, "
            f"{s999:.1f}% +-{half999:.2f} of {n999} at 999 Hz; per CPU second {per_cpu:.2f}x")
    for a, b in ((out / "r99.json", out / "r999.json"), (out / "r999.json", out / "r99.json")):
        r = diff(a, b, "--fail-above", 5, "-f", "json")
        check(r.returncode == 0 and not r.stderr,
              f"diff {a.name} {b.name} --fail-above 5: exit {r.returncode}, {r.stderr!r}")
        rows = {f["qualname"]: f for f in load_report(text=r.stdout)["functions"]}
        lo, hi = rows["slow"]["delta_self_ci95"]
        check(lo <= rows["slow"]["delta_self_pp"] <= hi and lo < 5,
              f"slow: {rows['slow']['delta_self_pp']:+.2f} pp in [{lo:.2f}, {hi:.2f}]")
    return note


@test
def errbars_fail_above():
    """--fail-above 5 on three pairs of runs of the unchanged program
    exits 0; on a program whose slow() grew from 30 % to 60 % of its CPU, 3,
    naming slow() alone, one line; with --fail-above 35 (above the growth's
    low end), 0."""
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-errbars-"))
    py = interpreter("debian")
    runs = []
    with Workloads() as wl:
        p = wl.spawn(["nice", "-n", "-10", py.python, app(out / "same"), "0.7"])
        for i in range(3):
            runs.append(out / f"same{i}.json")
            profile(p, 999, 1500, 2, runs[-1])
    for a, b in ((0, 1), (1, 2), (2, 0)):
        r = diff(runs[a], runs[b], "--fail-above", 5)
        check(r.returncode == 0 and not r.stderr,
              f"unchanged program, runs {a} and {b}: exit {r.returncode}, {r.stderr!r}")
        check("±" in r.stdout and "*: significant" in r.stdout, f"no ± in {r.stdout[:600]}")
    # one at a time: two spinners would halve each other's CPU
    with Workloads() as wl:
        p1 = wl.spawn(["nice", "-n", "-10", py.python, app(out / "v1"), "0.3"])
        _, t1, _, _ = profile(p1, 999, 1500, 2, out / "v1.json")
    with Workloads() as wl:
        p2 = wl.spawn(["nice", "-n", "-10", py.python, app(out / "v2"), "0.6"])
        _, t2, _, _ = profile(p2, 999, 1500, 2, out / "v2.json")
    r = diff(out / "v1.json", out / "v2.json", "--fail-above", 5, "-n", 5, "--lines", 0)
    tripped = r.stderr.strip().splitlines()
    check(r.returncode == 3, f"slow() grew {t1:.1f}% -> {t2:.1f}%: exit {r.returncode}, "
          f"expected 3; stderr {r.stderr!r}")
    check(len(tripped) == 1 and tripped[0].startswith("pybpfprof: slow (")
          and "more than --fail-above 5" in tripped[0], f"stderr {r.stderr!r}")
    check("Functions whose share grew" in r.stdout, f"no report on stdout: {r.stdout[:300]!r}")
    r = diff(out / "v1.json", out / "v2.json", "--fail-above", 35, "-f", "json")
    row = [f for f in load_report(text=r.stdout)["functions"] if f["qualname"] == "slow"][0]
    check(r.returncode == 0 and not r.stderr,
          f"--fail-above 35 for a growth of {row['delta_self_pp']:+.1f} pp "
          f"{row['delta_self_ci95']}: exit {r.returncode}, {r.stderr!r}")
    check(row["delta_self_significant"] and 5 < row["delta_self_ci95"][0] < 35,
          f"slow: {row['delta_self_pp']:+.1f} pp {row['delta_self_ci95']}")
    return (f"slow() measured {t1:.1f}% -> {t2:.1f}%: {row['delta_self_pp']:+.1f} pp "
            f"[{row['delta_self_ci95'][0]:+.1f}, {row['delta_self_ci95'][1]:+.1f}]")


@test
def errbars_saved_before():
    """A profile saved by main's binary before the intervals existed
    (153d97e) reads back with them, computed from its counts, in JSON and
    in the text tables' titles; intervals a file claims in its summary are
    never believed; and diff of it with itself finds no change."""
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-errbars-"))
    old = load_report(FIXTURE)
    check("self_ci95" not in old["processes"][0]["functions"][0], "the fixture is not old")
    r = run_profiler(["report", FIXTURE, "-f", "json"], timeout=60)
    check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
    check_interval(load_report(text=r.stdout), 70.0, "saved by 153d97e")
    # the text says the tables' widest interval in their titles (all rows shown here)
    proc = old["processes"][0]
    n = proc["samples"]
    check(len(proc["functions"]) <= 20 and len(proc["lines"]) <= 20, "the fixture grew")

    def widest(counts):
        return max((wilson(k, n)[1] - wilson(k, n)[0]) / 2 for k in counts)

    text = run_profiler(["report", FIXTURE], timeout=60)
    for title, counts in (("Functions by self time",
                           [f[k] for f in proc["functions"] for k in ("self", "total")]),
                          ("Hottest lines", [ln["self"] for ln in proc["lines"]])):
        want = f", each share ±{widest(counts):.1f} pp or less at 95 %)"
        check(text.returncode == 0 and any(ln.strip().startswith(title) and ln.endswith(want)
                                           for ln in text.stdout.splitlines()),
              f"no {title!r} title ending {want!r}: exit {text.returncode}, "
              f"{text.stdout[:1200]}")
    # the same file with a forged summary: the report is the same, byte for byte
    old["processes"][0]["functions"][0]["self_ci95"] = [0, 0.5]
    old["processes"][0]["lines"][0]["self_ci95"] = "forged"
    forged = out / "forged.json"
    forged.write_text(json.dumps(old))
    f = run_profiler(["report", forged, "-f", "json"], timeout=60)
    check(f.returncode == 0 and f.stdout == r.stdout,
          f"the forged summary changed the report: exit {f.returncode}, {f.stderr.strip()}")
    d = diff(FIXTURE, forged, "--fail-above", 0, "-f", "json")
    check(d.returncode == 0 and not d.stderr, f"diff with itself: exit {d.returncode}, "
          f"{d.stderr!r}")
    for row in load_report(text=d.stdout)["functions"]:
        lo, hi = row["delta_self_ci95"]
        check(lo < 0 < hi, f"{row['qualname']}: no change, yet {row['delta_self_ci95']}")
        check(not row["delta_self_significant"], f"{row['qualname']}: significant: {row}")
