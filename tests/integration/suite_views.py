# First views (issue 31.3, 31.4, 31.7): the outputs read as a person reads
# them. The text report of a --native profile of numpy's FFT: every native
# name keeps its +0xOFFSET, no line is wider than the report's limit, the
# hottest Python lines and the hottest native frames are tables of their
# own, and the line-by-line tables are of the functions with the most time
# under them. The ground truth is the same run's JSON model.

import tempfile

from pathlib import Path

from harness import (Workloads, check, expect_error, interpreter, load_report, run_profiler,
                     test)
from suite_native import native_profile_cpu

TEXT_WIDTH = 160  # REPORT_TEXT_WIDTH in include/report/report_common.h


def views_native_run(secs=3):
    """A --native profile of where.py fft over secs of the target's CPU:
    (the text report, the JSON report)."""
    py = interpreter("debian")
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        p = wl.start(py, "where.py", "fft")
        txt, js = Path(d) / "n.txt", Path(d) / "n.json"
        native_profile_cpu(p.pid, secs, ["-p", p.pid, "-F", 199, "--native",
                                         "-o", txt, "-o", js])
        return txt.read_text(), load_report(js)


def model_costs(rep):
    """From the JSON model: per (qualname, line) of Python code, the samples
    in which it was the innermost Python frame; per native qualname, the
    samples in which it was the innermost frame; per Python function, the
    samples with it anywhere in the stack (its total: only to name the
    functions the text cuts)."""
    m = rep["model"]
    funcs, frames = m["functions"], m["frames"]
    native = [len(f) > 4 and f[4] != "python" for f in funcs]
    py_lines, nat, total = {}, {}, {}
    for s in m["processes"][0]["stacks"]:
        count, ids = s[1], s[2]
        for j, fr in enumerate(ids):
            fn, line = frames[fr]
            if not native[fn]:
                key = (funcs[fn][0], line)
                py_lines[key] = py_lines.get(key, 0) + count
                break
            if j == 0:
                nat[funcs[fn][0]] = nat.get(funcs[fn][0], 0) + count
        for fn in {frames[fr][0] for fr in ids if not native[frames[fr][0]]}:
            total[funcs[fn][0]] = total.get(funcs[fn][0], 0) + count
    return py_lines, nat, total


def section(text, title):
    """The rows of the text report's table whose title starts with title
    (after its header line), up to the blank line ending it."""
    lines = text.splitlines()
    start = [i for i, s in enumerate(lines) if s.strip().startswith(title)]
    check(start, f"no {title!r} table in the text report")
    rows = []
    for s in lines[start[0] + 2:]:
        if not s.strip():
            break
        rows.append(s)
    return rows


@test
def views_native_text():
    """Issue 31.3: the text report of --native on numpy's FFT (Debian 3.11):
    each native row of "Functions by self time" and "Hottest native frames"
    names its frame with its whole +0xOFFSET (before: cut at 50 characters,
    seven rows read alike); no line wider than 160 columns (before: 179);
    "Hottest lines" lists only Python lines, the native code they called
    counted with them, in the model's order (before: library rows filled
    it); the line-by-line tables are of the Python functions whose own
    lines cost the most, the native code they called included (before: by
    self time, _raw_fft with 88% of the samples under its lines was
    skipped)."""
    text, rep = views_native_run()
    py_lines, nat, total = model_costs(rep)
    wide = [ln for ln in text.splitlines() if len(ln) > TEXT_WIDTH]
    check(not wide, f"{len(wide)} lines wider than {TEXT_WIDTH}: {wide[:2]}")
    with_off = {q for q in nat if "+0x" in q}
    check(with_off, f"no native frame named library+0xOFFSET: {sorted(nat)[:5]}")
    for title in ("Functions by self time", "Hottest native frames"):
        rows = section(text, title)
        named = [q for q in with_off if any(f" {q} " in r for r in rows)]
        shown = [r for r in rows if "+0x" in r]
        check(len(named) == len(shown),
              f"{title}: {len(shown)} rows with +0x, {len(named)} name a frame whole: "
              f"{shown[:3]}")
    hot = section(text, "Hottest lines")
    best = max(py_lines.values())
    top = [k for k, v in py_lines.items() if v == best]
    check(all("+0x" not in r and ".so" not in r for r in hot),
          f"native rows in Hottest lines: {[r for r in hot if '.so' in r][:3]}")
    first = hot[0].split()
    check(int(first[0]) == best and any(f":{line}" in first[2] and q in first[3]
                                        for q, line in top),
          f"Hottest lines' first row {hot[0].strip()!r}; the model's: {top} with {best}")
    tables = [ln.split("Line by line: ", 1)[1].split("  ", 1)[0]
              for ln in text.splitlines() if "Line by line: " in ln]
    check(tables, "no line-by-line table")
    tables = [next((q for q in total if q == t or (t.endswith("...") and q.startswith(t[:-3]))),
                   t) for t in tables]
    check(all(q in total for q in tables), f"line-by-line tables of unknown functions: {tables}")
    own = {}
    for (q, _), n in py_lines.items():
        own[q] = own.get(q, 0) + n
    floor = min(own.get(q, 0) for q in tables)
    passed = {q: n for q, n in own.items() if q not in tables and n > floor}
    check(not passed, f"line-by-line tables of {tables} (the least with {floor} samples in "
          f"its own lines) leave out {passed}")
    check("_raw_fft" in tables, f"no line-by-line table of _raw_fft: {tables}")
    return (f"{len(with_off)} native frames with offsets; lines <= {TEXT_WIDTH}; "
            f"hottest line {top[0]} {best} samples; line-by-line {tables}")


@test
def views_cli_small():
    """Issue 31.7: a command typed without `--` (pybpfprof -d 2 python3 -c
    ...) is refused at its first word, in one sentence showing where `--`
    goes, before its own -c is read as ours (before: "invalid option --
    'c'" alone), and runs nothing; `top --help` is the live view's own
    (before: the main usage)."""
    with tempfile.TemporaryDirectory() as d:
        mark = Path(d) / "ran"
        out = Path(d) / "p.txt"
        msg, _ = expect_error(["-d", 2, "-o", out, "python3", "-c",
                               f"open({str(mark)!r}, 'w')"],
                              ["unexpected argument 'python3'",
                               "put `--` before it: pybpfprof [OPTION...] -- python3 -c ..."],
                              out=out, rc=2)
        check(not mark.exists(), "the command ran")
    r = run_profiler(["top", "python3", "app.py"], timeout=15)
    top = r.stderr.splitlines()[:1]
    check(r.returncode == 2 and top == [
        "pybpfprof top: unexpected argument 'python3'; to run a command put `--` before it: "
        "pybpfprof top [OPTION...] -- python3 app.py"], f"top python3 app.py: {r.stderr!r}")
    r = run_profiler(["top", "--help"], timeout=15)
    first = r.stdout.splitlines()[:2]
    check(r.returncode == 0 and first and
          first[0] == "Usage: pybpfprof top [OPTION...] [-- COMMAND [ARG...]]" and
          first[1].startswith("pybpfprof top: the run as a live view"),
          f"top --help: exit {r.returncode}, begins {first}")
    check("--mode" in r.stdout and "q or Ctrl-C quits" in r.stdout.replace("\n", " "),
          "top --help lacks the options or the keys")
    return f"{msg!r}; top --help: {first[0]!r}"
