"""Strings and files a user or a target hands in (issue 28, points 6, 8, 9).

A target run by nobody (targets/strings_hostile.py) whose every string a
report shows is hostile: it runs from a directory whose name holds line
breaks, an escape sequence, a bidi override, U+2028 and the byte 0xE9 (so do
its command line and file names), by an interpreter copied under such a name
(its exe and first comm), with such arguments, a comm and a thread name of the
kind, functions compiled as from files named with CR, VT, FF and NEL, a
qualname with U+2029, a hot source line holding ESC, U+2028 and U+202E, and an
import of such a module. Every line break it puts anywhere is followed by
FORGED. No line of any text output (each format of the run and of `report`,
`diff`, `dump`, the messages on stderr) may start with FORGED, and none may
hold a control or bidi character or a byte that is not UTF-8; pprof, a push
and an OTLP request decode strictly with protoc, and go tool pprof reads the
file. Then files handed to `report` and `diff`: a crafted 32 MiB JSON stays
within the memory REPORT_LOAD_PEAK states, while large real profiles (CPU,
--mem, --mode wall) load and are written again byte for byte.
"""

import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from agent_receiver import OTLP_PROTO_DIR, OTLP_REQUEST, OTLP_SERVICE, Receiver
from harness import (PROFILER, RUN_SLACK, TARGETS, Profiler, Skip, Workloads, check, interpreter,
                     own_peak_kib, protoc_decode, test, vm_hwm_kib)

STR_DROP = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
# Every line break a string holds is followed by this: a line starting with it is forged.
MARK = "FORGED"
# The directory the target runs from, and its interpreter's name there (bytes: 0xE9 is no UTF-8).
STR_DIR = b"caf\xe9\nFORGED\x1b[2J\xe2\x80\xaeFORGED\xe2\x80\xa8FORGED"
STR_EXE = b"py\nFORGED\xe2\x80\xae"
STR_ARGS = ("arg\nFORGED", "\x1b]0;title\x07", "\u202eFORGED", os.fsdecode(b"caf\xe9"),
            "\u2028FORGED", "\x85FORGED")
STR_FREQ = 199


def forbidden(c, allowed="\n"):
    """What no text output may hold: C0 (but what the format keeps), DEL, C1,
    the bidi controls, the line and paragraph separators."""
    o = ord(c)
    return c not in allowed and (o < 0x20 or 0x7F <= o <= 0x9F or o in (0x61C, 0x200E, 0x200F)
                                 or 0x2028 <= o <= 0x202E or 0x2066 <= o <= 0x2069)


def check_text(name, data, min_marks=1, allowed="\n"):
    """data (bytes) as a text output: UTF-8, nothing forbidden, no line that
    starts with the mark (Python's splitlines breaks at every line break
    there is), and the target's strings there (at least min_marks marks)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise_fail(f"{name}: not UTF-8 at byte {e.start}: {data[max(0, e.start - 40):e.start + 20]!r}")
    bad = sorted({c for c in text if forbidden(c, allowed)})
    check(not bad, f"{name}: holds {[hex(ord(c)) for c in bad]}: "
          f"{[ln for ln in text.splitlines() if any(c in ln for c in bad)][:2]!r}")
    forged = [ln for ln in text.splitlines() if ln.lstrip().startswith(MARK)]
    check(not forged, f"{name}: forged lines {forged[:3]!r}")
    n = text.count(MARK)
    check(n >= min_marks, f"{name}: {n} of the target's marks, expected at least {min_marks}")
    return text


def raise_fail(msg):
    check(False, msg)


def check_strings(name, strings, allowed="\t"):
    """Decoded strings of a machine format (JSON, protobuf): nothing forbidden."""
    bad = [s for s in strings if any(forbidden(c, allowed) for c in s)]
    check(not bad, f"{name}: strings holding control or bidi characters: {bad[:3]!r}")


def run_bytes(args, timeout, prefix=()):
    """pybpfprof run to completion: (exit status, stdout bytes, stderr bytes)."""
    argv = [*prefix, str(PROFILER), *map(str, args)]
    try:
        r = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise_fail(f"`{' '.join(argv)}` still running after {timeout}s")
    return r.returncode, r.stdout, r.stderr


def start_hostile(wl, tmp):
    """strings_hostile.py started by nobody from its hostile directory, by
    the Debian interpreter copied there under a hostile name: the process."""
    py = interpreter("debian")
    os.chmod(tmp, 0o755)
    d = os.path.join(os.fsencode(tmp), STR_DIR)
    os.mkdir(d, 0o755)
    exe = os.path.join(d, STR_EXE)
    shutil.copy(py.host_path(), exe)
    os.chmod(exe, 0o755)
    script = os.path.join(d, b"strings_hostile.py")
    shutil.copy(TARGETS / "strings_hostile.py", script)
    os.chmod(script, 0o644)
    return wl.spawn([*STR_DROP, os.fsdecode(exe), os.fsdecode(script), *STR_ARGS])


STR_FILES = {"text": "t.txt", "json": "t.json", "folded": "t.folded", "flame": "t.html",
             "speedscope": "t.speedscope.json", "pstats": "t.pstats", "pprof": "t.pb.gz",
             "svg": "t.svg", "tree": "t.tree", "dot": "t.dot"}


def check_json(name, data):
    """A JSON output: valid whatever the target's strings, safe to print."""
    check_text(name, data, min_marks=0)
    doc = json.loads(data.decode("utf-8"))
    found = []

    def walk(v):
        if isinstance(v, str):
            found.append(v)
        elif isinstance(v, dict):
            found.extend(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(doc)
    return doc, found


def check_flame(data):
    """The HTML flame graph: its profile's names as the text report shows them."""
    text = check_text("flamegraph", data, min_marks=1)
    m = re.search(r'<script type="application/json" id="profile">(.*?)</script>', text, re.S)
    check(m, "no profile in the flame graph")
    names = [s for entry in json.loads(m.group(1))["names"] for s in entry if isinstance(s, str)]
    check_strings("flamegraph names", names)
    check(any(MARK in s for s in names), "no hostile name in the flame graph")


def check_pprof(path):
    """pprof decoded strictly (protoc, UTF-8), then read by go tool pprof."""
    prof = protoc_decode(gzip.decompress(Path(path).read_bytes()), "perftools.profiles.Profile",
                         errors="strict")
    strings = prof["string_table"]
    check_strings("pprof strings", strings)
    check(any("caf\ufffd" in s for s in strings), "no caf\\ufffd in the pprof strings")
    go = shutil.which("go") or next(iter(sorted(Path("/usr/lib").glob("go-*/bin/go"))), None)
    if not go:
        return "go not installed (golang-go): not read by go tool pprof"
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, PPROF_TMPDIR=home, GOFLAGS="", GOTOOLCHAIN="local")
        r = subprocess.run([str(go), "tool", "pprof", "-top", "-nodecount=1000", str(path)],
                           capture_output=True, timeout=120, env=env)
    check(r.returncode == 0, f"go tool pprof failed: {r.stderr.decode(errors='replace')[-300:]}")
    check_text("go tool pprof -top", r.stdout)
    return "read by go tool pprof"


def check_pstats(path):
    """pstats' own print_stats of the file: what a user sees of it."""
    code = "import pstats, sys; pstats.Stats(sys.argv[1]).sort_stats('tottime').print_stats()"
    r = subprocess.run(["python3", "-c", code, str(path)], capture_output=True, timeout=60)
    check(r.returncode == 0, f"pstats failed: {r.stderr.decode(errors='replace')[-300:]}")
    check_text("pstats print_stats", r.stdout)


def check_dot(path):
    """The DOT file (tabs are its indentation), and Graphviz reads it."""
    check_text("dot", Path(path).read_bytes(), allowed="\n\t")
    if not shutil.which("dot"):
        return
    r = subprocess.run(["dot", "-Tsvg", str(path), "-o", str(path) + ".svg"],
                       capture_output=True, timeout=60)
    check(r.returncode == 0 and not r.stderr, f"dot: {r.stderr.decode(errors='replace')[-300:]}")


def check_run_files(d, pid):
    """Every format the run wrote."""
    f = {k: Path(d) / v for k, v in STR_FILES.items()}
    for name in ("text", "folded", "tree"):
        check_text(name, f[name].read_bytes())
    for ln in f["folded"].read_text().splitlines():
        check(re.fullmatch(r"[^\n]+ \d+", ln), f"folded line {ln!r} is not 'stack count'")
    doc, strings = check_json("json", f["json"].read_bytes())
    proc = [p for p in doc["processes"] if p["pid"] == pid]
    check(proc and "arg\nFORGED" in proc[0]["cmdline"],
          f"the JSON does not keep the command line as it was: {proc and proc[0]['cmdline']!r}")
    check_json("speedscope", f["speedscope"].read_bytes())
    check_flame(f["flame"].read_bytes())
    ET.fromstring(check_text("svg", f["svg"].read_bytes()).encode())
    check_dot(f["dot"])
    check_pstats(f["pstats"])
    return check_pprof(f["pprof"])


def check_rerendered(d, pid, other):
    """`report` of the saved profile in every text format, `diff` of it with another."""
    saved = Path(d) / "t.json"
    for fmt in ("text", "tree", "folded"):
        rc, out, err = run_bytes(["report", saved, "-f", fmt, "--threads"], 60)
        check(rc == 0, f"report -f {fmt}: exit {rc}: {err[-300:]!r}")
        check_text(f"report -f {fmt}", out)
        check_text(f"report -f {fmt}: stderr", err, min_marks=0)
    rc, out, err = run_bytes(["report", saved, "-o", Path(d) / "r.dot"], 60)
    check(rc == 0, f"report -o r.dot: exit {rc}: {err[-300:]!r}")
    check_dot(Path(d) / "r.dot")
    rc, out, err = run_bytes(["diff", saved, other], 60)
    check(rc == 0, f"diff: exit {rc}: {err[-300:]!r}")
    check_text("diff", out)
    check_text("diff: stderr", err, min_marks=0)
    rc, out, err = run_bytes(["dump", "-p", pid], 30)
    check(rc == 0, f"dump: exit {rc}: {err[-300:]!r}")
    check_text("dump", out)
    check_text("dump: stderr", err, min_marks=0)


@test
def sec_str_outputs():
    """No line forged, nothing unsafe, in every output of a hostile target's run."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = start_hostile(wl, tmp)
        out = Path(tmp) / "out"
        out.mkdir()
        args = ["-p", p.pid, "-d", 2, "-F", STR_FREQ, "--threads", "--imports", "-v"]
        for f in STR_FILES.values():
            args += ["-o", out / f]
        rc, stdout, stderr = run_bytes([*args, "-o", "-"], 2 + RUN_SLACK)
        check(rc == 0, f"exit {rc}: {stderr[-300:]!r}")
        text = check_text("stdout", stdout)
        check_text("stderr", stderr, min_marks=0)
        table = re.search(r"Line by line: spin_src .*?(?:\n\n|\Z)", text, re.S)
        check(table, "no line-by-line table of spin_src")
        check("source: cannot read" not in table.group(0) and "?[2J?FORGED?" in table.group(0),
              f"the hot line's source (a file in a directory named caf\\xe9) not shown, or not "
              f"cleaned: {table.group(0)[:600]!r}")
        go = check_run_files(out, p.pid)
        # a second run, saved under a name of the same kind, for diff
        other = os.path.join(os.fsencode(out), b"t2\nFORGED\xe2\x80\xae.json")
        rc, _, stderr = run_bytes(["-p", p.pid, "-d", 1, "-F", STR_FREQ, "-o", os.fsdecode(other)],
                                  1 + RUN_SLACK)
        check(rc == 0, f"second run: exit {rc}: {stderr[-300:]!r}")
        check_rerendered(out, p.pid, os.fsdecode(other))
        threads = re.search(r"threads: (.*)", text).group(1)
    return f"10 formats, report, diff, dump and stderr: no line forged; threads: {threads}; {go}"


@test
def sec_str_stderr():
    """A hostile process that is no CPython: the refusal is one line on stderr."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        d = os.path.join(os.fsencode(tmp), STR_DIR)
        os.mkdir(d, 0o755)
        exe = os.path.join(d, b"sl\nFORGED\xe2\x80\xae\xe9")  # its comm too: 13 bytes
        shutil.copy("/bin/sleep", exe)
        os.chmod(exe, 0o755)
        p = wl.spawn([*STR_DROP, os.fsdecode(exe), "600"], wait_ready=False)
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{p.pid}/exe") != os.fsdecode(exe):
            check(time.monotonic() < deadline, "the process never became sleep")
            time.sleep(0.02)
        said = []
        for args in (["-p", p.pid, "-d", 1], ["dump", "-p", p.pid]):
            rc, out, err = run_bytes(args, 30)
            check(rc == 1 and out == b"", f"{args[0]}: exit {rc}, stdout {out[:100]!r}")
            text = check_text(f"{args[0]}: stderr", err, min_marks=2)
            check(text.count("\n") == 1 and text.startswith("pybpfprof: ") and
                  "is not a CPython process" in text, f"{args[0]}: stderr {text!r}")
            said.append(text.strip())
    return said[0]


@test
def sec_str_otlp():
    """The agent's pprof pushes and OTLP requests of a hostile target decode strictly."""
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp, Receiver() as rcv:
        p = start_hostile(wl, tmp)
        prof = Profiler(["agent", "-v", "-F", 99, "-p", p.pid, "--interval", 1, "--otlp", rcv.url,
                         "--push", rcv.url], verbose=False)
        try:
            prof.wait_attached()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (len(rcv.otlp) >= 2 and
                                                       len(rcv.snapshot()) >= 2):
                prof.watch(0.2)
        finally:
            prof.kill()
        check(rcv.otlp and rcv.snapshot(), f"{len(rcv.otlp)} OTLP requests and "
              f"{len(rcv.snapshot())} pushes in 30 s: {prof.stderr()[-300:]}")
        names = set()
        for body, _, _ in rcv.otlp:
            req = protoc_decode(body, OTLP_REQUEST, OTLP_PROTO_DIR / OTLP_SERVICE, OTLP_PROTO_DIR,
                                errors="strict", what="protoc --decode (OTLP)",
                                bytes_fields=("profile_id", "trace_id", "span_id"))
            strings = req["dictionary"][0]["string_table"]
            check_strings("OTLP strings", strings)
            names.update(strings)
        for push in rcv.snapshot():
            prof_ = protoc_decode(gzip.decompress(push.body), "perftools.profiles.Profile",
                                  errors="strict")
            check_strings("pushed pprof strings", prof_["string_table"])
        check(any("caf\ufffd" in s for s in names), "no caf\\ufffd among the OTLP strings")
        check_text("agent: stderr", prof.stderr().encode(), min_marks=0)
    return (f"{len(rcv.otlp)} OTLP requests, {len(rcv.snapshot())} pushes decoded strictly; "
            f"e.g. {sorted(s for s in names if 'caf' in s)[:1]}")


# ------------------------------------------------ files handed to report and diff

STR_CRAFTED = 32 << 20


def str_rss_bound(size):
    """What `report` may hold for a file that is JSON but no profile: the parsed
    values (at most 8 bytes per byte), the file itself and the counts of the
    first pass, under 10 bytes per byte, plus the program (libbpf, libdw, the
    writers' tables). Under ASan (make SANITIZE=1 check) every allocation has
    redzones and freed memory waits in a quarantine, as suite_sec_budget says:
    there the bound only keeps an unbounded parse from passing."""
    bound = 10 * size + (64 << 20)
    if os.environ.get("PYBPFPROF_SANITIZE") == "1":
        bound = 3 * bound + (128 << 20)
    return bound


def crafted(path, unit):
    """A JSON file of about STR_CRAFTED bytes: units in an array, schema 1, no model."""
    n = (STR_CRAFTED - 32) // (len(unit) + 1)
    with open(path, "w") as f:
        f.write('{"schema": 1, "x": [' + ",".join([unit] * n) + "]}")
    return os.path.getsize(path)


def rss_run(args, timeout=120):
    """pybpfprof run to completion and reaped with wait4: (status, stderr, its own
    peak RSS in bytes)."""
    spawn_hwm, polled = vm_hwm_kib(os.getpid()), 0
    p = subprocess.Popen([str(PROFILER), *map(str, args)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while True:
        polled = max(polled, vm_hwm_kib(p.pid))
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            os.wait4(p.pid, 0)
            raise_fail(f"`pybpfprof {' '.join(map(str, args))}` still running after {timeout} s")
        time.sleep(0.005)
    p.returncode = os.waitstatus_to_exitcode(status)
    reader.join(10)
    p.stderr.close()
    return p.returncode, (err[0] if err else b"").decode(errors="replace"), own_peak_kib(ru.ru_maxrss, spawn_hwm, polled) << 10


def real_profile(wl, d, name, script, args, seconds):
    """A real run of a workload saved as NAME.json, NAME.txt and NAME.pb.gz."""
    p = wl.start(interpreter("debian"), script)
    out = [x for ext in ("json", "txt", "pb.gz") for x in ("-o", d / f"{name}.{ext}")]
    rc, _, err = run_bytes(["-p", p.pid, "-d", seconds, *args, *out], seconds + RUN_SLACK)
    check(rc == 0, f"{name}: exit {rc}: {err[-300:]!r}")
    p.kill()
    return d / f"{name}.json"


@test
def sec_str_json_bound():
    """A crafted 32 MiB JSON handed to report and diff stays within its
    bound; large real profiles (CPU, --mem, --mode wall) still load, and
    are written again byte for byte, within the same bound."""
    figures = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        reals = [real_profile(wl, d, "cpu", "strings_bigstacks.py", ["-F", 999, "--threads"], 5),
                 real_profile(wl, d, "mem", "mem_grow.py", ["--mem"], 3),
                 real_profile(wl, d, "wall", "wall_classes.py", ["--mode", "wall"], 3)]
        for real, opts in zip(reals, (["--threads"], [], [])):
            size = real.stat().st_size
            rc, err, rss = rss_run(["report", real, *opts, "-o", real.with_suffix(".r.txt"),
                                    "-o", real.with_suffix(".r.pb.gz")])
            check(rc == 0, f"report {real.name}: exit {rc}: {err[-300:]}")
            for ext in ("txt", "pb.gz"):
                ran = real.with_suffix(f".{ext}").read_bytes()
                check(real.with_suffix(f".r.{ext}").read_bytes() == ran,
                      f"report {real.name}: its .{ext} is not the run's")
            check(rss <= str_rss_bound(size), f"report {real.name} ({size} bytes) took "
                  f"{rss >> 20} MiB, more than {str_rss_bound(size) >> 20}")
            figures.append(f"{real.stem} {size >> 10} KiB: {rss >> 20} MiB")
        for shape, unit in (("objects", "{}"), ("zeros", "0")):
            junk = d / f"{shape}.json"
            size = crafted(junk, unit)
            for args in (["report", junk, "-o", d / "x.txt"], ["diff", reals[0], junk]):
                rc, err, rss = rss_run(args)
                check(rc == 1 and err.count("\n") == 1 and "not a pybpfprof profile" in err,
                      f"{args[0]} {shape}: exit {rc}: {err[-300:]}")
                check(rss <= str_rss_bound(size), f"{args[0]} of {size >> 20} MiB of {unit}: "
                      f"{rss >> 20} MiB, more than {str_rss_bound(size) >> 20}")
                figures.append(f"{args[0]} {shape}: {rss >> 20} MiB")
            junk.unlink()
        check(not (d / "x.txt").exists(), "x.txt written for a file that is no profile")
    return "; ".join(figures)


@test
def sec_str_top():
    """`top` on a terminal (tmux) showing the hostile target: every screen
    line one of top's, nothing forged, no bidi character left on screen."""
    if not shutil.which("tmux"):
        raise Skip("tmux not installed (Debian package tmux)")
    session = f"pybpfprof-strings-{os.getpid()}"

    def tmux(*args):
        r = subprocess.run(["tmux", *args], capture_output=True, timeout=10,
                           stdin=subprocess.DEVNULL)
        check(r.returncode == 0 or args[0] == "kill-session",
              f"tmux {args[0]}: {r.stderr.decode(errors='replace').strip()}")
        return r.stdout

    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = start_hostile(wl, tmp)
        tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50",
             f"{PROFILER} top -p {p.pid}; sleep 60")
        try:
            deadline = time.monotonic() + 10
            screen = b""
            while time.monotonic() < deadline and b"spin_q" not in screen:
                time.sleep(0.2)
                screen = tmux("capture-pane", "-p", "-t", session)
            check(b"spin_q" in screen, f"the target's functions not shown: {screen[-500:]!r}")
            text = check_text("top", screen)
            row = re.search(rf"^ +[\d.]+% +[\d.]+% +{p.pid}  strings_hostile\.py: .*$", text,
                            re.M)
            check(row, f"no process row naming pid {p.pid} by its script: {text[:800]!r}")
        finally:
            tmux("kill-session", "-t", session)
    return row[0].strip()
