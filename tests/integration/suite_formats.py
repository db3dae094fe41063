# Output formats, each opened by its real consumer: one profiling run of the
# list-membership workload (targets/formats_common.py) writes every format at
# once (-o given several times); then Python's pstats, protoc, headless
# Chromium (through chromedriver's W3C WebDriver API) and speedscope's
# published JSON schema read the files, and all of them must agree on the
# functions and their sample counts. The call tree and the call graph are
# checked against the JSON report of the same run of the 75/25 split
# workload, the graph drawn by Graphviz's dot.

import base64
import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

from pathlib import Path

from harness import (Fail, PROFILER, RUN_SLACK, Skip, TARGETS, Profiler, Workloads, available,
                     check, cpu_seconds, expect_error, functions, interpreter, line_table,
                     load_report, process, protoc_decode, rounds_from, run_profiler,
                     source_line, test, usdt_ticktock_profile)


FORMATS_SCRIPT = "formats_common.py"
FORMATS_FREQ = 499
FORMATS_SECONDS = 3
ARTIFACTS = Path(os.environ.get("PYBPFPROF_ARTIFACTS", "/tmp/pybpfprof-artifacts"))
SPEEDSCOPE_DIR = Path(os.environ.get("PYBPFPROF_SPEEDSCOPE",
                                     "/var/cache/pybpfprof/speedscope/package"))
FORMAT_FILES = {"text": "p.txt", "folded": "p.folded", "flame": "p.html",
                "speedscope": "p.speedscope.json", "pstats": "p.pstats", "pprof": "p.pb.gz",
                "json": "p.json"}
_formats_run = {}


def formats_run():
    """Profiles the workload once, writing every format; later calls reuse it."""
    if _formats_run:
        return _formats_run
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-formats-"))
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), FORMATS_SCRIPT)
        args = ["-p", p.pid, "-d", FORMATS_SECONDS, "-F", FORMATS_FREQ]
        for name in FORMAT_FILES.values():
            args += ["-o", out / name]
        r = run_profiler(args, timeout=FORMATS_SECONDS + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    check(r.stdout == "", f"stdout not empty with every report in a file: {r.stdout[:200]!r}")
    files = {k: out / v for k, v in FORMAT_FILES.items()}
    for k, f in files.items():
        check(f.exists() and f.stat().st_size > 0, f"{k}: {f} missing or empty")
    rep = load_report(files["json"])
    _formats_run.update(dir=out, files=files, pid=p.pid, json=rep,
                        samples=process(rep, p.pid)["samples"])
    check(_formats_run["samples"] > 100, f"only {_formats_run['samples']} samples")
    return _formats_run


def qualname_of(label):
    """'qualname (file:line)' -> qualname."""
    return label.rsplit(" (", 1)[0] if label.endswith(")") and " (" in label else label


def add(d, k, v):
    d[k] = d.get(k, 0) + v


# ------------------------------------------------------------------ text

@test
def formats_line_report():
    run = formats_run()
    line, text = source_line(FORMATS_SCRIPT, "# membership")
    code = text.split("#")[0].strip()           # "if x in b_list:"
    rows, notes = line_table(run["files"]["text"].read_text(), "count_common")
    check(rows, "no rows in the count_common section")
    hottest = max(rows, key=lambda r: r[1])
    check(hottest[0] == str(line), f"hottest line {hottest[0]}, expected {line}: {rows}")
    check(hottest[2] >= 85.0, f"line {line} has {hottest[2]}% of count_common, expected >= 85%")
    check(hottest[3].startswith(code), f"line {line} shows {hottest[3]!r}, expected {code!r}")
    check(not notes, f"source flagged: {notes}")
    return f"line {line} {hottest[2]}% of count_common, source {code!r}"


@test
def formats_line_report_changed_source():
    # A source file edited after the process started is flagged, and an
    # unreadable one is named, instead of showing lines that may not match.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "formats_edited_src.py"
        shutil.copy(TARGETS / FORMATS_SCRIPT, script)
        p = wl.start(interpreter("debian"), script)
        time.sleep(2.5)     # beyond the second of slack, in whole seconds of mtime
        script.write_text(script.read_text() + "\n# edited\n")
        r = run_profiler(["-p", p.pid, "-d", 1, "-F", 199, "--line-report=1"], timeout=1 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        check(f"{script} was modified after the process started" in r.stdout,
              f"no 'modified' note for {script}: {r.stdout[-600:]}")
        script.unlink()
        r = run_profiler(["-p", p.pid, "-d", 1, "-F", 199, "--line-report=1"], timeout=1 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        check(f"source: cannot read {script}: No such file or directory" in r.stdout,
              f"no 'cannot read' note for {script}: {r.stdout[-600:]}")
    return "edited source flagged, deleted source named"


# ---------------------------------------------------------------- pstats

PSTATS_CHECK = r"""
import io, json, pstats, sys
out = io.StringIO()
s = pstats.Stats(sys.argv[1], stream=out)
s.sort_stats("tottime").print_stats(10)
s.print_callers("count_common")
rows = {f"{k[2]}": {"cc": v[0], "nc": v[1], "tt": v[2], "ct": v[3],
                     "callers": sorted(c[2] for c in v[4])} for k, v in s.stats.items()}
order = [k[2] for k in s.fcn_list]
print(json.dumps({"rows": rows, "order": order, "text": out.getvalue()}))
"""


@test
def formats_pstats():
    run = formats_run()
    r = subprocess.run(["/usr/bin/python3", "-c", PSTATS_CHECK, run["files"]["pstats"]],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"python3 pstats failed: {r.stderr.strip()[-400:]}")
    res = json.loads(r.stdout)
    mine = [n for n in res["order"] if n in ("count_common", "checksum", "main", "make_lists",
                                             "<module>")]
    check(mine and mine[0] == "count_common", f"by tottime: {mine}, expected count_common first")
    cc = res["rows"]["count_common"]
    check(cc["callers"] == ["main"], f"count_common callers {cc['callers']}, expected main")
    check("was called by" in res["text"] and "main" in res["text"].split("was called by")[1],
          "print_callers shows no caller for count_common")
    # The interactive browser, as a user would drive it.
    cli = subprocess.run(["/usr/bin/python3", "-m", "pstats", run["files"]["pstats"]],
                         input="sort tottime\nstats 3\ncallers count_common\nquit\n",
                         capture_output=True, text=True, timeout=30)
    rows = [ln for ln in cli.stdout.splitlines() if re.match(r"\s+\d+\s+[\d.]+\s+[\d.]+", ln)]
    check(cli.returncode == 0 and rows and rows[0].endswith("(count_common)"),
          f"python3 -m pstats: sorted by tottime, first row {rows[:1]}: {cli.stderr[-300:]}")
    self_samples = functions(process(run["json"], run["pid"]))["count_common"]["self"]
    check(abs(cc["tt"] - self_samples / FORMATS_FREQ) < 1e-9,
          f"tottime {cc['tt']} != {self_samples} samples / {FORMATS_FREQ} Hz")
    return (f"count_common tottime {cc['tt']:.3f}s of {run['samples'] / FORMATS_FREQ:.3f}s, "
            f"first of {mine}; caller main")


# ----------------------------------------------------------------- pprof

def pprof_self(path):
    """Self samples per function name, total samples and the header figures."""
    prof = protoc_decode(gzip.decompress(Path(path).read_bytes()), "perftools.profiles.Profile")
    strings = prof["string_table"]
    funcs = {f["id"][0]: strings[f["name"][0]] for f in prof["function"]}
    locs = {l["id"][0]: funcs[l["line"][0]["function_id"][0]] for l in prof["location"]}
    self_, total, ns = {}, 0, 0
    for s in prof["sample"]:
        add(self_, locs[s["location_id"][0]], s["value"][0])
        total += s["value"][0]
        ns += s["value"][1]
    types = [(strings[v["type"][0]], strings[v["unit"][0]]) for v in prof["sample_type"]]
    return self_, total, dict(types=types, ns=ns, period=prof["period"][0],
                              duration=prof["duration_nanos"][0],
                              comments=[strings[i] for i in prof.get("comment", [])])


@test
def formats_pprof():
    run = formats_run()
    self_, total, hdr = pprof_self(run["files"]["pprof"])
    check(hdr["types"] == [("samples", "count"), ("cpu", "nanoseconds")],
          f"sample types {hdr['types']}")
    period = 10 ** 9 // FORMATS_FREQ
    check(hdr["period"] == period, f"period {hdr['period']}, expected {period}")
    check(hdr["ns"] == total * period, f"cpu ns {hdr['ns']} != {total} x {period}")
    check(abs(hdr["duration"] / 1e9 - FORMATS_SECONDS) < 1, f"duration {hdr['duration']} ns")
    check(total == run["samples"], f"pprof holds {total} samples, the run {run['samples']}")
    check(any(c.startswith(f"{total} samples (0 dropped, 0 truncated, 0 unresolved")
              for c in hdr["comments"]), f"no comment counting the samples: {hdr['comments']}")
    top = max(self_, key=self_.get)
    check(top == "count_common", f"top self function {top}: {self_}")
    return f"{total} samples, {len(self_)} functions, count_common {self_['count_common']}"


def go_tool():
    """The go command, for go tool pprof: on PATH (golang-go), or Debian's versioned one."""
    found = shutil.which("go") or next(iter(sorted(Path("/usr/lib").glob("go-*/bin/go"))), None)
    if not found:
        raise Skip("go not installed (Debian package golang-go): go tool pprof not run")
    return str(found)


def go_pprof(path, *args):
    """go tool pprof ARGS PATH's output (text), run with a HOME of its own
    (no saved settings, no downloads); a failure fails the test."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, PPROF_TMPDIR=home, GOFLAGS="", GOTOOLCHAIN="local")
        r = subprocess.run([go_tool(), "tool", "pprof", *args, str(path)], capture_output=True,
                           text=True, timeout=120, env=env)
    check(r.returncode == 0, f"go tool pprof {' '.join(args)}: {r.stderr.strip()[-300:]}")
    return r.stdout


@test
def formats_pprof_go():
    # pprof's own reader: go tool pprof's flat samples per function must be
    # the JSON report's self samples, and its total the run's samples.
    run = formats_run()
    out = go_pprof(run["files"]["pprof"], "-top", "-nodecount=1000", "-sample_index=samples")
    m = re.search(r"Total samples = (\d+)", out)
    check(m and int(m.group(1)) == run["samples"],
          f"go tool pprof total {m and m.group(1)}, the run {run['samples']}: {out[:300]}")
    flat = {}
    for ln in out.splitlines():
        row = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+)$", ln)
        if row and int(row.group(1)):
            add(flat, row.group(3).strip(), int(row.group(1)))
    jself = {name: f["self"] for name, f in functions(process(run["json"], run["pid"])).items()
             if f["self"]}
    check(flat == jself, f"go tool pprof flat {flat} != json self {jself}")
    check("<module>" in out, "go tool pprof lost the name <module>")
    return f"go tool pprof: {run['samples']} samples, flat per function = json self ({flat})"


# ------------------------------------------------------------ speedscope

def schema_errors(value, schema, root, path="$"):
    """Validates value against the JSON-schema keywords speedscope's schema
    uses ($ref, anyOf, type, const, enum, properties, required, items);
    an unknown keyword is an error, so a new schema cannot pass unchecked."""
    known = {"$ref", "anyOf", "type", "const", "enum", "properties", "required", "items",
             "title", "description", "$schema", "definitions", "additionalProperties"}
    unknown = set(schema) - known
    if unknown:
        return [f"{path}: schema keyword(s) {sorted(unknown)} not supported by this check"]
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return schema_errors(value, target, root, path)
    if "anyOf" in schema:
        errs = [schema_errors(value, s, root, path) for s in schema["anyOf"]]
        return [] if any(not e for e in errs) else [f"{path}: matches no anyOf branch: "
                                                     f"{[e[0] for e in errs]}"]
    types = {"object": dict, "array": list, "string": str, "boolean": bool}
    t = schema.get("type")
    if t == "number" and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        return [f"{path}: {value!r} is not a number"]
    if t in types and not isinstance(value, types[t]):
        return [f"{path}: {type(value).__name__} is not {t}"]
    if "const" in schema and value != schema["const"]:
        return [f"{path}: {value!r} != {schema['const']!r}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path}: {value!r} not in {schema['enum']}"]
    errs = []
    if isinstance(value, dict):
        for k in schema.get("required", []):
            if k not in value:
                errs.append(f"{path}: missing {k}")
        for k, sub in schema.get("properties", {}).items():
            if k in value:
                errs += schema_errors(value[k], sub, root, f"{path}.{k}")
        if schema.get("additionalProperties") is False:
            errs += [f"{path}: extra {k}" for k in value if k not in schema.get("properties", {})]
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errs += schema_errors(v, schema["items"], root, f"{path}[{i}]")
            if len(errs) > 5:
                break
    return errs


def speedscope_self(path):
    doc = json.loads(Path(path).read_text())
    frames = doc["shared"]["frames"]
    self_, total = {}, 0
    for prof in doc["profiles"]:
        check(len(prof["samples"]) == len(prof["weights"]), "samples and weights differ in length")
        check(prof["endValue"] == sum(prof["weights"]), f"endValue {prof['endValue']} != "
              f"sum of weights {sum(prof['weights'])}")
        for stack, w in zip(prof["samples"], prof["weights"]):
            add(self_, frames[stack[-1]]["name"], w)
            total += w
    return doc, self_, total


@test
def formats_speedscope():
    run = formats_run()
    schema_file = SPEEDSCOPE_DIR / "dist/release/file-format-schema.json"
    if not schema_file.exists():
        raise Skip(f"{schema_file} missing: .ci/run fetches the npm package speedscope")
    schema = json.loads(schema_file.read_text())
    doc, self_, total = speedscope_self(run["files"]["speedscope"])
    errs = schema_errors(doc, schema, schema)
    check(not errs, f"not valid against speedscope's schema: {errs[:5]}")
    check(total == run["samples"], f"speedscope holds {total} samples, the run {run['samples']}")
    check(max(self_, key=self_.get) == "count_common", f"top self function: {self_}")
    version = json.loads((SPEEDSCOPE_DIR / "package.json").read_text())["version"]
    try:
        shown = speedscope_viewer_self(run["files"]["speedscope"])
    except Skip as e:
        return f"valid against speedscope {version}'s schema; viewer not run: {e}"
    self_by_name = {k: v for k, v in self_.items() if v}
    check(shown == self_by_name, f"speedscope's sandwich view shows {shown}, the file holds "
          f"{self_by_name}")
    return (f"valid against speedscope {version}'s schema and imported by its viewer; "
            f"{total} samples, {len(doc['profiles'])} profile(s)")


def speedscope_viewer_self(path):
    """Imports the file into speedscope's own viewer (the npm package's
    index.html, through its file input) and reads the self samples per
    function from its Sandwich table."""
    with WebDriver() as wd:
        wd.s("POST", "/url", {"url": (SPEEDSCOPE_DIR / "dist/release/index.html").as_uri()})
        inputs = wd.find("input[type=file]")
        check(inputs, "speedscope's page has no file input")
        wd.s("POST", f"/element/{inputs[0]}/value", {"text": str(path)})
        deadline = time.monotonic() + 15
        while not wd.js("return document.title").endswith(" - speedscope"):
            check(time.monotonic() < deadline, "speedscope did not open the file: "
                  + wd.js("return document.body.innerText.slice(0, 300)"))
            time.sleep(0.1)
        wd.js("Array.from(document.querySelectorAll('div,span'))"
              ".filter(e => /Sandwich$/.test(e.textContent.trim())).pop().click()")
        text = ""
        while "Symbol Name" not in text:
            check(time.monotonic() < deadline, "no Sandwich table in speedscope")
            time.sleep(0.1)
            text = wd.js("return document.body.innerText")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        wd.screenshot(ARTIFACTS / "speedscope-sandwich.png")
    shown = {}
    # counts are shown with thousands separators: "1,210 (81%)"
    for total, self_, name in re.findall(r"([\d,]+) \([^)]*\)\s+([\d,]+) \([^)]*\)\s+(\S.*)",
                                         text.split("Symbol Name", 1)[1]):
        if int(self_.replace(",", "")):
            add(shown, name.strip(), int(self_.replace(",", "")))
    return shown


# ------------------------------------------------------------ flame graph

class WebDriver:
    """chromedriver driven through its W3C WebDriver HTTP API (urllib only)."""

    def __init__(self):
        for exe in ("chromedriver", "chromium"):
            if not shutil.which(exe):
                raise Skip(f"{exe} not installed (Debian packages chromium, chromium-driver)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([shutil.which("chromedriver"), f"--port={self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.sid = None
        deadline = time.monotonic() + 20
        while True:
            try:
                if self.call("GET", "/status")["ready"]:
                    break
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                self.close()
                raise Fail("chromedriver not ready after 20 s")
            time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": shutil.which("chromium"),
                                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                            "--disable-dev-shm-usage", "--window-size=1280,900",
                                            "--allow-file-access-from-files"]}}}}
        self.sid = self.call("POST", "/session", caps, timeout=60)["sessionId"]

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            raise Fail(f"WebDriver {method} {path}: {e.read().decode()[:300]}")

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.sid}{path}", body)

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        els = self.s("POST", "/elements", {"using": "css selector", "value": css})
        return [next(iter(e.values())) for e in els]

    def screenshot(self, path):
        Path(path).write_bytes(base64.b64decode(self.s("GET", "/screenshot")))

    def close(self):
        try:
            if self.sid:
                self.call("DELETE", f"/session/{self.sid}")
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


FLAME_SELF_JS = """
const self = {};
(function walk(n) {
  let s = n[2];
  for (const c of n[1]) { s -= c[2]; walk(c); }
  if (n[0] >= 0 && s) self[P.names[n[0]][0]] = (self[P.names[n[0]][0]] || 0) + s;
})(P.root);
return {self: self, total: P.root[2]};
"""

FRAME_JS = """
return Array.from(document.querySelectorAll('.frame')).filter(d => d.dataset.name === arguments[0])
  .map(d => ({width: d.style.width, samples: +d.dataset.samples, where: d.dataset.where}));
"""


def flame_self(wd, path):
    wd.s("POST", "/url", {"url": Path(path).resolve().as_uri()})
    check(wd.js("return document.title") == "pybpfprof flame graph", "page did not load")
    got = wd.js(FLAME_SELF_JS)
    return got["self"], got["total"]


@test
def formats_flamegraph():
    run = formats_run()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    line, _ = source_line(FORMATS_SCRIPT, "# membership")
    with WebDriver() as wd:
        page = run["files"]["flame"].read_text()
        refs = re.findall(r"(?:https?:|//[a-z]|src=|href=|@import|url\()", page)
        check(not refs, f"the page refers to something outside it: {refs[:5]}")
        self_, total = flame_self(wd, run["files"]["flame"])
        check(total == run["samples"], f"flame graph root {total}, the run {run['samples']}")
        title = wd.js("return document.getElementById('title').textContent")
        check(f"{total} samples (0 dropped, 0 truncated, 0 unresolved" in title,
              f"page title {title!r} does not count dropped, truncated, unresolved")
        root = wd.js(FRAME_JS, "all")
        check(root and root[0]["width"] == "100%" and root[0]["samples"] == total,
              f"root box {root}")
        hot = [f for f in wd.js(FRAME_JS, "count_common") if f["where"].endswith(f":{line}")]
        check(hot, f"no count_common box at line {line}")
        before = wd.js(FRAME_JS, "checksum")
        check(before and all(float(b["width"].rstrip("%")) < 50 for b in before),
              f"checksum boxes {before}: expected narrow before zooming")
        wd.screenshot(ARTIFACTS / "flamegraph.png")
        # Hover: the tooltip names the function, its file:line, samples and %.
        el = wd.find('.frame[data-name="count_common"]')[0]
        wd.s("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse", "actions": [
            {"type": "pointerMove", "origin": {"element-6066-11e4-a52e-4f735466cecf": el},
             "x": 0, "y": 0}]}]})
        tip = wd.js("const t = document.getElementById('tip');"
                    "return t.style.display === 'block' ? t.textContent : null")
        check(tip and "count_common" in tip and f"{FORMATS_SCRIPT}:" in tip and "samples (" in tip
              and "% of all)" in tip, f"tooltip {tip!r}")
        # Click zooms: the clicked box spans the whole width.
        wd.s("POST", f"/element/{wd.find('.frame[data-name=checksum]')[0]}/click", {})
        after = wd.js(FRAME_JS, "checksum")
        check(after and after[0]["width"] == "100%", f"checksum after click: {after}")
        check(not wd.js(FRAME_JS, "count_common"), "count_common still drawn while zoomed "
              "into checksum")
        wd.screenshot(ARTIFACTS / "flamegraph-zoomed.png")
        wd.s("POST", f"/element/{wd.find('#reset')[0]}/click", {})
        # Search highlights the matches and reports their share.
        wd.s("POST", f"/element/{wd.find('#search')[0]}/value", {"text": "count_common"})
        marked = wd.js("return Array.from(document.querySelectorAll('.frame.match'))"
                       ".map(d => d.dataset.name)")
        check(marked and set(marked) == {"count_common"}, f"highlighted: {marked}")
        matched = wd.js("return document.getElementById('matched').textContent")
        cc_total = functions(process(run["json"], run["pid"]))["count_common"]["total"]
        m = re.fullmatch(r"Matched: ([\d.]+)%", matched or "")
        # JavaScript rounds a tie up where Python rounds it to even
        check(m and rounds_from(m[1], 100 * cc_total / total, 1, stored=None),
              f"search says {matched!r}, expected {100 * cc_total / total:.3f}%")
        wd.screenshot(ARTIFACTS / "flamegraph-search.png")
    print(f"  flame graph screenshots in {ARTIFACTS}/", flush=True)
    return f"{total} samples; hover, click zoom and search work; screenshots in {ARTIFACTS}"


# -------------------------------------------------------- SVG flame graph

SVG_NS = "{http://www.w3.org/2000/svg}"
SVG_FREQ, SVG_SECONDS = 499, 3

SVG_BOXES_JS = """
return Array.from(document.querySelectorAll('g.f')).filter(g => g.getAttribute('data-n') ===
  arguments[0]).map(g => ({width: +g.querySelector('rect').getAttribute('width'),
  shown: g.style.display !== 'none', where: g.getAttribute('data-l'),
  above: g.classList.contains('above'), samples: +g.getAttribute('data-w'),
  title: g.querySelector('title').textContent}));
"""


def svg_frames(path):
    """The SVG parsed as XML (a parse error fails the test): its frames as
    (name, file:line, level, samples), and the subtitle."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise Fail(f"{path} is not well-formed XML: {e}")
    check(root.tag == f"{SVG_NS}svg", f"root element {root.tag}")
    frames = [(g.get("data-n"), g.get("data-l"), int(g.get("data-d")), int(g.get("data-w")))
              for g in root.iter(f"{SVG_NS}g") if g.get("class") == "f"]
    sub = [t for t in root.iter(f"{SVG_NS}text") if t.get("id") == "subtitle"]
    check(len(sub) == 1, "no subtitle")
    return frames, sub[0].text


@test
def formats_svg_flamegraph():
    # split.py: slow() takes about 75% of the samples. The SVG opened in
    # Chromium must draw slow's boxes with the JSON's share of the width,
    # zoom a click on it to the full width, find it by search with the same
    # share, and show its file:line on hover.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    slow_def, _ = source_line("split.py", "def slow(")
    hot_line = slow_def + 3
    check("sum(BLOCK)" in (TARGETS / "split.py").read_text().splitlines()[hot_line - 1],
          f"split.py:{hot_line} is not slow()'s sum(BLOCK) line")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        p = wl.start(interpreter("debian"), "split.py")
        # 500 samples make the widths below mean something: a loaded host
        # gives the workload less CPU, so the run is made longer, not judged.
        for secs in (SVG_SECONDS, 2 * SVG_SECONDS, 4 * SVG_SECONDS):
            r = run_profiler(["-p", p.pid, "-d", secs, "-F", SVG_FREQ, "-o", tmp / "p.svg",
                              "-o", tmp / "p.json"], timeout=secs + RUN_SLACK)
            check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
            rep = load_report(tmp / "p.json")
            proc = process(rep, p.pid)
            n = proc["samples"]
            if n > 500:
                break
        check(n > 500, f"only {n} samples in {secs} s")
        share = 100 * functions(proc)["slow"]["total"] / n
        frames, subtitle = svg_frames(tmp / "p.svg")
        check(subtitle.startswith(f"{n} samples (0 dropped, 0 truncated, 0 unresolved"),
              f"subtitle {subtitle!r}, the run has {n} samples")
        page = (tmp / "p.svg").read_text()
        refs = re.findall(r"(?:https?:(?!//www\.w3\.org/2000/svg)|src=|href=|@import|url\()",
                          page)
        check(not refs, f"the SVG refers to something outside it: {refs[:5]}")
        with WebDriver() as wd:
            shot = svg_browser_checks(wd, tmp / "p.svg", n, share, hot_line)
    return (f"{n} samples; slow {share:.1f}% in JSON, {shot}; hover, zoom and search work; "
            f"screenshots in {ARTIFACTS}")


def svg_browser_checks(wd, path, n, share, hot_line):
    wd.s("POST", "/url", {"url": Path(path).resolve().as_uri()})
    check(wd.js("return document.title") == "pybpfprof flame graph", "the SVG did not load")
    root = wd.js(SVG_BOXES_JS, "all")
    check(len(root) == 1 and root[0]["samples"] == n, f"root box {root}, {n} samples")
    full = root[0]["width"]
    slow = wd.js(SVG_BOXES_JS, "slow")
    drawn = 100 * sum(b["width"] for b in slow) / full
    check(abs(drawn - share) <= 1, f"slow's boxes are {drawn:.2f}% of the width, "
          f"the JSON says {share:.2f}%")
    wd.screenshot(ARTIFACTS / "svg-flamegraph.png")
    # Hover over slow's widest box: the details line and its tooltip name file:line.
    hot = max(slow, key=lambda b: b["width"])
    check(hot["where"].endswith(f"split.py:{hot_line}"), f"slow's widest box at {hot['where']}")
    els = wd.find('g.f[data-n="slow"] rect')
    el = els[[b["width"] for b in slow].index(hot["width"])]
    wd.s("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse", "actions": [
        {"type": "pointerMove", "origin": {"element-6066-11e4-a52e-4f735466cecf": el},
         "x": 0, "y": 0}]}]})
    details = wd.js("return document.getElementById('details').textContent")
    check(details.startswith(f"slow ({hot['where']}): {hot['samples']} samples, "),
          f"details line on hover: {details!r}")
    check(f"split.py:{hot_line}" in hot["title"], f"tooltip {hot['title']!r}")
    # Click zooms: the box spans the whole width, fast() is hidden, the ancestors stay.
    wd.s("POST", f"/element/{el}/click", {})
    after = [b for b in wd.js(SVG_BOXES_JS, "slow") if b["where"] == hot["where"]]
    check(after and abs(after[0]["width"] - full) < 0.01,
          f"slow after click: {after}, the full width is {full}")
    check(not any(b["shown"] for b in wd.js(SVG_BOXES_JS, "fast")),
          "fast still drawn while zoomed into slow")
    call_line, _ = source_line("split.py", "slow(3 * n)")
    main = [b for b in wd.js(SVG_BOXES_JS, "main") if b["shown"]]
    check(len(main) == 1 and main[0]["where"].endswith(f"split.py:{call_line}")
          and main[0]["above"] and abs(main[0]["width"] - full) < 0.01,
          f"main's boxes drawn while zoomed into slow: {main}; only its call of slow "
          f"(line {call_line}) should be, faded, at the full width")
    wd.screenshot(ARTIFACTS / "svg-flamegraph-zoomed.png")
    wd.s("POST", f"/element/{wd.find('#reset')[0]}/click", {})
    check(all(b["shown"] for b in wd.js(SVG_BOXES_JS, "fast")), "fast hidden after Reset Zoom")
    # Search: the prompt answered "^slow$"; the matched share is slow's.
    wd.js("window.prompt = () => '^slow$';")
    wd.s("POST", f"/element/{wd.find('#search')[0]}/click", {})
    marked = wd.js("return Array.from(document.querySelectorAll('g.f.match'))"
                   ".map(g => g.getAttribute('data-n'))")
    check(marked and set(marked) == {"slow"}, f"highlighted: {marked}")
    matched = wd.js("return document.getElementById('matched').textContent")
    m = re.fullmatch(r"Matched: (\d+\.\d)%", matched)
    check(m and abs(float(m.group(1)) - share) <= 1,
          f"search says {matched!r}, the JSON's share is {share:.2f}%")
    wd.screenshot(ARTIFACTS / "svg-flamegraph-search.png")
    return f"{drawn:.1f}% of the width, {matched}"


@test
def formats_svg_two_processes():
    # One section per process above the root, as in the HTML flame graph: the
    # boxes "pid N (comm)" hold each process's samples, and their functions.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        a = wl.start(interpreter("debian"), "spin.py", "alpha")
        b = wl.start(interpreter("debian"), "spin.py", "beta")
        out = Path(tmp) / "two.svg"
        r = run_profiler(["-p", a.pid, "-p", b.pid, "-d", 1.5, "-F", 199, "-o", out,
                          "-o", Path(tmp) / "two.json"], timeout=1.5 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        rep = load_report(Path(tmp) / "two.json")
        frames, _ = svg_frames(out)
    sections = {name: w for name, _, level, w in frames if level == 1}
    for p, fn in ((a, "spin_alpha"), (b, "spin_beta")):
        samples = process(rep, p.pid)["samples"]
        label = [s for s in sections if s.startswith(f"pid {p.pid} (")]
        check(len(label) == 1 and sections[label[0]] == samples,
              f"sections {sections}: pid {p.pid} has {samples} samples")
        check(any(name == fn for name, *_ in frames), f"{fn} not drawn")
    check(len(sections) == 2, f"sections {sections}")
    return f"sections {sections}"


@test
def formats_unknown_extension():
    # An -o name whose extension no format claims is refused before
    # profiling, with status 2 and one sentence; -f makes it a choice.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        bad = os.path.join(tmp, "profile.xyz")
        good = os.path.join(tmp, "ok.json")
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", good, "-o", bad], [], out=bad, rc=2)
        want = (f"pybpfprof: unknown extension '.xyz' in -o {bad}: use one of .txt, .json, "
                ".folded, .html, .speedscope.json, .speedscope, .pstats, .prof, .pb.gz, "
                ".pprof, .svg, .tree, .dot, .gv, .perfetto-trace, .pftrace, .trace.json, "
                ".heat.html, or give the format with -f")
        check(msg == want, f"message {msg!r}, expected {want!r}")
        check(t < 2, f"refused only after {t:.1f}s")
        check(not os.path.exists(good), f"{good} created by a refused run")
        check(os.listdir(tmp) == [], f"files left: {os.listdir(tmp)}")
        r = run_profiler(["-p", p.pid, "-d", 0.5, "-f", "json", "-o", bad],
                         timeout=0.5 + RUN_SLACK)
        check(r.returncode == 0, f"with -f json: exit {r.returncode}: {r.stderr.strip()}")
        check(process(load_report(bad), p.pid)["samples"] > 0, "with -f json: no samples")
    return f"{t:.2f}s: {msg}; with -f json the file is JSON"


# -------------------------------------------------------------- agreement

@test
def formats_agree():
    run = formats_run()
    folded = {}
    folded_total = 0
    for ln in run["files"]["folded"].read_text().splitlines():
        stack, n = ln.rsplit(" ", 1)
        add(folded, qualname_of(stack.split(";")[-1]), int(n))
        folded_total += int(n)
    views = {"folded": (folded, folded_total)}
    views["pprof"] = pprof_self(run["files"]["pprof"])[:2]
    _, ss_self, ss_total = speedscope_self(run["files"]["speedscope"])
    views["speedscope"] = (ss_self, ss_total)
    try:
        with WebDriver() as wd:
            views["flamegraph"] = flame_self(wd, run["files"]["flame"])
    except Skip as e:
        print(f"  flame graph left out: {e}", flush=True)
    jself = {name: f["self"] for name, f in functions(process(run["json"], run["pid"])).items()
             if f["self"]}
    for name, (self_, total) in views.items():
        check(total == run["samples"], f"{name}: {total} samples, the run {run['samples']}")
        check(self_ == jself, f"{name} self samples {self_} != json {jself}")
    return (f"{', '.join(views)} agree with json: {run['samples']} samples, "
            f"{len(jself)} functions with self time")


@test
def formats_output_checked_first():
    # Every -o is checked before profiling: a bad second one fails at once
    # and the good first one is not created.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        good = os.path.join(tmp, "ok.folded")
        bad = "/nonexistent-dir/flame.html"
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", good, "-o", bad], [bad], out=bad)
        check(t < 2, f"failed only after {t:.1f}s")
        check(not os.path.exists(good), f"{good} created by a failed run")
    return f"{t:.2f}s: {msg}"


@test
def formats_two_processes_sigint():
    # Two processes, no duration: SIGINT must still write every -o file.
    # -f covers the file whose ending names no format. Folded stacks start at
    # each process's root frame; speedscope has a profile per process thread.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        a = wl.start(interpreter("debian"), "spin.py", "alpha")
        b = wl.start(interpreter("debian"), "spin.py", "beta")
        tmp = Path(tmp)
        prof = Profiler(["-p", a.pid, "-p", b.pid, "-F", 199, "-f", "folded",
                         "-o", tmp / "p.data", "-o", tmp / "p.json",
                         "-o", tmp / "p.speedscope.json"], verbose=True)
        try:
            # SIGINT once both have had 0.3 s of CPU since the attach: a
            # loaded machine gives them less of the clock
            prof.wait_attached()
            cpu0 = [cpu_seconds(p.pid) for p in (a, b)]
            deadline = time.monotonic() + 60
            while (min(cpu_seconds(p.pid) - c for p, c in zip((a, b), cpu0)) < 0.3 and
                   time.monotonic() < deadline):
                check(prof.watch(0.05), f"pybpfprof exited early ({prof.rc})")
            prof.p.send_signal(signal.SIGINT)
            prof.wait(10)
        finally:
            prof.kill()
        rc, err = prof.rc, prof.stderr()
        check(rc == 0, f"exit {rc} after SIGINT: {err.strip()}")
        rep = load_report(tmp / "p.json")
        roots = {}
        for ln in (tmp / "p.data").read_text().splitlines():
            stack, n = ln.rsplit(" ", 1)
            frames = stack.split(";")
            check(len(frames) >= 2, f"folded line without a process root: {ln!r}")
            add(roots, (frames[0], qualname_of(frames[-1])), int(n))
        doc = json.loads((tmp / "p.speedscope.json").read_text())
    want = {}
    for pid, fn in ((a.pid, "spin_alpha"), (b.pid, "spin_beta")):
        proc = process(rep, pid)
        labels = {r for r, _ in roots if r.startswith(f"pid {pid} (") and r.endswith(")")}
        check(len(labels) == 1, f"folded roots for pid {pid}: {labels}")
        label = labels.pop()
        got = roots.get((label, fn), 0)
        self_ = functions(proc)[fn]["self"]
        check(got == self_, f"folded {label};...;{fn} holds {got}, json self {self_}")
        check(sum(v for (r, _), v in roots.items() if r == label) == proc["samples"],
              f"folded under {label} != {proc['samples']} samples")
        want[pid] = proc["samples"]
    by_pid = {}
    for p in doc["profiles"]:
        add(by_pid, int(p["name"].split()[1]), sum(p["weights"]))
    check(by_pid == want, f"speedscope profiles hold {by_pid}, json {want}")
    return f"after SIGINT: {want} samples under two process roots, in folded and speedscope"


@test
def formats_line_report_container():
    # Source text comes from the process's own root: a chrooted target's
    # file exists only inside its root, and an edit made there is noticed.
    chrooted = [b for b in ("trixie313", "sid315", "bullseye39") if available(b)]
    py = interpreter(chrooted[0] if chrooted else "trixie313")
    inside = py.script_path(FORMATS_SCRIPT)
    line, text = source_line(FORMATS_SCRIPT, "# membership")
    code = text.split("#")[0].strip()
    with Workloads() as wl:
        p = wl.start(py, FORMATS_SCRIPT)
        check(not os.path.exists(inside), f"{inside} exists on the host: the test would not "
              "show that the source is read through the process's root")
        args = ["-p", p.pid, "-d", 1, "-F", 199, "--line-report=1", "-n", 3]
        r = run_profiler(args, timeout=1 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        rows, notes = line_table(r.stdout, "count_common")
        check(not notes, f"notes on an unchanged, readable file: {notes}")
        hot = max(rows, key=lambda x: x[1])
        check(hot[0] == str(line) and hot[3].startswith(code),
              f"hottest row {hot}, expected line {line} showing {code!r}")
        time.sleep(2.5)     # beyond the second of slack
        edited = py.root / inside.lstrip("/")
        edited.write_text(edited.read_text() + "\n# edited\n")
        r = run_profiler(args, timeout=1 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        _, notes = line_table(r.stdout, "count_common")
        check(notes == [f"source: {inside} was modified after the process started: the text "
                        "shown may not be what runs"], f"notes after the edit: {notes}")
    return (f"python {chrooted[0]}: line {line} shows {code!r} read inside the root; "
            "the edit there flagged")


@test
def formats_hostile_source_file():
    """co_filename is target input: a code object "from /dev/zero" gets no
    source text, and the text report is written at once (reading /dev/zero
    as source would never end)."""
    with Workloads() as wl:
        p = wl.start("/usr/bin/python3", "hostile_filename.py")
        t0 = time.monotonic()
        r = run_profiler(["-p", p.pid, "-d", 1, "-F", 99], timeout=1 + RUN_SLACK)
        took = time.monotonic() - t0
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    check("spin_devzero" in r.stdout, "spin_devzero not in the report")
    check(took < 1 + RUN_SLACK / 2, f"the run took {took:.1f} s for -d 1")
    return f"report in {took:.1f} s with spin_devzero from /dev/zero"


@test
def formats_hostile_strings():
    """Strings from the target are hostile: a qualname, a file name, a source
    line, comm and the command line, all carrying terminal escape sequences
    (clear screen, set title, CSI as U+009B, a newline in the qualname that
    would fake a report line). The text and folded reports and stderr show
    them with every control character replaced by '?'."""
    with Workloads() as wl:
        p = wl.start("/usr/bin/python3", "hostile_strings.py", "\x1b]0;title\x07")
        text = run_profiler(["-p", p.pid, "-d", 2, "-F", 199, "--threads"],
                            timeout=2 + RUN_SLACK)
        folded = run_profiler(["-p", p.pid, "-d", 1, "-F", 199, "-f", "folded"],
                              timeout=1 + RUN_SLACK)
    for name, r in (("text", text), ("folded", folded)):
        check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr.strip()}")
        bad = sorted({c for c in r.stdout + r.stderr
                      if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})
        check(not bad, f"{name} report holds control characters {bad}")
    out = text.stdout
    for shown in ("spin?[2J?100.0% fake ?31m", "/nonexistent/?[31mred.py",
                  "n -= len('?]0;pwned?')", "?]0;title?", "py?[2J"):
        check(shown in out, f"{shown!r} not in the text report")
    stacks = [ln for ln in folded.stdout.splitlines() if ln]
    check(all(re.fullmatch(r".+ \d+", ln) for ln in stacks),
          f"a folded line is not 'stack count': {stacks[:3]}")
    check(any("spin?[2J?100.0% fake ?31m" in ln for ln in stacks),
          "the hostile qualname is not in the folded stacks")
    return (f"text ({len(out)} bytes) and folded ({len(stacks)} stacks): no control "
            f"characters; escapes shown as '?'")


# ------------------------------------------------- call tree and call graph

SPLIT_FREQ = 499
SPLIT_SECONDS = 4
_split_run = {}
TREE_LINE = re.compile(r"^((?:│  |   )*)(├─ |└─ |)\s*([\d.]+)%\s+([\d.]+)%  (.+?)"
                       r"(?:  (\S+?):(\d+))?(?:  \[\d+ library frames? hidden: .*\])?$")
TREE_HIDDEN = re.compile(r"  \[\d+ frames? hidden, each under [\d.]+%\]$")
DOT_NODE = re.compile(r'^\t\t"(p\d+_f\d+)" \[label="((?:[^"\\]|\\.)*)"')
DOT_EDGE = re.compile(r'^\t\t"(p\d+_f\d+)" -> "(p\d+_f\d+)" \[label="((?:[^"\\]|\\.)*)"')


def split_run():
    """The 75/25 split workload profiled once into json, tree and dot."""
    if _split_run:
        return _split_run
    out = Path(tempfile.mkdtemp(prefix="pybpfprof-graph-"))
    files = {"json": out / "s.json", "tree": out / "s.tree", "dot": out / "s.dot"}
    with Workloads() as wl:
        py = interpreter("debian")
        p = wl.start(py, "split.py")
        # enough samples for the shares below; longer on a loaded host
        for secs in (SPLIT_SECONDS, 2 * SPLIT_SECONDS, 4 * SPLIT_SECONDS):
            args = ["-p", p.pid, "-d", secs, "-F", SPLIT_FREQ]
            for f in files.values():
                args += ["-o", f]
            r = run_profiler(args, timeout=secs + RUN_SLACK)
            check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
            proc = process(load_report(files["json"]), p.pid)
            if proc["samples"] > 500:
                break
    check(proc["samples"] > 500, f"only {proc['samples']} samples in {secs} s")
    _split_run.update(files=files, pid=p.pid, proc=proc, fns=functions(proc),
                      script=py.script_path("split.py"))
    return _split_run


def parse_tree(text):
    """The tree's lines as dicts (depth, total, self, name, file, line, parent index)."""
    rows, stack = [], []
    body = text.split("total%   self%  function  file:line\n", 1)
    check(len(body) == 2, f"no tree header in {text[:300]!r}")
    for ln in body[1].splitlines():
        if not ln or ln.startswith("pid "):
            break
        if TREE_HIDDEN.search(ln):
            continue
        m = TREE_LINE.match(ln)
        check(m, f"tree line {ln!r} is not 'total% self%  qualname  file:line'")
        depth = len(m.group(1)) // 3 + (1 if m.group(2) else 0)
        del stack[depth:]
        rows.append({"depth": depth, "total": float(m.group(3)), "self": float(m.group(4)),
                     "name": m.group(5), "file": m.group(6),
                     "parent": stack[-1] if stack else None})
        stack.append(len(rows) - 1)
    return rows


@test
def formats_tree_split():
    run = split_run()
    text = run["files"]["tree"].read_bytes().decode()
    check("\x1b" not in text, "colours in a file")
    rows = parse_tree(text)
    n = run["proc"]["samples"]
    got = {}
    for name in ("slow", "fast"):
        mine = [r for r in rows if r["name"] == name]
        check(len(mine) == 1, f"{name} appears {len(mine)} times in the tree:\n{text}")
        r = mine[0]
        check(r["file"] == run["script"], f"{name} in {r['file']}, expected {run['script']}")
        parent = rows[r["parent"]] if r["parent"] is not None else None
        check(parent and parent["name"] == "main" and parent["file"] == run["script"],
              f"{name}'s caller in the tree is {parent}, expected main")
        want = {k: 100 * run["fns"][name][k] / n for k in ("total", "self")}
        for k in ("total", "self"):
            check(abs(r[k] - want[k]) <= 1.0,
                  f"{name} {k} {r[k]}% in the tree, {want[k]:.2f}% in the JSON report")
        got[name] = r["total"]
    check(got["slow"] > 2 * got["fast"], f"slow {got['slow']}%, fast {got['fast']}%")
    root = rows[0]
    check(root["name"] == "<module>" and root["depth"] == 0 and root["total"] >= 99,
          f"root {root}")
    return f"slow {got['slow']}%, fast {got['fast']}% under main, as in the JSON report"


def pty_run(args, env):
    """The profiler with stdout on a terminal (a pty): what it printed there."""
    master, slave = os.openpty()
    try:
        p = subprocess.Popen([str(PROFILER), *map(str, args)], stdout=slave,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        os.close(slave)
        slave = None
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            out += chunk
        p.wait(timeout=RUN_SLACK)
        check(p.returncode == 0, f"exit {p.returncode}: {p.stderr.read().decode()[-300:]}")
        p.stderr.close()
        return out.decode()
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)


@test
def formats_tree_terminal():
    """Colours on a terminal, none with NO_COLOR, TERM=dumb or a pipe; the
    shares are the same either way."""
    sgr = re.compile(r"\x1b\[\d+m")
    with Workloads() as wl:
        p = wl.start(interpreter("debian"), "split.py")
        args = ["-p", p.pid, "-d", 1, "-F", 199, "-f", "tree"]
        base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
        color = pty_run(args, {**base, "TERM": "xterm-256color"})
        no_color = pty_run(args, {**base, "TERM": "xterm-256color", "NO_COLOR": "1"})
        dumb = pty_run(args, {**base, "TERM": "dumb"})
        piped = run_profiler(args, timeout=1 + RUN_SLACK)
    check(piped.returncode == 0, f"exit {piped.returncode}: {piped.stderr.strip()}")
    check(sgr.search(color), f"no colours on a terminal: {color[:300]!r}")
    check(not sgr.sub("", color).count("\x1b"), "escape sequences other than colours")
    for name, out in (("NO_COLOR", no_color), ("TERM=dumb", dumb), ("a pipe", piped.stdout)):
        check("\x1b" not in out, f"colours with {name}: {out[:300]!r}")
    plain = sgr.sub("", color).replace("\r\n", "\n")
    rows = parse_tree(plain)
    check(any(r["name"] == "slow" for r in rows), f"no slow in the coloured tree:\n{plain}")
    return "colours on a terminal only, not with NO_COLOR, TERM=dumb or a pipe"


def parse_dot(text):
    """Nodes {id: [label lines]} and edges {(a, b): [label lines]} of our DOT."""
    nodes, edges = {}, {}
    for ln in text.splitlines():
        m = DOT_EDGE.match(ln)
        if m:
            edges[(m.group(1), m.group(2))] = m.group(3).split("\\n")
            continue
        m = DOT_NODE.match(ln)
        if m:
            nodes[m.group(1)] = m.group(2).split("\\n")
    return nodes, edges


def render_dot(path):
    """dot -Tsvg: must succeed with nothing on stderr. The SVG's text."""
    if not shutil.which("dot"):
        raise Skip("no Graphviz dot (tests/install-deps.sh installs graphviz)")
    svg = Path(str(path) + ".svg")
    r = subprocess.run(["dot", "-Tsvg", str(path), "-o", str(svg)], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and not r.stderr, f"dot exit {r.returncode}: {r.stderr[-500:]}")
    text = svg.read_text()
    check(text.count("<g id=\"node") >= 2, "no nodes in the SVG dot drew")
    return text


@test
def formats_dot_split():
    run = split_run()
    text = run["files"]["dot"].read_text()
    svg = render_dot(run["files"]["dot"])
    nodes, edges = parse_dot(text)
    by_name = {lab[0]: (nid, lab) for nid, lab in nodes.items()}
    n = run["proc"]["samples"]
    for name in ("slow", "fast", "main"):
        check(name in by_name, f"no node for {name}: {sorted(by_name)}")
        nid, lab = by_name[name]
        check(lab[1].startswith(run["script"] + ":"), f"{name} at {lab[1]}")
        for k, line in (("total", lab[2]), ("self", lab[3])):
            want = 100 * run["fns"][name][k] / n
            got = float(line.split()[1].rstrip("%"))
            check(line.startswith(k + " ") and abs(got - want) <= 0.006,
                  f"{name}: {line!r} in the DOT, {k} {want:.3f}% in the JSON report")
        check(f">{name}</text>" in svg, f"{name} not drawn in the SVG")
    for name in ("slow", "fast"):
        e = edges.get((by_name["main"][0], by_name[name][0]))
        want = 100 * run["fns"][name]["total"] / n
        check(e and abs(float(e[0].rstrip("%")) - want) <= 0.006,
              f"edge main -> {name}: {e}, expected {want:.2f}% (all of {name}'s samples)")
    shown = sum(1 for f in run["fns"].values() if 100 * f["total"] / n >= 1.0)
    check(len(nodes) == shown, f"{len(nodes)} nodes, {shown} functions at 1% or more")
    hidden = len(run["fns"]) - shown
    check((f"; {hidden} function" in text) == bool(hidden),
          f"the label does not count the {hidden} functions left out")
    return (f"{len(nodes)} nodes, {len(edges)} edges, {hidden} pruned; shares as in the JSON "
            f"report; drawn by dot without a warning")


@test
def formats_dot_calls_bullseye39():
    """--calls on Debian bullseye's CPython 3.9 (USDT function probes): the
    boxes and edges carry the workload's exact calls (usdt_ticktock.py: work
    calls tick N times, tock 2N, catch 3 times, each catch calls fail once,
    recurse(10) calls itself 10 times), and dot draws the graph."""
    n = 5000
    py = interpreter("bullseye39")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.dot"
        usdt_ticktock_profile(wl, py, n, ["-d", 30, "--calls", "--prune", 0, "-o", path])
        text = path.read_text()
        render_dot(path)
    nodes, edges = parse_dot(text)
    ids = {lab[0]: nid for nid, lab in nodes.items()}
    want_nodes = {"tick": n, "tock": 2 * n, "catch": 3, "fail": 3}
    got_nodes = {k: next((ln for ln in nodes[ids[k]] if ln.endswith(" calls")), None)
                 if k in ids else None for k in want_nodes}
    check(got_nodes == {k: f"{v} calls" for k, v in want_nodes.items()},
          f"call counts on the boxes {got_nodes}, expected {want_nodes}")
    want = {("work", "tick"): n, ("work", "tock"): 2 * n, ("work", "catch"): 3,
            ("catch", "fail"): 3, ("work", "recurse"): 1, ("recurse", "recurse"): 10}
    got = {}
    for (a, b) in want:
        e = edges.get((ids.get(a), ids.get(b)))
        got[(a, b)] = int(e[1].split()[0]) if e and len(e) > 1 else None
    check(got == want, f"calls on the edges {got}, expected {want}")
    return f"edges {', '.join(f'{a}->{b} {c}' for (a, b), c in got.items())}; drawn by dot"


@test
def formats_merge_labels():
    """--merge's one section is named as the processes it holds, in every
    format that names a section: the text and tree headers count them
    ("2 processes merged") and list their pids, no section is "pid 0", the
    call graph's cluster and speedscope's profiles say merged, pprof gives
    no pid label, JSON lists them ("merged"), and `report` reads the saved
    profile back into the same text."""
    from suite_report import report
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        a = wl.start(interpreter("debian"), "spin.py", "alpha")
        b = wl.start(interpreter("debian"), "spin.py", "beta")
        tmp = Path(tmp)
        names = ("p.txt", "p.tree", "p.dot", "p.json", "p.speedscope.json", "p.pb.gz")
        args = ["-p", a.pid, "-p", b.pid, "-d", 1, "-F", 199, "--merge"]
        for name in names:
            args += ["-o", tmp / name]
        r = run_profiler(args, timeout=1 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        files = {n: (tmp / n).read_bytes() for n in names}
        r = report([tmp / "p.json", "-o", tmp / "again.txt"])
        check(r.returncode == 0, f"report: {r.stderr.strip()}")
        again = (tmp / "again.txt").read_bytes()
        pb = protoc_decode(gzip.decompress(files["p.pb.gz"]), "perftools.profiles.Profile")
    pids = f"{a.pid}, {b.pid}"
    text = files["p.txt"].decode()
    head = text.splitlines()[:2]
    check(", 2 processes merged, " in head[0] and head[1].startswith(f"pids: {pids}, merged"),
          f"text header: {head}")
    section = f"2 processes merged: {a.pid} {b.pid}"
    tree = files["p.tree"].decode()
    check(", call tree, 2 processes merged, " in tree.splitlines()[0],
          f"tree header: {tree.splitlines()[0]}")
    dot = files["p.dot"].decode()
    check(f'label="{section}\\n' in dot, "the call graph's cluster is not labelled merged")
    for name, body in (("text", text), ("tree", tree), ("dot", dot)):
        check(f"\n{section}\n" in body or name == "dot", f"{name}: no section {section!r}")
        check("pid 0" not in body, f"{name} names a section pid 0")
    doc = json.loads(files["p.speedscope.json"])
    check(all(p["name"].startswith("2 processes merged, thread ") for p in doc["profiles"]),
          f"speedscope profiles: {[p['name'] for p in doc['profiles']]}")
    strings = pb["string_table"]
    keys = {strings[lab["key"][0]] for s in pb["sample"] for lab in s.get("label", [])}
    check("pid" not in keys and "tid" in keys, f"pprof labels: {keys}")
    rep = json.loads(files["p.json"])
    check(rep["model"]["merged"] == [a.pid, b.pid] and
          rep["processes"][0]["merged"] == [a.pid, b.pid],
          f"JSON: model.merged {rep['model'].get('merged')}, "
          f"processes[0].merged {rep['processes'][0].get('merged')}")
    check(again == files["p.txt"], "report's text of the saved profile differs from the run's")
    return f"{head[0]}; {section}"
