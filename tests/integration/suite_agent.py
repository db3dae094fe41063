"""`pybpfprof agent`: the always-on run and its sinks (issue 14).

A loopback receiver (agent_receiver.py) stands in for Pyroscope and reads
every pushed body with protoc against pprof's profile.proto. The workloads
are busy loops (targets/spin.py) whose CPU time is measured (CpuMeter), so
the samples of all their intervals have a known total; a token on their
command line (--match) keeps other Python processes on the host out.
"""

import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from agent_receiver import Receiver, decode_otlp, decode_otlp_mem, decode_pprof
from harness import (ROOT, TARGETS, CpuMeter, LineReader, Profiler, READY_TIMEOUT, Skip, Workloads, check,
                     check_cpu_samples, expect_error, interpreter, per_build, protoc_decode,
                     read_stdout_until, run_profiler, source_line, test)
from suite_formats import go_pprof

SPIN = "spin.py"
FREQ = 99


def token():
    return f"agenttest{os.getpid()}x{int(time.monotonic() * 1000) % 100000}"


def spin(wl, kind, tok):
    return wl.start("/usr/bin/python3.11", SPIN, kind, tok)


def agent(args):
    return Profiler(["agent", "-v", "-F", FREQ, *args], verbose=False)


def by_pid(pushes, pids):
    out = {pid: [] for pid in pids}
    for p in pushes:
        pid = int(p.labels.get("pid", 0))
        if pid in out:
            out[pid].append(p)
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(port):
    """/metrics read by Prometheus' own Python client's parser: {name{labels}: value}."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        raise Skip("no prometheus_client (Debian package python3-prometheus-client)")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        check(r.status == 200, f"/metrics answered {r.status}")
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            key = smp.name + "".join(f"{{{k}={v}}}" for k, v in sorted(smp.labels.items()))
            out[key] = smp.value
    return out


def check_contiguous(pushes, interval, what, skipped_ok=False):
    """Each push's from is the previous one's until; interior intervals last
    `interval` seconds (whole seconds: 1 either way for the rounding). With
    skipped_ok, a gap of whole intervals is allowed (an interval with no
    sample makes no profile, and the agent counts it): returns how many
    intervals were skipped."""
    skipped = 0
    for a, b in zip(pushes, pushes[1:]):
        gap = b.start - a.until
        whole = round(gap / interval)
        if skipped_ok and whole >= 1 and abs(gap - whole * interval) <= 1:
            skipped += whole
            continue
        check(b.start == a.until, f"{what}: interval [{a.start}, {a.until}] then "
              f"[{b.start}, {b.until}]: not contiguous")
    for p in pushes[1:-1]:
        check(abs(p.until - p.start - interval) <= 1,
              f"{what}: interval [{p.start}, {p.until}] is not {interval} s")
    return skipped


def stop_agent(prof, sig=signal.SIGTERM):
    prof.p.send_signal(sig)
    t = time.monotonic()
    rc = prof.wait(15)
    check(rc == 0, f"agent exit status {rc} after {sig.name}: {prof.stderr()[-400:]}")
    return t


@test
def agent_push_a_interval2():
    """-a --interval 2 with basic auth: a push every 2 s per process, each
    decodable and labelled, contiguous; a process started after the agent
    appears in the next interval; the intervals' samples add up to the CPU
    time measured; SIGTERM brings the last partial interval, then exit 0."""
    tok = token()
    with Workloads() as wl, Receiver() as rcv, tempfile.TemporaryDirectory() as tmp:
        auth = Path(tmp, "auth")
        auth.write_text("alice:s3cret\n")
        a, b = spin(wl, "alpha", tok), spin(wl, "beta", tok)
        prof = agent(["-a", "--match", tok, "--interval", 2, "--push", rcv.url,
                      "--basic-auth-file", auth])
        try:
            with CpuMeter(a.pid) as ma, CpuMeter(b.pid) as mb:
                t0 = prof.wait_attached()
                prof.watch(1.0)
                c = spin(wl, "alpha", tok)
                t_new = time.monotonic()
                prof.watch(6.5)
                t_stop = stop_agent(prof)
        finally:
            prof.kill()
        pushes = rcv.snapshot()
        per = by_pid(pushes, [a.pid, b.pid, c.pid])
        host = socket.gethostname()
        # An interval in which a process had no sample (a loaded machine can
        # keep a spinner off the CPU that long) makes no profile: the agent
        # counts it ("N empty ones not made"), and only so many may be missing.
        summary = [ln for ln in prof.stderr().splitlines() if "profiles closed" in ln]
        empty = int(re.findall(r"; (\d+) empty", summary[-1])[0]) if summary else 0
        skipped = 0
        for pid, mine in per.items():
            check(len(mine) >= 3, f"pid {pid}: {len(mine)} pushes in 7.5 s at --interval 2")
            skipped += check_contiguous(mine, 2, f"pid {pid}", skipped_ok=True)
            for p in mine:
                check(p.app == "spin", f"application name {p.app!r}, expected spin")
                check(p.query.get("spyName") == "pybpfprof" and
                      p.query.get("format") == "pprof" and
                      p.query.get("sampleRate") == str(FREQ), f"query {p.query}")
                check(p.labels.get("hostname") == host and
                      p.labels.get("service_name") == "spin" and
                      p.labels.get("python_version", "").startswith("3.11") and
                      tok in p.labels.get("command", ""), f"labels {p.labels}")
        check(skipped <= empty, f"{skipped} intervals not pushed, the agent counts {empty} "
              f"empty: {summary}")
        # to the nanosecond, by the profiles' own times: no gap, no overlap
        for pid, mine in per.items():
            dec = [p.decoded() for p in mine]
            for x, y in zip(dec, dec[1:]):
                if y["time"] - (x["time"] + x["duration"]) > 1_000_000_000:
                    continue  # an empty interval between them, counted above
                check(abs(x["time"] + x["duration"] - y["time"]) < 2_000_000,
                      f"pid {pid}: profile at {x['time']} + {x['duration']} ns, next at "
                      f"{y['time']}")
        check(all(h and h.startswith("Basic ") for h in rcv.auth),
              f"Authorization headers {set(rcv.auth)}")
        # a push every 2 s per process: each full interval about 2 s by the
        # profile's own times (each closes when its timer is served: 1.98 and
        # 2.02 s seen), and each push sent within one interval of its end (not
        # held to the run's end), by the receiver's clock (how soon within that
        # is the machine's load: a loaded run sent one 1 s late)
        offset = time.time() - time.monotonic()
        dec = [p.decoded() for p in per[a.pid]]
        full = [x["duration"] for x in dec[1:-1]]
        check(all(abs(d - 2e9) < 1e9 for d in full),
              f"pid {a.pid}: intervals of {full} ns inside the run")
        late = [p.t + offset - (x["time"] + x["duration"]) / 1e9 for p, x in zip(per[a.pid], dec)]
        check(all(-0.05 <= s < 2 for s in late),
              f"pushes of pid {a.pid} {[round(s, 3) for s in late]} s after their interval")
        # the last partial interval arrived, after the signal (unless it had no sample:
        # then it makes no profile, and is counted)
        check(per[a.pid][-1].t >= t_stop or empty > skipped,
              f"no push after SIGTERM, and no empty interval: {summary}")
        # the new process: in the interval it started in (or the next)
        first = per[c.pid][0]
        check(first.t - t_new < 2 + 1.5, f"pid {c.pid} started after the agent: first push "
              f"{first.t - t_new:.1f} s later")
        totals = {}
        for pid, meter in ((a.pid, ma), (b.pid, mb)):
            dec = [p.decoded() for p in per[pid]]
            n = sum(d["total"] for d in dec)
            cpu = meter.cpu_between(t0, t_stop)
            check_cpu_samples(n, cpu, FREQ, f"pid {pid}: its intervals together", cpu_err=0.05)
            top = max(dec[1]["self"], key=dec[1]["self"].get)
            want = "spin_alpha" if pid == a.pid else "spin_beta"
            check(top == want, f"pid {pid}: top function {top}, expected {want}")
            labs = dec[1]["labels"]
            # the pid as a number only: a string one besides would count each sample twice
            check(labs.get("service_name") == {"spin"} and dec[1]["nums"].get("pid") == {pid}
                  and "pid" not in labs and "thread_name" in labs,
                  f"pid {pid}: sample labels {labs}, {dec[1]['nums']}")
            totals[pid] = (n, round(cpu * FREQ))
        return (f"{len(pushes)} pushes; samples (intervals, cpu x Hz): {totals}; "
                f"new pid first pushed {first.t - t_new:.1f} s after its start; "
                f"{skipped} empty intervals not pushed")


@test
def agent_push_outage():
    """The receiver stopped for 5 s: pushes are retried with backoff and
    resume when it is back; with --queue 2 the oldest are dropped and
    counted; sampling goes on (every interval is closed and counted), and
    the bearer token is sent."""
    tok = token()
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        rcv = Receiver().start()
        tokf = Path(tmp, "token")
        tokf.write_text("tok-123\n")
        a = spin(wl, "alpha", tok)
        port = free_port()
        prof = agent(["--match", tok, "--interval", 1, "--push", rcv.url, "--queue", 2,
                      "--bearer-token-file", tokf, "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            prof.watch(2.2)
            rcv.stop()
            t_down = time.monotonic()
            prof.watch(1)
            m_down = scrape(port)
            prof.watch(4)
            m_late = scrape(port)
            rcv.start()
            t_up = time.monotonic()
            prof.watch(3)
            m_up = scrape(port)
            stop_agent(prof, signal.SIGINT)
        finally:
            prof.kill()
            rcv.stop()
        mine = by_pid(rcv.snapshot(), [a.pid])[a.pid]
        err = prof.stderr()
        closed = [ln for ln in err.splitlines() if "profiles closed" in ln]
        check(closed, f"no summary line: {err[-400:]}")
        n_closed = int(closed[-1].split(": ")[-1].split()[0])
        sent = [ln for ln in err.splitlines() if "--push:" in ln and "profiles sent" in ln]
        check(sent, f"no --push summary: {err[-400:]}")
        words = sent[-1].split()
        n_sent = int(words[words.index("sent,") - 2])
        n_dropped = int(words[words.index("dropped,") - 1])
        check(n_sent == len(mine), f"the agent says {n_sent} sent, the receiver got {len(mine)}")
        check(n_dropped >= 1, f"5 s down with --queue 2 at --interval 1: {n_dropped} dropped")
        check(n_sent + n_dropped == n_closed,
              f"{n_sent} sent + {n_dropped} dropped != {n_closed} closed")
        late = [p for p in mine if p.t >= t_up]
        check(len(late) >= 3, f"{len(late)} pushes after the receiver came back")
        # the queued ones were retried: intervals that ended while it was down
        held = [p for p in late if p.t - t_up < 2.5 and p.decoded()["total"] > 0]
        check(len(held) >= 2, f"{len(held)} held intervals delivered on its return")
        check(all(h == "Bearer tok-123" for h in rcv.auth), f"Authorization {set(rcv.auth)}")
        check("retrying" in err, f"no retry said: {err[-400:]}")
        # /metrics, while the receiver was down and after: sampling went on
        push = '{sink=push}'
        check(m_late["pybpfprof_samples_total"] > m_down["pybpfprof_samples_total"] and
              m_late["pybpfprof_intervals_total"] >= m_down["pybpfprof_intervals_total"] + 3,
              f"while down: samples {m_down['pybpfprof_samples_total']} -> "
              f"{m_late['pybpfprof_samples_total']}, intervals "
              f"{m_down['pybpfprof_intervals_total']} -> {m_late['pybpfprof_intervals_total']}")
        check(m_late["pybpfprof_sink_queue_depth" + push] <= 2 and
              m_late["pybpfprof_sink_errors_total" + push] >= 2 and
              m_late["pybpfprof_sink_dropped_total" + push] >= 1,
              f"while down: {({k: v for k, v in m_late.items() if 'sink' in k})}")
        check(m_up["pybpfprof_sink_sent_total" + push] >= m_late["pybpfprof_sink_sent_total" +
                                                                push] + 3, "no sends after")
        check(m_up["pybpfprof_processes"] >= 1 and m_up["pybpfprof_resident_memory_bytes"] > 1e6
              and m_up["pybpfprof_cpu_seconds_total"] > 0 and
              m_up["pybpfprof_bpf_runs_total{program=on_sample}"] > 0 and
              m_up["pybpfprof_samples_dropped_total{cause=ring_buffer_full}"] == 0,
              f"metrics {m_up}")
        return (f"{n_closed} intervals: {n_sent} pushed, {n_dropped} dropped (down "
                f"{t_up - t_down:.1f} s, --queue 2); {len(late)} pushed after the return; "
                f"/metrics while down: {m_late['pybpfprof_sink_dropped_total' + push]:.0f} "
                f"dropped, {m_late['pybpfprof_sink_errors_total' + push]:.0f} errors; agent "
                f"CPU {m_up['pybpfprof_cpu_seconds_total']:.2f} s, RSS "
                f"{m_up['pybpfprof_resident_memory_bytes'] / 1e6:.1f} MB")


@test
def agent_otlp():
    """--otlp beside --push: OTLP profiles (v1development) read by protoc
    against the specification's field numbers (tests/fixtures/otlp_profiles.proto); resource attributes, thread
    attributes, contiguous times, and the same samples as the pprof pushes."""
    tok = token()
    with Workloads() as wl, Receiver() as rcv:
        a = spin(wl, "alpha", tok)
        prof = agent(["--match", tok, "--interval", 1, "--otlp", rcv.url, "--push", rcv.url])
        try:
            with CpuMeter(a.pid) as ma:
                t0 = prof.wait_attached()
                prof.watch(4)
                t_stop = stop_agent(prof)
        finally:
            prof.kill()
        mine = [(b, t, ct) for b, t, ct in rcv.otlp]
        dec = [decode_otlp(b) for b, _, _ in mine]
        dec = [d for d in dec if d["resource"].get("process.pid") == a.pid]
        check(len(dec) >= 4, f"{len(dec)} OTLP profiles of pid {a.pid} in 4 s at --interval 1")
        check(all(ct == "application/x-protobuf" for _, _, ct in mine), "content types")
        r = dec[0]["resource"]
        check(r.get("service.name") == "spin" and r.get("host.name") == socket.gethostname() and
              r.get("process.runtime.name") == "CPython" and
              str(r.get("process.runtime.version", "")).startswith("3.11") and
              tok in r.get("process.command_line", ""), f"resource attributes {r}")
        check(dec[1]["kind"] == ("samples", "count") and dec[1]["scope"] == "pybpfprof",
              f"sample type {dec[1]['kind']}, scope {dec[1]['scope']}")
        check(dec[1]["threads"].get("thread.id") == {a.pid} and
              dec[1]["threads"].get("thread.name"), f"thread attributes {dec[1]['threads']}")
        top = max(dec[1]["self"], key=dec[1]["self"].get)
        check(top == "spin_alpha", f"top function {top}")
        for x, y in zip(dec, dec[1:]):
            check(abs(x["time"] + x["duration"] - y["time"]) < 2_000_000,
                  f"OTLP profile at {x['time']} + {x['duration']} ns, next at {y['time']}")
        n = sum(d["total"] for d in dec)
        check_cpu_samples(n, ma.cpu_between(t0, t_stop), FREQ, "the OTLP profiles together",
                          cpu_err=0.05)
        pprof = sum(p.decoded()["total"] for p in by_pid(rcv.snapshot(), [a.pid])[a.pid])
        check(pprof == n, f"pprof pushes hold {pprof} samples, OTLP ones {n}")
        return f"{len(dec)} OTLP profiles, {n} samples (the pprof pushes: {pprof})"


def fd_count(pid, window=0.2):
    """The fds pid holds: the fewest seen in window seconds, so that one a
    sink has open for the write or the push in progress is not taken for
    one it keeps (a leak stays in every read)."""
    end, n = time.monotonic() + window, None
    while n is None or time.monotonic() < end:
        k = len(os.listdir(f"/proc/{pid}/fd"))
        n = k if n is None else min(n, k)
        time.sleep(0.01)
    return n


CHURN = """
import subprocess, sys
print("ready", flush=True)
sys.stdin.readline()
for _ in range(30):
    subprocess.run([sys.executable, sys.argv[1], "0.2"], check=True)
print("done", flush=True)
sys.stdin.readline()
"""


@test
def agent_churn_frees():
    """-p PARENT --subprocesses, the parent running 30 short children one
    after the other (0.2 s each): each child sampled gets its intervals
    (pushed, with its samples), and once its last interval is out the agent lets go of
    what it held for it: its fd count comes back to where it was (a one-shot
    run keeps each process's root directory and status file open for the
    report's sources: 60 more here), and their records are compacted away."""
    with Workloads() as wl, Receiver() as rcv:
        parent = wl.spawn(["/usr/bin/python3.11", "-c", CHURN, TARGETS / "procs_short.py"],
                          stdin=subprocess.PIPE)
        port = free_port()
        prof = agent(["-p", parent.pid, "--subprocesses", "--interval", 1, "--push", rcv.url,
                      "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            prof.watch(1.2)
            base = fd_count(prof.p.pid)
            parent.stdin.write(b"go\n")
            parent.stdin.flush()
            read_stdout_until(parent, lambda buf: b"done\n" in buf, "done", 60)
            prof.watch(2.5)
            after = fd_count(prof.p.pid)
            m = scrape(port)
            stop_agent(prof)
        finally:
            prof.kill()
        pushes = rcv.snapshot()
        children = {int(p.labels["pid"]) for p in pushes} - {parent.pid}
        # (a child the load kept from any sample has no push: no empty profile is made)
        check(len(children) >= 20, f"{len(children)} of 30 children pushed")
        counts = [sum(p.decoded()["total"] for p in pushes if int(p.labels["pid"]) == c)
                  for c in children]
        check(all(c > 0 for c in counts), f"a child pushed without a sample: {counts}")
        check(after <= base + 2, f"agent fds: {base} before the 30 children, {after} after")
        # the gone ones' records compacted away (at 16 forgettable: at most 15 left over);
        # a child sampled between its fork and its exec is a process of its own
        check(m["pybpfprof_processes_seen_total"] >= 31 and
              m["pybpfprof_process_records"] <= 16,
              f"31 processes or more seen: {m['pybpfprof_processes_seen_total']:.0f}, "
              f"records held {m['pybpfprof_process_records']:.0f}")
        return (f"{len(children)} of 30 children pushed, {sum(counts)} samples; fds {base} -> "
                f"{after}; records {m['pybpfprof_process_records']:.0f} of 31 seen")


def dir_bytes(d):
    total = 0
    for p in Path(d).iterdir():
        try:
            total += p.stat().st_blocks * 512 if p.name.endswith(".pb.gz") else 0
        except FileNotFoundError:  # deleted meanwhile
            pass
    return total


@test
def agent_output_dir_max_disk():
    """--output-dir with a tiny --max-disk (12 KiB) and --merge: the files
    never take more than the budget plus the one being written, the newest
    are kept, each decodes and holds both processes; SIGINT, exit 0."""
    tok = token()
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        a, b = spin(wl, "alpha", tok), spin(wl, "beta", tok)
        budget = 12 * 1024
        prof = agent(["--match", tok, "--interval", 1, "--merge", "--output-dir", out,
                      "--max-disk", budget / 1048576])
        peak, names = 0, set()
        try:
            prof.wait_attached()
            end = time.monotonic() + 6
            while time.monotonic() < end and prof.running():
                peak = max(peak, dir_bytes(out))
                # outfile's temporaries (".NAME.XXXXXX") are not the agent's files
                names |= {p.name for p in Path(out).iterdir() if not p.name.startswith(".")}
                time.sleep(0.05)
            stop_agent(prof, signal.SIGINT)
        finally:
            prof.kill()
        # named by the interval's start, to the second: two intervals that
        # start within one second (a close served late, the next on time)
        # make NAME and NAME.1, in that order
        pattern = re.compile(r"(\d{8}T\d{6}Z)-spin-all(?:\.(\d+))?\.pb\.gz")
        order = lambda n: (pattern.fullmatch(n).group(1), int(pattern.fullmatch(n).group(2) or 0))
        files = [p for p in Path(out).iterdir() if p.name.endswith(".pb.gz")]
        names |= {p.name for p in files}
        final = dir_bytes(out)
        check(all(pattern.fullmatch(n) for n in names), f"file names {sorted(names)}")
        files.sort(key=lambda p: order(p.name))
        names = sorted(names, key=order)
        check(len(names) >= 5, f"{len(names)} files in 6 s at --interval 1")
        check(final <= budget, f"{final} bytes left, budget {budget}")
        biggest = max(p.stat().st_blocks * 512 for p in files)
        check(peak <= budget + biggest, f"peak {peak} bytes, budget {budget} + {biggest}")
        check(files[-1].name == names[-1], f"newest {names[-1]} not kept: {files}")
        check(len(files) < len(names), f"nothing deleted: {len(files)} of {len(names)}")
        dec = decode_pprof(files[-2].read_bytes())
        check(dec["nums"].get("pid") == {a.pid, b.pid}, f"merged pids {dec['nums'].get('pid')}")
        check("pid" not in dec["labels"], f"a merged profile has a pid label: {dec['labels']}")
        return (f"{len(names)} files made, {len(files)} kept, {final} bytes (budget {budget}, "
                f"peak {peak}); merged {dec['total']} samples of 2 pids")


@test
def agent_refusals():
    """Bad command lines: one sentence, exit 2; a bad sink: exit 1, before BPF."""
    with tempfile.TemporaryDirectory() as tmp:
        expect_error(["agent"], ["give at least one sink"], rc=2)
        expect_error(["agent", "-a", "-p", "1", "--push", "http://x"], ["exclude each other"],
                     rc=2)
        expect_error(["agent", "--max-disk", "5", "--push", "http://x"], ["--output-dir"],
                     rc=2)
        expect_error(["agent", "--match", "(", "--output-dir", tmp], ["regular expression"],
                     rc=2)
        expect_error(["agent", "--push", "ftp://x"], ["http:// or https://"], rc=1)
        expect_error(["agent", "--push", "http://x", "--bearer-token-file", f"{tmp}/none"],
                     ["cannot read"], rc=1)
        expect_error(["agent", "--output-dir", tmp, "--metrics", "9464"], ["ADDR:PORT"], rc=1)
        os.symlink(tmp, f"{tmp}/link")
        expect_error(["agent", "--output-dir", f"{tmp}/link"], ["symbolic link"], rc=1)
        # argp's own: named after the subcommand
        expect_error(["agent", "--output-dir", tmp, "--mem-period", "8"], ["give --mem"], rc=2)
        for args, want in ((["--interval", "0"], "--interval takes a whole number from 1"),
                           (["--max-disk", "-1"], "--max-disk takes megabytes"),
                           (["--queue-mb", "0"], "--queue-mb takes megabytes"),
                           (["--match-user", "no-such-user-x"],
                            "--match-user no-such-user-x: no such user on this host"),
                           (["--mem=alloc"], "--mem=alloc is not offered by the agent"),
                           (["--mem=pages"], "--mem takes faults (or nothing)")):
            r = run_profiler(["agent", "--output-dir", tmp, *args], timeout=15)
            check(r.returncode == 2 and r.stderr.startswith(f"pybpfprof agent: {want}"),
                  f"{args}: exit {r.returncode}, {r.stderr!r}")
    return "15 refusals"


def unit_settings(path):
    """The [Service] settings of a unit file: name -> value (the last one)."""
    out = {}
    for line in Path(path).read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


@test
def agent_systemd_unit():
    """`make install` puts pybpfprof.service and its options file in place;
    systemd-analyze verify accepts the unit; the agent run as the unit runs
    it (its ExecStart with the options file's words, under its
    CapabilityBoundingSet only) profiles, writes its files and stops on
    SIGTERM with exit 0."""
    if not shutil.which("systemd-analyze"):
        raise Skip("no systemd-analyze (Debian package systemd)")
    tok = token()
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["make", "-C", ROOT, "install", f"PREFIX={tmp}",
                            f"SYSCONFDIR={tmp}/etc"], capture_output=True, text=True,
                           timeout=300)
        check(r.returncode == 0, f"make install: {r.stderr[-400:]}")
        unit = Path(tmp, "lib/systemd/system/pybpfprof.service")
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", unit],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and not r.stderr.strip(),
              f"systemd-analyze verify: {r.stdout}{r.stderr}")
        svc = unit_settings(unit)
        env = unit_settings(svc["EnvironmentFile"])
        check(svc["ExecStart"] == f"{tmp}/sbin/pybpfprof agent $PYBPFPROF_AGENT_OPTS",
              f"ExecStart={svc['ExecStart']}")
        opts = env["PYBPFPROF_AGENT_OPTS"].split()
        check("--output-dir" in opts, f"default options {opts}")
        out = Path(tmp, "state")
        out.mkdir(mode=0o700)
        opts[opts.index("--output-dir") + 1] = str(out)
        opts[opts.index("--interval") + 1] = "1"
        caps = svc["CapabilityBoundingSet"].lower().replace("cap_", "+").split()
        a = spin(wl, "alpha", tok)
        argv = ["setpriv", f"--bounding-set=-all,{','.join(caps)}", "--",
                f"{tmp}/sbin/pybpfprof", "agent", *opts, "--match", tok, "-v"]
        prof = Profiler(argv[1:], exe="setpriv", verbose=False)
        try:
            prof.wait_attached()
            prof.watch(2.5)
            stop_agent(prof)
        finally:
            prof.kill()
        files = sorted(out.iterdir())
        check(len(files) >= 2, f"{len(files)} files in 2.5 s at --interval 1: {prof.stderr()}")
        dec = decode_pprof(files[-2].read_bytes())
        check(dec["self"].get("spin_alpha", 0) > 0, f"{files[-2].name}: {dec['self']}")
        score = subprocess.run(["systemd-analyze", "security", "--offline=yes", unit],
                               capture_output=True, text=True, timeout=60).stdout
        level = [ln for ln in score.splitlines() if "Overall exposure level" in ln]
        return (f"verify clean; under {' '.join(caps)} only: {len(files)} files, "
                f"{dec['total']} samples in one; {level[0].split(':')[-1].strip() if level else ''}")


MIB = 1 << 20
# mem_agent.py's objects: one mmap each of their size plus headers, a page up
MEM_BIG = 200 * MIB + 4096
MEM_KEEP = 5 * MIB + 4096
MEM_TYPES = ["touched_space", "mapped_space", "released_space", "inuse_space"]
MEM_ROUNDS = 7


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:"))


def mem_rounds(prof, rcv, p, port):
    """One mem_agent.py round per interval: the first once the agent is
    attached, each next one as the previous interval's memory push arrives
    (just after a cut, so a round never straddles one). The agent's fds and
    RSS at each push, and /metrics scraped just after the last round's push."""
    agent_pid = prof.p.pid
    prof.wait_attached()
    os.kill(p.pid, signal.SIGUSR1)
    rounds, seen, fds, rss, metrics = 1, 0, [], [], None
    deadline = time.monotonic() + 4 * MEM_ROUNDS + 20
    while time.monotonic() < deadline:
        prof.watch(0.05)
        n = sum(x.mem for x in rcv.snapshot())
        if n == seen:
            continue
        seen = n
        fds.append(fd_count(agent_pid))
        rss.append(rss_kib(agent_pid))
        if rounds == MEM_ROUNDS:
            time.sleep(0.4)  # the figures are published every 0.2 s
            metrics = scrape(port)
            # the interval's other pushes may still be under way at its
            # memory push (a loaded machine): a leak stays, they go
            fds[-1] = min(fds[-1], fd_count(agent_pid, 1.0))
            break
        os.kill(p.pid, signal.SIGUSR1)
        rounds += 1
    check(metrics is not None, f"{seen} memory pushes in {4 * MEM_ROUNDS + 20} s")
    stop_agent(prof)
    return fds, rss, metrics


def check_mem_interval(k, d, big, keep, held_before):
    """Interval k's memory profile (decoded): one round in it, the keep line
    holding >= 95 % of the bytes in use, the big line none of what it
    mapped, and each line's in use grown by exactly mapped - released."""
    lines, total = d["lines"], d["total"]
    got = {ln: {t: lines[t].get(ln, 0) for t in MEM_TYPES} for ln in (big, keep)}
    check(got[big]["mapped_space"] == MEM_BIG and got[big]["released_space"] == MEM_BIG,
          f"interval {k}: big line mapped {got[big]['mapped_space']}, released "
          f"{got[big]['released_space']} (expected {MEM_BIG} each: one round); mapped by "
          f"line {lines['mapped_space']}")
    check(got[big]["inuse_space"] <= 0.05 * got[big]["mapped_space"],
          f"interval {k}: big line holds {got[big]['inuse_space']} of {MEM_BIG} mapped")
    check(got[keep]["inuse_space"] // MEM_KEEP == k and got[keep]["inuse_space"] % MEM_KEEP < MIB,
          f"interval {k}: keep line holds {got[keep]['inuse_space']}, expected {k} x {MEM_KEEP}")
    share = got[keep]["inuse_space"] / total["inuse_space"]
    check(share >= 0.95, f"interval {k}: keep line holds {share:.1%} of "
          f"{total['inuse_space']} bytes in use")
    for ln in (big, keep):
        grew = got[ln]["inuse_space"] - held_before.get(ln, 0)
        flow = got[ln]["mapped_space"] - got[ln]["released_space"]
        check(grew == flow, f"interval {k}: line {ln[1]} in use grew by {grew}, mapped - "
              f"released {flow}")
    # touched is sampled (a fault in 64): the big object's pages, within 10 %
    check(abs(got[big]["touched_space"] - MEM_BIG) <= 0.1 * MEM_BIG,
          f"interval {k}: big line touched {got[big]['touched_space']} for {MEM_BIG} mapped")
    return {ln: got[ln]["inuse_space"] for ln in (big, keep)}, share


@per_build(builds=("debian", "trixie313"))
def agent_mem(build):
    """--mem through every sink (issue 20's point 4): mem_agent.py maps and
    drops 200 MiB on one line and keeps 5 MiB on another, one round per
    interval. Each interval's memory push (Pyroscope's multipart form with
    its sample type config) names the keep line with >= 95 % of the bytes in
    use and the big line with none of the 200 MiB it mapped; a line's in use
    grows by exactly its mapped - released (so intervals sum to growth);
    intervals are contiguous and match the CPU pushes'; the OTLP and
    --output-dir copies say the same; /metrics has the process's gauges;
    the agent's fds and RSS stay flat over 1.4 GiB of churn."""
    py = interpreter(build)
    path = py.script_path("mem_agent.py")
    big, keep = ((path, source_line("mem_agent.py", f"# {w} line")[0]) for w in ("big", "keep"))
    port = free_port()
    with Workloads() as wl, Receiver() as rcv, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(py, "mem_agent.py")
        LineReader(p)
        prof = agent(["-p", p.pid, "--mem", "--interval", 2, "--push", rcv.url, "--otlp",
                      rcv.url, "--output-dir", tmp, "--metrics", f"127.0.0.1:{port}"])
        try:
            fds, rss, metrics = mem_rounds(prof, rcv, p, port)
        finally:
            prof.kill()
        files = {f.name: f.read_bytes() for f in Path(tmp).iterdir()}
    pushes = rcv.snapshot()
    mem = sorted((x for x in pushes if x.mem), key=lambda x: x.start)
    cpu = sorted((x for x in pushes if not x.mem), key=lambda x: x.start)
    # an interval without a CPU sample (the last, idle one) has no CPU push, but its
    # memory push: the bytes in use
    check(len(mem) >= len(cpu) >= MEM_ROUNDS,
          f"{len(mem)} memory and {len(cpu)} CPU pushes for {MEM_ROUNDS} rounds")
    check_contiguous(mem, 2, "memory pushes")
    by_interval = {(m.start, m.until, m.name) for m in mem}
    for c in cpu:
        check((c.start, c.until, c.name) in by_interval,
              f"CPU push {c.name} [{c.start}, {c.until}] has no memory push of its interval")
    for m in mem:
        check(set(m.config) == set(MEM_TYPES) and
              all(m.config[t]["units"] == "bytes" and not m.config[t]["sampled"]
                  for t in MEM_TYPES) and m.config["inuse_space"]["aggregation"] == "average"
              and m.config["mapped_space"]["aggregation"] == "sum",
              f"sample_type_config {m.config}")
    dec = [m.decoded() for m in mem]
    for x, y in zip(dec, dec[1:]):
        check(abs(x["time"] + x["duration"] - y["time"]) < 2_000_000,
              f"memory profile at {x['time']} + {x['duration']} ns, next at {y['time']}")
    check(all(d["types"] == MEM_TYPES and d["default"] == "inuse_space" for d in dec),
          f"sample types {dec[0]['types']}, default {dec[0]['default']}")
    held, shares = {}, []
    for k, d in enumerate(dec[:MEM_ROUNDS], 1):
        held, share = check_mem_interval(k, d, big, keep, held)
        shares.append(share)
    # the last (partial) interval, after the last round: nothing new, all still held
    for d in dec[MEM_ROUNDS:]:
        check(d["lines"]["mapped_space"].get(big, 0) == 0 and
              d["lines"]["inuse_space"].get(keep, 0) == held[keep],
              f"after the rounds: big line mapped {d['lines']['mapped_space'].get(big)}, keep "
              f"line holds {d['lines']['inuse_space'].get(keep)} (expected {held[keep]})")
    otlp = [decode_otlp_mem(b) for b, _, _ in rcv.otlp if b"inuse_space" in b]
    check(len(otlp) == len(dec), f"{len(otlp)} OTLP memory requests, {len(dec)} pushes")
    for o, d in zip(otlp, dec):
        for t in MEM_TYPES:
            want = {ln: v for ln, v in d["lines"][t].items() if v}
            check(o.get(t, {}) == want, f"OTLP {t} {o.get(t)}, the pprof push's {want}")
    bodies = {m.body for m in mem}
    on_disk = {v for n, v in files.items() if n.endswith(".mem.pb.gz")}
    check(on_disk == bodies, f"{len(on_disk)} .mem.pb.gz files, {len(bodies)} memory pushes: "
          f"not the same bytes")
    key = f'pybpfprof_memory_retained_bytes{{pid={p.pid}}}{{service=mem_agent}}'
    last = dec[MEM_ROUNDS - 1]["total"]["inuse_space"]
    check(key in metrics and 0 <= metrics[key] - last < MIB,
          f"/metrics {key} = {metrics.get(key)}, the last push's inuse {last}")
    check(metrics.get("pybpfprof_memory_ranges", 0) > 0 and
          metrics.get("pybpfprof_memory_intervals_total") == MEM_ROUNDS,
          f"/metrics ranges {metrics.get('pybpfprof_memory_ranges')}, intervals "
          f"{metrics.get('pybpfprof_memory_intervals_total')}")
    # (under ASan, freed memory waits in its quarantine: a looser bound)
    rss_slack = 16384 if os.environ.get("PYBPFPROF_SANITIZE") == "1" else 4096
    check(fds[-1] <= fds[1] and rss[-1] - rss[1] < rss_slack,
          f"agent fds {fds}, RSS KiB {rss}: not flat over the churn")
    return (f"{len(mem)} memory pushes; keep line {min(shares):.1%}-{max(shares):.1%} of in use, "
            f"{held[keep] / MIB:.1f} MiB at the end; big line 0 of 200 MiB each interval; "
            f"agent fds {fds[1]}->{fds[-1]}, RSS {rss[1]}->{rss[-1]} KiB")


def rss_bytes(pid):
    return rss_kib(pid) * 1024


def sink_figures(port, sink):
    """/metrics' figures of one sink: waiting bytes and profiles, dropped."""
    m = scrape(port)
    k = f"{{sink={sink}}}"
    return (m[f"pybpfprof_sink_queue_bytes{k}"], m[f"pybpfprof_sink_queue_depth{k}"],
            m[f"pybpfprof_sink_dropped_total{k}"])


@test
def agent_queue_bytes():
    """--queue-mb (issue 28, point 13): a --push sink whose server takes the
    connection and never answers, profiles of hundreds of KB each
    (agent_bigstacks.py: 800 functions with 4000-letter random names). At
    every scrape the bytes waiting in its queue are within --queue-mb 2, and
    profiles are dropped (counted) once it is full; after four times the
    budget more, while four times the budget of profiles more again are made
    (their --output-dir copies, whose sizes are the bodies'), the agent's RSS
    grows by less than the budget and the largest profile, where it used to
    keep every one. The
    stop takes the sinks' 5 s, not the push's 15 s timeout."""
    tok = token()
    budget = 2 * MIB
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)  # and never accept(): the kernel completes the handshakes
    port = free_port()
    with srv, Workloads() as wl, tempfile.TemporaryDirectory() as out:
        wl.start("/usr/bin/python3.11", "agent_bigstacks.py", tok)
        prof = agent(["--match", tok, "--interval", 1, "--push",
                      f"http://127.0.0.1:{srv.getsockname()[1]}", "--queue-mb", budget / MIB,
                      "--output-dir", out, "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            seen, full, waiting, deadline = {}, None, [], time.monotonic() + 150
            while True:
                check(time.monotonic() < deadline, f"{sum(seen.values())} bytes of profiles in "
                      f"150 s: {prof.stderr()[-300:]}")
                prof.watch(0.3)
                for f in Path(out).iterdir():
                    if f.name.endswith(".pb.gz") and not f.name.startswith("."):
                        seen[f.name] = f.stat().st_size
                qbytes, depth, dropped = sink_figures(port, "push")
                waiting.append(qbytes)
                check(qbytes <= budget, f"{qbytes:.0f} bytes waiting ({depth:.0f} profiles), "
                      f"--queue-mb {budget / MIB}")
                made = sum(seen.values())
                if full is None and dropped >= 1:
                    full = (made, None)
                # the RSS from after a warm-up (the encoders' buffers at their largest)
                if full and full[1] is None and made - full[0] >= 4 * budget:
                    full = (made, rss_bytes(prof.p.pid))
                if full and full[1] is not None and made - full[0] >= 4 * budget:
                    break
            rss1 = rss_bytes(prof.p.pid)
            t = time.monotonic()
            stop_agent(prof)
            stopped = time.monotonic() - t
        finally:
            prof.kill()
    largest = max(seen.values())
    grew = rss1 - full[1]
    # (under ASan, freed memory waits in its quarantine: RSS says nothing there)
    # (the profile being built and the one being sent besides the queue's
    # budget: twice the largest; a queue without the bound holds the 4
    # budgets made meanwhile)
    check(os.environ.get("PYBPFPROF_SANITIZE") == "1" or grew <= budget + 2 * largest,
          f"agent RSS grew {grew / MIB:.1f} MiB while {(made - full[0]) / MIB:.1f} MiB of "
          f"profiles more were made (budget {budget / MIB} MiB, largest {largest / MIB:.2f} MiB)")
    # a server that never answers holds the exit no longer than the 5 s given to the sinks
    check(stopped < 5 + 3, f"the agent took {stopped:.1f} s to stop")
    return (f"{len(seen)} profiles, {made / MIB:.1f} MiB, largest {largest / MIB:.2f} MiB; "
            f"waiting at most {max(waiting) / MIB:.2f} MiB of {budget / MIB} MiB, {dropped:.0f} "
            f"dropped; RSS +{grew / MIB:.1f} MiB while {(made - full[0]) / MIB:.1f} MiB more "
            f"were made; stopped in {stopped:.1f} s")


def pprof_sample_labels(path):
    """Every sample of a gzip pprof file, as protoc reads it: [(key, str or num)]."""
    prof = protoc_decode(gzip.decompress(Path(path).read_bytes()), "perftools.profiles.Profile",
                         errors="replace")
    strings = prof["string_table"]
    out = []
    for smp in prof.get("sample", []):
        out.append([(strings[lab["key"][0]],
                     strings[lab["str"][0]] if "str" in lab else lab.get("num", [0])[0])
                    for lab in smp.get("label", [])])
    return out


def pprof_tags(path):
    """go tool pprof -tags (in samples): {tag: (its total, {value: samples})}."""
    tags, cur = {}, None
    for line in go_pprof(path, "-tags", "-sample_index=samples").splitlines():
        m = re.match(r"\s*(\S+): Total ([\d.]+)$", line)
        if m:
            cur = tags[m.group(1)] = (float(m.group(2)), {})
            continue
        m = re.match(r"\s*([\d.]+) \(\s*[\d.]+%\): (.*)$", line)
        if m and cur:
            cur[1][m.group(2).strip()] = float(m.group(1))
    return tags


@test
def agent_pid_once():
    """The pid is on every pprof sample once (issue 29, point 8): in each
    --output-dir file, as protoc reads it, every sample has one pid label (a
    number) and go tool pprof -tags totals each tag, the pid's included, to
    exactly the file's samples."""
    tok = token()
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        a = spin(wl, "alpha", tok)
        prof = agent(["-p", a.pid, "--interval", 1, "--output-dir", out])
        try:
            prof.wait_attached()
            deadline = time.monotonic() + 30
            while len(list(Path(out).glob("*.pb.gz"))) < 3:
                check(time.monotonic() < deadline and prof.watch(0.1),
                      f"no 3 files in 30 s: {prof.stderr()[-300:]}")
            stop_agent(prof)
        finally:
            prof.kill()
        files = sorted(Path(out).glob("*.pb.gz"))
        checked = 0
        for f in files:
            total = decode_pprof(f.read_bytes())["total"]
            if not total:
                continue
            for labels in pprof_sample_labels(f):
                pids = [v for k, v in labels if k == "pid"]
                check(pids == [a.pid], f"{f.name}: a sample's pid labels {pids}")
            tags = pprof_tags(f)
            check(tags.get("pid", (0, {}))[1] == {str(a.pid): total},
                  f"{f.name}: go tool pprof -tags pid {tags.get('pid')}, {total} samples")
            wrong = {k: t for k, (t, _) in tags.items() if t != total}
            check(not wrong, f"{f.name}: tags whose total is not the {total} samples: {wrong}")
            checked += 1
        check(checked >= 2, f"{checked} files with samples of {len(files)}")
    return f"{checked} files: every tag totals the file's samples, one pid per sample"


@test
def agent_idle_no_file():
    """An idle process gets no file (issue 29, point 8): beside a busy one,
    a sleeping interpreter (idle.py) under -p, --interval 1: the busy one's
    intervals are written, the idle one has none, and the intervals it did
    not make are counted (/metrics' pybpfprof_intervals_empty_total, and the
    exit summary: at least one per interval, as each cut found it empty)."""
    tok = token()
    port = free_port()
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        a = spin(wl, "alpha", tok)
        idle = wl.start("/usr/bin/python3.11", "idle.py")
        prof = agent(["-p", f"{a.pid},{idle.pid}", "--interval", 1, "--output-dir", out,
                      "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            deadline = time.monotonic() + 30
            while len(list(Path(out).glob(f"*-{a.pid}.pb.gz"))) < 3:
                check(time.monotonic() < deadline and prof.watch(0.1),
                      f"no 3 files in 30 s: {prof.stderr()[-300:]}")
            prof.watch(0.5)
            m = scrape(port)
            stop_agent(prof)
        finally:
            prof.kill()
        busy = sorted(Path(out).glob(f"*-{a.pid}.pb.gz"))
        lazy = sorted(Path(out).glob(f"*-{idle.pid}.pb.gz"))
    check(not lazy, f"files of the idle process: {[f.name for f in lazy]}")
    summary = [ln for ln in prof.stderr().splitlines() if "profiles closed" in ln][-1]
    closed, empty = (int(x) for x in re.findall(r"(\d+) profiles closed.*; (\d+) empty",
                                                 summary)[0])
    check(closed == len(busy), f"{closed} profiles closed, {len(busy)} files: {summary}")
    check(empty >= closed, f"{empty} empty intervals for {closed} of the busy one: {summary}")
    check(m["pybpfprof_intervals_empty_total"] >= 2,
          f"/metrics: {m['pybpfprof_intervals_empty_total']} empty intervals after 3 s")
    return f"{len(busy)} files of the busy process, none of the idle one; {empty} empty not made"
