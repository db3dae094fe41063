# The source heatmap (issue 32, item 2; -f heatmap, -o FILE.heat.html), opened
# in headless Chromium as its users open it. Every figure on the page is
# checked against the JSON report the same run wrote (-o twice): the lines'
# self samples and their 95 % intervals, the functions' self and total, the
# on- and off-CPU samples of --mode wall and the bytes of --mem. The page's
# own behaviour is checked in the browser: the hottest line shaded darkest,
# the files listed by their samples, a click on a function marking exactly
# its lines, the search finding exactly the lines that hold a token, and a
# hostile target's file name, function name and source line (run by nobody)
# shown as text, never run as markup. A saved profile (`report p.json -o
# x.heat.html`) makes the same page. Runs end by sample counts
# (until_enough), never by the machine's speed.

import os
import pwd
import re
import tempfile
from pathlib import Path

from harness import (RUN_SLACK, Workloads, check, functions, interpreter, load_report,
                     process, run_profiler, source_line, test, until_enough)
from suite_errbars import wilson
from suite_formats import ARTIFACTS, WebDriver

NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
# the page's line fields (report_heatmap.c, write_line)
LINE, SELF, TOTAL, SLO, SHI, TLO, THI, OFFS, OFFT, MEMS, MEMT, ALLOCS, ALLOCT, FN, TEXT = \
    range(15)
# anything a page could fetch or link to: it must hold none
OUTSIDE = re.compile(r"(?:https?:|//[a-z]|src=|href=|@import|url\()")

ROWS_JS = """
return Array.from(document.querySelectorAll('tr.ln')).map(r => {
  const m = (getComputedStyle(r).backgroundColor.match(/[\\d.]+/g) || []).map(Number);
  const seen = m.length >= 3 && (m.length < 4 || m[3] > 0);
  return {file: +r.dataset.file, line: +r.dataset.line, sel: r.classList.contains('sel'),
          match: r.classList.contains('match'),
          lum: seen ? 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2] : 255}; });
"""


def outside(text):
    """What the page outside its data refers to (the data is the target's
    text, shown as text: a file may be named "src=x")."""
    head, rest = text.split('id="profile">', 1)
    return OUTSIDE.findall(head + rest.split("</script>", 1)[1])


def heat_run(wl, out, script, need, args=(), extra=()):
    """Profiles one workload into a heatmap and a JSON report, longer until
    it has `need` samples: (page path, JSON report, its process, pid)."""
    out = Path(out)
    page, js = out / "p.heat.html", out / "p.json"
    p = wl.start(interpreter("debian"), script, *args)

    def run(secs):
        r = run_profiler(["-p", p.pid, "-d", secs, "-F", 499, *extra, "-o", page, "-o", js],
                         timeout=secs + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        return process(load_report(js), p.pid)

    proc, secs = until_enough(run, lambda q: q["samples"], need, 2)
    check(proc["samples"] >= need, f"only {proc['samples']} samples in {secs} s")
    text = page.read_text()
    check(not outside(text), f"the page refers outside it: {outside(text)[:5]}")
    return page, load_report(js), proc, p.pid


def open_page(wd, page):
    """The page loaded: its data (P) as the browser parsed it."""
    wd.s("POST", "/url", {"url": Path(page).resolve().as_uri()})
    check(wd.js("return document.title") == "pybpfprof heatmap",
          f"not a heatmap: title {wd.js('return document.title')!r}")
    return wd.js("return P")


def page_lines(P):
    """{(file, line): line fields} of the page."""
    return {(f["n"], ln[LINE]): ln for f in P["files"] for ln in f["l"]}


def json_lines(proc, key="self"):
    """{(file, line): (sum of key,)} of the JSON report's lines (the frames
    of several functions at one line summed)."""
    got = {}
    for ln in proc["lines"]:
        k = (ln["file"], ln["line"])
        got[k] = (got.get(k, (0,))[0] + ln[key],)
    return got


def same_lines(P, proc):
    """Every line's self and total samples are the JSON report's, and its
    intervals Wilson's (computed here, as suite_errbars does)."""
    pl, jl = page_lines(P), json_lines(proc)
    for k, (s,) in jl.items():
        if k[1] < 1 or not s:
            continue
        check(k in pl, f"{k[0]}:{k[1]} ({s} samples) not on the page")
        check(pl[k][SELF] == s, f"{k[0]}:{k[1]}: page self {pl[k][SELF]}, JSON {s}")
    for k, ln in pl.items():
        check(ln[SELF] == jl.get(k, (0,))[0], f"{k}: page self {ln[SELF]} not in the JSON")
        for n, lo, hi in ((ln[SELF], SLO, SHI), (ln[TOTAL], TLO, THI)):
            w = wilson(n, proc["samples"])
            check(abs(ln[lo] - w[0]) < 0.001 and abs(ln[hi] - w[1]) < 0.001,
                  f"{k}: page interval {ln[lo]}-{ln[hi]} of {n}, Wilson's {w}")
    return pl


def darkest(wd):
    rows = wd.js(ROWS_JS)
    check(rows, "no line rows")
    return min(rows, key=lambda r: r["lum"]), rows


@test
def heat_browser():
    """Three files, one process: figures equal the JSON report's, the
    hottest line darkest, files by samples, hottest lines first, a
    function's click marks its lines, search finds a token's line."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with Workloads() as wl, tempfile.TemporaryDirectory() as mods, \
            tempfile.TemporaryDirectory(prefix="pybpfprof-heat-") as out:
        page, rep, proc, pid = heat_run(wl, out, "heat_files.py", 600, args=(mods,))
        with WebDriver() as wd:
            P = open_page(wd, page)
            pl = same_lines(P, proc)
            check(len(P["files"]) == 3, f"files {[f['n'] for f in P['files']]}")
            title = wd.js("return document.getElementById('title').textContent")
            check(f"{proc['samples']} samples (" in title and "dropped" in title,
                  f"title {title!r} does not count the samples and their flaws")
            # functions: self and total as the JSON report's
            fns = {(fn["qualname"], fn["file"]): fn for fn in proc["functions"]}
            for f in P["files"]:
                for name, _, s, t in f["f"]:
                    fn = fns[(name, f["n"])]
                    check(fn["self"] == s and fn["total"] == t,
                          f"{name}: page {s}/{t}, JSON {fn['self']}/{fn['total']}")
            # a line's total: the work_a call line's is work_a's (called only
            # there), and its own samples before the call or after it
            calls = [ln for (f, _), ln in pl.items()
                     if f.endswith("/heat_files.py") and "heat_mod_a.work_a(" in ln[TEXT]]
            wa = [fn for (q, f), fn in fns.items() if q == "work_a"]
            check(len(calls) == 1 and len(wa) == 1 and
                  calls[0][TOTAL] == wa[0]["total"] + calls[0][SELF],
                  f"the call line's total {calls}, work_a's {wa}")
            # the hottest line (most self samples) is shaded darkest
            hot = max(pl.items(), key=lambda kv: kv[1][SELF])
            dark, rows = darkest(wd)
            got = (P["files"][dark["file"]]["n"], dark["line"])
            check(got == hot[0], f"darkest line {got}, hottest {hot[0]} ({hot[1][SELF]})")
            check(sum(r["lum"] == dark["lum"] for r in rows) == 1, "two lines equally dark")
            # files by their self samples, most first
            order = wd.js("return Array.from(document.querySelectorAll('#files tr.file'))"
                          ".map(r => [P.files[r.dataset.file].n, +r.dataset.sum])")
            sums = {}
            for (fname, _), ln in pl.items():
                sums[fname] = sums.get(fname, 0) + ln[SELF]
            check([s for _, s in order] == sorted(sums.values(), reverse=True)
                  and all(sums[n] == s for n, s in order), f"file list {order}, sums {sums}")
            sections = wd.js("return Array.from(document.querySelectorAll('div.src'))"
                             ".map(d => P.files[+d.id.slice(4)].n)")
            check(sections == [n for n, _ in order], f"sources in the order {sections}")
            first_hot = wd.js("const r = document.querySelector('#hot tr.hot');"
                              "return [P.files[r.dataset.file].n, +r.dataset.line]")
            check(tuple(first_hot) == hot[0], f"first hot line {first_hot}, hottest {hot[0]}")
            wd.screenshot(ARTIFACTS / "heatmap.png")
            # a click on work_b marks exactly work_b's lines
            el = wd.find('.fn[data-name="work_b"]')
            check(len(el) == 1, f"{len(el)} work_b entries")
            wd.s("POST", f"/element/{el[0]}/click", {})
            marked = {(P["files"][r["file"]]["n"], r["line"]) for r in wd.js(ROWS_JS) if r["sel"]}
            want = {(ln["file"], ln["line"]) for ln in proc["lines"]
                    if ln["qualname"] == "work_b" and ln["self"]}
            check(marked and want <= marked and
                  all(k[0].endswith("/heat_mod_b.py") for k in marked),
                  f"work_b's click marked {sorted(marked)}, its sampled lines {sorted(want)}")
            # the search finds exactly the line with the token
            wd.s("POST", f"/element/{wd.find('#search')[0]}/value", {"text": "heat_b"})
            found = [r for r in wd.js(ROWS_JS) if r["match"]]
            fb = [k for k, ln in pl.items() if "# HEAT_B" in ln[TEXT]]
            check(len(fb) == 1 and [(P["files"][r["file"]]["n"], r["line"]) for r in found] == fb,
                  f"search 'heat_b' found {found}, the line is {fb}")
            check(wd.js("return document.getElementById('found').textContent") ==
                  "1 line found", "the search does not say what it found")
            wd.screenshot(ARTIFACTS / "heatmap-search.png")
            # the saved profile makes the same page
            again = page.parent / "again.heat.html"
            r = run_profiler(["report", page.parent / "p.json", "-o", again], timeout=60)
            check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
            check(open_page(wd, again)["files"] == P["files"],
                  "the saved profile's heatmap differs from the run's")
    return (f"{proc['samples']} samples, {len(pl)} lines in 3 files as the JSON report; "
            f"darkest {hot[0][0].rsplit('/', 1)[1]}:{hot[0][1]}; click and search work; "
            "the saved profile's page the same")


@test
def heat_hostile():
    """A target run by nobody names its file and function with markup and
    a terminal escape, and its hot line closes the page's script: the page
    shows them as text ('?' for the escape), runs none of it."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as d, \
            tempfile.TemporaryDirectory(prefix="pybpfprof-heat-") as out:
        nobody = pwd.getpwnam("nobody")
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
        p = wl.start(interpreter("debian"), "heat_hostile.py", d, prefix=NOBODY)
        page, js = Path(out) / "h.heat.html", Path(out) / "h.json"

        def run(secs):
            r = run_profiler(["-p", p.pid, "-d", secs, "-F", 199, "-o", page, "-o", js],
                             timeout=secs + RUN_SLACK)
            check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
            return process(load_report(js), p.pid)

        # the hot line must have been sampled for its text to be on the page
        proc, secs = until_enough(run, lambda q: q["samples"], 100, 2)
        check(proc["samples"] >= 100, f"only {proc['samples']} samples in {secs} s")
        text = page.read_text()
        check(not outside(text), f"the page refers outside it: {outside(text)[:5]}")
        check(text.count("</script>") == 2, "the data holds '</script>' as it is")
        with WebDriver() as wd:
            P = open_page(wd, page)
            check(wd.js("return document.querySelectorAll('img, #pwned, [src], [href]').length")
                  == 0,
                  "the target's markup became elements")
            heads = wd.js("return Array.from(document.querySelectorAll('h3'))"
                          ".map(h => h.textContent)")
            want = "<img src=x onerror=document.title=1>?[31m.py"
            check(any(h.endswith(want) for h in heads), f"file name not shown as text: {heads}")
            codes = wd.js("return Array.from(document.querySelectorAll('tr.ln td.code'))"
                          ".map(c => c.textContent)")
            line = "n -= len('</script><script>document.title=\"pwned\"</script>?]0;t?')"
            check(line in codes, f"hot line not shown as text: {codes}")
            names = wd.js("return Array.from(document.querySelectorAll('.fn'))"
                          ".map(s => s.dataset.name)")
            check("<b id=pwned>spin</b>?[2J" in names, f"qualname not shown as text: {names}")
            check(wd.js("return document.title") == "pybpfprof heatmap", "the title changed")
    return "file name, qualname and source line shown as text; no element made, title kept"


@test
def heat_wall():
    """--mode wall: each line's on- and off-CPU samples are the JSON
    report's, and shaded by off-CPU samples the darkest line is the one
    with the most (the sleep)."""
    with Workloads() as wl, tempfile.TemporaryDirectory(prefix="pybpfprof-heat-") as out:
        page, rep, proc, pid = heat_run(wl, out, "heat_wall.py", 400, extra=("--mode", "wall"))
        sleep, _ = source_line("heat_wall.py", "# HEAT_SLEEP")
        with WebDriver() as wd:
            P = open_page(wd, page)
            check(P["wall"], "the page does not know it is a wall profile")
            pl = page_lines(P)
            # A line's self is its samples on and off the CPU. The JSON
            # report's lines are those with samples on the CPU (its off-CPU
            # ones are under <off-CPU>), each with its split; the sleep line,
            # nap()'s only one, may have none on the CPU: nap()'s figures
            # (each stack counted once) are its own.
            on, off = json_lines(proc, "on_cpu"), json_lines(proc, "off_cpu")
            for k, ln in pl.items():
                o, f = on.get(k, (0,))[0], off.get(k, (0,))[0]
                check(ln[SELF] - ln[OFFS] == o and (k not in on or ln[OFFS] == f),
                      f"{k}: page on/off {ln[SELF] - ln[OFFS]}/{ln[OFFS]}, JSON {o}/{f}")
                lo, hi = wilson(ln[SELF], proc["samples"])
                check(abs(ln[SLO] - lo) < 0.001 and abs(ln[SHI] - hi) < 0.001,
                      f"{k}: page interval {ln[SLO]}-{ln[SHI]}, Wilson's {lo:.3f}-{hi:.3f}")
            nap = functions(proc)["nap"]
            at = [ln for (f, n), ln in pl.items() if n == sleep and f.endswith("/heat_wall.py")]
            check(len(at) == 1 and at[0][OFFS] == at[0][OFFT] == nap["off_cpu"] and
                  at[0][SELF] == at[0][TOTAL] == nap["on_cpu"] + nap["off_cpu"],
                  f"sleep line {at}, nap() {nap['on_cpu']} on and {nap['off_cpu']} off the CPU")
            heads = wd.js("return Array.from(document.querySelectorAll('table.lines tr:first-child"
                          " td')).map(c => c.textContent)")
            check("on-CPU self" in heads and "off-CPU self" in heads, f"columns {heads}")
            i = [m[0] for m in wd.js("return metrics")].index("off-CPU self samples")
            wd.js(f"const s = document.getElementById('metric'); s.value = '{i}';"
                  "s.dispatchEvent(new Event('change'));")
            most = max(pl.items(), key=lambda kv: kv[1][OFFS])
            dark, _ = darkest(wd)
            got = (P["files"][dark["file"]]["n"], dark["line"])
            check(got == most[0] and most[0][1] == sleep,
                  f"darkest by off-CPU {got}, most off-CPU {most[0]}, the sleep at line {sleep}")
            wd.screenshot(ARTIFACTS / "heatmap-wall.png")
    return (f"{proc['samples']} samples; sleep line {sleep}: {most[1][OFFS]} off-CPU, "
            f"as the JSON report")


@test
def heat_mem():
    """--mem: each line's bytes touched are the JSON report's memory lines',
    and shaded by bytes the darkest line is the one that touched most."""
    with Workloads() as wl, tempfile.TemporaryDirectory(prefix="pybpfprof-heat-") as out:
        page, rep, proc, pid = heat_run(wl, out, "heat_mem.py", 100, extra=("--mem",))
        touch, _ = source_line("heat_mem.py", "# HEAT_TOUCH")
        with WebDriver() as wd:
            P = open_page(wd, page)
            check(P["mem"], "the page does not know it has memory figures")
            pl = page_lines(P)
            want = {}
            for ln in proc["memory"]["lines"]:
                k = (ln["file"], ln["line"])
                want[k] = want.get(k, 0) + ln["touched"]
            for k, b in want.items():
                if k[1] >= 1 and b:
                    check(k in pl and pl[k][MEMS] == b,
                          f"{k}: page {pl.get(k, [0] * 15)[MEMS]} bytes, JSON {b}")
            check(sum(ln[MEMS] for ln in pl.values()) == sum(want.values()),
                  "the page's bytes are not the JSON report's")
            i = [m[0] for m in wd.js("return metrics")].index("bytes touched (self)")
            wd.js(f"const s = document.getElementById('metric'); s.value = '{i}';"
                  "s.dispatchEvent(new Event('change'));")
            most = max(pl.items(), key=lambda kv: kv[1][MEMS])
            dark, _ = darkest(wd)
            got = (P["files"][dark["file"]]["n"], dark["line"])
            check(got == most[0] and most[0][1] == touch,
                  f"darkest by bytes {got}, most bytes {most[0]}, the touching line {touch}")
            shown = wd.js("const r = document.querySelector('#hot tr.hot td');"
                          "return r.textContent")
            check(re.fullmatch(r"[\d.]+ (?:KiB|MiB|GiB)", shown or ""),
                  f"hottest line's bytes shown as {shown!r}")
    return f"line {touch}: {most[1][MEMS]} bytes touched, as the JSON report ({shown})"
