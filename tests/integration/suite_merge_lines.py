# --merge-lines in every file format whose frames carry lines (issue 31):
# speedscope and pprof, read by their own consumers (speedscope's schema,
# go tool pprof -lines), as folded and the flame graphs already were (in
# suite_views). One run of mlines31_spread.py, whose spread() spends its CPU
# time on three lines of its own (1:2:3), writes the JSON report and the
# merged file; the ground truth is the same run's JSON model, whose frames
# keep their lines. `pybpfprof report` of that JSON writes the same file
# unmerged (the figures to compare with) and merged (byte for byte the run's).

import json
import re
import tempfile

from pathlib import Path

from harness import (RUN_SLACK, check, functions, interpreter, load_report, process,
                     run_profiler, source_line, test)
from suite_formats import SPEEDSCOPE_DIR, go_pprof, schema_errors

SPREAD = "mlines31_spread.py"
SPREAD_FREQ = 199
SPREAD_SECS = 1.5  # of the target's own CPU time


def spread_run(d, outputs):
    """pybpfprof -F 199 --merge-lines -o p.json -o OUTPUT... -- python3.11
    mlines31_spread.py: the JSON report."""
    py = interpreter("debian")
    args = ["-F", SPREAD_FREQ, "--merge-lines", "-o", d / "p.json"]
    for name in outputs:
        args += ["-o", d / name]
    r = run_profiler([*args, "--", *py.argv(SPREAD, [SPREAD_SECS])], timeout=60 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return load_report(d / "p.json")


def spread_truth(rep):
    """From the JSON model (lines kept): spread()'s self samples per line,
    its total (samples with it anywhere on the stack), and the samples of
    stacks with frames; checked to hold the three marked lines."""
    m = rep["model"]
    script = interpreter("debian").script_path(SPREAD)
    mine = [i for i, f in enumerate(m["functions"]) if f[0] == "spread" and f[1] == script]
    check(len(mine) == 1, f"spread() of {script} is {len(mine)} functions in the model")
    lines, total, samples = {}, 0, 0
    for proc in m["processes"]:
        for s in proc["stacks"]:
            count, ids = s[1], s[2]
            samples += count if ids else 0
            fns = [m["frames"][i][0] for i in ids]
            if ids and fns[0] == mine[0]:
                line = m["frames"][ids[0]][1]
                lines[line] = lines.get(line, 0) + count
            total += count if mine[0] in fns else 0
    marked = [source_line(SPREAD, f"marker: spread {k}")[0] for k in (1, 2, 3)]
    check(all(lines.get(n) for n in marked),
          f"spread()'s marked lines {marked} without samples: {lines}")
    fn = functions(process(rep, rep["processes"][0]["pid"]))["spread"]
    check(fn["self"] == sum(lines.values()) and fn["total"] == total,
          f"JSON functions table: spread {fn}, model self {lines}, total {total}")
    return lines, total, samples


def report_again(d, name, extra=()):
    """pybpfprof report p.json [EXTRA] -o d/name."""
    r = run_profiler(["report", d / "p.json", *extra, "-o", d / name], timeout=60)
    check(r.returncode == 0, f"report -o {name}: exit {r.returncode}: {r.stderr.strip()}")
    return d / name


def speedscope_spread(path, script):
    """speedscope's frames of spread() in path, and over all profiles: the
    samples with one of them innermost, with one anywhere, and in all."""
    doc = json.loads(Path(path).read_text())
    frames = doc["shared"]["frames"]
    mine = {i for i, f in enumerate(frames) if f["name"] == "spread" and f.get("file") == script}
    self_ = total = weights = 0
    for prof in doc["profiles"]:
        check(len(prof["samples"]) == len(prof["weights"]) and
              prof["endValue"] == sum(prof["weights"]), f"{path}: samples, weights, endValue")
        for stack, w in zip(prof["samples"], prof["weights"]):
            self_ += w if stack[-1] in mine else 0
            total += w if mine & set(stack) else 0
            weights += w
    return doc, [frames[i] for i in sorted(mine)], self_, total, weights


@test
def merge_lines_speedscope():
    """--merge-lines in speedscope: one frame for spread(), at its def line,
    whose samples are the sum of its lines' (self and total, as the JSON
    model counts them); the file without the option has a frame per line,
    and the same samples in all; `report --merge-lines` writes the run's
    file byte for byte; the file is valid against speedscope's schema."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        rep = spread_run(d, ["p.speedscope.json"])
        lines, total, samples = spread_truth(rep)
        script = interpreter("debian").script_path(SPREAD)
        first = source_line(SPREAD, "marker: spread def")[0]
        doc, frames, self_, tot, weights = speedscope_spread(d / "p.speedscope.json", script)
        check(frames == [{"name": "spread", "file": script, "line": first}],
              f"merged: spread()'s frames {frames}, expected one at line {first}")
        check(self_ == sum(lines.values()) and tot == total,
              f"merged: spread self {self_} total {tot}; model self {lines} total {total}")
        _, plain, pself, ptot, pweights = speedscope_spread(
            report_again(d, "plain.speedscope.json"), script)
        check(len(plain) >= len(lines) >= 3 and pself == self_ and ptot == tot,
              f"unmerged: {len(plain)} frames of spread, self {pself} total {ptot}")
        check(weights == pweights == samples,
              f"samples: merged {weights}, unmerged {pweights}, model {samples}")
        again = report_again(d, "again.speedscope.json", ["--merge-lines"])
        check(again.read_bytes() == (d / "p.speedscope.json").read_bytes(),
              "report --merge-lines wrote another speedscope file than the run")
        schema_file = SPEEDSCOPE_DIR / "dist/release/file-format-schema.json"
        schema = "speedscope's schema not here"
        if schema_file.exists():
            schema = json.loads(schema_file.read_text())
            errs = schema_errors(doc, schema, schema)
            check(not errs, f"not valid against speedscope's schema: {errs[:5]}")
            schema = "valid against speedscope's schema"
    return (f"spread: 1 frame (line {first}) of {self_} self / {tot} total samples, "
            f"{len(plain)} frames unmerged (lines {dict(sorted(lines.items()))}); "
            f"{weights} samples either way; {schema}")


def pprof_lines_top(path):
    """go tool pprof -lines -top of samples, every node: (total, rows of
    (flat, cum, "function file:line"))."""
    out = go_pprof(path, "-lines", "-top", "-nodecount=100000", "-nodefraction=0",
                   "-sample_index=samples")
    m = re.search(r"Showing nodes accounting for \d+, [\d.]+% of (\d+) total", out)
    check(m, f"go tool pprof -lines: no total: {out[:300]}")
    rows = re.findall(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", out, re.M)
    return int(m.group(1)), [(int(f), int(c), where.strip()) for f, c, where in rows]


@test
def merge_lines_pprof_go():
    """--merge-lines in pprof, read by go tool pprof -lines -top: one row for
    spread(), at its def line, whose flat samples are the sum of its lines'
    (the JSON model's) and its cum spread()'s total; the file without the
    option has a row per line adding up to the same; the total is the same
    with and without; `report --merge-lines` writes the run's file byte for
    byte."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        rep = spread_run(d, ["p.pb.gz"])
        lines, total, samples = spread_truth(rep)
        script = interpreter("debian").script_path(SPREAD)
        first = source_line(SPREAD, "marker: spread def")[0]
        mtotal, rows = pprof_lines_top(d / "p.pb.gz")
        mine = [r for r in rows if r[2].startswith("spread ") and script in r[2]]
        check(len(mine) == 1 and mine[0][2] == f"spread {script}:{first}",
              f"merged: spread()'s rows {mine}, expected one at line {first}")
        check(mine[0][0] == sum(lines.values()) and mine[0][1] == total,
              f"merged: spread flat {mine[0][0]} cum {mine[0][1]}; model self {lines} "
              f"total {total}")
        ptotal, prows = pprof_lines_top(report_again(d, "plain.pb.gz"))
        plain = [r for r in prows if r[2].startswith("spread ") and script in r[2]]
        check(len(plain) >= len(lines) >= 3 and sum(r[0] for r in plain) == mine[0][0],
              f"unmerged: spread()'s rows {plain}, merged flat {mine[0][0]}")
        check(mtotal == ptotal == samples,
              f"total samples: merged {mtotal}, unmerged {ptotal}, model {samples}")
        again = report_again(d, "again.pb.gz", ["--merge-lines"])
        check(again.read_bytes() == (d / "p.pb.gz").read_bytes(),
              "report --merge-lines wrote another pprof file than the run")
    return (f"go tool pprof -lines: 1 row spread:{first} flat {mine[0][0]} cum {mine[0][1]}, "
            f"{len(plain)} rows unmerged; {mtotal} samples either way")
