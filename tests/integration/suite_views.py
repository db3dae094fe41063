# First views (issue 31.3, 31.4, 31.7): the outputs read as a person reads
# them. The text report of a --native profile of numpy's FFT: every native
# name keeps its +0xOFFSET, no line is wider than the report's limit, the
# hottest Python lines and the hottest native frames are tables of their
# own, and the line-by-line tables are of the functions with the most time
# under them. The ground truth is the same run's JSON model.

import base64
import json
import os
import re
import shutil
import tempfile
import time
import zlib

from pathlib import Path

from harness import (PROFILER, RUN_SLACK, Skip, Workloads, check, expect_error, functions,
                     interpreter, load_report, process, run_profiler, source_line, test)
from suite_formats import ARTIFACTS, SPEEDSCOPE_DIR, WebDriver
from suite_native import native_profile_cpu
from suite_procs import tmux

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


def views_threads_run(d, outputs, light=0.3):
    """pybpfprof -F 199 -o OUTPUTS... -- python3.11 views_threads.py: the
    main thread spins LIGHT s of its CPU first, then its worker 3 x LIGHT."""
    py = interpreter("debian")
    args = ["-F", 199]
    for name in outputs:
        args += ["-o", Path(d) / name]
    r = run_profiler([*args, "--", *py.argv("views_threads.py", [light])],
                     timeout=60 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")


def speedscope_shown(path):
    """Opens the file in speedscope's own viewer (the npm package's
    index.html, through its file input): the text of its page."""
    index = SPEEDSCOPE_DIR / "dist/release/index.html"
    if not index.exists():
        raise Skip(f"{index} missing: tests/fetch-speedscope.sh fetches the npm package")
    with WebDriver() as wd:
        wd.s("POST", "/url", {"url": index.as_uri()})
        inputs = wd.find("input[type=file]")
        check(inputs, "speedscope's page has no file input")
        wd.s("POST", f"/element/{inputs[0]}/value", {"text": str(path)})
        deadline = time.monotonic() + 15
        while not wd.js("return document.title").endswith(" - speedscope"):
            check(time.monotonic() < deadline, "speedscope did not open the file: "
                  + wd.js("return document.body.innerText.slice(0, 300)"))
            time.sleep(0.1)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        wd.screenshot(ARTIFACTS / "views-speedscope-first.png")
        return wd.js("return document.body.innerText")


@test
def views_speedscope_busiest():
    """Issue 31.4: speedscope's own viewer opens a two-thread profile on the
    busier thread's profile (its worker spun 3x the main thread's CPU time,
    after it), where it opened on the first (the main thread's, 1/4 of the
    samples) before; the file's activeProfileIndex is the profile with the
    most samples."""
    with tempfile.TemporaryDirectory() as d:
        views_threads_run(d, ["p.speedscope.json"])
        path = Path(d) / "p.speedscope.json"
        doc = json.loads(path.read_text())
        profs = [(p["name"], sum(p["weights"])) for p in doc["profiles"]]
        check(len(profs) == 2, f"expected 2 profiles (one per thread): {profs}")
        best = max(range(len(profs)), key=lambda i: profs[i][1])
        check(best != 0 and profs[best][1] >= 2 * profs[0][1],
              f"the workload did not make the second thread the busiest: {profs}")
        text = speedscope_shown(path)
    check(profs[best][0] in text and profs[0][0] not in text,
          f"speedscope shows {text[:200]!r}; busiest {profs[best][0]!r}")
    check(doc.get("activeProfileIndex") == best,
          f"activeProfileIndex {doc.get('activeProfileIndex')}, busiest {best}: {profs}")
    return f"opens on {profs[best][0]!r} ({profs[best][1]} samples; the first {profs[0][1]})"


def wall_rows(screen):
    """top's off-CPU rows, each with the waiting lines under it:
    {pseudo-function: [(since-start %, "func (file:line)")]} and the rows'
    own since-start self %."""
    rows, own, cur = {}, {}, None
    for ln in screen.splitlines():
        m = re.match(r"\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)%\s+[\d.]+%\s+(<off-CPU: [^>]+>) ", ln)
        if m:
            cur = m.group(2)
            own[cur], rows[cur] = float(m.group(1)), []
            continue
        m = re.match(r"\s+[\d.]+%\s+([\d.]+)%\s+waiting at (.+)$", ln)
        if m and cur:
            rows[cur].append((float(m.group(1)), m.group(2).strip()))
        elif not m:
            cur = None
    return rows, own


@test
def views_top_wall():
    """Issue 31.4: `top --mode wall` in tmux (150x40) shows under each
    off-CPU row the lines that waited so, with their shares: views_wait.py's
    nap() line under <off-CPU: sleep>, take()'s os.read line under
    <off-CPU: I/O>; a row's waiting lines add up to at most its own share
    (before: the off-CPU rows alone, no line)."""
    if not shutil.which("tmux"):
        raise Skip("tmux not installed (Debian package tmux)")
    py = interpreter("debian")
    nap, _ = source_line("views_wait.py", "marker: nap")
    take, _ = source_line("views_wait.py", "marker: take")
    script = py.script_path("views_wait.py")
    want = {"<off-CPU: sleep>": f"nap ({script}:{nap})",
            "<off-CPU: I/O>": f"take ({script}:{take})"}
    session = f"pybpfprof-views-top-{os.getpid()}"
    with Workloads() as wl:
        p = wl.start(py, "views_wait.py")
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40",
             f"{PROFILER} top --mode wall -p {p.pid}; sleep 60")
        try:
            deadline, screen, rows = time.monotonic() + 20, "", {}
            while time.monotonic() < deadline:
                screen = tmux("capture-pane", "-p", "-t", session)
                rows, own = wall_rows(screen)
                if all(any(w == line for _, w in rows.get(k, [])) for k, line in want.items()):
                    break
                time.sleep(0.2)
            tmux("send-keys", "-t", session, "q")
        finally:
            tmux("kill-session", "-t", session, check_rc=False)
    for k, line in want.items():
        check(any(w == line for _, w in rows.get(k, [])),
              f"{line} not under {k}: {rows}; screen {screen[:1500]!r}")
        check(sum(s for s, _ in rows[k]) <= own[k] + 0.1 * len(rows[k]),
              f"{k}: its lines add up to more than its {own[k]}%: {rows[k]}")
    return "; ".join(f"{k}: {rows[k]}" for k in want)


def png_pixels(data):
    """A PNG's (width, height, rows of (r, g, b)): 8-bit RGB or RGBA, not
    interlaced, as Chromium's screenshots are."""
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h = int.from_bytes(head[0:4], "big"), int.from_bytes(head[4:8], "big")
    check(head[8] == 8 and head[9] in (2, 6) and head[12] == 0, f"PNG kind {head[8:13]!r}")
    bpp = 3 if head[9] == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


BUSIEST_JS = """
const own = n => { let s = n[2]; for (const c of n[1]) s -= c[2]; return s; };
let b = null, self = -1;
for (const d of document.querySelectorAll('.frame'))
  if (d.node[0] >= 0 && own(d.node) > self) { b = d; self = own(d.node); }
if (!b) return null;
const r = b.getBoundingClientRect();
let most = 0;
(function walk(x) { if (x[0] >= 0) most = Math.max(most, own(x)); x[1].forEach(walk); })(
  typeof tree === 'undefined' ? P.root : tree);
return {name: b.dataset.name, where: b.dataset.where, self: self, most: most,
  top: r.top, bottom: r.bottom, left: r.left, right: r.right, vh: innerHeight, vw: innerWidth,
  page: document.documentElement.scrollHeight, bar: document.getElementById('bar')
  .getBoundingClientRect().bottom, color: getComputedStyle(b).backgroundColor};
"""


def busiest_on_screen(wd, shot):
    """The box with the most self samples as JS sees it (checked to be the
    tree's node with the most), inside the viewport below the page's bar;
    then by the screenshot: most pixels along its inner top edge have its
    colour."""
    b = wd.js(BUSIEST_JS)
    check(b, "no box drawn")
    check(b["self"] == b["most"], f"the marked box has {b['self']} self samples, the most is "
          f"{b['most']}: {b}")
    check(b["top"] >= b["bar"] and b["bottom"] <= b["vh"] and b["left"] >= 0 and
          b["right"] <= b["vw"], f"busiest box {b['name']} at {b['top']:.0f}-{b['bottom']:.0f} px, "
          f"viewport {b['vh']} px (below the bar's {b['bar']:.0f}), page {b['page']} px")
    png = base64.b64decode(wd.s("GET", "/screenshot"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / shot).write_bytes(png)
    w, h, rows = png_pixels(png)
    scale = w / b["vw"]
    want = tuple(int(v) for v in re.findall(r"\d+", b["color"])[:3])
    y = int((b["top"] + 2) * scale)
    xs = [int((b["left"] + 2 + i * (b["right"] - b["left"] - 4) / 19) * scale) for i in range(20)]
    hits = sum(1 for x in xs if 0 <= y < h and 0 <= x < w and
               all(abs(p - q) <= 8 for p, q in zip(rows[y][x], want)))
    check(hits >= 12, f"{hits} of 20 pixels along the busiest box's top edge (y {y}) have its "
          f"colour {want} in the screenshot")
    return b


def views_flame_page(wd, path):
    """Opens the page with a 1280x800 viewport (the window's outer size
    adjusted by what its frame takes)."""
    wd.s("POST", "/window/rect", {"width": 1280, "height": 800})
    dw, dh = wd.js("return [1280 - innerWidth, 800 - innerHeight]")
    wd.s("POST", "/window/rect", {"width": 1280 + dw, "height": 800 + dh})
    wd.s("POST", "/url", {"url": Path(path).resolve().as_uri()})
    vp = wd.js("return [innerWidth, innerHeight]")
    check(vp == [1280, 800], f"viewport {vp}, not 1280x800")
    check(wd.js("return document.title") == "pybpfprof flame graph", "page did not load")


@test
def views_flame_first_screen():
    """Issue 31.4: the HTML flame graph of views_tower.py (a 90-frame tower
    with 1/4 of the CPU time, then the work two frames deep), opened in
    headless Chromium at 1280x800: the box with the most self samples
    (work()'s hottest line) is on the first screen, inside the viewport by JS
    and in its colour in the screenshot (before: the page opened at its top,
    the work ~1,500 px below). "Merge lines" merges work()'s lines into one
    box whose samples are the sum of its line boxes', and the first screen
    then shows that box."""
    with tempfile.TemporaryDirectory() as d:
        views_tower_run(d, ["p.html", "p.json"])
        rep = load_report(Path(d) / "p.json")
        with WebDriver() as wd:
            views_flame_page(wd, Path(d) / "p.html")
            b = busiest_on_screen(wd, "views-flame-first.png")
            check(b["name"] == "work", f"the busiest box is {b['name']} ({b['where']}), not work")
            lines = wd.js(FRAMES_JS, "work")
            merge = wd.find("#merge")
            check(merge, "no Merge lines checkbox")
            wd.s("POST", f"/element/{merge[0]}/click", {})
            one = wd.js(FRAMES_JS, "work")
            m = busiest_on_screen(wd, "views-flame-merged.png")
    check(len(lines) >= 2, f"work() drawn in {len(lines)} line boxes: {lines}")
    check(len(one) == 1 and one[0]["samples"] == sum(x["samples"] for x in lines) and
          abs(one[0]["width"] - sum(x["width"] for x in lines)) < 0.01 and
          ":" not in one[0]["where"].rsplit("/", 1)[-1],
          f"merged: {one}; line boxes {lines}")
    total = functions(process(rep, rep["processes"][0]["pid"]))["work"]["total"]
    check(one[0]["samples"] == total, f"merged work box {one[0]['samples']}, JSON total {total}")
    check(m["name"] == "work", f"merged: the busiest box is {m['name']}")
    return (f"{b['name']} ({b['where']}, {b['self']} self) at {b['top']:.0f} px of "
            f"{b['vh']} (page {b['page']} px); merged: {len(lines)} boxes -> 1 of "
            f"{one[0]['samples']} samples")


FRAMES_JS = """
return Array.from(document.querySelectorAll('.frame')).filter(d => d.dataset.name ===
  arguments[0]).map(d => ({width: parseFloat(d.style.width), samples: +d.dataset.samples,
  where: d.dataset.where}));
"""


def views_tower_run(d, outputs, extra=()):
    """pybpfprof -F 199 -o OUTPUTS... -- python3.11 views_tower.py."""
    py = interpreter("debian")
    args = ["-F", 199, *extra]
    for name in outputs:
        args += ["-o", Path(d) / name]
    r = run_profiler([*args, "--", *py.argv("views_tower.py", [0.3])], timeout=60 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")


@test
def views_merge_lines_files():
    """Issue 31.4: --merge-lines on views_tower.py: the folded stacks name
    work() once, "work (FILE)" with no line, on one line whose count is the
    JSON's total for work() (its four lines' stacks summed); the SVG draws
    one work box of that many samples, its place the file; the HTML page
    opens with Merge lines on and one work box; `pybpfprof report
    --merge-lines` writes the same folded stacks from the saved JSON."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        views_tower_run(d, ["p.folded", "p.svg", "p.html", "p.json"], ["--merge-lines"])
        rep = load_report(d / "p.json")
        total = functions(process(rep, rep["processes"][0]["pid"]))["work"]["total"]
        script = interpreter("debian").script_path("views_tower.py")
        folded = (d / "p.folded").read_text().splitlines()
        lined = [ln for ln in folded if re.search(r" \([^;]*:\d+\)(;| \d+$)", ln)]
        check(not lined, f"frames with a line: {lined[:2]}")
        work = [ln for ln in folded if f";work ({script}) " in ln]
        check(len(work) == 1 and int(work[0].rsplit(" ", 1)[1]) == total,
              f"work's folded lines {work}, JSON total {total}")
        boxes = re.findall(r'<g class="f"[^>]*data-n="work"[^>]*>', (d / "p.svg").read_text())
        check(len(boxes) == 1 and f'data-w="{total}"' in boxes[0] and
              f'data-l="{script}"' in boxes[0], f"SVG work boxes {boxes}, total {total}")
        r = run_profiler(["report", d / "p.json", "--merge-lines", "-o", d / "again.folded"],
                         timeout=30)
        check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
        again = (d / "again.folded").read_text().splitlines()
        check(sorted(again) == sorted(folded), "report --merge-lines differs from the run's")
        with WebDriver() as wd:
            views_flame_page(wd, d / "p.html")
            on = wd.js("return document.getElementById('merge').checked")
            one = wd.js(FRAMES_JS, "work")
    check(on and len(one) == 1 and one[0]["samples"] == total,
          f"page: Merge lines {on}, work boxes {one}, total {total}")
    return f"work: 1 folded line, 1 SVG box, 1 page box of {total} samples"


VIEWS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


@test
def views_text_width_hostile():
    """The text report's tables hold a hostile target's names within 160
    columns: views_long.py, run by nobody from a directory 640 characters
    deep, has four busy functions with 1500-character names (two-byte
    characters in some, one ending in "+0x41"); every line from "Functions
    by self time" on (a source note, which names its file whole, aside) is
    at most 160 columns, each long name cut with "...", each location
    ending in views_long.py:LINE (before: the paths made lines of 700+)."""
    py = interpreter("debian")
    with tempfile.TemporaryDirectory() as d, Workloads() as wl:
        deep = Path(d)
        os.chmod(deep, 0o755)
        for k in range(20):
            deep = deep / f"views_{k:02d}_{'d' * 23}"
            deep.mkdir()
            os.chmod(deep, 0o755)
        script = deep / "views_long.py"
        shutil.copy(Path(__file__).parent / "targets" / "views_long.py", script)
        os.chmod(script, 0o644)
        p = wl.start(py, script, prefix=VIEWS_NOBODY)
        r = run_profiler(["-p", p.pid, "-d", 2, "-F", 199, "--line-report=4"],
                         timeout=2 + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    lines = r.stdout.splitlines()
    start = [i for i, s in enumerate(lines) if "Functions by self time" in s]
    check(start, f"no functions table: {r.stdout[:500]!r}")
    body = [s for s in lines[start[0]:] if not s.startswith("    source:")]
    wide = [s for s in body if len(s) > TEXT_WIDTH]
    check(not wide, f"{len(wide)} lines over {TEXT_WIDTH} columns, e.g. {wide[0][:200]!r}..."
          if wide else "")
    rows = section(r.stdout, "Functions by self time")
    longs = [s for s in rows if re.search(r"  long\d_", s)]
    check(len(longs) == 4 and all("..." in s and re.search(r"views_long\.py:\d+$", s)
                                  for s in longs),
          f"the long functions' rows: {longs}")
    return (f"{len(body)} lines, the widest {max(len(s) for s in body)} columns; "
            f"e.g. {longs[0].strip()[:100]!r}")
