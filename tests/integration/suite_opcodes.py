"""--opcodes and --mode exception: what a CPU sample's tick says beyond its
stack, read by BPF at the tick (issue 32, items 3 and 4).

--opcodes ground truth (targets/opcodes_mix.py): one line of two statements
whose work is each one instruction running C code (a list scan, CONTAINS_OP;
a big-int product, BINARY_OP), whose CPU times the workload measures itself
on lines of their own; the line's samples must split between the two in
those proportions, within a binomial bound. Lines of small int and of float
additions must be named by the specialised instruction 3.11+ run
(BINARY_OP_ADD_INT, BINARY_OP_ADD_FLOAT). The text, pstats and the saved
JSON read back by `pybpfprof report` carry the same split.

--mode exception ground truth (targets/opcodes_exc.py): a loop that spends a
share of its CPU time inside except blocks, measured with thread_time; the
samples kept must be that share of the process's samples, within a binomial
bound, and the text must name the function that ran in the handler.
"""

import json
import math
import os
import pstats
import re
import shutil
import tempfile

from harness import (BUILDS, TARGETS, Skip, Workloads, check, load_report, per_build, run_profiler,
                     test)

MIX = "opcodes_mix.py"
EXC = "opcodes_exc.py"
FREQ = 499


def truth_file(py):
    """A fresh file for the workload's own measurements: (its path as the
    workload sees it, as the host sees it)."""
    where = py.root / "tmp" if py.root else "/tmp"
    fd, host = tempfile.mkstemp(prefix="pybpfprof-opcodes-", suffix=".json", dir=where)
    os.close(fd)
    inside = "/tmp/" + os.path.basename(host) if py.root else host
    return inside, host


def run_workload(py, script, seconds, tmp, extra):
    """The profiler over the workload to its end, with a JSON, a text and a
    pstats output: (JSON report, the workload's measurements)."""
    inside, host = truth_file(py)
    out = os.path.join(tmp, "p.json")
    try:
        args = [*extra, "-F", FREQ, "-o", out, "-o", os.path.join(tmp, "p.txt"),
                "-o", os.path.join(tmp, "p.pstats"), "-o", os.path.join(tmp, "p.heat.html"), "--",
                *py.argv(script, [seconds, inside])]
        r = run_profiler(args, timeout=seconds * 10 + 60)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        with open(host) as f:
            measured = json.load(f)
    finally:
        os.unlink(host)
    return load_report(out), measured


def line_of(script, marker):
    with open(TARGETS / script) as f:
        for n, text in enumerate(f, 1):
            if marker in text:
                return n
    raise AssertionError(f"{marker!r} not in {script}")


def the_process(rep):
    procs = [p for p in rep["processes"] if p["samples"]]
    check(len(procs) == 1, f"{len(procs)} processes with samples, want the workload's one")
    return procs[0]


def minor_of(proc):
    m = re.match(r"3\.(\d+)", proc.get("python") or "")
    check(m, f"no Python version in the report: {proc.get('python')!r}")
    return int(m.group(1))


def line_entry(proc, script, line):
    rows = [e for e in proc["lines"] if e["file"].endswith(script) and e["line"] == line]
    check(len(rows) == 1, f"{script}:{line} is not among the report's lines")
    check("opcodes" in rows[0], f"{script}:{line} has no \"opcodes\"")
    return rows[0]


def check_mix(row, measured, minor):
    """The mixed line's samples split between the scan and the product as
    the workload measured them; next to them the loads and stores take
    nanoseconds, so almost nothing else."""
    scan = "COMPARE_OP" if minor < 9 else "CONTAINS_OP"
    product = "BINARY_MULTIPLY" if minor < 11 else "BINARY_OP"
    by_base = {}
    for op in row["opcodes"]:
        by_base[op["base"]] = by_base.get(op["base"], 0) + op["samples"]
    n = sum(row["opcodes"][i]["samples"] for i in range(len(row["opcodes"])))
    check(n <= row["self"], f"{n} instruction samples, more than the line's {row['self']}")
    check(n >= 200, f"only {n} samples with an instruction at the mixed line")
    got_scan, got_product = by_base.get(scan, 0), by_base.get(product, 0)
    other = n - got_scan - got_product
    check(other <= max(3, 0.05 * n),
          f"{other} of {n} samples at instructions other than {scan} and {product}: "
          f"{row['opcodes']}")
    want = measured["contains_ns"] / (measured["contains_ns"] + measured["multiply_ns"])
    share = got_scan / max(1, got_scan + got_product)
    # 4.5 sigma of the line's samples: the truth is itself measured, on the
    # timed calls beside the mixed ones, so it has a spread of its own (one
    # CI run of 24 builds had a build at 4.0 sigma)
    bound = max(0.04, 4.5 * math.sqrt(want * (1 - want) / n))
    check(abs(share - want) <= bound,
          f"{scan}: {share:.1%} of the line's {got_scan + got_product} samples at {scan} or "
          f"{product}, the workload measured {want:.1%} (bound {bound:.1%})")
    return f"{scan} {share:.1%} vs {want:.1%} measured ({n} samples)"


def check_specialised(proc, minor):
    """The int and float lines' additions by the name the interpreter ran."""
    said = []
    for marker, special in (("# the int line", "BINARY_OP_ADD_INT"),
                            ("# the float line", "BINARY_OP_ADD_FLOAT")):
        row = line_entry(proc, MIX, line_of(MIX, marker))
        adds = [op for op in row["opcodes"]
                if op["base"] == ("BINARY_ADD" if minor < 11 else "BINARY_OP")]
        n = sum(op["samples"] for op in adds)
        check(n >= 20, f"only {n} addition samples at the {marker[6:]}: {row['opcodes']}")
        named = {op["opcode"]: op["samples"] for op in adds}
        want = "BINARY_ADD" if minor < 11 else special
        # the first rounds, run unspecialised, were before the workload said ready
        check(named.get(want, 0) >= 0.9 * n,
              f"{marker[6:]}: {named}, want nearly all {want} ({n} samples)")
        said.append(f"{want} {named.get(want, 0)}/{n}")
    return ", ".join(said)


def check_call_line(proc, measured, minor):
    """The call line's samples are named only by the line's own instructions
    (their unspecialised forms as dis gives them in the workload): a frame
    caught while its call is set up or returns ran the CALL, whatever data
    the inline cache word its pointer is on holds (3.11, 3.12)."""
    row = line_entry(proc, MIX, line_of(MIX, "# the call line"))
    n = sum(op["samples"] for op in row["opcodes"])
    check(n >= 30, f"only {n} samples at the call line")
    own = set(measured["call_line"])
    alien = {op["opcode"]: op["samples"] for op in row["opcodes"] if op["base"] not in own}
    check(not alien, f"the call line's samples named by instructions it does not have: "
          f"{alien} of {n} (its own: {sorted(own)})")
    return f"call line {n} samples, all its own instructions"


def check_text_pstats(tmp, row, line):
    """The text's table under the line-by-line one and pstats' entries (one
    per instruction at file:line, named <NAME>) hold the JSON's counts."""
    with open(os.path.join(tmp, "p.txt")) as f:
        text = f.read()
    check("Instructions running at the line's own samples (--opcodes):" in text,
          "no instruction table in the text")
    top = max(row["opcodes"], key=lambda op: op["samples"])
    check(re.search(rf"^ +{line} +{top['samples']} +[\d.]+%  {top['opcode']}\b", text, re.M),
          f"the text lacks line {line}'s {top['samples']} samples at {top['opcode']}")
    st = pstats.Stats(os.path.join(tmp, "p.pstats"))
    got = {name[1:-1]: v[0] for (file, ln, name), v in st.stats.items()
           if file.endswith(MIX) and ln == line and name.startswith("<")}
    want = {op["opcode"]: op["samples"] for op in row["opcodes"]}
    check(got == want, f"pstats' instructions at {MIX}:{line} {got}, the JSON's {want}")


def check_heatmap(tmp, proc, line, browser):
    """The source heatmap gives each line the JSON's instructions (the
    frames of several functions at one line summed); in Chromium (one
    build) the mixed line's row shows them, as shares of its samples."""
    with open(os.path.join(tmp, "p.heat.html")) as f:
        page = f.read()
    data = json.loads(page.split('id="profile">', 1)[1].split("</script>", 1)[0])
    check(data["opcodes"], "the page does not know the profile has instructions")
    want = {}
    for e in proc["lines"]:
        if e["line"] < 1:  # not a line of a file: the page shades none (its note counts them)
            continue
        for op in e.get("opcodes", []):
            k = (e["file"], e["line"], op["opcode"])
            want[k] = want.get(k, 0) + op["samples"]
    got = {(f["n"], ln[0], name): n for f in data["files"] for ln in f["l"]
           for name, n in ln[15]}
    check(got == want, f"the page's instructions per line differ from the JSON's: "
          f"{sorted(set(got.items()) ^ set(want.items()))[:6]}")
    if not browser:
        return
    from suite_formats import WebDriver
    with WebDriver() as wd:
        wd.s("POST", "/url", {"url": "file://" + os.path.join(tmp, "p.heat.html")})
        head = wd.js("return Array.from(document.querySelectorAll('table.lines tr:first-child"
                     " td')).map(c => c.textContent)")
        check("instructions (of self)" in head, f"no instruction column: {head}")
        cells = wd.js("return Array.from(document.querySelectorAll('tr.ln')).filter(r => "
                      f"r.dataset.line === '{line}' && P.files[r.dataset.file].n.endsWith("
                      f"'{MIX}')).map(r => r.querySelector('td.ops').textContent)")
        check(len(cells) == 1, f"{len(cells)} rows of line {line}")
        for op in proc_line_ops(proc, line)[:2]:
            check(op in cells[0], f"line {line}'s instructions {cells[0]!r} lack {op}")


def proc_line_ops(proc, line):
    rows = [e for e in proc["lines"] if e["file"].endswith(MIX) and e["line"] == line]
    return [op["opcode"] for op in sorted(rows[0]["opcodes"], key=lambda o: -o["samples"])]


def check_round_trip(tmp, proc):
    """`pybpfprof report` of the saved JSON gives every line the same split."""
    r = run_profiler(["report", os.path.join(tmp, "p.json"), "-f", "json"], timeout=60)
    check(r.returncode == 0, f"report exit {r.returncode}: {r.stderr.strip()}")
    again = the_process(load_report(text=r.stdout))
    ops = {(e["file"], e["line"]): e.get("opcodes") for e in proc["lines"]}
    back = {(e["file"], e["line"]): e.get("opcodes") for e in again["lines"]}
    check(ops == back, "the saved JSON read back splits its lines otherwise")


@per_build
def opcodes_mix(build):
    """A line of a list scan and a big-int product: its samples split by
    instruction as the workload measured the two; int and float additions
    by their specialised names (3.11+)."""
    py = BUILDS[build]
    why = py.missing()
    if why:
        raise Skip(why)
    with tempfile.TemporaryDirectory() as tmp:
        rep, measured = run_workload(py, MIX, 4, tmp, ["--opcodes"])
        proc = the_process(rep)
        minor = minor_of(proc)
        line = line_of(MIX, "# noqa: E702  the line under test")
        row = line_entry(proc, MIX, line)
        figures = check_mix(row, measured, minor)
        figures += "; " + check_specialised(proc, minor)
        figures += "; " + check_call_line(proc, measured, minor)
        check_text_pstats(tmp, row, line)
        check_heatmap(tmp, proc, line, build == "debian")
        check_round_trip(tmp, proc)
    return figures


def check_exc_share(proc, measured):
    """The samples kept (their thread handling an exception) against the
    share of the process's CPU time the workload measured in its handlers."""
    e = proc["exception"]
    n = e["samples"] + e["left_out"] + e["unknown_left_out"]
    check(n >= 500, f"only {n} samples of the process")
    check(e["unknown_left_out"] <= 0.01 * n,
          f"{e['unknown_left_out']} of {n} samples whose exception state was not read")
    check(proc["samples"] == e["samples"],
          f"{proc['samples']} samples kept, {e['samples']} of them handling an exception")
    want = measured["inside_ns"] / measured["process_ns"]
    share = e["samples"] / n
    bound = max(0.04, 4 * math.sqrt(want * (1 - want) / n))
    check(abs(share - want) <= bound,
          f"{share:.1%} of the process's {n} samples kept as handling an exception, the "
          f"workload measured {want:.1%} of its CPU time in its handlers (bound {bound:.1%})")
    return f"{share:.1%} vs {want:.1%} measured ({n} samples)"


def check_exc_text(tmp, proc):
    """The text says what was kept and left out, and names by function the
    time in handlers: in_handler, not outside."""
    e = proc["exception"]
    with open(os.path.join(tmp, "p.txt")) as f:
        text = f.read()
    check(f"exception mode: {e['samples']} samples kept" in text,
          "the text's header lacks the samples kept")
    m = re.search(r"^  Exception handling: (\d+) samples.*\n(?:  .*\n)*?"
                  r"     self    total  %of self  function.*\n((?:  +\d+ .*\n)+)", text, re.M)
    check(m and int(m.group(1)) == e["samples"], "no exception table with the samples kept")
    rows = {ln.split()[3]: int(ln.split()[0]) for ln in m.group(2).splitlines()}
    check(rows.get("in_handler", 0) >= 0.8 * e["samples"],
          f"in_handler's own samples in the table: {rows}")
    check("outside" not in rows, f"outside() is named as handling an exception: {rows}")
    fn = {f["qualname"]: f for f in proc["functions"]}
    check(fn["in_handler"]["exception"]["self"] == rows["in_handler"],
          "the JSON's and the text's figures of in_handler differ")


def check_exc_round_trip(tmp, proc):
    """`pybpfprof report` of the saved JSON: the same mode, process and function figures."""
    r = run_profiler(["report", os.path.join(tmp, "p.json"), "-f", "json"], timeout=60)
    check(r.returncode == 0, f"report exit {r.returncode}: {r.stderr.strip()}")
    rep = load_report(text=r.stdout)
    check(rep["mode"] == "exception", f"the saved profile read back is of mode {rep['mode']!r}")
    again = the_process(rep)
    check(again["exception"] == proc["exception"],
          f"read back: {again['exception']}, the run's {proc['exception']}")
    fn = {f["qualname"]: f["exception"] for f in proc["functions"]}
    back = {f["qualname"]: f["exception"] for f in again["functions"]}
    check(fn == back, "the functions' exception figures differ once read back")


@per_build
def opcodes_exception_mode(build):
    """--mode exception keeps the share of the samples the workload spent in
    except blocks, and the text names the function the handlers ran."""
    py = BUILDS[build]
    why = py.missing()
    if why:
        raise Skip(why)
    with tempfile.TemporaryDirectory() as tmp:
        rep, measured = run_workload(py, EXC, 3, tmp, ["--mode", "exception"])
        check(rep["mode"] == "exception", f"mode {rep['mode']!r}")
        proc = the_process(rep)
        figures = check_exc_share(proc, measured)
        check_exc_text(tmp, proc)
        check_exc_round_trip(tmp, proc)
    return figures


OPCODES_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


@test
def opcodes_hostile_exc_chain_debian():
    """A target (run by nobody) whose exception stack loops on itself: every
    sample's state is "not read", counted as such, none kept by --mode
    exception, and the run ends on time."""
    py = BUILDS["debian"]
    check(shutil.which("setpriv") is not None, "setpriv (util-linux) not found")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(py, "opcodes_hostile_exc.py", 60, prefix=OPCODES_NOBODY)
        out, txt = os.path.join(tmp, "p.json"), os.path.join(tmp, "p.txt")
        r = run_profiler(["-p", p.pid, "-d", 3, "-F", FREQ, "--mode", "exception", "-o", out,
                          "-o", txt], timeout=3 + 60)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        check(p.poll() is None, "the target died")
        rep = load_report(out)
        procs = [x for x in rep["processes"] if x["pid"] == p.pid]
        check(len(procs) == 1, "the target has no section")
        e = procs[0]["exception"]
        check(e["unknown_left_out"] >= 50, f"only {e['unknown_left_out']} samples: {e}")
        check(procs[0]["samples"] == 0 and e["samples"] == 0 and e["left_out"] == 0,
              f"a sample was read as handling an exception or not: {e}")
        with open(txt) as f:
            text = f.read()
        check(f"0 left out (not handling one), {e['unknown_left_out']} left out (state not "
              f"read)" in text, "the text does not count the samples whose state was not read")
    return f"{e['unknown_left_out']} samples, all 'state not read'"


@test
def opcodes_exceptions_flag_debian():
    """--exceptions reads each CPU sample's exception state and keeps every
    sample: the share handling one is the workload's measured share and the
    text has its table; without it (or --mode exception) the state is not
    read (0.2 us a sample) and no report claims a figure for it."""
    py = BUILDS["debian"]
    with tempfile.TemporaryDirectory() as tmp:
        rep, measured = run_workload(py, EXC, 3, tmp, ["--exceptions"])
        check(rep["mode"] == "cpu", f"mode {rep['mode']!r}")
        proc = the_process(rep)
        e = proc["exception"]
        n = proc["samples"]
        check(n >= 500, f"only {n} samples of the process")
        check(e["left_out"] == 0 and e["unknown_left_out"] == 0,
              f"samples were left out without --mode exception: {e}")
        check(e["unknown"] <= 0.01 * n, f"{e['unknown']} of {n} samples' state not read")
        want = measured["inside_ns"] / measured["process_ns"]
        share = e["samples"] / n
        bound = max(0.04, 4 * math.sqrt(want * (1 - want) / n))
        check(abs(share - want) <= bound,
              f"{share:.1%} of {n} samples handling an exception, the workload measured "
              f"{want:.1%} (bound {bound:.1%})")
        with open(os.path.join(tmp, "p.txt")) as f:
            text = f.read()
        check(f"Exception handling: {e['samples']} samples" in text,
              "the text has no exception table with the JSON's figure")
        figures = f"{share:.1%} vs {want:.1%} measured ({n} samples)"
    with tempfile.TemporaryDirectory() as tmp:
        rep, _ = run_workload(py, EXC, 2, tmp, [])
        proc = the_process(rep)
        check("exceptions" not in rep and "exception" not in proc,
              "a plain run reports exception figures it did not read")
        check(not any("exception" in fn for fn in proc["functions"]),
              "a plain run's functions carry exception figures")
        with open(os.path.join(tmp, "p.txt")) as f:
            check("Exception handling" not in f.read(), "a plain run's text has an exception table")
    return figures
