# Issue 11, points 3 and 5: offsets and line numbers a target controls.
#
# Each target is a real CPython that damages its own memory with ctypes before
# it says "ready" (targets/sec_off_corrupt.py): one field of its
# _Py_DebugOffsets (3.13+), or its hot function's co_firstlineno. pybpfprof
# must refuse the first with one sentence naming the field, never crash, go on
# profiling the good processes under -a, and never print a line below 1.

import json
import os
import re
import tempfile

from harness import (BUILDS, CpuMeter, RUN_SLACK, Skip, Workloads, check, expect_error,
                     functions, interpreter, load_report, process, profile_json, run_profiler,
                     sanity, test, until_enough)


SEC_OFF_TARGET = "sec_off_corrupt.py"
# Builds that publish _Py_DebugOffsets, the shared pyenv one first.
SEC_OFF_DEBUG_BUILDS = ("pyenv313", "trixie313", "forky314", "sid314", "sid315")


def sec_off_debug_builds():
    found = [b for b in SEC_OFF_DEBUG_BUILDS if b in BUILDS and BUILDS[b].available()]
    if not found:
        raise Skip("no CPython 3.13+ here")
    return found


def sec_off_refused(build, field, value):
    """A target whose _Py_DebugOffsets field := value must be refused, by one
    sentence naming the field and the value, exit status 1, no crash."""
    py = interpreter(build)
    with Workloads() as wl:
        p = wl.start(py, SEC_OFF_TARGET, "debug", field, hex(value))
        msg, _ = expect_error(["-p", p.pid, "-d", 2, "-F", 99],
                              [f"pid {p.pid}", "publishes an inconsistent _Py_DebugOffsets",
                               f"({field} = {value:#x}", "refusing it"], timeout=30)
        check(p.poll() is None, f"the target died ({p.returncode})")
    return msg


@test
def sec_off_qualname_wrap():
    # qualname + 8 wraps to 0: passed the old "+ 8 > size" check, then read
    # 64 KiB past the code object's buffer
    got = []
    for build in sec_off_debug_builds():
        sec_off_refused(build, "code_object.qualname", 0xFFFFFFFFFFFFFFF8)
        got.append(build)
    return "refused on " + ", ".join(got)


@test
def sec_off_filename_past_size():
    # 4096: far past the declared code object size (208) and the 256 bytes read
    return sec_off_refused(sec_off_debug_builds()[0], "code_object.filename", 0x1000)


@test
def sec_off_linetable_below_prefix():
    # 60: before co_firstlineno (68), where the identity prefix starts
    return sec_off_refused(sec_off_debug_builds()[0], "code_object.linetable", 60)


@test
def sec_off_frame_executable_wrap():
    # read by the live check at attach, in the 128-byte frame buffer
    return sec_off_refused(sec_off_debug_builds()[0], "interpreter_frame.executable",
                           0xFFFFFFFFFFFFFFF8)


@test
def sec_off_code_size_huge():
    return sec_off_refused(sec_off_debug_builds()[0], "code_object.size", 1 << 63)


@test
def sec_off_adaptive_small():
    # the head read stops at co_code_adaptive: 16 bytes would leave every field unread
    return sec_off_refused(sec_off_debug_builds()[0], "code_object.co_code_adaptive", 16)


@test
def sec_off_interp_head_narrowed():
    # 0x10278: its low 16 bits are the genuine 632, which a narrowing would keep
    return sec_off_refused(sec_off_debug_builds()[0], "runtime_state.interpreters_head",
                           0x10000 + 632)


@test(alone=True)
def sec_off_all_mode():
    # -a: one hostile process among good ones; the good ones are profiled
    build = sec_off_debug_builds()[0]
    good_py = interpreter("debian")
    with Workloads() as wl:
        bad = wl.start(interpreter(build), SEC_OFF_TARGET, "debug", "code_object.qualname",
                       hex(0xFFFFFFFFFFFFFFF8))
        a = wl.start(good_py, "spin.py", "alpha")
        b = wl.start(interpreter(build), "spin.py", "beta")
        out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
        try:
            with CpuMeter(a.pid) as cpu_a, CpuMeter(b.pid) as cpu_b:
                r = run_profiler(["-a", "-d", 3, "-F", 99, "-v", "-f", "json", "-o", out.name],
                                 timeout=3 + RUN_SLACK)
            check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
            rep = load_report(out.name)
        finally:
            os.unlink(out.name)
        check(bad.poll() is None, f"the hostile target died ({bad.returncode})")
    sanity(rep, 99)
    pids = [p["pid"] for p in rep["processes"]]
    check(bad.pid not in pids, f"hostile pid {bad.pid} profiled")
    want = f"pid {bad.pid} "
    lines = [ln for ln in r.stderr.splitlines()
             if want in ln and "inconsistent _Py_DebugOffsets" in ln]
    check(len(lines) == 1, f"refusal of pid {bad.pid} said {len(lines)} times: "
          f"{r.stderr.strip()[-600:]}")
    check("code_object.qualname = 0xfffffffffffffff8" in lines[0], f"refusal: {lines[0]}")
    got = []
    for p, fn, cpu in ((a, "spin_alpha", cpu_a), (b, "spin_beta", cpu_b)):
        proc = process(rep, p.pid)
        fns = functions(proc)
        # as many samples as the CPU time it got while sampled (the host may be busy)
        cpu.check_samples(proc["samples"], 99, rep["duration_s"])
        check(proc["samples"] > 0 and fn in fns and fns[fn]["self"] >= 0.9 * proc["samples"],
              f"pid {p.pid}: {fn} {fns.get(fn)} of {proc['samples']} samples")
        got.append(f"{fn} {proc['samples']}")
    return f"hostile {bad.pid} refused; " + ", ".join(got)


SEC_OFF_NEG_LINE = re.compile(r":-\d|\bline -\d|\"line\": -(?!1\b)\d")


@test
def sec_off_negative_firstlineno():
    # hot()'s co_firstlineno := -5 (then INT_MIN): every line is unknown, none negative
    builds = [b for b in ("debian", "pyenv313", "pyenv312", "pyenv39")
              if b in BUILDS and BUILDS[b].available()]
    got = []
    for build, value in zip(builds, (-5, -(1 << 31), -5, -1)):
        py = interpreter(build)
        with Workloads() as wl:
            p = wl.start(py, SEC_OFF_TARGET, "firstlineno", str(value))
            # ten samples to judge by, however loaded the machine
            rep, _ = until_enough(lambda secs: profile_json([p.pid], secs),
                                  lambda r: process(r, p.pid)["samples"], 10, 2)
            text = run_profiler(["-p", p.pid, "-d", 1, "-F", 99], timeout=1 + RUN_SLACK)
            check(text.returncode == 0, f"exit {text.returncode}: {text.stderr.strip()}")
        proc = process(rep, p.pid)
        fns = functions(proc)
        hot = fns.get("hot")
        check(hot and hot["self"] >= 0.9 * proc["samples"] and proc["samples"] >= 10,
              f"{build}: hot {hot} of {proc['samples']} samples")
        check(hot["line"] == -1, f"{build}: hot's first line is {hot['line']}, not unknown")
        lines = [ln for ln in proc["lines"] if ln["qualname"] == "hot"]
        check(lines and all(ln["line"] == -1 for ln in lines),
              f"{build}: hot's lines {[ln['line'] for ln in lines]}, not unknown")
        for what, out in (("json", json.dumps(rep)), ("text", text.stdout)):
            m = SEC_OFF_NEG_LINE.search(out)
            check(not m, f"{build}: the {what} report shows a negative line: "
                  f"{out[max(0, m.start() - 80):m.end() + 20] if m else ''!r}")
        check("hot" in text.stdout, f"{build}: hot not in the text report")
        got.append(f"{build} {value}: {hot['self']} samples, line unknown")
    if not got:
        raise Skip("no supported interpreter")
    return "; ".join(got)
