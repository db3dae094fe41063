# Runs that must fail cleanly: a thread id, a pid that does not exist, a
# process that is not CPython or one of a version not supported, no
# privilege, an output that cannot be written, a bad command line. Each
# exits with its status and one "pybpfprof: ..." line naming the cause, and
# writes no report.

import os
import shutil
import subprocess
import tempfile
import time

from harness import (Fail, PYENV, Skip, Workloads, check, expect_error, interpreter,
                     profiler_copy, test, unsupported_interpreters)


@test
def error_thread_id():
    # A worker thread's id is a valid pid for /proc but not a process: the
    # profiler must say which process to give instead.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "threads.py")
        tids = [int(t) for t in os.listdir(f"/proc/{p.pid}/task") if int(t) != p.pid]
        check(tids, "threads.py has no worker threads")
        out = os.path.join(tmp, "x.json")
        msg, t = expect_error(["-p", tids[0], "-d", 1, "-o", out],
                              [str(tids[0]), f"-p {p.pid}"], out=out)
    return f"{t:.2f}s: {msg}"


@test
def error_no_such_pid():
    # A pid that surely does not exist: one that just exited and was reaped
    # (pids are allocated upwards, so it is not reused within a second).
    p = subprocess.Popen(["true"])
    p.wait(timeout=10)
    pid = p.pid
    check(not os.path.exists(f"/proc/{pid}"), f"pid {pid} reused already")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.json")
        msg, t = expect_error(["-p", pid, "-d", 1, "-o", out], [str(pid)], out=out)
    return f"{t:.2f}s: {msg}"


@test
def error_not_python():
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.spawn(["sleep", "60"], wait_ready=False)
        time.sleep(0.2)  # let exec() finish so /proc/PID/exe is sleep
        out = os.path.join(tmp, "x.json")
        msg, t = expect_error(["-p", p.pid, "-d", 1, "-o", out],
                              [str(p.pid), "not a CPython process"], out=out)
    return f"{t:.2f}s: {msg}"


@test
def error_unsupported_version():
    found = unsupported_interpreters()
    if not found:
        raise Skip(f"no pyenv 2.7/3.6/3.7 under {PYENV}")
    msgs = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        for minor, exe in found:
            p = wl.start(exe, "idle.py")
            out = os.path.join(tmp, f"{minor}.json")
            msg, _ = expect_error(["-p", p.pid, "-d", 1, "-o", out],
                                  [str(p.pid), f"Python {minor}", "supported: 3.8 to 3.15"],
                                  out=out)
            msgs.append(msg)
    return f"{len(found)} refused ({', '.join(m for m, _ in found)}); e.g. {msgs[0]}"


@test
def error_no_privilege():
    if not shutil.which("setpriv"):
        raise Fail("setpriv (util-linux) not found")
    # Work on copies: nobody may not be able to traverse the checkout, and
    # the output directory must be writable by nobody so that only the
    # missing privilege can explain the failure.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)
        exe = profiler_copy(tmp)
        out = os.path.join(tmp, "x.json")
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        drop = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all"]
        msg, t = expect_error(["-p", p.pid, "-d", 1, "-o", out], [], out=out,
                              prefix=drop, exe=exe)
    check("cap_bpf" in msg.lower() or "root" in msg.lower(),
          f"message names neither CAP_BPF nor root: {msg!r}")
    return f"{t:.2f}s: {msg}"


@test
def error_output_path():
    msgs = []
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        # -d 5: a check made only after profiling would take > 5 s.
        bad = "/nonexistent-dir/x.json"
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", bad], [bad], out=bad)
        check(t < 2, f"failed only after {t:.1f}s: output checked after profiling")
        msgs.append(f"{t:.2f}s: {msg}")
        # A directory as output: must be refused, and left untouched.
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", tmp], [tmp])
        check(t < 2, f"directory refused only after {t:.1f}s")
        check(os.path.isdir(tmp) and not os.listdir(tmp),
              f"{tmp} modified: {os.listdir(tmp)}")
        msgs.append(msg)
        # An existing file that cannot be written. Root ignores permission
        # bits, so make it immutable instead; it must keep its content.
        ro = os.path.join(tmp, "ro.json")
        with open(ro, "w") as f:
            f.write("keep")
        if shutil.which("chattr") and subprocess.run(
                ["chattr", "+i", ro], capture_output=True, timeout=10).returncode == 0:
            try:
                msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", ro], [ro])
                check(t < 2, f"immutable file refused only after {t:.1f}s")
            finally:
                subprocess.run(["chattr", "-i", ro], capture_output=True, timeout=10)
            with open(ro) as f:
                check(f.read() == "keep", f"{ro} was altered")
            msgs.append(msg)
        else:
            msgs.append("immutable file case not run: chattr unsupported here")
    return " | ".join(msgs)


@test
def error_keeps_existing_output():
    # Checking -o early must not mean truncating it early: a run that fails
    # on its target leaves an existing report as it was.
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        p = wl.spawn(["sleep", "60"], wait_ready=False)
        time.sleep(0.2)
        out = os.path.join(tmp, "old.json")
        with open(out, "w") as f:
            f.write('{"old": true}\n')
        msg, _ = expect_error(["-p", p.pid, "-d", 1, "-o", out], ["not a CPython process"])
        with open(out) as f:
            check(f.read() == '{"old": true}\n', f"{out} changed by a failed run")
    return "existing -o file untouched by a failed run"


@test
def error_usage():
    # Bad command lines exit 2 before touching anything, output file included.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.json")
        cases = [([], "-p"), (["-p", "abc"], "abc"), (["-p", "1", "--max-depth", "2000"], "2000"),
                 (["-p", "1", "-f", "xml"], "xml"), (["-p", "1", "-F", "0"], "0"),
                 (["-p", "1", "-d", "0"], "0")]
        for args, word in cases:
            expect_error([*args, "-o", out], [word], out=out, rc=2)
    return f"{len(cases)} bad command lines exit 2"
