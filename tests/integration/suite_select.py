# Choosing what to look at (issue 31.5): --pid, --match and --thread on a
# saved run (`pybpfprof report`) and on a one-shot run, `report --merge`.
# One real run of select_work.py (a parent with two named threads, a fork
# child, a spawn child, each spinning in a function of its own for a number
# of CPU seconds it measures itself) is recorded per process; each selection
# of it must keep the selected sections exactly as the whole report has them
# and count what it left out exactly; `report --merge` must sum the sections
# exactly, and give the shares a run recorded with --merge gives, within the
# sampling error, and those the workload measured. Then threads of a target
# run by nobody that name themselves with escapes, a bidi override, a newline
# and a character cut in two: selected by their raw names, shown sanitized.

import atexit
import math
import os
import re
import shutil
import tempfile

from pathlib import Path

from harness import (TARGETS, Workloads, check, expect_error, interpreter, load_report,
                     read_stdout_until, run_profiler, sanity, test)

FREQ = 499
SECONDS = 0.8  # alpha_work, fork_work, spawn_work; beta_work twice as long
WORK = ("alpha_work", "beta_work", "fork_work", "spawn_work")
TIMEOUT = 180  # the run itself on a loaded machine: the work is CPU seconds, not clock
_runs = {}


def record(tmp, *options):
    """select_work.py under --subprocesses with options, saved as JSON: the
    report, and what the workload said (pids, each function's CPU, tids)."""
    out = Path(tmp) / f"run{len(list(Path(tmp).iterdir()))}.json"
    interp = interpreter("debian")
    r = run_profiler(["--subprocesses", "-F", FREQ, *options, "-o", out, "--",
                      *interp.argv("select_work.py", [SECONDS])], timeout=TIMEOUT)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
    m = re.search(r"^pids: (\d+) (\d+) (\d+)$", r.stdout, re.M)
    check(m, f"no pids line from the workload: {r.stdout[:300]!r}")
    pids = dict(zip(("parent", "fork", "spawn"), map(int, m.groups())))
    cpu = {f: (int(p), int(t), float(s)) for f, p, t, s in
           re.findall(r"^cpu: (\w+) (\d+) (\d+) ([\d.]+)$", r.stdout, re.M)}
    check(set(cpu) == set(WORK), f"the workload did not finish its work: {r.stdout!r}")
    rep = load_report(out)
    sanity(rep, FREQ)
    return out, rep, pids, cpu


def saved_run():
    """One recorded run per process, shared by the report tests of a worker."""
    if "run" not in _runs:
        tmp = tempfile.mkdtemp(prefix="pybpfprof-select-")
        atexit.register(shutil.rmtree, tmp, True)
        _runs["tmp"] = tmp
        _runs["run"] = record(tmp)
    return _runs["run"]


def report(path, *options):
    """`pybpfprof report path options -f json`: its JSON."""
    r = run_profiler(["report", path, *options, "-f", "json"], timeout=60)
    check(r.returncode == 0, f"report {' '.join(map(str, options))}: exit {r.returncode}: "
          f"{r.stderr.strip()[-400:]}")
    rep = load_report(text=r.stdout)
    sanity(rep, FREQ)
    return rep


def text_report(path, *options):
    r = run_profiler(["report", path, *options], timeout=60)
    check(r.returncode == 0, f"report {' '.join(map(str, options))}: exit {r.returncode}")
    return r.stdout


def by_pid(rep):
    return {p["pid"]: p for p in rep["processes"]}


def check_kept(full, cut, pids, what, image=lambda p: True):
    """cut holds exactly the sections of pids in full, as full has them, and
    counts the others as left out. A pid may have two sections (a spawn
    child sampled before and after its exec), so sections are compared as
    lists, in the report's order; image(section) keeps only some of a pid's
    sections (a selection by command line takes the image that has it)."""
    want = [p for p in full["processes"] if p["pid"] in pids and image(p)]
    others = [p for p in full["processes"] if p not in want]
    got = cut["processes"]
    check(sorted(by_pid(cut)) == sorted(pids) and len(got) == len(want),
          f"{what}: sections {[p['pid'] for p in got]}, expected "
          f"{[p['pid'] for p in want]}")
    for a, b in zip(got, want):
        check(a == b, f"{what}: pid {b['pid']}'s section differs from the whole "
              f"report's: {str(a)[:300]} / {str(b)[:300]}")
    kept = sum(p["samples"] for p in want)
    sel = cut.get("selection")
    check(sel, f"{what}: no \"selection\" in the JSON: {list(cut)}")
    check(cut["samples"]["total"] == kept, f"{what}: total {cut['samples']['total']}, "
          f"the kept sections have {kept}")
    check(sel["processes_out"] == len(others) and
          sel["samples_out"] == full["samples"]["total"] - kept and
          sel["threads_out"] == sum(len(p["threads"]) for p in others),
          f"{what}: left out {sel}, the whole run has {len(full['processes'])} sections "
          f"({len(others)} others), {full['samples']['total']} samples")
    check(cut["model"]["selection"] == sel, f"{what}: the model's selection differs")
    return kept


@test
def select_report_pid():
    """report --pid: the fork child's and the spawn child's sections, exactly."""
    path, full, pids, _ = saved_run()
    cut = report(path, "--pid", f"{pids['fork']},{pids['spawn']}")
    kept = check_kept(full, cut, [pids["fork"], pids["spawn"]], "--pid")
    check(cut["selection"]["options"] == f"--pid {pids['fork']},{pids['spawn']}",
          f"options {cut['selection']['options']!r}")
    return f"{kept} of {full['samples']['total']} samples kept"


@test
def select_report_match():
    """report --match: the spawn worker by its command line, exactly; the text
    report says what was left out."""
    path, full, pids, _ = saved_run()
    cut = report(path, "--match", "spawn_main")
    # the spawn child's fork image, when it was sampled before its exec, has
    # its parent's command line: not matched
    kept = check_kept(full, cut, [pids["spawn"]], "--match",
                      lambda p: "spawn_main" in p["cmdline"])
    text = text_report(path, "--match", "spawn_main")
    line = [s for s in text.splitlines() if s.startswith("selected: ")]
    check(line and f"{cut['selection']['samples_out']} samples" in line[0] and
          "--match 'spawn_main'" in line[0], f"no selection line in the text report: {text[:600]}")
    check(f"\npid {pids['spawn']}  " in text and f"\npid {pids['parent']}  " not in text,
          f"the text report's sections: {text[:600]}")
    # the formats with a title only say what was left out in it
    said = (f"selected: {cut['selection']['samples_out']} samples of "
            f"{cut['selection']['processes_out']} processes left out")
    with tempfile.TemporaryDirectory(prefix="pybpfprof-select-") as d:
        ss, html = Path(d) / "s.speedscope.json", Path(d) / "f.html"
        r = run_profiler(["report", path, "--match", "spawn_main", "-o", ss, "-o", html],
                         timeout=60)
        check(r.returncode == 0, f"report -o: exit {r.returncode}: {r.stderr[-300:]}")
        name = load_report(ss)["name"]
        check(said in name, f"speedscope's name {name!r} does not say {said!r}")
        check(said in html.read_text(errors="replace"), f"the flame graph does not say {said!r}")
    return f"{kept} of {full['samples']['total']} samples kept"


@test
def select_report_thread():
    """report --thread: of the parent, the thread named sel-alpha only, with
    exactly its samples; the other processes have no such thread."""
    path, full, pids, cpu = saved_run()
    cut = report(path, "--thread", "^sel-alpha$")
    whole = by_pid(full)[pids["parent"]]
    tid = cpu["alpha_work"][1]
    alpha = [t for t in whole["threads"] if t["tid"] == tid]
    check(alpha and alpha[0]["name"] == "sel-alpha",
          f"the whole report's threads: {whole['threads']}")
    check([p["pid"] for p in cut["processes"]] == [pids["parent"]],
          f"sections {[p['pid'] for p in cut['processes']]}")
    proc = cut["processes"][0]
    check(proc["threads"] == alpha, f"threads {proc['threads']}, expected {alpha}")
    check(proc["samples"] == alpha[0]["samples"] == cut["samples"]["total"],
          f"{proc['samples']} samples, the thread had {alpha[0]['samples']}")
    funcs = {f["qualname"]: f for f in proc["functions"]}
    full_funcs = {f["qualname"]: f for f in whole["functions"]}
    check(funcs.get("alpha_work", {}).get("total") == full_funcs["alpha_work"]["total"],
          f"alpha_work: {funcs.get('alpha_work')} / {full_funcs['alpha_work']}")
    check("beta_work" not in funcs, "beta_work (thread sel-beta) is still in the report")
    sel = cut["selection"]
    check(sel["threads_cut"] and
          sel["samples_out"] == full["samples"]["total"] - proc["samples"] and
          sel["threads_out"] == sum(len(p["threads"]) for p in full["processes"]) - 1,
          f"left out {sel}")
    return f"sel-alpha: {proc['samples']} samples"


def shares(proc):
    """Each work function's share of the work functions' samples (total:
    the share of the samples in which it runs)."""
    funcs = {f["qualname"]: f["total"] for f in proc["functions"]}
    n = sum(funcs.get(f, 0) for f in WORK)
    check(n > 0, f"no samples in the work functions: {sorted(funcs)[:20]}")
    return {f: funcs.get(f, 0) / n for f in WORK}, n


@test
def select_report_merge():
    """report --merge sums the sections exactly, and its shares are those of
    a run recorded with --merge within the sampling error, and those of the
    CPU the workload measured."""
    path, full, _, cpu = saved_run()
    merged = report(path, "--merge")
    check(len(merged["processes"]) == 1, f"{len(merged['processes'])} sections")
    proc = merged["processes"][0]
    check(sorted(proc["merged"]) == sorted(p["pid"] for p in full["processes"]),
          f"merged {proc['merged']}")
    check(proc["samples"] == full["samples"]["total"], f"{proc['samples']} samples of "
          f"{full['samples']['total']}")
    want = {}
    for p in full["processes"]:
        for f in p["functions"]:
            key = (f["qualname"], f["file"], f["line"])
            want[key] = [a + b for a, b in zip(want.get(key, [0, 0]), [f["self"], f["total"]])]
    got = {(f["qualname"], f["file"], f["line"]): [f["self"], f["total"]]
           for f in proc["functions"]}
    check(got == want, f"merged functions differ from the sections' sums: "
          f"{[(k, got.get(k), v) for k, v in want.items() if got.get(k) != v][:5]}")
    _, run_rep, _, run_cpu = record(_runs["tmp"], "--merge")
    check(len(run_rep["processes"]) == 1, "the --merge run wrote several sections")
    a, na = shares(proc)
    b, nb = shares(run_rep["processes"][0])
    worst = []
    for f in WORK:
        # the two runs' shares, binomial errors; and the workload's own CPU split
        sd = math.sqrt(a[f] * (1 - a[f]) / na + b[f] * (1 - b[f]) / nb)
        truth = cpu[f][2] / sum(c[2] for c in cpu.values())
        check(abs(a[f] - b[f]) <= 4 * sd + 0.01,
              f"{f}: {a[f]:.3f} in report --merge, {b[f]:.3f} in a --merge run "
              f"({na} and {nb} samples; 4 sd = {4 * sd:.3f})")
        check(abs(a[f] - truth) <= 4 * math.sqrt(truth * (1 - truth) / na) + 0.02,
              f"{f}: {a[f]:.3f} of the samples, {truth:.3f} of the CPU it measured")
        worst.append(f"{f} {a[f]:.3f}/{b[f]:.3f}")
    return "; ".join(worst)


@test
def select_report_refused():
    """A bad pattern, --pid on a merged profile, --merge of a --mode wall
    profile: refused with the sentence, nothing written."""
    path, _, pids, _ = saved_run()
    tmp = Path(_runs["tmp"])
    out = tmp / "refused.html"
    expect_error(["report", path, "--match", "(", "-o", out],
                 ["--match '(' is not a regular expression"], out=out, rc=2)
    expect_error(["report", path, "--thread", "a" * 1025, "-o", out],
                 ["--thread takes a pattern of at most 1024 bytes"], out=out, rc=2)
    merged = tmp / "merged.json"
    r = run_profiler(["report", path, "--merge", "-o", merged], timeout=60)
    check(r.returncode == 0, f"report --merge -o: exit {r.returncode}: {r.stderr[-300:]}")
    expect_error(["report", merged, "--pid", pids["fork"], "-o", out],
                 ["recorded with --merge", "--pid and --match"], out=out, rc=2)
    return "refused"


@test
def select_run_match_thread():
    """A one-shot run with --match and --thread: the spawn worker alone, then
    the thread sel-beta alone; the samples are those of the CPU each measured."""
    with tempfile.TemporaryDirectory(prefix="pybpfprof-select-") as tmp:
        return run_match_thread(tmp)


def run_match_thread(tmp):
    _, rep, pids, cpu = record(tmp, "--match", "spawn_main")
    check([p["pid"] for p in rep["processes"]] == [pids["spawn"]],
          f"--match spawn_main: sections {[p['pid'] for p in rep['processes']]}")
    sel = rep["selection"]
    check(sel["options"] == "--match 'spawn_main'" and sel["processes_out"] >= 2 and
          sel["samples_out"] > 0, f"selection {sel}")
    spawn = {f["qualname"]: f for f in rep["processes"][0]["functions"]}
    n = spawn.get("spawn_work", {}).get("total", 0)
    want = cpu["spawn_work"][2] * FREQ
    check(abs(n - want) <= 4 * math.sqrt(want) + 0.15 * want,
          f"spawn_work: {n} samples for {cpu['spawn_work'][2]:.2f} s of CPU at {FREQ} Hz")
    _, rep, pids, cpu = record(tmp, "--thread", "^sel-beta$")
    check([p["pid"] for p in rep["processes"]] == [pids["parent"]],
          f"--thread: sections {[p['pid'] for p in rep['processes']]}")
    proc = rep["processes"][0]
    check([t["tid"] for t in proc["threads"]] == [cpu["beta_work"][1]],
          f"--thread: threads {proc['threads']}, sel-beta is {cpu['beta_work'][1]}")
    funcs = {f["qualname"] for f in proc["functions"]}
    check("beta_work" in funcs and not funcs & {"alpha_work", "fork_work", "spawn_work"},
          f"--thread: functions {sorted(funcs)[:20]}")
    check(rep["selection"]["threads_cut"], f"selection {rep['selection']}")
    return f"spawn_work {n} samples; sel-beta {proc['samples']}"


DROP = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
# the reader's own pattern, with a raw ESC of its own: matched as bytes, shown as '?'
HOSTILE_PATTERN = "\x1b\\[2Jsel|^sel-"


def hostile_target(wl, tmp):
    """select_hostile.py started by nobody: the process and each thread's name
    as the kernel keeps it, by tid."""
    os.chmod(tmp, 0o755)
    script = Path(tmp) / "select_hostile.py"
    shutil.copy(TARGETS / "select_hostile.py", script)
    os.chmod(script, 0o644)
    p = wl.spawn([*DROP, interpreter("debian").host_path(), script], wait_ready=False)
    buf = read_stdout_until(p, lambda b: b"ready\n" in b, "ready")
    names = {int(t): bytes.fromhex(h.decode())
             for t, h in re.findall(rb"^tid (\d+) ([0-9a-f]+)$", buf, re.M)}
    check(len(names) == 5, f"the target named {len(names)} threads: {buf[:300]!r}")
    return p, names


def check_clean_text(data, what):
    """A text report: no control character but newlines, no bidi override."""
    bad = sorted({b for b in data if (b < 0x20 and b != 0x0A) or b == 0x7F})
    check(not bad, f"{what}: control bytes {bad} in the text report")
    check(b"\xe2\x80\xae" not in data, f"{what}: a bidi override in the text report")



def thread_rows(text):
    """The tids of the text report's threads tables ("threads: N, busiest
    first (samples, tid, name)", then a row per thread)."""
    tids, inside = [], False
    for line in text.splitlines():
        if re.match(rb"^  threads: \d+", line):
            inside = True
        elif inside and (m := re.match(rb"^ +\d+ +(\d+)  ", line)):
            tids.append(m.group(1))
        else:
            inside = False
    return tids

@test
def select_hostile_threads():
    """--thread on a run of a target by nobody whose threads name themselves
    with terminal escapes, a bidi override, a newline and a cut UTF-8
    character: exactly the threads whose raw names match are kept, and
    report --thread on the saved run keeps the one it names; no text report
    carries a control byte, the reader's own ESC included."""
    with tempfile.TemporaryDirectory(prefix="pybpfprof-select-") as tmp, Workloads() as wl:
        p, names = hostile_target(wl, tmp)
        want = {t for t, n in names.items() if re.search(HOSTILE_PATTERN.encode(), n)}
        js, txt = Path(tmp) / "s.json", Path(tmp) / "s.txt"
        r = run_profiler(["-p", p.pid, "-d", 3, "-F", FREQ, "--thread", HOSTILE_PATTERN,
                          "-o", js, "-o", txt], timeout=90)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
        rep = load_report(js)
        sanity(rep, FREQ)
        check([q["pid"] for q in rep["processes"]] == [p.pid],
              f"sections {[q['pid'] for q in rep['processes']]}")
        got = {t["tid"] for t in rep["processes"][0]["threads"]}
        # every one spins the whole run: each is sampled, the bell thread left out
        check(got == want, f"threads kept {sorted(got)}, whose names match: {sorted(want)} "
              f"({ {t: names[t] for t in got ^ want} })")
        sel = rep["selection"]
        check(sel["options"] == f"--thread '{HOSTILE_PATTERN}'" and sel["threads_out"] >= 1 and
              sel["samples_out"] > 0 and sel["processes_out"] == 0, f"selection {sel}")
        text = txt.read_bytes()
        check_clean_text(text, "the run")
        check(b"selected: --thread '?\\[2Jsel|^sel-'" in text,
              f"the selection line: {[x for x in text.splitlines() if b'selected' in x]}")
        clear = [t for t, n in names.items() if n.endswith(b"sel-clear")]
        r = run_profiler(["report", js, "--thread", "clear$"], timeout=60)
        check(r.returncode == 0, f"report --thread: exit {r.returncode}: {r.stderr[-300:]}")
        out = r.stdout.encode()
        check_clean_text(out, "report")
        shown = thread_rows(out)
        check([int(x) for x in shown] == clear, f"report --thread clear$: threads {shown}, "
              f"the clear thread is {clear}")
    return f"{len(got)} of {len(names)} threads kept; {sel['samples_out']} samples left out"
