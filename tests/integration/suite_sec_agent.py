"""`pybpfprof agent` against hostile local users (issue 28, points 5, 10
to 13): its --output-dir and --max-disk, its --metrics endpoint, the labels
that say whose a process is.

The hostile user is nobody (setpriv), acting on directories it owns or on
the agent's listening port while the agent runs as root; the workloads are
suite_agent's busy loops, kept apart from other Python processes on the
host by a token on their command line (--match).
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from agent_receiver import Receiver, decode_otlp
from harness import TARGETS, Fail, Workloads, check, read_stdout_until, test
from suite_agent import (agent, by_pid, free_port, pprof_sample_labels, pprof_tags, scrape, spin,
                         stop_agent, token)

AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
NOBODY = 65534
MANIFEST = ".pybpfprof-agent-files"


def need_setpriv():
    check(shutil.which("setpriv") is not None, "setpriv (util-linux) not found")


def as_nobody(*argv):
    """A short command run as nobody, to its end."""
    r = subprocess.run([*AS_NOBODY, *map(str, argv)], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"as nobody, {argv}: exit {r.returncode}: {r.stderr.strip()}")


def agent_files(d):
    """The agent's profile files in d (names sort by time)."""
    return sorted(p.name for p in Path(d).iterdir() if p.name.endswith(".pb.gz") and
                  not p.name.startswith("."))


def wait_new_files(prof, d, n, after=(), timeout=30):
    """Waits until n agent files not in after have been seen in d (some may
    have been deleted since, by --max-disk): their names."""
    deadline = time.monotonic() + timeout
    new = set()
    while True:
        new |= {f for f in agent_files(d) if f not in after}
        if len(new) >= n:
            return sorted(new)
        check(prof.running(), f"the agent exited ({prof.rc}): {prof.stderr()[-400:]}")
        check(time.monotonic() < deadline, f"{len(new)} new files in {d} after {timeout} s, "
              f"expected {n}: {prof.stderr()[-400:]}")
        prof.watch(0.05)


def nobody_dir(parent=None):
    """A new directory owned by nobody (0755)."""
    d = tempfile.mkdtemp(prefix="pybpfprof-sec-agent-", dir=parent)
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    return d


@test
def sec_agent_dir_swapped():
    """nobody owns --output-dir's parent: mid-run it renames the directory
    and puts a link to a root-only directory in its place. The agent writes
    on into the directory it opened (now under its new name) and says the
    path names another one; the root-only directory gets no file and loses
    none (a planted one, named like the agent's oldest, with --max-disk
    over)."""
    need_setpriv()
    tok = token()
    with Workloads() as wl, tempfile.TemporaryDirectory() as root_only:
        os.chmod(root_only, 0o700)
        planted = Path(root_only, "20000101T000000Z-spin-1.pb.gz")
        planted.write_bytes(b"root's own file\n")
        parent = nobody_dir()
        try:
            out = Path(parent, "out")
            as_nobody("mkdir", out)
            spin(wl, "alpha", tok)
            prof = agent(["--match", tok, "--interval", 1, "--output-dir", out,
                          "--max-disk", 12 / 1024])
            try:
                prof.wait_attached()
                before = wait_new_files(prof, out, 1)
                as_nobody("mv", out, f"{out}.old")
                as_nobody("ln", "-s", root_only, out)
                after = wait_new_files(prof, f"{out}.old", 3, after=before)
                stop_agent(prof)
            finally:
                prof.kill()
            there = sorted(os.listdir(root_only))
            check(there == [planted.name], f"the root-only directory holds {there}")
            check(planted.read_bytes() == b"root's own file\n", "the planted file changed")
            check("no longer names the directory the agent opened" in prof.stderr(),
                  f"no warning of the swap: {prof.stderr()[-400:]}")
            return (f"{len(after)} files written after the swap into the directory the agent "
                    f"held (renamed), none in the link's target")
        finally:
            subprocess.run(["rm", "-rf", parent], check=False)


def dir_bytes(d):
    return sum(Path(d, f).stat().st_blocks * 512 for f in agent_files(d))


@test
def sec_agent_max_disk_only_its_own():
    """--max-disk deletes only the files the agent wrote. In a directory
    nobody owns, a root file and a nobody file named like the agent's oldest
    are planted; three runs with a 12 KiB budget: the first deletes only its
    own files; the second takes the first's files over (its manifest,
    checked file by file) and deletes those first; before the third, nobody
    puts a manifest of its own in place, naming the root file exactly: it is
    not trusted, and the root file stays."""
    need_setpriv()
    tok = token()
    budget = 12 * 1024
    out = nobody_dir()
    try:
        mine = Path(out, "19990101T000000Z-spin-1.pb.gz")
        mine.write_bytes(b"root's copy, kept\n")
        theirs = "19990101T000001Z-spin-2.pb.gz"
        as_nobody("sh", "-c", f"echo nobody > {out}/{theirs}")
        planted = {mine.name, theirs}
        runs = []
        with Workloads() as wl:
            spin(wl, "alpha", tok)
            for k in range(3):
                if k == 2:
                    st = mine.stat()
                    forged = (f"pybpfprof-agent-files 1\n{mine.name} {st.st_dev} {st.st_ino} "
                              f"{st.st_ctime_ns // 10**9} {st.st_ctime_ns % 10**9} 4096\n")
                    as_nobody("sh", "-c", f"printf '{forged}' > {out}/forged && "
                              f"mv -f {out}/forged {out}/{MANIFEST}")
                before = set(agent_files(out))
                prof = agent(["--match", tok, "--interval", 1, "--output-dir", out,
                              "--max-disk", budget / 1048576])
                try:
                    prof.wait_attached()
                    new = wait_new_files(prof, out, 4, after=before)
                    stop_agent(prof)
                finally:
                    prof.kill()
                now = set(agent_files(out))
                check(planted <= now, f"run {k + 1}: planted files deleted: {planted - now}")
                check(mine.read_bytes() == b"root's copy, kept\n", "the root file changed")
                # (run 3 trusts no manifest: run 2's files are not its own)
                ours = now - planted if k < 2 else now & set(new)
                check(sum(Path(out, f).stat().st_blocks * 512 for f in ours) <= budget,
                      f"run {k + 1}: the agent's files take more than {budget} bytes: {ours}")
                gone_earlier = (before - planted) - now
                runs.append((len(new), len(before - planted), len(gone_earlier), prof.stderr()))
        check(runs[0][2] == 0, "run 1: there were no files of earlier runs to delete")
        check(runs[1][1] >= 1 and runs[1][2] == runs[1][1],
              f"run 2: {runs[1][2]} of the {runs[1][1]} files of run 1 deleted")
        check("is not the agent's (another user owns it)" in runs[2][3] and runs[2][2] == 0,
              f"run 3: nobody's manifest not refused ({runs[2][2]} files of run 2 deleted): "
              f"{runs[2][3][-400:]}")
        return (f"3 runs: {[r[0] for r in runs]} files written; run 2 deleted all {runs[1][2]} "
                f"left by run 1; the planted root and nobody files, and nobody's forged "
                f"manifest's entry, stayed")
    finally:
        subprocess.run(["rm", "-rf", out], check=False)


def spin_as_nobody(wl, kind, tok):
    """suite_agent's busy loop run by nobody: a process any local user can start."""
    return wl.spawn([*AS_NOBODY, "/usr/bin/python3.11", TARGETS / "spin.py", kind, tok])


def run_agent(args, seconds):
    """The agent for that long after it attached, then stopped: its stderr."""
    prof = agent(args)
    try:
        prof.wait_attached()
        prof.watch(seconds)
        stop_agent(prof)
    finally:
        prof.kill()
    return prof.stderr()


@test
def sec_agent_uid_labels():
    """Whose a process is, on every profile (issue 28, point 12): root's and
    nobody's processes of one service (spin). Each profile says its
    process's effective uid and user: in the gzip pprof files (protoc: one
    uid and one user label per sample; go tool pprof -tags totals them to the
    samples), in Pyroscope's series name, and in OTLP's resource
    (process.user.id, an integer, and process.user.name)."""
    need_setpriv()
    tok = token()
    with Workloads() as wl, Receiver() as rcv, tempfile.TemporaryDirectory() as out:
        mine, theirs = spin(wl, "alpha", tok), spin_as_nobody(wl, "beta", tok)
        run_agent(["--match", tok, "--interval", 1, "--push", rcv.url, "--otlp", rcv.url,
                   "--output-dir", out], 3.5)
        want = {mine.pid: ("0", "root"), theirs.pid: (str(NOBODY), "nobody")}
        files = 0
        for f in sorted(Path(out).glob("*.pb.gz")):
            pid = int(f.name.rsplit("-", 1)[1].split(".")[0])
            for labels in pprof_sample_labels(f):
                got = ([v for k, v in labels if k == "uid"], [v for k, v in labels if k == "user"])
                check(got == ([want[pid][0]], [want[pid][1]]),
                      f"{f.name}: a sample's uid and user labels {got}, expected {want[pid]}")
            tags = pprof_tags(f)
            total = tags["pid"][0] if "pid" in tags else 0
            check(tags.get("uid", (0, {}))[1] == ({want[pid][0]: total} if total else {}),
                  f"{f.name}: go tool pprof -tags uid {tags.get('uid')}, {total} samples")
            files += 1
        pushes = by_pid(rcv.snapshot(), list(want))
        for pid, (uid, user) in want.items():
            check(pushes[pid], f"no push of pid {pid}")
            for p in pushes[pid]:
                check((p.labels.get("uid"), p.labels.get("user")) == (uid, user),
                      f"pid {pid}: Pyroscope labels {p.labels}")
        otlp = [decode_otlp(b)["resource"] for b, _, _ in rcv.otlp]
        for pid, (uid, user) in want.items():
            res = [r for r in otlp if r.get("process.pid") == pid]
            check(res and all(r.get("process.user.id") == int(uid) and
                              r.get("process.user.name") == user for r in res),
                  f"pid {pid}: OTLP resources {res[:1]}")
    return (f"{files} files, {sum(len(v) for v in pushes.values())} pushes and {len(otlp)} OTLP "
            f"requests: uid 0 / root and {NOBODY} / nobody on each")


@test
def sec_agent_match_user():
    """--match-user (issue 28, point 12): nobody's process named like root's
    service. With --match-user nobody only nobody's is profiled; with
    --match-user 0 only root's; with --merge the service splits by user (two
    profiles per interval, each holding its user's pid only)."""
    need_setpriv()
    tok = token()
    with Workloads() as wl:
        mine, theirs = spin(wl, "alpha", tok), spin_as_nobody(wl, "beta", tok)
        seen = {}
        for sel in ("nobody", "0"):
            with Receiver() as rcv:
                run_agent(["--match", tok, "--match-user", sel, "--interval", 1, "--push",
                           rcv.url], 2.5)
                seen[sel] = {int(p.labels["pid"]) for p in rcv.snapshot()}
        check(seen == {"nobody": {theirs.pid}, "0": {mine.pid}},
              f"pids pushed by --match-user: {seen}")
        with Receiver() as rcv:
            run_agent(["--match", tok, "--merge", "--interval", 1, "--push", rcv.url], 2.5)
            merged = rcv.snapshot()
    by_uid = {}
    for p in merged:
        check(p.app == "spin" and "pid" not in p.labels, f"merged push {p.name}")
        pids = p.decoded()["nums"].get("pid", set())
        by_uid.setdefault(p.labels.get("uid"), set()).update(pids)
    check(by_uid == {"0": {mine.pid}, str(NOBODY): {theirs.pid}},
          f"--merge: pids by uid label {by_uid}")
    return f"--match-user nobody: {seen['nobody']}, 0: {seen['0']}; --merge by user: {by_uid}"


SCRAPE_DEADLINE = 3.0  # seconds: a scrape answered later than this fails


@test
def sec_agent_metrics_slow_clients():
    """--metrics under a local user's slow clients (issue 28, point 10):
    nobody holds 100 connections to the port, each sending its request a
    byte a second and opening another 0.2 s after the agent closes one. For
    8 s the test scrapes twice a second: every scrape is answered (200)
    within 3 s; nobody's connections beyond its 8 were closed at once and
    its held ones at their 3 s deadline, as /metrics counts."""
    need_setpriv()
    tok = token()
    port = free_port()
    with Workloads() as wl, tempfile.TemporaryDirectory() as out:
        a = spin(wl, "alpha", tok)
        prof = agent(["-p", a.pid, "--interval", 1, "--output-dir", out,
                      "--metrics", f"127.0.0.1:{port}"])
        try:
            prof.wait_attached()
            slow = wl.spawn([*AS_NOBODY, "/usr/bin/python3.11", TARGETS / "agent_slow_clients.py",
                             port, 100])
            read_stdout_until(slow, lambda b: b"reopened" in b, "holding its connections")
            times, end = [], time.monotonic() + 8
            while time.monotonic() < end:
                t = time.monotonic()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                                timeout=SCRAPE_DEADLINE) as r:
                        body = r.read()
                        status = r.status
                except OSError as e:
                    raise Fail(f"a scrape failed after {time.monotonic() - t:.2f} s "
                                         f"({len(times)} answered before): {e}") from None
                times.append(time.monotonic() - t)
                check(status == 200 and b"pybpfprof_samples_total" in body,
                      f"scrape answered {status}")
                check(times[-1] < SCRAPE_DEADLINE, f"a scrape took {times[-1]:.2f} s")
                prof.watch(0.5)
            m = scrape(port)
            stop_agent(prof)
        finally:
            prof.kill()
    refused = m["pybpfprof_metrics_connections_refused_total"]
    late = m["pybpfprof_metrics_connections_timed_out_total"]
    check(refused >= 100 - 8 and late >= 8,
          f"nobody's connections: {refused:.0f} refused, {late:.0f} cut at their deadline")
    return (f"{len(times)} scrapes, the slowest {max(times) * 1000:.0f} ms; nobody's connections: "
            f"{refused:.0f} refused, {late:.0f} cut at 3 s")
