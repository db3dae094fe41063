# Real applications nobody here wrote the libraries of (issue 29, item 2):
# programs of our own built on Debian's packages for /usr/bin/python3.11, as a
# new user would profile them. A dask.distributed job on a LocalCluster of
# worker processes, a Flask app under gunicorn with several workers and
# loopback load (CPU and wall mode, -p --subprocesses and -a), a pandas/numpy
# pipeline with --native (attach and launch), a process hung in a requests
# call on a socket that never answers and one in a self-deadlock (dump
# --locals), and an idle thread pool in wall mode (--idle).
#
# Each program measures its own truth (thread CPU time per part, wall time
# per endpoint, the lines its markers are on) and the test compares the
# profile with it: shares within a bound stated per test, derived from the
# run's own sample counts (a share of n samples spreads by sqrt(p(1-p)/n),
# whatever the machine's load), the right lines, the processes found, and
# every counter (dropped, truncated, partial, unresolved, native unplaced,
# wall unmatched) within a stated bound.

import json
import math
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

from pathlib import Path

from harness import (RUN_SLACK, TARGETS, Fail, Skip, Workloads, check, check_cpu_samples,
                     functions, interpreter, load_report, read_stdout_until, run_profiler,
                     sanity, source_line, stderr_tail, test)
from suite_procs import Background


def need(py, *modules):
    """Skips unless python imports every module (Debian's packages, which
    tests/install-deps.sh installs)."""
    r = subprocess.run([str(py.python), "-c", "import " + ", ".join(modules)],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise Skip(f"{py} cannot import {', '.join(modules)} (tests/install-deps.sh installs "
                   f"Debian's packages): {r.stderr.strip()[-200:]}")


def share_bound(n, p, systematic=0.02):
    """How far a share p of n samples may stray from the truth by chance:
    3 standard deviations of a binomial share, plus `systematic` (the work's
    edges, a tick landing between two parts)."""
    return 3 * math.sqrt(max(p * (1 - p), 0.01) / max(n, 1)) + systematic


def check_share(what, got, other, truth, truth_other, systematic=0.02):
    """got/(got+other) samples against truth/(truth+truth_other): within
    share_bound. Returns (share, truth share, bound)."""
    n = got + other
    check(n > 0, f"{what}: no samples")
    share, real = got / n, truth / (truth + truth_other)
    bound = share_bound(n, real, systematic)
    check(abs(share - real) <= bound,
          f"{what}: {share:.1%} of {n} samples, the program measured {real:.1%}: "
          f"expected within {bound * 100:.1f} pp")
    return share, real, bound


def model_stacks(rep, pid):
    """The model's stacks of process pid: (tid, count, frames innermost
    first, each (qualname, file, line, kind)); kind "python", "native",
    "kernel", or "off-cpu" for wall mode's pseudo-frame."""
    m = rep["model"]
    funcs, frames = m["functions"], m["frames"]
    out = []
    for proc in m["processes"]:
        if proc["pid"] != pid:
            continue
        for st in proc["stacks"]:
            tid, count, idx = st[0], st[1], st[2]
            fr = []
            for i in idx:
                fi, line = frames[i]
                f = funcs[fi]
                kind = f[4] if len(f) > 4 else ("off-cpu" if f[1] == "<off-CPU>" else "python")
                fr.append((f[0], f[1], line, kind))
            out.append((tid, count, fr))
    return out


def counters(rep, pids):
    """Samples and their counters summed over the sections of pids."""
    got = {"samples": 0, "truncated": 0, "partial": 0, "unresolved": 0}
    for proc in rep["processes"]:
        if proc["pid"] in pids:
            for k in got:
                got[k] += proc[k]
    return got


def check_counters(rep, pids, unresolved=0.01, partial=0.01, truncated=0, dropped=0.005):
    """Every counter of the app's processes within its bound (a fraction of
    their samples): what could not be named, read or kept. Returns them."""
    c = counters(rep, pids)
    n = c["samples"]
    check(n > 0, f"no samples in pids {sorted(pids)}")
    for key, frac in (("unresolved", unresolved), ("partial", partial),
                      ("truncated", truncated)):
        check(c[key] <= frac * n, f"{c[key]} of {n} samples {key} (bound {frac:.1%})")
    drops = rep["samples"]["dropped"]
    check(drops <= dropped * rep["samples"]["total"] + 1,
          f"{drops} of {rep['samples']['total']} samples dropped (bound {dropped:.1%})")
    c["dropped"] = drops
    return c


def check_hot_line(proc, func, script_path, script, marker):
    """func's lines all lie in its own body, and the marker's line has the
    most self samples of them: (line, its self samples, func's self)."""
    want, _ = source_line(script, marker)
    rows = [ln for ln in proc["lines"] if ln["qualname"] == func]
    check(rows, f"no lines of {func}")
    check(all(ln["file"] == script_path for ln in rows),
          f"{func}'s lines in files {sorted({ln['file'] for ln in rows})}")
    first = functions(proc)[func]["line"]
    end = first + 12
    check(all(first <= ln["line"] <= end for ln in rows),
          f"{func} (from line {first}) has lines {sorted(ln['line'] for ln in rows)}")
    top = max(rows, key=lambda ln: ln["self"])
    check(top["line"] == want, f"{func}'s hottest line is {top['line']}, the marker "
          f"{marker!r} is on line {want} ({[(ln['line'], ln['self']) for ln in rows]})")
    return want, top["self"], sum(ln["self"] for ln in rows)


def descendants(pid):
    """Every live descendant of pid, from /proc's children lists."""
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = Path(f"/proc/{p}/task/{t}/children").read_text().split()
            except OSError:
                continue
            for k in map(int, kids):
                if k not in out:
                    out.add(k)
                    todo.append(k)
    return out


def kill_pids(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# ------------------------------------------------------------------ dask

@test
def apps_dask():
    """A dask.distributed job on a LocalCluster of 2 worker processes,
    profiled with -p CLIENT --subprocesses while the job runs: every
    worker is found (and no process outside the app's tree), each worker's
    split between its two task functions is the split of the CPU time the
    tasks measured themselves (thread_time) within 3 sd + 2 pp, each
    function's samples are its CPU time x rate (harness bound), the hot lines
    are the marked ones, and under 1% of samples are unresolved or partial,
    none truncated, under 0.5% dropped."""
    py = interpreter("debian")
    need(py, "dask.distributed")
    freq = 999
    script = "apps_dask_job.py"
    with Workloads() as wl:
        p = wl.spawn(py.argv(script, [300]), wait_ready=False, stdin=subprocess.PIPE)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready", timeout=120).decode()
        workers = [int(x) for x in re.search(r"^workers (.*)$", buf, re.M).group(1).split()]
        tree = descendants(p.pid)
        try:
            check(len(workers) == 2 and set(workers) <= tree,
                  f"workers {workers}, the client's descendants {sorted(tree)}")
            bg = Background(["-p", p.pid, "--subprocesses"], freq)
            try:
                bg.wait_attached(timeout=60)
                p.stdin.write(b"go\n")
                p.stdin.flush()
                buf = read_stdout_until(p, lambda b: b"truth " in b and b.endswith(b"\n"),
                                        "done", timeout=300).decode()
                rep = bg.finish()
            finally:
                bg.kill()
            p.stdin.write(b"quit\n")
            p.stdin.flush()
            p.wait(timeout=60)
        finally:
            kill_pids(tree)
    truth = {int(k): v for k, v in json.loads(buf.split("truth ", 1)[1]).items()}
    check(set(truth) == set(workers), f"tasks ran in {sorted(truth)}, workers are {workers}")
    sections = {proc["pid"]: proc for proc in rep["processes"]}
    check(set(workers) | {p.pid} <= set(sections),
          f"sections {sorted(sections)}: workers {workers} or the client {p.pid} missing")
    check(set(sections) <= tree | {p.pid},
          f"sections {sorted(sections)} beyond the app's processes {sorted(tree | {p.pid})}")
    shown = []
    for pid in workers:
        proc = sections[pid]
        fns = functions(proc)
        a = fns.get("tally_words", {}).get("total", 0)
        b = fns.get("score_rows", {}).get("total", 0)
        ta, tb = truth[pid]["tally_words"], truth[pid]["score_rows"]
        share, real, bound = check_share(f"worker {pid}: tally_words", a, b, ta, tb)
        check_cpu_samples(a, ta / 1e9, freq, f"worker {pid}: tally_words")
        check_cpu_samples(b, tb / 1e9, freq, f"worker {pid}: score_rows")
        path = fns["tally_words"]["file"]
        check(path == py.script_path(script), f"tally_words in {path!r}")
        check_hot_line(proc, "tally_words", path, script, "TALLY-HOT")
        check_hot_line(proc, "score_rows", path, script, "SCORE-HOT")
        shown.append(f"{pid}: tally {share:.1%} (measured {real:.1%}, +-{bound * 100:.1f}pp, "
                     f"{a + b} samples)")
    c = check_counters(rep, set(sections))
    return "; ".join(shown) + (f"; {len(sections)} processes, counters {c}")


# ------------------------------------------------------------- gunicorn

SHOP = "apps_wsgi_shop.py"
VIEWS = ("price_quote", "catalog_page", "stock_check")


class Shop:
    """The Flask shop under gunicorn (sync workers, or gthread with
    threads > 1), on a loopback socket the test binds itself (port 0) and
    hands over as fd://N, so no port is shared or raced for; each worker
    writes its views' own measures under truth_dir."""

    def __init__(self, wl, py, workers, threads=1):
        need(py, "flask", "gunicorn")
        self.truth_dir = tempfile.mkdtemp(prefix="pybpfprof-apps-shop-")
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        fd = self.sock.fileno()
        argv = [str(py.python), "-m", "gunicorn", "--chdir", str(TARGETS), "-b", f"fd://{fd}",
                "-w", str(workers), "--threads", str(threads), "--log-level", "warning",
                "apps_wsgi_shop:app"]
        err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=err, pass_fds=(fd,),
                                  env={**os.environ, "APPS_TRUTH_DIR": self.truth_dir})
        self.p.errfile = err
        wl.procs.append(self.p)
        self.sock.close()  # gunicorn holds it now
        self.workers = self.wait_workers(workers)

    def wait_workers(self, n, timeout=60):
        """The workers' pids once n of them answer /ping."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            check(self.p.poll() is None,
                  f"gunicorn exited ({self.p.returncode}): {stderr_tail(self.p)}")
            kids = descendants(self.p.pid)
            if len(kids) == n:
                try:
                    if all(self.get("/ping", timeout=5) == b"pong" for _ in range(2 * n)):
                        return sorted(kids)
                except OSError:
                    pass
            time.sleep(0.1)
        raise Fail(f"gunicorn has workers {sorted(descendants(self.p.pid))} after {timeout} s, "
                   f"expected {n} answering: {stderr_tail(self.p)}")

    def get(self, path, timeout=60):
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                raise Fail(f"GET {path}: HTTP {r.status}: {body[:200]!r}")
            return body
        finally:
            conn.close()

    def load(self, requests, clients=4, deadline_s=300):
        """Sends every request of the list once, from `clients` threads over
        loopback; every answer must be 200. Bounded in count and time."""
        todo = list(requests)
        lock = threading.Lock()
        errors = []
        stop = time.monotonic() + deadline_s

        def client():
            while time.monotonic() < stop:
                with lock:
                    if not todo:
                        return
                    path = todo.pop()
                try:
                    self.get(path)
                except (OSError, Fail) as e:
                    errors.append(f"{path}: {e}")
                    return
        ts = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(max(stop - time.monotonic(), 0) + 5)
        check(not errors, f"load failed: {errors[:3]}")
        check(not todo, f"{len(todo)} requests not sent within {deadline_s} s")

    def truth(self):
        """pid -> view -> {cpu_ns, wall_ns, requests}, from every worker."""
        out = {}
        for f in Path(self.truth_dir).glob("truth-*.json"):
            out[int(f.stem.split("-")[1])] = json.loads(f.read_text())
        return out

    def close(self):
        kids = descendants(self.p.pid)
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        kill_pids(kids)
        for f in Path(self.truth_dir).glob("*"):
            f.unlink()
        os.rmdir(self.truth_dir)


def shop_requests(seed, n=80, stock=True):
    """n of each endpoint (or of the CPU ones), sizes drawn at random."""
    import random
    draw = random.Random(seed)
    reqs = [f"/quote/{draw.randint(100000, 300000)}" for _ in range(n)]
    reqs += [f"/catalog/{draw.randint(1500, 4500)}" for _ in range(n)]
    if stock:
        reqs += [f"/stock/{draw.randint(10, 40)}" for _ in range(n)]
    draw.shuffle(reqs)
    return reqs


def shop_profile(wl, py, args, freq, workers, threads, reqs):
    """The shop started, profiled with args (by a Background run) while
    the requests are served; (shop, report, truth summed over the workers,
    truth per worker)."""
    shop = Shop(wl, py, workers, threads)
    try:
        bg = Background([*[a if a != "MASTER" else shop.p.pid for a in args]], freq)
        try:
            bg.wait_attached(timeout=60)
            shop.load(reqs)
            rep = bg.finish()
        finally:
            bg.kill()
        per = shop.truth()
        pids = set(shop.workers)
    finally:
        shop.close()
    check(set(per) == pids, f"views ran in {sorted(per)}, the workers are {sorted(pids)}")
    total = {v: {"cpu_ns": 0, "wall_ns": 0, "requests": 0} for v in VIEWS}
    for views in per.values():
        for v, m in views.items():
            for k in m:
                total[v][k] += m[k]
    return shop, rep, total, per


def view_samples(rep, pids, key="total"):
    """Each view's samples (key: total, on_cpu, off_cpu) summed over pids."""
    out = dict.fromkeys(VIEWS, 0)
    for proc in rep["processes"]:
        if proc["pid"] in pids:
            fns = functions(proc)
            for v in VIEWS:
                out[v] += fns.get(v, {}).get(key, 0)
    return out


@test
def apps_gunicorn_cpu():
    """Flask under gunicorn, 2 gthread workers of 2 threads each, 120
    requests from 4 loopback clients, profiled with -p MASTER
    --subprocesses: both workers found; price_quote's share of the two CPU
    views is the share of the CPU time the views measured (thread_time)
    within 3 sd + 2 pp, each view's samples its CPU time x rate (harness
    bound), stock_check (asleep) under 5% of its wall time x rate; the hot
    line of price_quote and the render line of catalog_page are the marked
    ones; the master has at most 2% of the samples; counters within
    check_counters' bounds."""
    py = interpreter("debian")
    freq = 999
    with Workloads() as wl:
        shop, rep, truth, per = shop_profile(wl, py, ["-p", "MASTER", "--subprocesses"], freq,
                                             2, 2, shop_requests(29))
    pids = set(shop.workers)
    sections = {proc["pid"]: proc for proc in rep["processes"]}
    check(pids | {shop.p.pid} <= set(sections),
          f"sections {sorted(sections)}: master {shop.p.pid} or workers {sorted(pids)} missing")
    got = view_samples(rep, pids)
    q, c = got["price_quote"], got["catalog_page"]
    tq, tc = truth["price_quote"]["cpu_ns"], truth["catalog_page"]["cpu_ns"]
    share, real, bound = check_share("price_quote of the CPU views", q, c, tq, tc)
    check_cpu_samples(q, tq / 1e9, freq, "price_quote")
    check_cpu_samples(c, tc / 1e9, freq, "catalog_page")
    asleep = got["stock_check"]
    check(asleep <= 0.05 * truth["stock_check"]["wall_ns"] / 1e9 * freq + 3,
          f"stock_check has {asleep} CPU samples for {truth['stock_check']['wall_ns'] / 1e6:.0f} "
          f"ms asleep")
    path = py.script_path(SHOP)
    for pid in pids:
        proc = sections[pid]
        check_hot_line(proc, "price_quote", path, SHOP, "QUOTE-HOT")
        # catalog_page's time is Jinja2's, called from its render line
        line, _ = source_line(SHOP, "CATALOG-RENDER")
        under = sum(n for _, n, fr in model_stacks(rep, pid)
                    if any(f[0] == "catalog_page" and f[2] == line for f in fr))
        whole = functions(proc).get("catalog_page", {}).get("total", 0)
        check(under >= 0.9 * whole, f"pid {pid}: {under} of catalog_page's {whole} samples "
              f"under its render line {line}")
    master = sections[shop.p.pid]["samples"]
    n_all = sum(sections[pid]["samples"] for pid in pids | {shop.p.pid})
    check(master <= 0.02 * n_all + 2, f"the master has {master} of {n_all} samples")
    cnt = check_counters(rep, pids | {shop.p.pid})
    threads = {pid: len([t for t in sections[pid]["threads"] if t["samples"]]) for pid in pids}
    return (f"price_quote {share:.1%} (measured {real:.1%}, +-{bound * 100:.1f}pp, {q + c} "
            f"samples); stock_check {asleep}; master {master}/{n_all}; threads with samples "
            f"{threads}; counters {cnt}")


@test
def apps_gunicorn_wall():
    """The shop under gunicorn, 2 sync workers, 120 requests from 4 loopback
    clients, profiled with --mode wall -p MASTER --subprocesses: each view's
    wall samples are the wall time it measured itself x rate (within 2.5 sd
    + 3% + 2: its off-CPU part is exact), stock_check's share of the three
    views' wall time within 3 sd + 2 pp of the measured share, at least 90%
    of its off-CPU time in the sleep class at its sleep line; every thread
    of every worker is charged the whole run (on + off the CPU = the run's
    duration x rate, within 2% + 2 samples and 3 sd of its on-CPU count), and
    so is the master's, which waits in a select() loop (--idle: its select
    times out each second, and a run of 0.9 s may see it blocked throughout,
    which would hide it); wall.unmatched and wall.dropped 0.
    The views' own measure excludes writing it down (Flask's
    after_request, outside the view's frame)."""
    py = interpreter("debian")
    freq = 499
    with Workloads() as wl:
        shop, rep, truth, per = shop_profile(
            wl, py, ["-p", "MASTER", "--subprocesses", "--mode", "wall", "--idle"], freq, 2,
            1, shop_requests(15, n=40))
    pids = set(shop.workers)
    sections = {proc["pid"]: proc for proc in rep["processes"]}
    check(pids | {shop.p.pid} <= set(sections),
          f"sections {sorted(sections)}: master {shop.p.pid} or workers {sorted(pids)} missing")
    check(rep["mode"] == "wall", f"mode {rep['mode']!r}")
    got = view_samples(rep, pids)
    shown = []
    for v in VIEWS:
        want = truth[v]["wall_ns"] / 1e9 * freq
        tol = 2.5 * math.sqrt(want) + 0.03 * want + 2
        check(abs(got[v] - want) <= tol, f"{v}: {got[v]} wall samples, it measured "
              f"{truth[v]['wall_ns'] / 1e6:.0f} ms = {want:.0f} samples +- {tol:.0f}")
        shown.append(f"{v} {got[v]}/{want:.0f}")
    s = got["stock_check"]
    share, real, bound = check_share("stock_check of the views' wall time", s,
                                     got["price_quote"] + got["catalog_page"],
                                     truth["stock_check"]["wall_ns"],
                                     truth["price_quote"]["wall_ns"] +
                                     truth["catalog_page"]["wall_ns"])
    line, _ = source_line(SHOP, "STOCK-WAIT")
    sleep_at_line = 0
    off = 0
    for pid in pids:
        fn = functions(sections[pid]).get("stock_check", {})
        off += fn.get("off_cpu", 0)
        sleep_at_line += sum(n for _, n, fr in model_stacks(rep, pid)
                             if len(fr) > 1 and fr[0][0] == "<off-CPU: sleep>" and
                             fr[1][0] == "stock_check" and fr[1][2] == line)
    check(sleep_at_line >= 0.9 * off, f"stock_check: {sleep_at_line} of {off} off-CPU samples "
          f"asleep at its sleep line {line}")
    whole = rep["duration_s"] * freq
    # the off-CPU part is measured (exact to a sample); the on-CPU part is counted by a timer,
    # as many as the thread's run slices happened to catch: within 3 sd of its count
    on_cpu = on_cpu_counts(rep, pids | {shop.p.pid})
    short = [f"{'master' if pid == shop.p.pid else 'worker'} {pid} thread {t['tid']}: "
             f"{t['samples']} ({on_cpu.get(t['tid'], 0)} on the CPU)"
             for pid in sorted(pids | {shop.p.pid}) for t in sections[pid]["threads"]
             if abs(t["samples"] - whole) >
             3 * math.sqrt(on_cpu.get(t["tid"], 0)) + 0.02 * whole + 2]
    check(not short, f"threads not charged the whole run ({whole:.0f} samples on and off the "
          f"CPU): {'; '.join(short)}; wall counters {rep['model']['wall']}")
    w = rep["model"]["wall"]
    check(w["unmatched"] == 0 and w["dropped"] == 0, f"wall counters {w}")
    cnt = check_counters(rep, pids | {shop.p.pid})
    per_thread = sorted((t["samples"], on_cpu.get(t["tid"], 0)) for pid in pids | {shop.p.pid}
                        for t in sections[pid]["threads"])
    return (f"threads (samples, on the CPU) {per_thread} of {whole:.0f}; "
            f"{', '.join(shown)}; stock_check {share:.1%} of the views' wall time (measured "
            f"{real:.1%}, +-{bound * 100:.1f}pp); {sleep_at_line}/{off} asleep at line {line}; "
            f"counters {cnt}")


@test(alone=True)
def apps_gunicorn_all():
    """The shop under gunicorn with 3 sync workers, found by -a among every
    process of the host: the master and each worker have a section of their
    own with the master's command line; of the app's processes only, the
    split of the two CPU views within 3 sd + 2 pp of the CPU time they
    measured, and the counters within check_counters' bounds. Alone: -a
    follows every process on the machine."""
    py = interpreter("debian")
    freq = 499
    with Workloads() as wl:
        shop, rep, truth, per = shop_profile(wl, py, ["-a"], freq, 3, 1,
                                             shop_requests(7, n=80, stock=False))
    pids = set(shop.workers) | {shop.p.pid}
    mine = [proc for proc in rep["processes"] if proc["pid"] in pids]
    check(sorted(proc["pid"] for proc in mine) == sorted(pids),
          f"sections of the app {sorted(proc['pid'] for proc in mine)}, its processes "
          f"{sorted(pids)}")
    check(all("apps_wsgi_shop:app" in proc["cmdline"] for proc in mine),
          f"command lines {[proc['cmdline'] for proc in mine]}")
    got = view_samples(rep, set(shop.workers))
    share, real, bound = check_share("price_quote of the CPU views", got["price_quote"],
                                     got["catalog_page"], truth["price_quote"]["cpu_ns"],
                                     truth["catalog_page"]["cpu_ns"])
    cnt = check_counters(rep, pids)
    return (f"{len(mine)} app processes of {len(rep['processes'])}; price_quote {share:.1%} "
            f"(measured {real:.1%}, +-{bound * 100:.1f}pp); counters {cnt}")


# ------------------------------------------------------ pandas --native

PIPE = "apps_pandas_pipeline.py"
STAGES = ("load", "summarize", "enrich", "score")
# Where each stage's native code lives, and the marked line it runs under.
STAGE_LIBS = (("load", "pandas/_libs/parsers.", "LOAD-PARSE"),
              ("summarize", "pandas/_libs/groupby.", "SUMMARIZE-GROUPBY"),
              ("enrich", "numpy/fft/_pocketfft_internal.", "ENRICH-FFT"))


def check_pipeline(rep, pid, truth, path):
    """The four stages' shares of their samples against the CPU time they
    measured (3 sd + 2 pp each); each library's frames only under the line
    of the stage that calls it (load's parser, summarize's groupby,
    enrich's FFT) or under the import of its module, and in at least a quarter of the stage's samples where
    the library does the stage's work (parser, FFT); native counters:
    under 2% of the unwound stacks unplaced, under 1% of samples without
    their native frames. Returns a summary."""
    proc = [p for p in rep["processes"] if p["pid"] == pid]
    check(len(proc) == 1, f"pid {pid}: {len(proc)} sections")
    fns = functions(proc[0])
    got = {s: fns.get(s, {}).get("total", 0) for s in STAGES}
    for s in STAGES:
        check(fns.get(s, {}).get("file") == path, f"{s} in file {fns.get(s, {}).get('file')!r}")
    shown = []
    for s in STAGES:
        share, real, bound = check_share(f"stage {s}", got[s], sum(got.values()) - got[s],
                                         truth[s], sum(truth.values()) - truth[s])
        shown.append(f"{s} {share:.1%}/{real:.1%}")
    stacks = model_stacks(rep, pid)
    for stage, lib, marker in STAGE_LIBS:
        line, _ = source_line(PIPE, marker)
        with_lib = [(n, fr) for _, n, fr in stacks
                    if any(f[3] == "native" and lib in f[1] for f in fr)]
        check(with_lib, f"no native frame of {lib} in any stack")
        # A launched run also sees the library's module being initialised
        # (its init calls Python, numpy's iinfo for one), under the import
        # machinery: that is where it really runs, not astray.
        importing = [fr for _, fr in with_lib if any(f[0] == "_find_and_load" for f in fr)]
        astray = [fr for _, fr in with_lib
                  if not any(f[0] == stage and f[1] == path and f[2] == line for f in fr)
                  and not any(f[0] == "_find_and_load" for f in fr)]
        check(not astray, f"{len(astray)} stacks with {lib} frames not under {stage}:{line}: "
              f"{[[f[0] for f in fr] for fr in astray[:2]]}")
        n = sum(c for c, _ in with_lib)
        if stage != "summarize":  # groupby's kernels are a small part of it
            check(n >= 0.25 * got[stage], f"{lib} in {n} of {stage}'s {got[stage]} samples")
        shown.append(f"{lib.split('/')[-1].rstrip('.')} {n}/{got[stage]} under {stage}:{line}"
                     + (f" ({len(importing)} stacks importing it)" if importing else ""))
    nat = rep["model"]["native"]
    total = rep["samples"]["total"]
    check(nat["stacks"] > 0, f"no stack unwound: {nat}")
    check(nat["unplaced"] <= 0.02 * nat["stacks"] + 1,
          f"{nat['unplaced']} of {nat['stacks']} unwound stacks unplaced: {nat}")
    check(nat["missing"] <= 0.01 * total + 1, f"{nat['missing']} of {total} samples without "
          f"their native frames: {nat}")
    return "; ".join(shown) + f"; native {nat}"


@test
def apps_pandas_native_attach():
    """--native attached to the pandas/numpy pipeline (every library loaded
    before the run): check_pipeline's shares, places and counters; the
    process's counters within check_counters' bounds."""
    py = interpreter("debian")
    need(py, "pandas", "numpy")
    freq = 499
    with Workloads() as wl:
        p = wl.start(py, PIPE, "attach")
        t0 = pipeline_truth(p)
        bg = Background(["-p", p.pid, "--native", "-d", 6], freq)
        try:
            rep = bg.finish(timeout=6 + RUN_SLACK, interrupt=False)
        finally:
            bg.kill()
        t1 = pipeline_truth(p)
    truth = {s: t1[s] - t0[s] for s in STAGES}
    shown = check_pipeline(rep, p.pid, truth, py.script_path(PIPE))
    cnt = check_counters(rep, {p.pid})
    return f"{shown}; counters {cnt}"


def pipeline_truth(p):
    os.kill(p.pid, signal.SIGUSR1)
    buf = read_stdout_until(p, lambda b: b"truth " in b and b.endswith(b"\n"), "truth")
    return json.loads(buf.decode().split("truth ", 1)[1])


@test
def apps_pandas_native_launch():
    """--native launching the pandas/numpy pipeline (pandas' and numpy's
    libraries loaded after the run began): the same checks as attached over
    the stages, whose truth the program prints at its end; the command's
    output passes through and its exit status is pybpfprof's."""
    py = interpreter("debian")
    need(py, "pandas", "numpy")
    freq = 499
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run.json"
        r = run_profiler(["--native", "-F", freq, "-o", out, "--",
                          *py.argv(PIPE, ["launch", 120])], timeout=300)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        rep = load_report(out)
    sanity(rep, freq)
    check("truth " in r.stdout, f"the command's output did not pass through: {r.stdout[:200]!r}")
    truth = json.loads(r.stdout.split("truth ", 1)[1])
    check(len(rep["processes"]) == 1, f"{len(rep['processes'])} processes")
    pid = rep["processes"][0]["pid"]
    shown = check_pipeline(rep, pid, truth, py.script_path(PIPE))
    # launched, the run samples pandas' and numpy's imports too: code objects
    # that live only while a module or class body runs, freed before they are
    # read when the machine is loaded, counted unresolved and never misnamed
    # (17 of 1583 under ASan at load 50 in fresh24)
    cnt = check_counters(rep, {pid}, unresolved=0.025)
    return f"{shown}; counters {cnt}"


# -------------------------------------------------------- hung: dump

HUNG = "apps_hung.py"


def wait_syscall(pid, tid, nrs, what, timeout=30):
    """Until thread tid of pid waits in one of the system calls nrs
    (/proc/PID/task/TID/syscall's first field)."""
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        try:
            seen = Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[0]
        except (OSError, IndexError):
            seen = "?"
        if seen.isdigit() and int(seen) in nrs:
            return int(seen)
        time.sleep(0.05)
    raise Fail(f"thread {tid} of {pid} not {what} after {timeout} s (syscall {seen})")


def check_sources(frames):
    """Every frame's source text is its file's line, read here (the
    workload's files are the host's): the lines are the real ones."""
    import linecache
    for f in frames:
        want = linecache.getline(f["file"], f["line"]).strip()
        check(want and f["source"] == want,
              f"{f['function']} at {f['file']}:{f['line']}: source {f['source']!r}, the file "
              f"says {want!r}")


def local_values(frame):
    return {lo["name"]: lo["value"] for lo in frame.get("locals", [])}


def dumped_thread(pid, tid):
    from suite_dump import dump_json, thread_of
    rep = dump_json(["-p", pid, "--locals"])
    check(len(rep["processes"]) == 1 and rep["processes"][0]["pid"] == pid,
          f"processes {[p['pid'] for p in rep['processes']]}")
    return rep["processes"][0], thread_of(rep["processes"][0], tid)


@test
def apps_dump_requests():
    """A service hung in requests.get on a loopback server that accepts and
    never answers, dumped with --locals: its thread sleeps in the system
    call /proc shows (poll: the socket has a timeout) without the GIL; the innermost frame is socket.py's readinto, the stack
    runs through http.client, urllib3 and requests (Session.send,
    HTTPAdapter.send) down to fetch_report at the marked line, whose locals
    are the url and attempt it was given; every frame's source line is its
    file's; the process is left running."""
    py = interpreter("debian")
    need(py, "requests")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass
    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    url = f"http://127.0.0.1:{srv.getsockname()[1]}/report?id=42&q=\u00e9t\u00e9"
    try:
        with Workloads() as wl:
            p = wl.start(py, HUNG, "requests", url, wait_ready=False)
            buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready", timeout=60).decode()
            tid = int(re.search(r"^tid (\d+)$", buf, re.M).group(1))
            # a socket with a timeout waits in poll(), then reads: x86_64's
            # poll and recvfrom
            nr = wait_syscall(p.pid, tid, (7, 45), "waiting on its socket")
            proc, th = dumped_thread(p.pid, tid)
            check(p.poll() is None, "the process did not survive the dump")
    finally:
        stop.set()
        acceptor.join(5)
        for c in held:
            c.close()
        srv.close()
    check(th["state"] == "sleeping" and th["syscall"] and th["syscall"]["nr"] == nr and
          th["syscall"]["name"] == {7: "poll", 45: "recvfrom"}[nr],
          f"thread state {th['state']}, syscall {th['syscall']}, /proc said {nr}")
    check(th["gil"] == "not held", f"GIL {th['gil']}")
    check(not th["moving"] and not th["truncated"], f"moving {th['moving']}, truncated "
          f"{th['truncated']}")
    frames = th["frames"]
    names = [f["function"] for f in frames]
    check(names[0] == "SocketIO.readinto" and frames[0]["file"].endswith("/socket.py"),
          f"innermost {names[0]} in {frames[0]['file']}")
    for want in ("HTTPResponse.begin", "HTTPConnectionPool.urlopen", "HTTPAdapter.send",
                 "Session.send", "Session.request", "Session.get"):
        check(want in names, f"{want} not in the stack {names}")
    check(names[-2:] == ["fetch_report", "<module>"], f"outermost frames {names[-2:]}")
    line, _ = source_line(HUNG, "HUNG-GET")
    fr = frames[-2]
    check(fr["file"] == py.script_path(HUNG) and fr["line"] == line,
          f"fetch_report at {fr['file']}:{fr['line']}, the marker is line {line}")
    loc = local_values(fr)
    check(loc.get("url") == repr(url) and loc.get("attempt") == "3",
          f"fetch_report's locals {loc}, expected url={url!r}, attempt=3")
    check(re.fullmatch(r"<Session at 0x[0-9a-f]+>", loc.get("session", "")),
          f"session = {loc.get('session')!r}")
    check_sources(frames)
    return (f"{len(frames)} frames, {names[0]} .. fetch_report:{line}; syscall "
            f"{th['syscall']['name']}; url local {loc['url']}")


@test
def apps_dump_deadlock():
    """A self-deadlock and a full queue, dumped with --locals: the restocker
    thread waits in futex without the GIL at Inventory.total's `with` (the
    marked line) called from Inventory.restock, with sku and qty as given;
    the main thread waits in the standard library's Condition.wait under
    Queue.put under deadlock() at the marked line, whose locals hold the
    third order; every frame's source line is its file's."""
    py = interpreter("debian")
    with Workloads() as wl:
        p = wl.start(py, HUNG, "deadlock", wait_ready=False)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        tid = int(re.search(r"^tid (\d+)$", buf, re.M).group(1))
        wait_syscall(p.pid, tid, (202,), "in futex")
        wait_syscall(p.pid, p.pid, (202,), "in futex")
        proc, th = dumped_thread(p.pid, tid)
        from suite_dump import thread_of
        main = thread_of(proc, p.pid)
        check(p.poll() is None, "the process did not survive the dump")
    for t in (th, main):
        check(t["state"] == "sleeping" and t["syscall"]["name"] == "futex" and
              t["gil"] == "not held" and not t["moving"],
              f"thread {t['tid']}: {t['state']}, {t['syscall']}, GIL {t['gil']}")
    check(th["python_name"] == "restocker", f"threading name {th['python_name']!r}")
    names = [f["function"] for f in th["frames"]]
    check(names[:3] == ["Inventory.total", "Inventory.restock", "restocker"] and
          names[-1] == "Thread._bootstrap", f"restocker's stack {names}")
    line, _ = source_line(HUNG, "SELF-DEADLOCK")
    f0, f1 = th["frames"][0], th["frames"][1]
    check(f0["line"] == line, f"Inventory.total at line {f0['line']}, the marker is {line}")
    l0, l1 = local_values(f0), local_values(f1)
    check(l0.get("sku") == "'widget-7'" and re.fullmatch(r"<Inventory at 0x[0-9a-f]+>",
                                                          l0.get("self", "")),
          f"Inventory.total's locals {l0}")
    check(l1.get("sku") == "'widget-7'" and l1.get("qty") == "12", f"restock's locals {l1}")
    mnames = [f["function"] for f in main["frames"]]
    check(mnames == ["Condition.wait", "Queue.put", "deadlock", "<module>"],
          f"main thread's stack {mnames}")
    qline, _ = source_line(HUNG, "QUEUE-FULL")
    dl = main["frames"][2]
    check(dl["line"] == qline, f"deadlock() at line {dl['line']}, the marker is {qline}")
    ld = local_values(dl)
    check(ld.get("order") == "'order-3'" and
          ld.get("orders", "").startswith("['order-1', 'order-2', 'order-3']") and
          re.fullmatch(r"<Queue at 0x[0-9a-f]+>", ld.get("backlog", "")),
          f"deadlock()'s locals {ld}")
    check_sources(th["frames"] + main["frames"])
    return (f"restocker: {' < '.join(names[:3])} at line {line}; main: "
            f"{' < '.join(mnames[:3])} at line {qline}, order {ld['order']}")


# ------------------------------------------------ idle pool: wall, --idle

POOL = "apps_pool_idle.py"


def on_cpu_counts(rep, pids):
    """Each thread's on-CPU samples in rep (tid: count): the part of a wall
    profile a timer counts, as many as the thread's run slices happened to
    catch, where the off-CPU part is measured exactly."""
    on_cpu = {}
    for pid in pids:
        for tid, n, fr in model_stacks(rep, pid):
            if not fr or fr[0][3] != "off-cpu":
                on_cpu[tid] = on_cpu.get(tid, 0) + n
    return on_cpu


def pool_truth(p):
    os.kill(p.pid, signal.SIGUSR1)
    buf = read_stdout_until(p, lambda b: b"truth " in b and b.endswith(b"\n"), "truth")
    jobs, wall = buf.decode().split("truth ", 1)[1].split()
    return int(jobs), int(wall)


@test
def apps_idle_pool_wall():
    """An idle ThreadPoolExecutor beside a busy one, --mode wall --idle: each
    of the three idle workers (blocked since before the run) is charged the
    whole run, off the CPU, at least 95% as lock waits, at the line of
    concurrent.futures' _worker that reads the pool's queue; the busy worker,
    the main thread and the two workers of a pool that runs a burst of CPU
    jobs early in the run and then waits where it always waited, too (on +
    off = the run's duration x rate, within 2% + 2); resize_image's wall samples are the wall time its jobs measured x
    rate (2.5 sd + 3% + 2, + 50 ms: the truth is read at the run's ends).
    Without --idle the three idle workers are left
    out and counted with the burst pool's, idle in the second run
    (wall.idle_hidden 5), and the others shown."""
    import linecache
    py = interpreter("debian")
    freq = 199
    with Workloads() as wl:
        p = wl.start(py, POOL, wait_ready=False)
        buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready").decode()
        tids = {name: int(tid) for name, tid in re.findall(r"^tid (\S+) (\d+)$", buf, re.M)}
        idle = [tid for name, tid in tids.items() if name.startswith("apps-idle")]
        busy = [tid for name, tid in tids.items() if name.startswith("apps-busy")]
        burst = [tid for name, tid in tids.items() if name.startswith("apps-burst")]
        check(len(idle) == 3 and len(busy) == 1 and len(burst) == 2, f"workers {tids}")
        bg = Background(["-p", p.pid, "--mode", "wall", "--idle"], freq)
        try:
            # sampling starts right after -v's "attached" line and ends at
            # the SIGINT: the workload's truth is read at both ends
            bg.wait_attached()
            j0, w0 = pool_truth(p)
            os.kill(p.pid, signal.SIGUSR2)
            read_stdout_until(p, lambda b: b"burst done\n" in b, "done with its burst")
            time.sleep(3)
            j1, w1 = pool_truth(p)
            rep = bg.finish()
        finally:
            bg.kill()
        bg = Background(["-p", p.pid, "--mode", "wall", "-d", 2], freq)
        try:
            hidden = bg.finish(timeout=2 + RUN_SLACK, interrupt=False)
        finally:
            bg.kill()
    proc = [q for q in rep["processes"] if q["pid"] == p.pid][0]
    threads = {t["tid"]: t for t in proc["threads"]}
    whole = rep["duration_s"] * freq
    on_cpu = on_cpu_counts(rep, {p.pid})
    short = [f"{tid}: {threads.get(tid, {}).get('samples', 0)} ({on_cpu.get(tid, 0)} on the "
             f"CPU; off-CPU ns {threads.get(tid, {}).get('off_cpu_ns')})"
             for tid in [p.pid, *busy, *burst, *idle]
             if abs(threads.get(tid, {}).get("samples", 0) - whole) >
             3 * math.sqrt(on_cpu.get(tid, 0)) + 0.02 * whole + 2]
    check(not short, f"threads not charged the whole run ({whole:.0f} samples on and off the "
          f"CPU): {'; '.join(short)} (main {p.pid}, busy {busy}, burst {burst}, idle {idle}); "
          f"wall counters {rep['model']['wall']}")
    stacks = model_stacks(rep, p.pid)
    for tid in idle:
        mine = [(n, fr) for t, n, fr in stacks if t == tid]
        n = sum(c for c, _ in mine)
        lock = sum(c for c, fr in mine if fr[0][0] == "<off-CPU: lock>")
        check(lock >= 0.95 * n, f"idle worker {tid}: {lock} of {n} samples waiting on a lock")
        for c, fr in mine:
            f1 = fr[1]
            src = linecache.getline(f1[1], f1[2])
            check(f1[0] == "_worker" and f1[1].endswith("concurrent/futures/thread.py") and
                  "work_queue.get(" in src,
                  f"idle worker {tid}: {c} samples at {f1[0]} {f1[1]}:{f1[2]} ({src.strip()!r})")
    jobs, wall = j1 - j0, w1 - w0
    fn = functions(proc).get("resize_image", {})
    want = wall / 1e9 * freq
    tol = 2.5 * math.sqrt(want) + 0.03 * want + 2
    # the truth is read within the run, a job's length from each end
    tol += 0.05 * freq
    check(abs(fn.get("total", 0) - want) <= tol,
          f"resize_image: {fn.get('total', 0)} wall samples, its {jobs} jobs measured "
          f"{wall / 1e6:.0f} ms = {want:.0f} samples +- {tol:.0f}")
    w = rep["model"]["wall"]
    check(w["unmatched"] == 0 and w["dropped"] == 0, f"wall counters {w}")
    hproc = [q for q in hidden["processes"] if q["pid"] == p.pid][0]
    shown = {t["tid"] for t in hproc["threads"] if t["samples"]}
    hw = hidden["model"]["wall"]
    check(hw["idle_hidden"] == 5 and not shown & set(idle + burst) and {p.pid, *busy} <= shown,
          f"without --idle: {hw['idle_hidden']} hidden, threads shown {sorted(shown)} (idle "
          f"{idle}, burst {burst}, busy {busy}, main {p.pid})")
    cnt = check_counters(rep, {p.pid})
    return (f"idle workers {[threads[t]['samples'] for t in idle]}, burst "
            f"{[threads[t]['samples'] for t in burst]}, busy "
            f"{threads[busy[0]]['samples']}, main {threads[p.pid]['samples']} "
            f"({on_cpu.get(p.pid, 0)} on the CPU) of {whole:.0f}; "
            f"resize_image {fn.get('total', 0)} for {want:.0f} measured ({jobs} jobs); "
            f"hidden without --idle {hw['idle_hidden']}; intervals whose return was inferred "
            f"{w['inferred']}; counters {cnt}")
