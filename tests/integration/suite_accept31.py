# Issue 31's acceptance: on a multiprocessing pool and on a
# thread-per-connection server of our own, the first screen of every format
# names the busiest process and thread by their roles and Python names. One
# run writes every format; each is then opened as a person opens it: the
# text's and the call tree's first 24 lines, the flame graph page in
# headless Chromium at 1280x800, the SVG's title rows, speedscope's own
# viewer, go tool pprof's -top and -tags, the JSON's first process. The ground truth is the
# target's: each task or connection measures its own thread's CPU
# (time.thread_time) and its process's (time.process_time) and prints them.
# Last, the same names from a hostile target (run by nobody) arrive cleaned.

import json
import os
import re
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from pathlib import Path

from harness import (RUN_SLACK, Skip, Workloads, check, interpreter, load_report,
                     read_stdout_until, run_profiler, sanity, test)
from suite_formats import ARTIFACTS, SPEEDSCOPE_DIR, WebDriver, go_pprof
from suite_report_view import proc_table
from suite_views import busiest_on_screen, views_flame_page

FIRST_LINES = 24  # a terminal's first screen of the text report
FREQ = 99
OUTPUTS = {"text": "p.txt", "json": "p.json", "folded": "p.folded", "html": "p.html",
           "svg": "p.svg", "speedscope": "p.speedscope.json", "pprof": "p.pb.gz",
           "tree": "p.tree"}


def accept_run(d, argv):
    """pybpfprof -F 99 with every output, the command launched: (its stdout,
    {format: path})."""
    outs = {k: Path(d) / v for k, v in OUTPUTS.items()}
    args = ["--subprocesses", "-F", FREQ]
    for path in outs.values():
        args += ["-o", path]
    r = run_profiler([*args, "--", *argv], timeout=120 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return r.stdout, outs


def result(stdout):
    m = re.search(r"^result (.*)$", stdout, re.M)
    check(m, f"the target printed no result: {stdout[-300:]!r}")
    return json.loads(m.group(1))


def pprof_views(path):
    """go tool pprof -top's lines above its table, and -tags' first value of
    each tag: (header lines, {tag: first value})."""
    views = [go_pprof(path, how, "-sample_index=samples") for how in ("-top", "-tags")]
    head = []
    for ln in views[0].splitlines():
        if re.match(r"\s*flat\s+flat%", ln) or ln.startswith("Showing nodes"):
            break
        head.append(ln.strip())
    first, cur = {}, None
    for ln in views[1].splitlines():
        m = re.match(r"\s*(\S+): Total ", ln)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"\s*[\d.]+ \(\s*[\d.]+%\): (.*)$", ln)
        if m and cur and cur not in first:
            first[cur] = m.group(1).strip()
    return head, first


def speedscope_first(wd, path, shot):
    """The file opened in speedscope's own viewer (its npm package's
    index.html): the text of the first screen it shows."""
    index = SPEEDSCOPE_DIR / "dist/release/index.html"
    if not index.exists():
        raise Skip(f"{index} missing: tests/fetch-speedscope.sh fetches the npm package")
    wd.s("POST", "/url", {"url": index.as_uri()})
    inputs = wd.find("input[type=file]")
    check(inputs, "speedscope's page has no file input")
    wd.s("POST", f"/element/{inputs[0]}/value", {"text": str(path)})
    deadline = time.monotonic() + 30
    while not wd.js("return document.title").endswith(" - speedscope"):
        check(time.monotonic() < deadline, "speedscope did not open the file: "
              + wd.js("return document.body.innerText.slice(0, 300)"))
        time.sleep(0.1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    wd.screenshot(ARTIFACTS / shot)
    return wd.js("return document.body.innerText")


def flame_first(wd, path, shot):
    """The flame graph page at 1280x800: the busiest box on the first screen
    (suite_views' check, JS and pixels), the bar's title, and the labels of
    the boxes inside the viewport."""
    views_flame_page(wd, path)
    b = busiest_on_screen(wd, shot)
    title = wd.js("return document.getElementById('title').textContent")
    seen = wd.js("""return Array.from(document.querySelectorAll('.frame')).filter(d => {
      const r = d.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight && r.width > 0; }).map(d => d.dataset.name);""")
    return b, title, seen


def check_first_screens(outs, wd, tag, proc, role, thread):
    """Every format names proc (its pid, "pid N (ROLE)") and its thread
    (tid, Python name) where a person looks first; returns what each showed."""
    label = f"pid {proc} ({role})"
    who = f"{label}, "
    th = f"its thread {thread[0]} ({thread[1]}), "
    shown = []
    # text: the first 24 lines
    text = outs["text"].read_text()
    first = text.splitlines()[:FIRST_LINES]
    n, rows, _, at = proc_table(text) if "\nprocesses: " in text else (1, [], None, None)
    if rows:
        check(at + 1 < FIRST_LINES and rows[0][0] == proc and rows[0][3] == role,
              f"text: the process table's first row {rows[0]} (line {at + 2}), the busiest "
              f"is {proc} ({role})")
    else:
        check(any(re.match(rf"pid {proc}\b", ln) for ln in first),
              f"text: pid {proc} not in the first {FIRST_LINES} lines: {first}")
    row = [ln for ln in first if re.match(rf"^    +\d+ +{thread[0]}  {re.escape(thread[1])}$", ln)]
    check(row, f"text: thread {thread[0]} ({thread[1]}) not in the first {FIRST_LINES} lines: "
          f"{first}")
    shown.append(f"text: {(rows[0][3] if rows else label)!r} and {row[0].strip()!r}")
    # the call tree (a text read in a terminal too): its first 24 lines, its first tree
    first = outs["tree"].read_text().splitlines()[:FIRST_LINES]
    pids = [ln for ln in first if re.match(r"pid \d+  ", ln)]
    check(any(ln.startswith(f"busiest: {who}") and th in ln for ln in first) and pids and
          pids[0].startswith(f"pid {proc}  "),
          f"call tree: its first {FIRST_LINES} lines {first} do not name {label} and thread "
          f"{thread} first")
    # JSON: the first process is the busiest, with its role and its busiest thread
    rep = load_report(outs["json"])
    sanity(rep, FREQ)
    p0 = rep["processes"][0]
    busiest = max(p0["threads"], key=lambda t: t["samples"])
    check(p0["pid"] == proc and p0.get("role") == role,
          f"JSON: the first process is {p0['pid']} ({p0.get('role')!r}), the busiest {label}; "
          f"order {[(p['pid'], p['samples']) for p in rep['processes']]}")
    check(busiest["tid"] == thread[0] and busiest.get("python_name") == thread[1],
          f"JSON: the busiest thread of {proc} is {busiest}, the target's {thread}")
    # folded: the heaviest line is the busiest process's, under its label when there are several
    lines = [ln.rsplit(" ", 1) for ln in outs["folded"].read_text().splitlines()]
    top = max(lines, key=lambda x: int(x[1]))[0]
    check(len(rep["processes"]) == 1 or top.startswith(label + ";"),
          f"folded: the heaviest stack {top[:120]!r} is not under {label!r}")
    # the flame graph page: the busiest box and the names in the first viewport
    b, title, seen = flame_first(wd, outs["html"], f"accept31-{tag}-{os.getpid()}-flame.png")
    check(who in title and th in title,
          f"flame graph: the bar says {title!r}, not {label} and thread {thread}")
    shown.append(f"flame graph: {b['name']} at {b['top']:.0f} px; pid box on screen "
                 f"{label in seen}")
    # SVG: its title rows
    root = ET.parse(outs["svg"]).getroot()
    texts = {t.get("id"): "".join(t.itertext())
             for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("id")}
    check(who in texts.get("busiest", "") and th in texts.get("busiest", ""),
          f"SVG: its title rows {[texts.get(k) for k in ('title', 'subtitle', 'busiest')]}")
    # speedscope: the profile its viewer opens on
    doc = json.loads(outs["speedscope"].read_text())
    name = f"{label} thread {thread[0]} ({thread[1]})"
    active = doc["profiles"][doc.get("activeProfileIndex", 0)]["name"]
    check(active == name, f"speedscope: activeProfileIndex is {active!r}, not {name!r}")
    page = speedscope_first(wd, outs["speedscope"], f"accept31-{tag}-{os.getpid()}-speedscope.png")
    check(name in page, f"speedscope shows {page[:300]!r}, not {name!r}")
    # pprof: -top's header and -tags' first values
    head, tags = pprof_views(outs["pprof"])
    check(any(ln.startswith(f"busiest: {who}") and th in ln for ln in head),
          f"go tool pprof -top: its header {head} names neither {label} nor thread {thread}")
    check(tags.get("thread_name") == thread[1] and tags.get("pid") == str(proc),
          f"go tool pprof -tags: first values {tags}, the busiest {proc} {thread}")
    shown.append(f"pprof: {[ln for ln in head if ln.startswith('busiest')][0]!r}")
    return shown


def truth_pool(stdout):
    """The target's own figures: (parent, busiest worker, its busiest thread
    (tid, name)), the busiest using at least twice the CPU of the next."""
    parent = int(re.search(r"^parent (\d+)$", stdout, re.M).group(1))
    done = result(stdout)
    cpu = {}
    for t in done:
        cpu[t["pid"]] = max(cpu.get(t["pid"], 0), t["process_cpu"])
    order = sorted(cpu, key=cpu.get, reverse=True)
    check(len(order) == 1 or cpu[order[0]] >= 2 * cpu[order[1]],
          f"the pool's workers' CPU {cpu}: no one busiest")
    heavy = max((t for t in done if t["pid"] == order[0]), key=lambda t: t["thread_cpu"])
    return parent, order[0], (heavy["tid"], heavy["name"]), cpu


@test
def accept_pool_first_screens():
    """Issue 31's acceptance, a multiprocessing pool (spawn, then fork) of
    three workers, one of them given 10x the others' CPU in a thread it
    names accept31-heavy: one run writes every format, and the first screen
    of each names that worker by its role and pid and that thread by its
    tid and Python name, as the target measured them (thread_time,
    process_time): the text's first 24 lines, the JSON's first process, the
    folded stacks' heaviest line, the flame graph page's bar at 1280x800 (its
    busiest box on screen), the SVG's title rows, the profile speedscope's
    viewer opens on, go tool pprof -top's header and -tags' first values.
    Before: the JSON listed the parent first, and neither the flame graphs'
    titles nor pprof's first view named a process or a thread."""
    py = interpreter("debian")
    shown = []
    with WebDriver() as wd:
        for method in ("spawn", "fork"):
            with tempfile.TemporaryDirectory() as d:
                out, outs = accept_run(d, py.argv("accept31_pool.py", [method]))
                parent, worker, thread, cpu = truth_pool(out)
                role = ("spawn worker of" if method == "spawn" else "fork of") + f" {parent}"
                seen = check_first_screens(outs, wd, f"pool-{method}", worker, role, thread)
            shown.append(f"{method}: {worker} ({role}, {cpu[worker]:.2f} s) " + "; ".join(seen))
    return " | ".join(shown)


@test
def accept_server_first_screens():
    """Issue 31's acceptance, a thread-per-connection server
    (socketserver.ThreadingTCPServer) with 60 connections at once, each
    served by a thread the server names accept31-conn-K, one of them doing
    1.5 s of CPU and the others 0.01 s: every format's first screen names
    the server and its busiest thread by tid and Python name, as the
    threads measured themselves (thread_time). Before: neither the flame
    graphs' titles nor pprof's first view named a thread."""
    py = interpreter("debian")
    with WebDriver() as wd, tempfile.TemporaryDirectory() as d:
        out, outs = accept_run(d, py.argv("accept31_server.py", [60]))
        done = result(out)
        check(len(done) == 60 and len({t["tid"] for t in done}) == 60,
              f"the server's connections were not served by 60 threads: {done[:3]}")
        by_cpu = sorted(done, key=lambda t: -t["thread_cpu"])
        check(by_cpu[0]["thread_cpu"] >= 10 * by_cpu[1]["thread_cpu"],
              f"no one busiest connection: {by_cpu[:2]}")
        server = int(re.search(r"^server (\d+)$", out, re.M).group(1))
        heavy = (by_cpu[0]["tid"], by_cpu[0]["name"])
        seen = check_first_screens(outs, wd, "server", server, "accept31_server.py", heavy)
    return f"{heavy[1]} ({by_cpu[0]['thread_cpu']:.2f} s of 60 threads): " + "; ".join(seen)


ACCEPT_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


@test
def accept_hostile_names_first_screens():
    """The names the first screens now show are a hostile target's: a
    process run by nobody from a file whose name has an escape, its busy
    thread named "accept31<ESC>[2J<LF>FORGED<U+202E></script>&". The flame
    graph page's title, the SVG's busiest row and go tool pprof -top's
    header name that thread with each control and bidi character as "?",
    the "</script>" kept as text (the page still has exactly its own two
    script ends, the SVG parses as XML), and no escape reaches pprof's
    terminal output. Before: none of them named a thread."""
    py = interpreter("debian")
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        script = Path(d) / "accept31_\x1b[2Jevil.py"
        script.write_bytes((Path(__file__).parent / "targets" / "accept31_evil.py").read_bytes())
        os.chmod(script, 0o644)
        p = wl.spawn([*ACCEPT_NOBODY, str(py.host_path()), str(script)], wait_ready=False,
                     stdin=subprocess.PIPE)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        tid = int(re.search(r"^tid (\d+)$", buf, re.M).group(1))
        outs = {k: Path(d) / f"p.{k}" for k in ("html", "svg", "pb.gz", "json")}
        r = run_profiler(["-p", p.pid, "-d", 2, "-F", FREQ,
                          *(a for f in outs.values() for a in ("-o", f))], 2 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        rep = load_report(outs["json"])
        page = outs["html"].read_text()
        svg = ET.parse(outs["svg"]).getroot()
        head, _ = pprof_views(outs["pb.gz"])
        top = pprof_top_text(outs["pb.gz"])
    check(rep["processes"][0]["samples"], "the spinning thread has no sample")
    want = f"; its thread {tid} (accept31?[2J?FORGED?</script>&), "
    start = page.index('<script type="application/json" id="profile">\n') + 46
    title = json.loads(page[start:page.index("\n</script>", start)])["title"]
    check(want in title and f"busiest: pid {p.pid} (" in title and
          not re.search("[\x00-\x1f\x7f\u202e]", title), f"flame graph title {title!r}")
    check(page.count("</script>") == 2, f"the page has {page.count('</script>')} script ends")
    row = [("".join(t.itertext())) for t in svg.iter("{http://www.w3.org/2000/svg}text")
           if t.get("id") == "busiest"]
    check(row and want in row[0] and f"busiest: pid {p.pid} (" in row[0] and
          not re.search("[\x00-\x1f\x7f\u202e]", row[0]), f"SVG busiest row {row}")
    line = [ln for ln in head if ln.startswith("busiest: ")]
    check(line and want in line[0] and f"busiest: pid {p.pid} (" in line[0],
          f"go tool pprof -top header {head}")
    check(not re.search("[\x1b\u202e]", top), "an escape or bidi control in pprof -top's output")
    return f"title, SVG and pprof: {line[0]!r}"


def pprof_top_text(path):
    """go tool pprof -top's whole output."""
    return go_pprof(path, "-top", "-sample_index=samples")
