# Issue 11, points 6 to 8: files a hostile target controls (its maps lines,
# its mapped files), pidfds, launch mode's --user.
#
# Hostile targets run as nobody (setpriv) under /usr/bin/python3.11 started
# through the dynamic loader: their executable is then ld.so, which holds no
# _PyRuntime, so the profiler looks for a mapped libpython3 -- a file the
# target can name, make and truncate itself.

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from pathlib import Path

from harness import (Profiler, READY_TIMEOUT, RUN_SLACK, Skip, TARGETS, Workloads, check,
                     expect_error, functions, interpreter, load_report, process,
                     read_stdout_until, run_profiler, test)


LDSO = "/lib64/ld-linux-x86-64.so.2"
AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


class NobodyDir:
    """A scratch directory owned by nobody, holding a copy of the target
    script (nobody may not be able to traverse the checkout)."""

    def __init__(self, script):
        self.path = tempfile.mkdtemp(prefix="pybpfprof-sec-proc-")
        self.script = os.path.join(self.path, script)
        shutil.copy(TARGETS / script, self.script)
        os.chmod(self.path, 0o755)
        os.chown(self.path, 65534, 65534)
        os.chmod(self.script, 0o644)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # a path past PATH_MAX: rm -rf copes with it, shutil.rmtree may not
        subprocess.run(["rm", "-rf", self.path], check=False)
        return False


def start_hostile(wl, d, stdin=subprocess.DEVNULL):
    """The target, as nobody, through ld.so; its 'ready ...' line is returned."""
    p = wl.spawn([*AS_NOBODY, LDSO, "/usr/bin/python3.11", d.script, d.path],
                 wait_ready=False, stdin=stdin)
    buf = read_stdout_until(p, lambda b: b.startswith(b"ready") and b.endswith(b"\n"), "ready")
    return buf.decode().strip()


@test
def sec_proc_long_maps_line():
    # The maps line of a mapping whose path is over 4 KiB: read in 4224-byte
    # pieces, its tail parsed as an entry of its own, a "libpython3.11.so"
    # mapping the target made up. The process is not a CPython pybpfprof
    # knows (its executable is ld.so), and must be refused as such; misled,
    # pybpfprof took the forged entry's range for the interpreter's file.
    with Workloads() as wl, NobodyDir("procfs_longpath.py") as d:
        ready = start_hostile(wl, d, stdin=subprocess.PIPE)
        p = wl.procs[-1]
        _, length, tail = ready.split(" ", 2)
        check(int(length) > 4224 and tail.endswith("/libpython3.11.so") and
              re.match(r"^[0-9a-f]+-[0-9a-f]+ r--p 00000000 ", tail),
              f"the target's setup did not work: {ready!r}")
        r = run_profiler(["-p", p.pid, "-d", 1, "-v", "-f", "json"], timeout=RUN_SLACK)
        p.stdin.close()
    msg = r.stderr.strip()
    check(r.returncode == 1, f"exit {r.returncode} (the forged libpython3.11.so entry was "
          f"taken for the interpreter?); stderr: {msg[-400:]!r}")
    check("libpython3.11.so" not in msg, f"the forged entry shows in: {msg[-400:]!r}")
    check(f"pid {p.pid} (ld-linux-x86-64) is not a CPython process" in msg, f"stderr {msg!r}")
    return f"maps line of {length} bytes, forged tail {tail[:40]!r}...: refused as not CPython"


def fds_naming(pid, path):
    """Whether process pid has a descriptor open on path."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == path:
                    return True
            except OSError:
                pass
    except OSError:
        pass
    return False


@test
def sec_proc_truncated_elf():
    # The target's "libpython3.11.so" (72 MiB of symbols to search) is cut to
    # 0 bytes once pybpfprof has opened it. Read with pread, the search ends
    # on a short read; mapped, pybpfprof's next access raised SIGBUS.
    with Workloads() as wl, NobodyDir("procfs_truncate.py") as d:
        start_hostile(wl, d, stdin=subprocess.PIPE)
        p = wl.procs[-1]
        lib = os.path.join(d.path, "libpython3.11.so")
        prof = Profiler(["-p", p.pid, "-d", 1, "-f", "json"], verbose=False)
        try:
            deadline = time.monotonic() + READY_TIMEOUT
            while not fds_naming(prof.p.pid, lib) and prof.running():
                check(time.monotonic() < deadline, "pybpfprof never opened the fake libpython")
                time.sleep(0.0005)
            opened = prof.running()
            p.stdin.write(b"t\n")
            p.stdin.flush()
            read_stdout_until(p, lambda b: b"truncated\n" in b, "truncating")
            rc = prof.wait(RUN_SLACK)
        finally:
            prof.kill()
        msg = prof.stderr().strip()
        p.stdin.close()
    check(opened, f"pybpfprof was done before the truncation (exit {rc}): {msg!r}")
    check(rc != -signal.SIGBUS, "pybpfprof was killed by SIGBUS")
    # a refusal in one sentence (the file named libpython3.11 holds no _PyRuntime)
    check(rc == 1 and msg.startswith(f"pybpfprof: pid {p.pid} (ld-linux-x86-64) ") and
          "\n" not in msg, f"exit {rc}, stderr {msg!r}")
    return f"truncated while read: exit {rc}, {msg[:90]!r}"


USER_PROBE = ("import os, sys, time\n"
              "print(os.getuid(), os.getgid(), sorted(os.getgroups()), os.environ.get('USER'))\n"
              "sys.stdout.flush()\n"
              "t = time.process_time()\n"
              "def user_spin():\n"
              "    while time.process_time() - t < 0.6: pass\n"
              "user_spin()\n")


def launch_as(user, want_ids):
    """`--user user -- python3.11 -c USER_PROBE`: what it printed, and its profile."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        r = run_profiler(["--user", user, "-F", 99, "-f", "json", "-o", out, "--",
                          "/usr/bin/python3.11", "-c", USER_PROBE], timeout=RUN_SLACK)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        check(r.stdout.startswith(want_ids), f"the command printed {r.stdout!r}, "
              f"expected {want_ids!r}...")
        check(out.exists(), "no profile written")
        rep = load_report(out)
    procs = rep["processes"]
    check(len(procs) == 1, f"{len(procs)} sections for one command")
    hot = functions(procs[0]).get("user_spin", {}).get("self", 0)
    check(hot >= 20, f"{hot} samples in user_spin (0.6 s of CPU at 99 Hz)")
    return f"--user {user}: {r.stdout.strip()}, {hot} samples in user_spin"


@test
def sec_proc_user_name():
    # nobody: uid and gid 65534, its groups, USER set; profiled as usual
    return launch_as("nobody", "65534 65534 [65534] nobody\n")


@test
def sec_proc_user_uid():
    # a uid with no passwd entry: gid = uid, no supplementary group, USER kept
    user = os.environ.get("USER")
    return launch_as("54321", f"54321 54321 [] {user}\n")


@test
def sec_proc_user_unknown():
    # refused before anything runs: the command would leave a file behind
    with tempfile.TemporaryDirectory() as d:
        marker = Path(d) / "ran"
        msg, t = expect_error(["--user", "no-such-user-here", "--", "touch", marker],
                              ["--user no-such-user-here: no such user"])
        check(not marker.exists(), "the command ran")
    return f"{t:.2f}s: {msg}"


def reuse_pid(pid, argv, tries=50):
    """Starts argv under pid, which must be free (its process reaped): the
    kernel hands out ns_last_pid + 1 next, unless another fork on the host
    takes it first, so this is tried a few times. The Popen, or None."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        if p.pid == pid:
            return p
        p.kill()
        p.wait()
    return None


@test(alone=True)
def sec_proc_pid_reuse():
    # The only target exits and its pid is given at once to another Python
    # (same interpreter, so its memory reads alike, but spinning spin_beta).
    # Known by its pidfd, the target is seen gone and the run ends; known by
    # its pid, the newcomer was taken for it and sampled until -d ran out.
    freq, dur = 99, 6
    with Workloads() as wl, tempfile.TemporaryDirectory() as d:
        py = interpreter("debian")
        a = wl.start(py, "spin.py", "alpha")
        out = Path(d) / "rep.json"
        prof = Profiler(["-p", a.pid, "-d", dur, "-F", freq, "-f", "json", "-o", out])
        try:
            prof.wait_attached()
            time.sleep(0.5)
            a.kill()
            a.wait()
            gone = time.monotonic()
            b = reuse_pid(a.pid, py.argv("spin.py", ["beta"]))
            if b is None:
                raise Skip(f"pid {a.pid} could not be reused (other processes forked first)")
            wl.procs.append(b)
            reused_after = time.monotonic() - gone
            # later than the profiler's liveness check (every 0.2 s), any
            # build would have seen the target gone: nothing tested
            if reused_after > 0.15:
                raise Skip(f"pid {a.pid} reused only after {reused_after * 1000:.0f} ms")
            prof.wait(dur + RUN_SLACK)
            ended_after = time.monotonic() - gone
        finally:
            prof.kill()
        check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr()[-300:]}")
        rep = load_report(out)
    fns = functions(process(rep, a.pid))
    beta = fns.get("spin_beta", {}).get("self", 0)
    check(beta <= 0.3 * freq, f"{beta} samples of the newcomer's spin_beta in the exited "
          f"target's profile (pid reused {reused_after * 1000:.0f} ms after its exit)")
    check(ended_after < 1.5, f"the run went on {ended_after:.1f}s after the target exited "
          f"(its pid reused {reused_after * 1000:.0f} ms after)")
    return (f"pid {a.pid} reused after {reused_after * 1000:.0f} ms; run ended "
            f"{ended_after:.2f}s after the exit; spin_beta {beta} samples")


@test
def sec_proc_fifo_swapped_in():
    # --mem=alloc on a target running its own copy of libc, which puts a FIFO
    # at the copy's path as soon as anyone opens it. Held by descriptor, the
    # library is opened once and probed as that file. Named by its path (libbpf
    # reopening it per probe, the kernel resolving it again), pybpfprof was
    # steered by the swap: an open blocks on the FIFO, or, as on this machine,
    # the uprobe lands on the FIFO and the run fails with EINVAL.
    with Workloads() as wl, NobodyDir("procfs_fifo.py") as d:
        shutil.copy("/lib/x86_64-linux-gnu/libc.so.6", os.path.join(d.path, "libc.so.6"))
        os.chown(os.path.join(d.path, "libc.so.6"), 65534, 65534)
        p = wl.spawn([*AS_NOBODY, "env", f"LD_LIBRARY_PATH={d.path}",
                      "/usr/bin/python3.11", d.script, d.path])
        with open(f"/proc/{p.pid}/maps") as f:
            check(f"{d.path}/libc.so.6" in f.read(), "the target does not run on its libc copy")
        out = os.path.join(d.path, "rep.json")
        r = run_profiler(["-p", p.pid, "--mem=alloc", "-d", 1, "-f", "json", "-o", out],
                         timeout=15)
        swapped = os.path.exists(os.path.join(d.path, "libc.so.6.moved"))
    check(swapped, "the target never saw its libc opened (no swap happened)")
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return f"FIFO swapped in after the first open; run took {r.elapsed:.2f}s"
