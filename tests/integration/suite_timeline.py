# The timeline (issue 32.1): one run of targets/timeline_work.py, launched
# with --mode wall --gil --gc --imports --subprocesses, writes the run as
# JSON, Perfetto's protobuf trace and Chrome's trace event JSON at once.
# The workload stamps every step itself (CLOCK_MONOTONIC, before and after):
# a thread computes, one sleeps 200 ms, one waits on a lock another holds for
# 300 ms, one waits on a pipe the main thread writes 150 ms later; the main
# thread collects garbage, imports a module that imports another, and forks
# a child that execs timeline_child.py. Then:
#  - timeline_perfetto: the Perfetto file decoded by protoc against our own
#    schema (tests/fixtures/perfetto_trace.proto): a track per process and
#    per thread named as the model names them, each wait a slice of its
#    reason and line placed between the workload's stamps, GC and imports
#    nested as they ran, the fork, exec and exits in order, CPU samples as
#    many per thread as the JSON report counts, and no field our schema lacks;
#  - timeline_trace_json: the trace JSON holds the same slices to the ns,
#    its stacks nest as complete events must, and its counts are the run's;
#  - timeline_speedscope: speedscope's own viewer in headless Chromium opens
#    the trace JSON and shows each thread's timeline, the waits as long as
#    the trace says;
#  - timeline_report: `pybpfprof report` writes both files byte for byte from
#    the JSON, and refuses a timeline output for a profile recorded without;
#  - timeline_cap: --timeline-events 100 keeps 100 events, and every output
#    counts the ones dropped, which with the kept ones are every sample;
#  - sec_timeline_flood: a target run by nobody offers hundreds of thousands
#    of waits a second, from threads named with escape sequences: the run
#    keeps its cap, says what it dropped, and its files and memory are
#    bounded by the cap; no raw escape reaches a file.

import atexit
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from pathlib import Path

from harness import (ROOT, RUN_SLACK, TARGETS, Fail, Profiler, Skip, Workloads, check,
                     interpreter, load_report, parse_protoc_text, run_profiler, source_line, test)

TL_SCRIPT = "timeline_work.py"
TL_FREQ = 499
TL_PROTO = ROOT / "tests/fixtures/perfetto_trace.proto"
TL_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
_run = {}


def tl_tempdir(prefix):
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, True)
    return path


def tl_python():
    py = interpreter("debian")
    why = py.missing()
    if why:
        raise Skip(why)
    return py


def tl_run():
    """The one run every test of the workload reads; later calls reuse it."""
    if _run:
        return _run
    py = tl_python()
    out = tl_tempdir("pybpfprof-timeline-")
    files = {"json": out / "run.json", "trace": out / "run.trace.json",
             "perfetto": out / "run.perfetto-trace"}
    args = ["-F", TL_FREQ, "--mode", "wall", "--gil", "--gc", "--imports", "--subprocesses"]
    for f in files.values():
        args += ["-o", f]
    # A switch the kernel does not report (model.wall.unseen counts them: now
    # and then this kernel lets one pass without its tracepoint) may be one
    # of the few waits the tests look for: the run is made again, twice at most.
    for _ in range(3):
        r = run_profiler([*args, "--", py.python, TARGETS / TL_SCRIPT, out / "marks.json"],
                         timeout=30 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-600:]}")
        rep = load_report(files["json"])
        if not rep["model"]["wall"]["unseen"]:
            break
    marks = json.loads((out / "marks.json").read_text())
    marks["child"] = json.loads((out / "marks.json.child").read_text())
    _run.update(dir=out, files=files, marks=marks, json=rep, py=py,
                trace=json.loads(files["trace"].read_text()),
                perfetto=PerfettoTrace(files["perfetto"].read_bytes()))
    return _run


def marker_line(marker):
    return source_line(TL_SCRIPT, f"# timeline: {marker}")[0]


def script_at(marker):
    """The name a wait at a marker's line has: "REASON at FILE:LINE"."""
    return f"{TARGETS / TL_SCRIPT}:{marker_line(marker)}"


# ------------------------------------------------------------ Perfetto

class PerfettoTrace:
    """A Perfetto file decoded by protoc against our schema, its slices
    paired (a BEGIN without its END, or the reverse, fails) and its callstack
    samples resolved to (function, file, line) frames, innermost first."""

    def __init__(self, data):
        if not shutil.which("protoc"):
            raise Skip("protoc not installed (Debian package protobuf-compiler)")
        r = subprocess.run(["protoc", f"--proto_path={TL_PROTO.parent}",
                            "--decode=pybpfprof.perfetto.Trace", TL_PROTO.name],
                           input=data, capture_output=True, timeout=60)
        check(r.returncode == 0, f"protoc --decode failed: {r.stderr.decode()[-300:]}")
        self.text = text = r.stdout.decode()
        unknown = re.findall(r"^\s*(\d+)(?::| \{)", text, re.M)
        check(not unknown, f"fields our schema does not know: {sorted(set(unknown))}")
        # enum values by name, as strings
        text = re.sub(r": ([A-Z][A-Z0-9_]+)$", r': "\1"', text, flags=re.M)
        self.packets = parse_protoc_text(text).get("packet", [])
        self.tracks, self.slices, self.instants, self.counters = {}, [], [], []
        self.samples, self.summary = [], None
        self._read()

    def _read(self):
        check(self.packets and self.packets[0].get("sequence_flags") == [1] and
              "interned_data" in self.packets[0],
              "the first packet does not clear the sequence's state with its interned data")
        interned = self.packets[0]["interned_data"][0]
        funcs = {s["iid"][0]: s["str"][0] for s in interned.get("function_names", [])}
        files = {s["iid"][0]: s["str"][0] for s in interned.get("source_paths", [])}
        frames = {f["iid"][0]: (funcs[f["function_name_id"][0]], files[f["source_path_iid"][0]],
                                f.get("line_number", [0])[0])
                  for f in interned.get("frames", [])}
        stacks = {c["iid"][0]: [frames[i] for i in reversed(c["frame_ids"])]
                  for c in interned.get("callstacks", [])}
        open_ = collections.defaultdict(list)
        for p in self.packets[1:]:
            check(p.get("trusted_packet_sequence_id") == [1], f"packet off the sequence: {p}")
            ts = p["timestamp"][0]
            if "track_descriptor" in p:
                d = p["track_descriptor"][0]
                self.tracks[d["uuid"][0]] = d
            elif "perf_sample" in p:
                s = p["perf_sample"][0]
                check(p.get("sequence_flags") == [2], "a sample without SEQ_NEEDS_INCREMENTAL")
                self.samples.append({"ts": ts, "pid": s["pid"][0], "tid": s["tid"][0],
                                     "stack": stacks[s["callstack_iid"][0]]})
            else:
                self._event(ts, p["track_event"][0], open_)
        check(not any(open_.values()), f"slices never ended: {dict(open_)}")

    def _event(self, ts, e, open_):
        track = e["track_uuid"][0]
        check(track in self.tracks, f"an event on track {track}, never described")
        kind = e["type"][0]
        ann = {a["name"][0]: (a.get("int_value") or a.get("string_value"))[0]
               for a in e.get("debug_annotations", [])}
        if kind == "TYPE_SLICE_BEGIN":
            open_[track].append({"track": track, "name": e["name"][0], "start": ts,
                                 "cat": e["categories"][0], "ann": ann})
        elif kind == "TYPE_SLICE_END":
            check(open_[track], f"a slice end at {ts} on track {track} with none open")
            s = open_[track].pop()
            s["end"] = ts
            s["depth"] = len(open_[track])
            check(ts - s["start"] == s["ann"]["duration_ns"],
                  f"slice {s['name']!r}: {ts - s['start']} ns, its duration_ns says "
                  f"{s['ann']['duration_ns']}")
            self.slices.append(s)
        elif kind == "TYPE_INSTANT" and track in self.tracks and \
                self.tracks[track].get("name") == ["pybpfprof"]:
            self.summary = ann
        elif kind == "TYPE_INSTANT":
            self.instants.append({"track": track, "name": e["name"][0], "ts": ts, "ann": ann})
        else:
            check(kind == "TYPE_COUNTER", f"event of type {kind}")
            self.counters.append({"track": track, "ts": ts, "value": e["counter_value"][0]})

    def thread_track(self, tid, side=None):
        """The uuid of tid's own track, or of its side track named "SIDE: ..."."""
        own = [u for u, d in self.tracks.items() if "thread" in d and d["thread"][0]["tid"] == [tid]]
        check(len(own) == 1, f"thread {tid} has {len(own)} tracks")
        if side is None:
            return own[0]
        sides = [u for u, d in self.tracks.items() if d.get("parent_uuid") == own and
                 d.get("name", [""])[0].startswith(side + ":")]
        check(len(sides) == 1, f"thread {tid} has {len(sides)} {side!r} tracks")
        return sides[0]

    def process_track(self, pid):
        own = [u for u, d in self.tracks.items() if "process" in d and
               d["process"][0]["pid"] == [pid]]
        check(len(own) == 1, f"process {pid} has {len(own)} tracks")
        return own[0]

    def on(self, track, name=None):
        return [s for s in self.slices if s["track"] == track and
                (name is None or s["name"] == name)]


def thread_label(comm, t):
    """A thread's name as the reports give it: its Python name, its comm
    beside it when that is its own (not the process's, nor the Python name
    cut by the kernel); the comm alone without one."""
    py, name = t.get("python_name") or "", t["name"]
    if py and name and name != comm and not py.startswith(name):
        return f"{py} (comm {name})"
    return py or name


def to_run(run, mono_ns):
    """A workload stamp (CLOCK_MONOTONIC) in the trace's time: ns since the run's start."""
    return mono_ns - run["perfetto"].summary["start_monotonic_ns"]


def between(what, t, lo, hi):
    check(lo <= t <= hi, f"{what} at {t / 1e6:.3f} ms, not within the workload's stamps "
          f"{lo / 1e6:.3f} .. {hi / 1e6:.3f} ms")


# CPU a thread may use between its stamp and its block, and its block and
# its next stamp (a few lines of Python; generous for a sanitizer build)
TL_ON_CPU_NS = 5_000_000


def one_wait(run, tid, name, lo, hi, at_least_ns=0, ends_after=None):
    """The one slice of this name on tid's track: within the stamps lo, hi
    (the workload's, before and after the wait), ending after ends_after
    (what ended the wait). A wait of at_least_ns (a sleep) ends no earlier
    than lo + at_least_ns, and the thread is off the CPU from lo to its end
    but for TL_ON_CPU_NS: a preemption between the stamp and the sleep's
    own block is a slice of its own ("waiting for a CPU") that the sleep's
    deadline, taken before it, does not wait again."""
    tr = run["perfetto"]
    track = tr.thread_track(tid)
    got = tr.on(track, name)
    check(len(got) == 1, f"{len(got)} slices {name!r} on thread {tid}: "
          f"{sorted(set(s['name'] for s in tr.on(track)))}")
    s = got[0]
    between(f"{name!r} begins", s["start"], to_run(run, lo), to_run(run, hi))
    between(f"{name!r} ends", s["end"], to_run(run, ends_after or lo), to_run(run, hi))
    if at_least_ns:
        a, b = to_run(run, lo), s["end"]
        check(b - a >= at_least_ns, f"{name!r} ends {(b - a) / 1e6:.3f} ms after the stamp "
              f"before it, less than {at_least_ns / 1e6:.0f} ms")
        off = sum(max(0, min(b, x["end"]) - max(a, x["start"])) for x in tr.on(track)
                  if x["cat"] == "off-CPU")
        check(off >= b - a - TL_ON_CPU_NS, f"thread {tid} off the CPU {off / 1e6:.3f} ms of "
              f"the {(b - a) / 1e6:.3f} ms from its stamp to the end of {name!r}")
    return s


def check_waits(run):
    m = run["marks"]
    sleep = one_wait(run, m["tl-sleeper"], f"sleep at {script_at('sleep')}", m["sleep_before"],
                     m["sleep_after"], 200_000_000)
    hold = one_wait(run, m["tl-holder"], f"sleep at {script_at('holding')}", m["hold_before"],
                    m["release_before"], 300_000_000)
    lock = one_wait(run, m["tl-waiter"], f"lock at {script_at('lock')}", m["lock_before"],
                    m["lock_after"], ends_after=m["release_before"])
    io = one_wait(run, m["tl-reader"], f"I/O at {script_at('io')}", m["read_before"],
                  m["read_after"], ends_after=m["write_before"])
    return {k: (s["end"] - s["start"]) / 1e6 for k, s in
            (("sleep", sleep), ("held", hold), ("lock", lock), ("I/O", io))}


def check_gc_imports(run):
    m, tr = run["marks"], run["perfetto"]
    side = tr.thread_track(m["pid"], "GC and imports")
    gcs = [s for s in tr.on(side, f"GC gen 2 at {script_at('gc')}")]
    check(len(gcs) == 1, f"{len(gcs)} gen 2 collections at the gc.collect() line: "
          f"{sorted(set(s['name'] for s in tr.on(side) if s['cat'] == 'gc'))}")
    between("gc.collect() begins", gcs[0]["start"], to_run(run, m["gc_before"]),
            to_run(run, m["gc_after"]))
    between("gc.collect() ends", gcs[0]["end"], to_run(run, m["gc_before"]),
            to_run(run, m["gc_after"]))
    mod, sub = tr.on(side, "import timeline_work_mod"), tr.on(side, "import timeline_work_sub")
    check(len(mod) == 1 and len(sub) == 1, f"imports: {len(mod)} of the module, {len(sub)} of "
          f"the one it imports")
    mm = m["module_marks"]
    between("the module's import begins", mod[0]["start"], to_run(run, m["import_before"]),
            to_run(run, mm["body_start"]))
    between("the module's import ends", mod[0]["end"], to_run(run, mm["body_end"]),
            to_run(run, m["import_after"]))
    between("the nested import begins", sub[0]["start"], mod[0]["start"], to_run(run, mm["sub"]))
    between("the nested import ends", sub[0]["end"], to_run(run, mm["sub"]), mod[0]["end"])
    check(sub[0]["depth"] == mod[0]["depth"] + 1, "the nested import is not inside the other")
    return len(tr.on(side))


def check_processes(run):
    """Start, fork, exec and exits: on the right tracks, in order, between the stamps."""
    m, tr = run["marks"], run["perfetto"]
    pid, child = m["pid"], m["child_pid"]
    ev = {(i["track"], i["name"]): i for i in tr.instants}
    main, kid = tr.process_track(pid), tr.process_track(child)
    start = ev.get((main, "process exec'd (profiled from its exec)"))
    fork = ev.get((main, f"fork: child pid {child}"))
    forked = ev.get((kid, f"process forked from pid {pid}"))
    exe, kid_exit, main_exit = ev.get((kid, "exec")), ev.get((kid, "exit")), ev.get((main, "exit"))
    check(all((start, fork, forked, exe, kid_exit, main_exit)),
          f"process events: {sorted(n for _, n in ev)}")
    check(start["ts"] <= to_run(run, m["compute_start"]), "the exec after the first stamp")
    between("the fork", fork["ts"], to_run(run, m["fork_before"]), to_run(run, m["fork_after"]))
    check(forked["ts"] == fork["ts"] and forked["ann"]["parent_pid"] == pid and
          fork["ann"]["child_pid"] == child, f"fork {fork}, the child's start {forked}")
    between("the child's exec", exe["ts"], fork["ts"], to_run(run, m["child"]["start"]))
    between("the child's exit", kid_exit["ts"], to_run(run, m["child"]["end"]),
            to_run(run, m["child_reaped"]))
    check(main_exit["ts"] >= to_run(run, m["end"]), "the main process's exit before its end")
    check(len([i for i in tr.instants if i["track"] in (main, kid)]) == 6,
          f"process events: {[(i['track'], i['name']) for i in tr.instants]}")


def check_samples(run):
    """Per thread as many CPU samples as the JSON report counts; the compute
    thread's, within its stamps, as many as its own CPU time makes at the
    rate, at its compute line."""
    m, tr, rep = run["marks"], run["perfetto"], run["json"]
    per_tid = collections.Counter(s["tid"] for s in tr.samples)
    # a forked child that execs has two sections, its fork's and its image's, one timeline
    on_cpu = collections.Counter()
    for proc in rep["processes"]:
        for t in proc["threads"]:
            on_cpu[t["tid"]] += t["on_cpu"]
    for tid, n in on_cpu.items():
        check(per_tid[tid] == n, f"thread {tid}: {per_tid[tid]} samples in the trace, {n} on "
              f"the CPU in the report ({[(p['pid'], p.get('role')) for p in rep['processes']]})")
    check(set(per_tid) <= set(on_cpu), f"samples of threads the report does not have: "
          f"{set(per_tid) - set(on_cpu)}")
    lo, hi = to_run(run, m["compute_start"]), to_run(run, m["compute_end"])
    mine = [s for s in tr.samples if s["tid"] == m["tl-compute"] and lo <= s["ts"] <= hi]
    want = m["compute_cpu_ns"] * TL_FREQ / 1e9
    check(abs(len(mine) - want) <= 3 * want ** 0.5 + 3, f"{len(mine)} samples of the compute "
          f"thread in its stamps, its CPU time makes {want:.0f}")
    top = collections.Counter(s["stack"][0] for s in mine).most_common(1)
    want_frame = ("compute", str(TARGETS / TL_SCRIPT), marker_line("compute"))
    check(top and top[0][0] == want_frame, f"compute thread's hottest frame {top}, want {want_frame}")
    child = [s for s in tr.samples if s["pid"] == m["child_pid"] and
             s["stack"][0][0] == "child_work"]
    check(child, "no sample of the exec'd child in child_work")
    gil = [c for c in tr.counters if c["track"] == tr.thread_track(m["tl-compute"], "GIL held")]
    check(any(c["value"] == 1 for c in gil), f"compute thread's GIL counter: {gil[:5]}")
    return len(mine), want


@test
def timeline_perfetto():
    """The Perfetto file: tracks named as the report names them (a process
    by its latest image's role, a thread by its Python name), the waits,
    GC, imports and process events between the workload's stamps, the
    samples the report counts, and the run's counts at the start."""
    run = tl_run()
    tr, rep, m = run["perfetto"], run["json"], run["marks"]
    model = {p["pid"]: p for p in rep["model"]["processes"]}
    roles = collections.defaultdict(set)  # a forked child that execs: two sections
    for proc in rep["processes"]:
        roles[proc["pid"]].add(proc["role"])
    for proc in rep["processes"]:
        d = tr.tracks[tr.process_track(proc["pid"])]["process"][0]
        check(d["process_name"][0] in roles[proc["pid"]],
              f"process {proc['pid']}: {d}, its roles {roles[proc['pid']]}")
        for t in proc["threads"]:
            name = tr.tracks[tr.thread_track(t["tid"])]["thread"][0].get("thread_name", [""])
            want = thread_label(model[proc["pid"]]["comm"], t)
            check(name == [want], f"thread {t['tid']} named {name}, the report {want!r}")
    child = tr.tracks[tr.process_track(m["child_pid"])]["process"][0]["process_name"][0]
    check(child.startswith(f"exec of {m['child_pid']}") and child.endswith("timeline_child.py"),
          f"the exec'd child's process is named {child!r}, not by its latest image's role")
    waits = check_waits(run)
    n_side = check_gc_imports(run)
    check_processes(run)
    n, want = check_samples(run)
    s = tr.summary
    check(s and s["samples"] == rep["samples"]["total"] and s["dropped"] ==
          rep["samples"]["dropped"] and s["timeline_dropped"] == 0 and
          s["timeline_events"] == rep["timeline"]["events"], f"summary {s}, report "
          f"{rep['samples']} {rep['timeline']}")
    counted = len(tr.samples) + len(tr.instants) + sum(1 for x in tr.slices)
    check(counted == s["timeline_events"], f"{counted} events in the file, "
          f"{s['timeline_events']} counted")
    return (f"{len(tr.tracks)} tracks; waits {', '.join(f'{k} {v:.1f} ms' for k, v in waits.items())}"
            f"; {n_side} GC and import slices; compute thread {n} samples (its CPU: {want:.0f})")


# ---------------------------------------------------------- trace JSON

def check_nesting(events):
    """Complete events of one thread nest: each inside the one it starts in
    (in whole ns, as written: float sums of microseconds would not compare)."""
    stack = []
    spans = sorted((us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"]), e["name"])
                   for e in events)
    for start, end, name in sorted(spans, key=lambda s: (s[0], s[0] - s[1])):
        while stack and stack[-1][1] <= start and not (stack[-1][0] == start == end):
            stack.pop()
        if stack:
            check(end <= stack[-1][1], f"{name!r} at {start} ns (+{end - start}) overlaps the "
                  f"end of {stack[-1][2]!r} at {stack[-1][1]} ns")
        stack.append((start, end, name))


def viewer_parents(events):
    """What a viewer draws: a thread's complete events sorted by start, the
    longest first and equal spans in file order (a stable sort), each nested
    in the innermost one still open; {id(event): [its callers, innermost
    first]}."""
    stack, parents = [], {}
    spans = [(us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"]), e) for e in events]
    for start, end, e in sorted(spans, key=lambda s: (s[0], s[0] - s[1])):
        while stack and stack[-1][1] <= start and not (stack[-1][0] == start == end):
            stack.pop()
        parents[id(e)] = [x[2] for x in reversed(stack)]
        stack.append((start, end, e))
    return parents


def us_to_ns(x):
    return round(x * 1000)


@test
def timeline_trace_json():
    """The trace JSON: the same waits, GC pauses, imports and process events
    as the Perfetto file to the ns, every thread's stacks nested, names and
    counts as in the report."""
    run = tl_run()
    doc, tr, rep, m = run["trace"], run["perfetto"], run["json"], run["marks"]
    ev = doc["traceEvents"]
    check(all("ph" in e and (e["ph"] not in "XBE" or "ts" in e) for e in ev),
          "an event without ph, or a complete event without ts")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    model = {p["pid"]: p for p in rep["model"]["processes"]}
    for proc in rep["processes"]:
        for t in proc["threads"]:
            want = thread_label(model[proc["pid"]]["comm"], t)
            check(names.get((proc["pid"], t["tid"])) == want,
                  f"thread {t['tid']}: {names.get((proc['pid'], t['tid']))!r}, the report "
                  f"{want!r}")
    waits = {(e["tid"] & ~(1 << 30), e["name"], us_to_ns(e["ts"]), us_to_ns(e["dur"]))
             for e in ev if e["ph"] == "X" and e["cat"] in ("off-CPU", "gc", "import")}
    tid_of = {u: d["thread"][0]["tid"][0] for u, d in tr.tracks.items() if "thread" in d}
    tid_of.update({u: tid_of[d["parent_uuid"][0]] for u, d in tr.tracks.items()
                   if d.get("parent_uuid")})
    slices = {(tid_of[s["track"]], s["name"], s["start"], s["end"] - s["start"])
              for s in tr.slices}
    check(waits == slices, f"{len(waits ^ slices)} slices differ between the two files: "
          f"{sorted(waits ^ slices)[:4]}")
    inst = {(e["pid"], e["name"], us_to_ns(e["ts"])) for e in ev if e["ph"] == "i" and
            e["cat"] == "process"}
    pid_of = {u: d["process"][0]["pid"][0] for u, d in tr.tracks.items() if "process" in d}
    check(inst == {(pid_of[i["track"]], i["name"], i["ts"]) for i in tr.instants},
          f"process events differ: {sorted(inst)}")
    by_thread = collections.defaultdict(list)
    for e in ev:
        if e["ph"] == "X":
            by_thread[(e["pid"], e["tid"])].append(e)
    for evs in by_thread.values():
        check_nesting(evs)
    # as a viewer nests them (equal spans in file order): every wait a leaf, and
    # the sleep under sleeper(), under threading's Thread.run and its callers
    for evs in by_thread.values():
        parents = viewer_parents(evs)
        for e in evs:
            inside = [p["name"] for p in parents[id(e)] if p["cat"] == "off-CPU"]
            check(not inside, f"{e['name']!r} drawn inside the wait {inside[:1]}")
    sleeper = by_thread[(m["pid"], m["tl-sleeper"])]
    sleep = [e for e in sleeper if e["name"] == f"sleep at {script_at('sleep')}"]
    check(len(sleep) == 1, f"{len(sleep)} sleeps on the sleeper's track")
    chain = [p["name"].split(" (")[0] for p in viewer_parents(sleeper)[id(sleep[0])]]
    want = ["sleeper", "Thread.run", "Thread._bootstrap_inner", "Thread._bootstrap"]
    check(chain == want, f"the sleep drawn under {chain}, not {want}")
    od = doc["otherData"]
    check(od["samples"] == rep["samples"]["total"] and od["dropped"] == rep["samples"]["dropped"]
          and od["timeline_dropped"] == 0 and od["start_monotonic_ns"] ==
          tr.summary["start_monotonic_ns"], f"otherData {od}")
    return (f"{len(ev)} events, {len(by_thread)} threads' stacks nested; {len(waits)} waits, "
            f"GC pauses and imports the same as Perfetto's to the ns")


# ----------------------------------------------------------- speedscope

SPEEDSCOPE_KEY = "window.dispatchEvent(new KeyboardEvent('keypress', {key: arguments[0]}))"


def speedscope_profiles(path):
    """speedscope's own viewer (the npm package) opens the file; for each of
    its profiles (key n: the next one) its name and its Sandwich table,
    {name: self ms}."""
    from suite_formats import SPEEDSCOPE_DIR, WebDriver
    index = SPEEDSCOPE_DIR / "dist/release/index.html"
    if not index.exists():
        raise Skip(f"{index} missing: tests/fetch-speedscope.sh fetches speedscope")
    shown, scale = {}, {"s": 1e3, "ms": 1.0, "µs": 1e-3, "ns": 1e-6}
    with WebDriver() as wd:
        wd.s("POST", "/url", {"url": index.as_uri()})
        inputs = wd.find("input[type=file]")
        check(inputs, "speedscope's page has no file input")
        wd.s("POST", f"/element/{inputs[0]}/value", {"text": str(path)})
        deadline = time.monotonic() + 20
        while not wd.js("return document.title").endswith(" - speedscope"):
            check(time.monotonic() < deadline, "speedscope did not open the file: " +
                  wd.js("return document.body.innerText.slice(0, 300)"))
            time.sleep(0.1)
        wd.js(SPEEDSCOPE_KEY, "3")  # the Sandwich view
        i, total = 1, 1
        while i <= total:
            deadline, head, text = time.monotonic() + 20, None, ""
            while not head or "Symbol Name" not in text:
                check(time.monotonic() < deadline, f"speedscope shows no Sandwich of its "
                      f"profile {i}: {text[:300]!r}")
                time.sleep(0.1)
                text = wd.js("return document.body.innerText")
                head = re.search(rf"\n(.+) \({i}/(\d+)\)\n", text)
            total = int(head.group(2))
            # each row: its total, then its self time, each with its share, then its name
            rows = re.findall(r"[\d.]+(?:ms|µs|ns|s) \([^)]*\)\s+([\d.]+)(ms|µs|ns|s) "
                              r"\([^)]*\)\s+(\S.*)", text.split("Symbol Name", 1)[1])
            shown[head.group(1)] = {n.strip(): float(v) * scale[u] for v, u, n in rows}
            wd.js(SPEEDSCOPE_KEY, "n")
            i += 1
    return shown


@test
def timeline_speedscope():
    """speedscope's own viewer imports the trace JSON as one timeline per
    thread, named by process and thread, the waits as long as the trace."""
    run = tl_run()
    m, tr = run["marks"], run["perfetto"]
    shown = speedscope_profiles(run["files"]["trace"])
    rows = []
    for key, marker, reason in (("tl-sleeper", "sleep", "sleep"), ("tl-waiter", "lock", "lock"),
                                ("tl-reader", "io", "I/O")):
        tid = m[key]
        name = tr.tracks[tr.thread_track(tid)]["thread"][0].get("thread_name", [""])[0]
        pname = tr.tracks[tr.process_track(m["pid"])]["process"][0]["process_name"][0]
        profile = f"{pname} (pid {m['pid']}), {name} (tid {tid})"
        check(profile in shown, f"no speedscope profile {profile!r}: {sorted(shown)}")
        wait = f"{reason} at {script_at(marker)}"
        got = shown[profile].get(wait)
        want = [(s["end"] - s["start"]) / 1e6 for s in tr.on(tr.thread_track(tid), wait)]
        check(got is not None and len(want) == 1 and abs(got - want[0]) <= 0.01,
              f"{profile}: speedscope shows {wait!r} for {got} ms, the trace {want}")
        rows.append(f"{reason} {got:.2f} ms")
    threads = {(e["pid"], e["tid"]) for e in run["trace"]["traceEvents"] if e["ph"] == "X"}
    check(len(shown) == len(threads), f"{len(shown)} speedscope profiles, {len(threads)} "
          f"threads and side tracks with events")
    return f"{len(shown)} thread timelines in speedscope; {', '.join(rows)}"


# ------------------------------------------------------------ report

@test
def timeline_report():
    """`pybpfprof report run.json` writes both timeline files byte for byte
    as the run did; a profile without a timeline is refused for them, and so
    is a timeline beside --pid, which cuts the report."""
    run = tl_run()
    out = tl_tempdir("pybpfprof-timeline-report-")
    r = run_profiler(["report", run["files"]["json"], "-o", out / "a.trace.json",
                      "-o", out / "a.perfetto-trace", "-o", out / "a.pftrace"], timeout=60)
    check(r.returncode == 0, f"report: exit {r.returncode}: {r.stderr.strip()}")
    for mine, theirs in (("a.trace.json", "trace"), ("a.perfetto-trace", "perfetto"),
                         ("a.pftrace", "perfetto")):
        check((out / mine).read_bytes() == run["files"][theirs].read_bytes(),
              f"report's {mine} differs from the run's")
    # the timeline keeps every process: not beside a report that --pid cuts
    r = run_profiler(["report", run["files"]["json"], "--pid", run["marks"]["pid"], "-o",
                      out / "cut.trace.json"], timeout=60)
    check(r.returncode == 2 and "write the timeline without them" in r.stderr and
          not (out / "cut.trace.json").exists(),
          f"a timeline beside --pid: exit {r.returncode}, {r.stderr.strip()!r}")
    plain = out / "plain.json"
    r = run_profiler(["-p", os.getpid(), "-d", 0.3, "-o", plain], timeout=RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    r = run_profiler(["report", plain, "-o", out / "b.perfetto-trace"], timeout=60)
    check(r.returncode == 2 and "record with --timeline" in r.stderr and
          not (out / "b.perfetto-trace").exists(),
          f"a profile without a timeline: exit {r.returncode}, {r.stderr.strip()!r}")
    return (f"{run['files']['trace'].stat().st_size} + {run['files']['perfetto'].stat().st_size}"
            f" bytes written again identically; refused without a timeline")


# --------------------------------------------------------------- bounds

def timeline_counts(rep):
    return rep["timeline"]["events"], rep["timeline"]["dropped"], rep["timeline"]["by_kind"]


@test
def timeline_cap():
    """--timeline-events 20: 20 events kept, the rest dropped and counted
    in the text, JSON, Perfetto and trace JSON outputs alike; kept and
    dropped CPU samples are every sample the run counted. (20: a spinner
    makes that many samples in 40 ms of CPU, however loaded the machine.)"""
    cap = 20
    py = tl_python()
    out = tl_tempdir("pybpfprof-timeline-cap-")
    with Workloads() as wl:
        p = wl.start(py, "spin.py", "alpha")
        args = ["-p", p.pid, "-d", 1.5, "-F", TL_FREQ, "--timeline-events", cap]
        for name in ("r.json", "r.txt", "r.trace.json", "r.perfetto-trace"):
            args += ["-o", out / name]
        r = run_profiler(args, timeout=1.5 + RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
        r2 = run_profiler(["-p", p.pid, "-d", 0.5, "--timeline", "-o", out / "only.json"],
                          timeout=0.5 + RUN_SLACK)
        check(r2.returncode == 0, f"exit {r2.returncode}: {r2.stderr.strip()}")
    rep = load_report(out / "r.json")
    kept, dropped, by_kind = timeline_counts(rep)
    total = rep["samples"]["total"]
    check(kept == cap and dropped > 0, f"kept {kept}, dropped {dropped}")
    check(sum(by_kind.values()) == dropped, f"dropped by kind {by_kind}, {dropped} in all")
    tr = PerfettoTrace((out / "r.perfetto-trace").read_bytes())
    check(len(tr.samples) + by_kind["cpu"] == total, f"{len(tr.samples)} samples kept, "
          f"{by_kind['cpu']} dropped, {total} counted")
    text = (out / "r.txt").read_text()
    want = f"timeline: {cap} events kept, {dropped} dropped (at most {cap} events; " \
           f"--timeline-events raises it)"
    check(want in text, f"the text report does not say {want!r}")
    od = json.loads((out / "r.trace.json").read_text())["otherData"]
    check(tr.summary["timeline_dropped"] == dropped == od["timeline_dropped"] and
          tr.summary["timeline_cap"] == od["timeline_cap"] == cap,
          f"Perfetto {tr.summary}, trace JSON {od}")
    only = load_report(out / "only.json")
    check(only["model"].get("timeline", {}).get("events"), "--timeline alone: no timeline in "
          "the JSON profile")
    return f"{cap} kept, {dropped} dropped ({by_kind['cpu']} samples) of {total} samples, said in all 4"


@test
def sec_timeline_flood():
    """A target run by nobody leaves the CPU hundreds of thousands of times
    a second from 32 threads with deep stacks and escape sequences in their
    names: --mode wall with --timeline-events 20000 keeps 20000 events and
    counts the rest; the files stay within what 20000 events make, the
    escapes are written escaped, and the run ends as soon as asked."""
    py = tl_python()
    out = tl_tempdir("pybpfprof-timeline-flood-")
    os.chmod(out, 0o755)
    cap, secs = 20000, 3
    files = {n: out / n for n in ("f.json", "f.trace.json", "f.perfetto-trace")}
    with Workloads() as wl:
        p = wl.start(py, "timeline_flood.py", prefix=TL_NOBODY)
        args = ["-p", p.pid, "-d", secs, "--mode", "wall", "--timeline-events", cap]
        for f in files.values():
            args += ["-o", f]
        prof = Profiler(args)
        prof.wait_attached()
        mark = prof.mark()
        due = time.monotonic() + secs
        rc = prof.wait(secs + RUN_SLACK)
    check(rc == 0, f"exit {rc}: {prof.stderr().strip()[-400:]}")
    late = prof.late(mark, due)
    rep = load_report(files["f.json"])
    kept, dropped, by_kind = timeline_counts(rep)
    check(kept == cap and dropped >= cap, f"kept {kept} of a cap of {cap}, dropped {dropped}")
    sizes = {n: f.stat().st_size for n, f in files.items()}
    # the Perfetto file is binary (0x1b may be a length): its strings are read decoded
    raw = [n for n in ("f.json", "f.trace.json") if b"\x1b" in files[n].read_bytes()]
    check(not raw, f"a raw escape character in {', '.join(raw)}")
    check(b"\\u001b[31mev" in files["f.trace.json"].read_bytes(), "the thread names are not "
          "in the trace JSON, escaped")
    # per event at most its stack's frames (41 deep, each a slice) and its own slice
    check(sizes["f.trace.json"] <= cap * 44 * 200, f"trace JSON {sizes['f.trace.json']} bytes")
    check(sizes["f.perfetto-trace"] <= cap * 400 + (1 << 20),
          f"Perfetto file {sizes['f.perfetto-trace']} bytes")
    tr = PerfettoTrace(files["f.perfetto-trace"].read_bytes())
    check(tr.summary["timeline_dropped"] == dropped, f"Perfetto's count {tr.summary}")
    check("\\033" not in tr.text and "\\x1b" not in tr.text.lower(),
          "an escape character in a string of the Perfetto file")
    names = [d["thread"][0].get("thread_name", [""])[0] for d in tr.tracks.values()
             if "thread" in d]
    check(any("?[31mev" in n for n in names), f"the thread names are not in the "
          f"Perfetto file, cleaned: {names[:4]}")
    check(late <= 5.0, f"exited {late:.2f} s after its -d (less waits for a CPU)")
    return (f"{kept} kept, {dropped} dropped ({by_kind['offcpu']} waits); files "
            f"{', '.join(f'{k} {v >> 10} KiB' for k, v in sizes.items())}; peak RSS "
            f"{prof.maxrss_kb >> 10} MiB; exit {late:.2f} s after -d")
