"""The agent's flight recorder (--recorder): the last seconds of samples at
--recorder-rate kept in a bounded ring and written, when triggered, as one
gzip pprof in --output-dir with each sample's time; the regular interval
profiles keep -F's rate beside it.

Each capture is read with protoc (perftools.profiles.Profile), as the agent
tests read their files; its samples' times are checked against the moment
the workload itself says it changed. The Perfetto trace beside it is read
by protoc against the schema the timeline tests use (suite_timeline), and
must hold the pprof's samples: the same times, threads and functions."""

import codecs
import gzip
import os
import re
import signal
import socket
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness import (CpuMeter, Workloads, check, check_cpu_samples, expect_error, protoc_decode,
                     run_profiler, test)
from suite_agent import agent, free_port, scrape, spin, stop_agent, token

TURN = "recorder_turn.py"
RATE = 999
CAPTURE = re.compile(r"\d{8}T\d{6}Z-recorder-(\d+)\.capture\.pb\.gz")


def decode_capture(path):
    """A capture: its window (time_nanos, duration_nanos), comments, and each
    sample as (timestamp_ns, leaf function, samples, nanoseconds, pid, tid)."""
    prof = protoc_decode(gzip.decompress(Path(path).read_bytes()), "perftools.profiles.Profile",
                         errors="replace")
    strings = prof["string_table"]
    funcs = {f["id"][0]: strings[f["name"][0]] for f in prof.get("function", [])}
    locs = {l["id"][0]: funcs[l["line"][0]["function_id"][0]] for l in prof.get("location", [])}
    samples = []
    for s in prof.get("sample", []):
        nums = {strings[lab["key"][0]]: lab.get("num", [0])[0] for lab in s.get("label", [])
                if "str" not in lab}
        check("timestamp_ns" in nums, f"{path.name}: a sample without its time: {s}")
        samples.append((nums["timestamp_ns"], locs[s["location_id"][0]], s["value"][0],
                        s["value"][1], nums.get("pid"), nums.get("tid")))
    samples.sort()
    return dict(start=prof.get("time_nanos", [0])[0], duration=prof["duration_nanos"][0],
                comments=[strings[c] for c in prof.get("comment", [])], samples=samples,
                period=prof.get("period", [0])[0])


def timeline_of(capture):
    """The capture's Perfetto trace, beside it."""
    return capture.with_name(capture.name[:-len(".pb.gz")] + ".perfetto-trace.gz")


def check_timeline(capture, c):
    """The trace beside the capture holds each of its samples, at the same
    time (the trace's ns since the window's start), on the same process and
    thread, with the same innermost function; a track per thread."""
    from suite_timeline import PerfettoTrace
    path = timeline_of(capture)
    check(path.exists(), f"no {path.name} beside {capture.name}")
    tr = PerfettoTrace(gzip.decompress(path.read_bytes()))
    check(tr.summary and tr.summary["start_unix_ns"] == c["start"],
          f"the trace starts at {tr.summary and tr.summary['start_unix_ns']}, the capture's "
          f"window at {c['start']}")
    got = sorted((c["start"] + s["ts"], s["pid"], s["tid"], s["stack"][0][0]) for s in tr.samples)
    want = sorted((s[0], s[4], s[5], s[1]) for s in c["samples"] for _ in range(s[2]))
    check(got == want, f"{len(got)} samples in {path.name}, {len(want)} in the pprof; first "
          f"differing: {next(((g, w) for g, w in zip(got, want) if g != w), None)}")
    for tid in {s[5] for s in c["samples"]}:
        tr.thread_track(tid)
    return tr


def captures(out):
    return sorted((p for p in Path(out).iterdir() if CAPTURE.fullmatch(p.name)),
                  key=lambda p: int(CAPTURE.fullmatch(p.name).group(1)))


def wait_captures(prof, out, n, timeout=30):
    deadline = time.monotonic() + timeout
    while len(captures(out)) < n:
        check(time.monotonic() < deadline and prof.watch(0.05),
              f"{len(captures(out))} captures of {n} in {timeout} s: {prof.stderr()[-300:]}")
    return captures(out)


def max_gap(samples):
    times = [s[0] for s in samples]
    return max((b - a for a, b in zip(times, times[1:])), default=0)


def turn(wl, tmp, *how):
    """The workload calm until told, then busy: (process, go file, moment file)."""
    go, moment = Path(tmp) / "go", Path(tmp) / "moment"
    return wl.start("/usr/bin/python3.11", TURN, go, moment, *how), go, moment


def read_moment(moment, prof, timeout=30):
    deadline = time.monotonic() + timeout
    while not moment.exists():
        check(time.monotonic() < deadline and prof.watch(0.02), "the workload never turned busy")
    return float(moment.read_text())


@test
def agent_recorder_sigusr1():
    """A process calm (busy half of each 10 ms, in calm()) that turns busy
    (busy()) at a moment it writes down; SIGUSR1 about 2 s later, with
    --recorder 4: one capture in --output-dir, named by time and number,
    whose samples (each with its time) are calm() before the moment and
    busy() after it (to within 20 ms), cover the window from its start to the
    trigger within the largest gap between two of its own samples, each worth
    1 / --recorder-rate s; a second SIGUSR1 within --recorder-cooldown makes
    no file and is counted refused in /metrics, as is the capture."""
    port = free_port()
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp, \
            tempfile.TemporaryDirectory() as out:
        p, go, moment = turn(wl, tmp)
        prof = agent(["-p", p.pid, "--interval", 60, "--output-dir", out, "--recorder", 4,
                      "--recorder-rate", RATE, "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            prof.watch(2.5)
            go.touch()
            t_turn = read_moment(moment, prof)
            # 2 s of the busy turn, by the clock the moment is on
            while time.time() < t_turn + 2:
                check(prof.watch(0.05), f"agent exited: {prof.stderr()[-300:]}")
            t_sig = time.time()
            prof.p.send_signal(signal.SIGUSR1)
            (first,) = wait_captures(prof, out, 1)
            t_seen = time.time()
            prof.p.send_signal(signal.SIGUSR1)
            deadline = time.monotonic() + 30
            while True:
                m = scrape(port)
                refused = m.get('pybpfprof_recorder_triggers_refused_total'
                                '{cause=cooldown}{trigger=signal}', 0)
                if refused >= 1:
                    break
                check(time.monotonic() < deadline and prof.watch(0.1),
                      f"the second SIGUSR1 not counted refused: {prof.stderr()[-300:]}")
            check(m.get("pybpfprof_recorder_captures_total") == 1,
                  f"captures_total {m.get('pybpfprof_recorder_captures_total')}")
            check(m.get("pybpfprof_recorder_ring_bytes", 0) > 0, "ring_bytes 0")
            stop_agent(prof)
        finally:
            prof.kill()
        check(len(captures(out)) == 1, f"captures {[c.name for c in captures(out)]}")
        c = decode_capture(first)
        check_timeline(first, c)
    smp = c["samples"]
    check(smp, f"{first.name}: no sample")
    check(all(s[4] == p.pid for s in smp), f"pids {set(s[4] for s in smp)}")
    check(c["period"] == 10**9 // RATE and all(s[3] == s[2] * c["period"] for s in smp),
          f"period {c['period']}: a sample's nanoseconds are not 1 / {RATE} s")
    turn_ns, eps = int(t_turn * 1e9), 20_000_000
    calm = [s[0] for s in smp if s[1] == "calm"]
    busy = [s[0] for s in smp if s[1] == "busy"]
    check(calm and busy, f"calm {len(calm)}, busy {len(busy)} samples")
    check(max(calm) <= turn_ns + eps,
          f"calm() sampled {(max(calm) - turn_ns) / 1e6:.1f} ms after the turn")
    check(min(busy) >= turn_ns - eps,
          f"busy() sampled {(turn_ns - min(busy)) / 1e6:.1f} ms before the turn")
    # the window: 4 s ending at the trigger, which the agent saw between t_sig and t_seen
    end = c["start"] + c["duration"]
    check(c["duration"] == 4 * 10**9, f"duration {c['duration']}")
    check(t_sig * 1e9 - 1e6 <= end <= t_seen * 1e9 + 1e6,
          f"window ends {end / 1e9 - t_sig:.3f} s after SIGUSR1 (seen at "
          f"{t_seen - t_sig:.3f} s)")
    gap = max_gap(smp)
    check(smp[0][0] >= c["start"] and smp[0][0] - c["start"] <= gap + 1e6,
          f"oldest sample {(smp[0][0] - c['start']) / 1e9:.3f} s into the window "
          f"(largest gap {gap / 1e9:.3f} s)")
    check(smp[-1][0] <= end and end - smp[-1][0] <= gap + 100_000_000,
          f"newest sample {(end - smp[-1][0]) / 1e9:.3f} s before the trigger")
    check(any("flight recorder" in x for x in c["comments"]), f"comments {c['comments']}")
    return (f"{len(smp)} samples (and in its Perfetto trace): calm {len(calm)} up to "
            f"{(max(calm) - turn_ns) / 1e6:+.1f} ms, "
            f"busy {len(busy)} from {(min(busy) - turn_ns) / 1e6:+.1f} ms of the turn; window "
            f"{(smp[0][0] - c['start']) / 1e9:.3f} s to {(end - smp[-1][0]) / 1e9:.3f} s from "
            f"its ends (largest gap {gap / 1e6:.1f} ms); a second trigger refused")


@test
def agent_recorder_tiny_ring():
    """--recorder-max-mb 0.02 (20 KiB, a few hundred samples) on a busy
    process at 999 Hz: samples still in the window are evicted and counted
    (/metrics), the ring never holds more than its bound, and a capture is
    still valid: the newest samples only (it starts well after its window
    does), contiguous to the trigger, fewer than the bound can hold, its
    comment naming the evictions."""
    port, tok = free_port(), token()
    bound = int(0.02 * 1048576) // 8 * 8
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        p = spin(wl, "alpha", tok)
        prof = agent(["-p", p.pid, "--interval", 60, "--output-dir", out, "--recorder", 10,
                      "--recorder-rate", RATE, "--recorder-max-mb", 0.02,
                      "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            deadline = time.monotonic() + 30
            while True:
                m = scrape(port)
                if m.get("pybpfprof_recorder_ring_evicted_total", 0) > 0:
                    break
                check(time.monotonic() < deadline and prof.watch(0.1),
                      f"nothing evicted: {prof.stderr()[-300:]}")
            check(m["pybpfprof_recorder_ring_bytes"] <= bound and
                  m["pybpfprof_recorder_ring_max_bytes"] == bound,
                  f"ring {m['pybpfprof_recorder_ring_bytes']} bytes, bound "
                  f"{m['pybpfprof_recorder_ring_max_bytes']} (asked {bound})")
            held = m["pybpfprof_recorder_ring_samples"]
            prof.p.send_signal(signal.SIGUSR1)
            (first,) = wait_captures(prof, out, 1)
            stop_agent(prof)
        finally:
            prof.kill()
        c = decode_capture(first)
    smp = c["samples"]
    # a sample of spin_alpha: 24 bytes and its frames (at least 1, 4 bytes, rounded to 8)
    check(0 < len(smp) <= bound // 32, f"{len(smp)} samples in a {bound}-byte ring")
    end = c["start"] + c["duration"]
    gap = max_gap(smp)
    span = (smp[-1][0] - smp[0][0]) / 1e9
    # the ring was full of the window's samples: the capture starts after the window does
    check(smp[0][0] - c["start"] > gap,
          f"the capture reaches {(smp[0][0] - c['start']) / 1e9:.3f} s into its 10 s window "
          f"(largest gap {gap / 1e9:.3f} s): older than the bound keeps")
    check(end - smp[-1][0] <= gap + 100_000_000,
          f"newest sample {(end - smp[-1][0]) / 1e9:.3f} s before the trigger")
    check(any(re.search(r"[1-9]\d* evicted", x) for x in c["comments"]),
          f"no evictions in the comments: {c['comments']}")
    return (f"{len(smp)} samples over the last {span:.2f} s (ring held {held:.0f}, "
            f"{m['pybpfprof_recorder_ring_evicted_total']:.0f} evicted before the trigger)")


def interval_files(out):
    return sorted(p for p in Path(out).iterdir()
                  if p.name.endswith(".pb.gz") and not CAPTURE.fullmatch(p.name))


@test
def agent_recorder_interval_ns():
    """With --recorder at 999 Hz, the interval profiles stay at -F 99: each
    sample worth 1 / 99 s in nanoseconds, their samples together about 99 x
    the process's CPU time from the attach to the stop (check_cpu_samples'
    bound), as without the recorder; at 999 Hz they would hold ten times as
    many."""
    tok = token()
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        p = spin(wl, "alpha", tok)
        with CpuMeter(p.pid) as meter:
            prof = agent(["-p", p.pid, "--interval", 1, "--output-dir", out, "--recorder", 5,
                          "--recorder-rate", RATE])
            try:
                t0 = prof.wait_attached()
                c0 = meter.readings[-1]
                while len(interval_files(out)) < 4:
                    check(prof.watch(0.1), f"agent exited: {prof.stderr()[-300:]}")
                c1 = meter.readings[-1]
                t1 = stop_agent(prof)
            finally:
                prof.kill()
        samples = ns = 0
        for f in interval_files(out):
            prof_ = protoc_decode(gzip.decompress(f.read_bytes()), "perftools.profiles.Profile",
                                  errors="replace")
            check(prof_["period"][0] == 10**9 // 99, f"{f.name}: period {prof_['period']}")
            for s in prof_.get("sample", []):
                samples += s["value"][0]
                ns += s["value"][1]
                check(s["value"][1] == s["value"][0] * (10**9 // 99),
                      f"{f.name}: {s['value']} is not 1 / 99 s a sample")
    # the CPU from the attach to the stop, from the meter's readings around them
    cpu = [c for t, c in meter.readings if t0 <= t <= t1]
    check(len(cpu) >= 2, "no CPU readings in the run")
    used = cpu[-1] - cpu[0]
    check_cpu_samples(samples, used, 99, "the interval profiles", cpu_err=0.1)
    return f"{samples} samples ({ns / 1e9:.2f} s) for {used:.2f} s of CPU at 99 Hz"


@test
def agent_recorder_refusals():
    """--recorder's command lines refused with one sentence, exit 2: without
    --output-dir, its options without it, a rate under -F, bounds."""
    with tempfile.TemporaryDirectory() as tmp:
        expect_error(["agent", "--push", "http://x", "--recorder", "10"], ["give it"], rc=2)
        expect_error(["agent", "--output-dir", tmp, "--recorder-rate", "999"],
                     ["give --recorder"], rc=2)
        expect_error(["agent", "--output-dir", tmp, "-F", "99", "--recorder", "5",
                      "--recorder-rate", "50"], ["is under -F 99"], rc=2)
        expect_error(["agent", "--output-dir", tmp, "--recorder", "5", "--trigger-for", "3"],
                     ["give --trigger-cpu"], rc=2)
        expect_error(["agent", "--output-dir", tmp, "--trigger-cpu", "50"],
                     ["give --recorder"], rc=2)
        for args, want in ((["--recorder", "0"], "--recorder takes a whole number from 1 to 3600"),
                           (["--recorder", "5", "--recorder-max-mb", "0"],
                            "--recorder-max-mb takes megabytes"),
                           (["--recorder", "5", "--recorder-cooldown", "x"],
                            "--recorder-cooldown takes a whole number"),
                           (["--recorder", "5", "--trigger-cpu", "50", "--trigger-for", "61"],
                            "--trigger-for takes a whole number from 1 to 60")):
            r = run_profiler(["agent", "--output-dir", tmp, *args], timeout=15)
            check(r.returncode == 2 and r.stderr.startswith(f"pybpfprof agent: {want}"),
                  f"{args}: exit {r.returncode}, {r.stderr!r}")
    return "9 refusals"


def post(url):
    """(status, body) of a POST with no body."""
    req = urllib.request.Request(url, data=b"", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def own_address():
    """An address of this host's other than the loopback, or None: the
    source address the kernel picks toward a public one (no packet sent)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))
        addr = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if addr.startswith("127.") else addr


@test
def agent_recorder_http():
    """POST /capture on the --metrics port (listening on every address):
    from the loopback, 202 and a capture in --output-dir (with samples of the
    busy process); again within --recorder-cooldown, 429 and no file; from
    the host's own non-loopback address, 403 and no file; both refusals
    counted in /metrics by trigger and cause."""
    port, tok = free_port(), token()
    addr = own_address()
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        p = spin(wl, "alpha", tok)
        prof = agent(["-p", p.pid, "--interval", 60, "--output-dir", out, "--recorder", 3,
                      "--recorder-cooldown", 600, "--metrics", f":{port}"])
        try:
            prof.wait_attached()
            prof.watch(1)
            status, body = post(f"http://127.0.0.1:{port}/capture")
            check(status == 202, f"first /capture: {status} {body!r}")
            (first,) = wait_captures(prof, out, 1)
            status, body = post(f"http://127.0.0.1:{port}/capture")
            check(status == 429 and "cooldown" in body, f"second /capture: {status} {body!r}")
            if addr:
                status, body = post(f"http://{addr}:{port}/capture")
                check(status == 403 and "loopback" in body,
                      f"/capture from {addr}: {status} {body!r}")
            want = {"cooldown": 1, "not_loopback": 1 if addr else 0}
            deadline = time.monotonic() + 30
            while True:
                m = scrape(port)
                got = {c: m.get("pybpfprof_recorder_triggers_refused_total"
                                f"{{cause={c}}}{{trigger=http}}", -1) for c in want}
                if got == want and m.get("pybpfprof_recorder_captures_total") == 1:
                    break
                check(time.monotonic() < deadline and prof.watch(0.1),
                      f"refused {got}, want {want}; captures "
                      f"{m.get('pybpfprof_recorder_captures_total')}")
            prof.watch(0.5)
            stop_agent(prof)
        finally:
            prof.kill()
        check(len(captures(out)) == 1, f"captures {[c.name for c in captures(out)]}")
        c = decode_capture(first)
    check(any(s[1] == "spin_alpha" for s in c["samples"]),
          f"no spin_alpha sample in {len(c['samples'])}")
    return (f"202 then a capture of {len(c['samples'])} samples; 429 within the cooldown; "
            + (f"403 from {addr}" if addr else "no non-loopback address here: 403 not tried"))


@test
def agent_recorder_trigger_cpu():
    """--trigger-cpu 1 --trigger-for 1: a process asleep (no CPU) that turns
    busy at a moment it writes down is caught with no signal or request: one
    capture, made after the moment (its window ends after it), holding
    busy()'s samples from the turn on, counted in /metrics; staying busy
    does not trigger again (the crossing triggers; --recorder-cooldown 1
    would let it)."""
    port = free_port()
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp, \
            tempfile.TemporaryDirectory() as out:
        p, go, moment = turn(wl, tmp, "idle")
        prof = agent(["-p", p.pid, "--interval", 60, "--output-dir", out, "--recorder", 4,
                      "--recorder-cooldown", 1, "--trigger-cpu", 1, "--trigger-for", 1,
                      "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            prof.watch(2)
            check(not captures(out), f"a capture of an idle process: {captures(out)}")
            go.touch()
            t_turn = read_moment(moment, prof)
            (first,) = wait_captures(prof, out, 1, timeout=60)
            # 3 s more of the busy process: no second capture (cooldown 1 s)
            prof.watch(3)
            m = scrape(port)
            stop_agent(prof)
        finally:
            prof.kill()
        check(len(captures(out)) == 1, f"captures {[c.name for c in captures(out)]}")
        check(m.get("pybpfprof_recorder_captures_total") == 1,
              f"captures_total {m.get('pybpfprof_recorder_captures_total')}")
        c = decode_capture(first)
    end = c["start"] + c["duration"]
    busy = [s[0] for s in c["samples"] if s[1] == "busy"]
    check(end > t_turn * 1e9, f"the capture's window ends {(t_turn * 1e9 - end) / 1e9:.3f} s "
          "before the turn")
    check(busy and min(busy) >= t_turn * 1e9 - 20_000_000,
          f"busy samples {len(busy)}, the first at {(min(busy or [0]) / 1e9 - t_turn):.3f} s")
    return (f"caught {(end / 1e9 - t_turn):.2f} s after the turn, {len(busy)} busy samples; "
            "one capture")


@test
def agent_recorder_hostile_strings():
    """A capture of suite_sec_strings' hostile target (run by nobody, every
    string it shows hostile: line breaks, escapes, bidi controls, bytes not
    UTF-8): its name is the agent's own (time and number), the pprof decodes
    strictly as UTF-8 with no control or bidi character in any string, go
    tool pprof reads it, and the agent's messages hold none either."""
    from suite_sec_strings import check_pprof, check_strings, check_text, start_hostile
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp, \
            tempfile.TemporaryDirectory() as out:
        p = start_hostile(wl, tmp)
        prof = agent(["-p", p.pid, "--interval", 60, "--output-dir", out, "--recorder", 3])
        try:
            prof.wait_attached()
            prof.watch(1.5)
            prof.p.send_signal(signal.SIGUSR1)
            (first,) = wait_captures(prof, out, 1)
            stop_agent(prof)
        finally:
            prof.kill()
        names = [n.name for n in Path(out).iterdir()]
        check(all(re.fullmatch(r"[0-9A-Za-z_.-]+", n) for n in names), f"file names {names!r}")
        how = check_pprof(first)
        check_text("agent: stderr", prof.stderr().encode(), min_marks=0)
        c = decode_capture(first)
        n = len(c["samples"])
        # its Perfetto trace: every string UTF-8, with no control or bidi character
        tr = check_timeline(first, c)
        strings = [codecs.escape_decode(m.group(1).encode())[0].decode("utf-8")
                   for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', tr.text)]
        check(any("caf" in x for x in strings), f"no caf in the trace's strings: {strings}")
        check_strings("the capture's Perfetto trace", strings)
    return (f"a capture of {n} samples decoded strictly (its Perfetto trace too), {how}; names "
            f"{len(names)} files")
