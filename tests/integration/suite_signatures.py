"""--signatures: a function split by the types of its arguments.

Ground truth: the workload (targets/signatures.py) calls scale() with three
kinds of arguments in turn and measures the CPU time each kind spends in it;
the profile must name the three signatures exactly and give each the share
of scale's samples the workload measured, within a binomial bound. Every
format that names functions carries the signature: pstats is loaded by
Python's pstats, the saved JSON round-trips through `pybpfprof report`.
"""

import json
import math
import os
import pstats
import tempfile

from harness import (BUILDS, Interp, DEBIAN_ROOTS, Skip, check, expect_error, load_report,
                     run_profiler, per_build, test, Workloads)

SCRIPT = "signatures.py"
SECONDS = 4
FREQ = 499


def profile_signatures(py, tmp, pure):
    """Runs the workload under --signatures: (JSON report, truth {sig: s}).

    CI once (in some 400 runs here) got a report with no split function at
    all, not reproduced since: such a run is described (samples, signature
    records matched and missing, the profiler's warnings) and run once more,
    the description kept in the result, so that it shows and can be chased;
    a build that never splits still fails."""
    first = None
    for attempt in (1, 2):
        rep, measured, stderr = run_signatures(py, tmp, pure)
        if any(g["function"] == "scale" for g in groups_of(rep)) or attempt == 2:
            break
        first = describe(rep, stderr)
    if first:
        rep["_retried_after"] = first
    return rep, measured


def run_signatures(py, tmp, pure):
    truth = f"/tmp/pybpfprof-sig-{os.getpid()}.json"
    host_truth = (py.root / truth.lstrip("/")) if py.root else truth
    out = os.path.join(tmp, "p.json")
    args = ["--signatures", "-F", FREQ, "-o", out, "-o", os.path.join(tmp, "p.pstats"),
            "-o", os.path.join(tmp, "p.txt"), "-o", os.path.join(tmp, "p.folded"), "--",
            *py.argv(SCRIPT, [SECONDS, truth] + (["pure"] if pure else []))]
    r = run_profiler(args, timeout=SECONDS * 10 + 60)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    try:
        with open(host_truth) as f:
            measured = json.load(f)
    finally:
        if os.path.exists(host_truth):
            os.unlink(host_truth)
    return load_report(out), measured, r.stderr


def groups_of(rep):
    return [g for p in rep["processes"] for g in p.get("signatures", [])]


def describe(rep, stderr):
    """What a report without the expected split says about why."""
    procs = [(p.get("pid"), p.get("samples"), p.get("unresolved")) for p in rep["processes"]]
    sig = rep.get("model", {}).get("signatures")
    said = " | ".join(ln for ln in stderr.splitlines() if ln.strip() and ln != "ready")
    return (f"processes (pid, samples, unresolved) {procs}; signature records [matched, missing, "
            f"capped] {sig}; split functions {[g['function'] for g in groups_of(rep)]}; "
            f"stderr: {said[:400] or 'nothing'}")


def scale_group(rep):
    groups = [g for g in groups_of(rep) if g["function"] == "scale"]
    check(len(groups) == 1, f"scale is not among the split functions: {describe(rep, '')}")
    return groups[0]


def check_shares(group, measured):
    """Each signature's share of scale's samples against the measured split."""
    got = {s["signature"]: s["total"] for s in group["signatures"]}
    check(set(got) == set(measured),
          f"signatures {sorted(got)}, the workload called {sorted(measured)}")
    n = sum(got.values())
    whole = sum(measured.values())
    check(n >= 500, f"only {n} samples in scale")
    for sig, secs in measured.items():
        want = secs / whole
        share = got[sig] / n
        bound = max(0.03, 4 * math.sqrt(want * (1 - want) / n))
        check(abs(share - want) <= bound,
              f"scale{sig}: {share:.1%} of scale's {n} samples, the workload measured "
              f"{want:.1%} (bound {bound:.1%})")
    return got, "; ".join(f"{got[s] / n:.1%} vs {secs / whole:.1%} measured"
                          for s, secs in measured.items()) + f" ({n} samples)"


def check_formats(tmp, got):
    """pstats names the signatures and loads; folded stacks end in them."""
    st = pstats.Stats(os.path.join(tmp, "p.pstats"))
    names = {name: v[0] for (file, line, name), v in st.stats.items()
             if file.endswith(SCRIPT) and name.startswith("scale(")}
    check(set(names) == {"scale" + s for s in got},
          f"pstats names {sorted(names)}, want scale + {sorted(got)}")
    with open(os.path.join(tmp, "p.folded")) as f:
        leaves = {}
        for ln in f:
            stack, count = ln.rsplit(" ", 1)
            leaf = stack.split(";")[-1]
            if leaf.startswith("scale("):
                name = leaf.rsplit(" (", 1)[0]
                leaves[name] = leaves.get(name, 0) + int(count)
    check(leaves == {"scale" + s: c for s, c in got.items()},
          f"folded leaves {leaves}, JSON {got}")
    with open(os.path.join(tmp, "p.txt")) as f:
        text = f.read()
    check("Signatures: the two innermost frames" in text, "no Signatures section in the text")
    for s in got:
        check(f"    {s}" in text, f"text report lacks the signature {s}")


def check_round_trip(tmp):
    """The saved JSON prints the same text and JSON through `pybpfprof report`."""
    for fmt in ("txt", "json"):
        again = os.path.join(tmp, f"again.{fmt}")
        r = run_profiler(["report", os.path.join(tmp, "p.json"), "-o", again], timeout=30)
        check(r.returncode == 0, f"report exit {r.returncode}: {r.stderr.strip()}")
        with open(again) as a, open(os.path.join(tmp, f"p.{fmt}")) as b:
            check(a.read() == b.read(), f"report of the saved JSON differs ({fmt})")


def has_numpy(py):
    return py.python == Interp("/usr/bin/python3.11").python and not py.root \
        and os.path.exists("/usr/lib/python3/dist-packages/numpy")


@per_build
def signatures_split(build):
    """int, small float32 and large float64 arrays (numpy builds), else int,
    float and str: three signatures of scale with the measured shares."""
    py = BUILDS[build]
    why = py.missing()
    if why:
        raise Skip(why)
    with tempfile.TemporaryDirectory() as tmp:
        rep, measured = profile_signatures(py, tmp, pure=not has_numpy(py))
        got, figures = check_shares(scale_group(rep), measured)
        check_formats(tmp, got)
        check_round_trip(tmp)
    if "_retried_after" in rep:
        figures += f"; a first run had no split: {rep['_retried_after']}"
    return figures


@test
def signatures_pure_debian():
    """The pure-Python kinds on the numpy build too: int, float, str."""
    py = BUILDS["debian"]
    with tempfile.TemporaryDirectory() as tmp:
        rep, measured = profile_signatures(py, tmp, pure=True)
        figures = check_shares(scale_group(rep), measured)[1]
    if "_retried_after" in rep:
        figures += f"; a first run had no split: {rep['_retried_after']}"
    return figures


@test
def signatures_refuse_freethreaded():
    """A free-threaded -p target is refused with a sentence, nothing written."""
    py = Interp("/opt/pybpfprof/3.13t/bin/python3.13t", DEBIAN_ROOTS / "trixie")
    why = py.missing()
    if why:
        raise Skip(why)
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(py, "hotline.py", 30)
        out = os.path.join(tmp, "p.json")
        expect_error(["--signatures", "-p", p.pid, "-d", "1", "-o", out],
                     ["whose frames --signatures cannot read"], out=out)


@test
def signatures_bounded_debian():
    """More distinct signatures than a process may keep (4096): the rest stay
    under the plain name, counted, and the run ends normally."""
    py = BUILDS["debian"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.json")
        r = run_profiler(["--signatures", "-F", 999, "-o", out, "--",
                          *py.argv("signatures_many.py", [10])], timeout=160)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        rep = load_report(out)
        samples, missing, capped = rep["model"]["signatures"]
        names = [fn[0] for fn in rep["model"]["functions"]]
        split = [n for n in names if n.startswith(("f(x: K", "g(x: K"))]
        check(len(split) <= 4096, f"{len(split)} signatures of f kept, more than 4096")
        check(capped > 0, f"no frame counted over the limit ({len(split)} signatures, "
              f"{samples} samples)")
        check("f" in names or "g" in names, "neither f nor g kept a plain name")
        return f"{len(split)} signatures kept, {capped} frames plain, {samples} samples"


@per_build(builds=("debian", "pyenv38", "pyenv310", "sid315"))
def signatures_captured(build):
    """An argument an inner function captures is named cell, not unbound."""
    py = BUILDS[build]
    why = py.missing()
    if why:
        raise Skip(why)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.json")
        r = run_profiler(["--signatures", "-F", FREQ, "-o", out, "--",
                          *py.argv("signatures_cell.py", [2])], timeout=80)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        groups = [g for g in load_report(out)["processes"][0].get("signatures", [])
                  if g["function"] == "f"]
        check(groups, "f is not among the split functions")
        sigs = {s["signature"]: s["self"] for s in groups[0]["signatures"]}
        # 3.11+ makes the cell at f's first instruction (MAKE_CELL): a tick
        # landing before it sees the int that was passed, truly; at most 1 %.
        cell = sigs.get("(x: cell, y: str)", 0)
        check(set(sigs) <= {"(x: cell, y: str)", "(x: int, y: str)"}, f"f's signatures: {sigs}")
        check(cell >= 0.99 * sum(sigs.values()), f"f's signatures: {sigs}")
        return f"f(x: cell, y: str): {cell} of {sum(sigs.values())} samples"
