# Launch mode (`pybpfprof [options] -- COMMAND`), issues 28.1, 29.6, 29.7:
# the command's own session and terminal, relayed; what it leaves running,
# named and ended; stop signals after -d; a run that saw no CPython.
#
# The terminal tests run pybpfprof as root from root's bash in a real
# terminal: a pty this test opens, whose other end is an interactive bash
# (job control, no line editing), as a user's would be; keys are typed
# into it and what it shows is read from it.

import fcntl
import os
import pty
import re
import select
import shlex
import shutil
import signal
import struct
import tempfile
import termios
import time
from pathlib import Path

from harness import (PROFILER, READY_TIMEOUT, RUN_SLACK, TARGETS, Fail, Profiler,
                     check, expect_error, functions, load_report, sanity, test)

PY = "/usr/bin/python3.11"
REPORT_HEADER = "pybpfprof 0.1.0: cpu profile"


class Terminal:
    """Root's shell in a terminal of the test's own: a pty whose other end
    is `bash -i --noediting`. type() sends keys, expect() reads what the
    terminal shows until a pattern appears; every process is reaped."""

    PROMPT = b"root-prompt$ "

    def __init__(self, rows=37, cols=111):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/root",
               "TERM": "xterm", "LANG": "C.UTF-8", "PS1": self.PROMPT.decode()}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvpe("bash", ["bash", "--norc", "--noprofile", "--noediting", "-i"], env)
            finally:
                os._exit(127)
        self.out, self.pos = b"", 0
        self.resize(rows, cols)
        self.expect(re.escape(self.PROMPT))

    def resize(self, rows, cols):
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def type(self, keys):
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        if not data:
            raise Fail(f"the terminal closed: {self.tail()}")
        self.out += data
        return True

    def expect(self, pattern, timeout=READY_TIMEOUT + RUN_SLACK):
        """Reads until pattern (a bytes regex) shows after what was matched
        before: its match."""
        rx = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.out, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fail(f"the terminal never showed {rx.pattern!r} in {timeout} s: "
                           f"{self.tail()}")
            self._read(min(left, 0.2))

    def tail(self, n=1500):
        return repr(self.out[-n:].decode(errors="replace"))

    def run(self, line):
        """Types a command line; its exit status, once the shell has it."""
        self.type(f"{line}; echo rc-$((6*7))-$?\r")
        return int(self.expect(rb"rc-42-(\d+)").group(1))

    def mode(self):
        """The terminal's mode as the shell sees it (stty -g)."""
        # markers only the shell's output holds: the typed line may echo before the prompt
        self.type("echo stty-$((6*7))-begin; stty -g; echo stty-$((6*7))-done\r")
        return self.expect(rb"stty-42-begin\r?\n([0-9a-f:]+)\r?\nstty-42-done").group(1).decode()

    def shell_child(self, timeout=READY_TIMEOUT):
        """The pid of the shell's foreground job (pybpfprof), once it runs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
            time.sleep(0.01)
        raise Fail("the shell started no job")

    def close(self):
        try:
            self.type("exit\r")
        except OSError:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
            time.sleep(0.05)
        else:
            # a test that failed midway: the shell's job first, then the shell
            try:
                with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
                    for kid in f.read().split():
                        os.kill(int(kid), signal.SIGKILL)
            except OSError:
                pass
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class NobodyDir:
    """A scratch directory owned by nobody, with a copy of a target script
    (nobody may not be able to traverse the checkout)."""

    def __init__(self, script):
        self.path = tempfile.mkdtemp(prefix="pybpfprof-launch-")
        self.script = os.path.join(self.path, script)
        shutil.copy(TARGETS / script, self.script)
        os.chmod(self.script, 0o644)
        os.chmod(self.path, 0o755)
        os.chown(self.path, 65534, 65534)

    def file(self, name):
        return os.path.join(self.path, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # what a failed run left behind: the processes the target noted
        for f in Path(self.path).glob("*.pid"):
            ident = started(f)
            if ident and alive(ident):
                os.kill(ident[0], signal.SIGKILL)
        shutil.rmtree(self.path, ignore_errors=True)
        return False


def started(pid_file):
    """(pid, start time) a target noted, or None."""
    try:
        with open(pid_file) as f:
            pid, start = f.read().split()
        return int(pid), start
    except (OSError, ValueError):
        return None


def started_from_stat(pid, script):
    """(pid, start time) of pid if it runs script, else None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if script.encode() not in f.read():
                return None
        with open(f"/proc/{pid}/stat") as f:
            return pid, f.read().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None


def alive(ident):
    """Whether the process (pid, start time) still runs (not a zombie)."""
    if not ident:
        return False
    try:
        with open(f"/proc/{ident[0]}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == ident[1] and fields[0] not in "ZX"


def wait_until(cond, timeout):
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.02)
    return cond()


def named_pids(text, what):
    """The pids a pybpfprof warning line containing `what` names."""
    lines = [ln for ln in text.splitlines() if what in ln]
    return {int(p) for ln in lines for p in re.findall(r"pid (\d+) \(", ln)}


@test
def sec_launch_tiocsti():
    """Issue 28.1: root runs `pybpfprof --user nobody -- python3 attack.py`
    from its bash in a terminal; the command leaves two processes behind
    (one in its session, one in a session of its own), which push `touch
    FILE` with TIOCSTI into /dev/tty and fds 0-2 during the run and after
    pybpfprof has exited, then read fd 0. Nothing may reach root's shell
    (no FILE), nothing may read what root types next, both are named and
    ended before pybpfprof exits, and the terminal's mode is as it was."""
    with NobodyDir("launch_tty_attack.py") as d, Terminal() as term:
        before = term.mode()
        argv = [PROFILER, "--user", "nobody", "-F", 99, "-o", d.file("rep.json"), "--", PY,
                d.script, d.path]
        t0 = time.monotonic()
        rc = term.run(" ".join(shlex.quote(str(a)) for a in argv))
        t_end = time.monotonic()
        shown = term.out.decode(errors="replace")
        idents = {n: started(d.file(f"{n}.pid")) for n in ("same", "away")}
        check(all(idents.values()), f"the leftovers never started: {idents}; {term.tail()}")
        # Let what the old code left behind do all it can before root types
        for name, ident in idents.items():
            wait_until(lambda: not alive(ident) or os.path.exists(d.file(f"{name}.after")),
                       10)
        term.type("echo typed-$((6*7))-after\r")
        term.expect(rb"typed-42-after")
        after = term.mode()
        injected = sorted(p.name for p in Path(d.path).glob("injected-*"))
        logs = {n: Path(d.file(f"{n}.log")).read_text() if os.path.exists(d.file(f"{n}.log"))
                else "" for n in idents}
    check(not injected, f"typed into root's shell: {injected}; the leftovers' log: {logs}")
    read = [ln for log in logs.values() for ln in log.splitlines() if "read fd0: b'" in ln]
    check(not read, f"a leftover read root's terminal: {read}")
    check(not any(alive(i) for i in idents.values()),
          f"leftovers outlived pybpfprof: {idents}")
    pids = {i[0] for i in idents.values()}
    named = named_pids(shown, "started by the command")
    check(pids <= named, f"leftovers {sorted(pids)} not all named: {named}; {term.tail()}")
    killed = named_pids(shown, "2 s after SIGTERM")
    check(pids <= killed, f"leftovers ignoring SIGTERM {sorted(pids)} not killed: {killed}")
    check(rc == 0, f"pybpfprof exited {rc}, the command's status is 0: {term.tail()}")
    check(before == after, f"terminal mode {before} before the run, {after} after")
    pushed = sum(ln.endswith(": pushed") for log in logs.values() for ln in log.splitlines())
    try:
        with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
            legacy = f.read().strip()
    except OSError:  # before Linux 6.2: always allowed
        legacy = "absent"
    return (f"leftovers {sorted(pids)} named and killed, {t_end - t0:.1f} s in all; "
            f"{pushed} TIOCSTI pushes went into the command's own pty, none into root's "
            f"shell (legacy_tiocsti={legacy}); mode kept")


@test
def sec_launch_leftovers():
    """Issue 28.1, without a terminal: `pybpfprof --user nobody -- python3
    launch_leftovers.py`. What the command leaves running is named in a
    warning and ended: SIGTERM (the polite one, double-forked into a session
    of its own, exits at it), then SIGKILL 2 s later (the stubborn one
    ignores SIGTERM); a process that ends with the command is not named.
    pybpfprof exits with the command's status, 3."""
    with NobodyDir("launch_leftovers.py") as d:
        out = d.file("rep.json")
        prof = Profiler(["--user", "nobody", "-F", 99, "-o", out, "--", PY, d.script, d.path],
                        verbose=False)
        try:
            rc = prof.wait(RUN_SLACK + 10)
        finally:
            prof.kill()
        err = prof.stderr()
        ids = {n: started(d.file(f"{n}.pid")) for n in ("stubborn", "polite", "quick")}
        polite_term = os.path.exists(d.file("polite.term"))
        with open(d.file("command.end")) as f:
            cmd_end = float(f.read())
        rep = load_report(out)
    check(all(ids.values()), f"the leftovers never started: {ids}; {err}")
    check(rc == 3, f"exit {rc}, the command's status is 3: {err.strip()[-400:]}")
    named = named_pids(err, "started by the command")
    killed = named_pids(err, "2 s after SIGTERM")
    want = {ids["stubborn"][0], ids["polite"][0]}
    check(named == want, f"named {sorted(named)}, expected stubborn and polite "
          f"{sorted(want)} (quick {ids['quick'][0]} ends with the command): {err}")
    check(killed == {ids["stubborn"][0]}, f"SIGKILL went to {sorted(killed)}, expected "
          f"stubborn {ids['stubborn'][0]} only: {err}")
    check(polite_term, "the polite leftover never saw SIGTERM")
    check(not any(alive(i) for i in ids.values()), f"leftovers outlived pybpfprof: {ids}")
    sanity(rep, 99)
    hot = sum(functions(p).get("leftover_work", {}).get("self", 0) for p in rep["processes"])
    check(hot >= 10, f"{hot} samples in leftover_work (0.3 s of CPU at 99 Hz)")
    return (f"stubborn and polite named, polite ended by SIGTERM, stubborn by SIGKILL; "
            f"pybpfprof exited {prof.t_end - cmd_end:.2f} s after the command")


@test
def launch_tty_relay():
    """The command's terminal is its own, relayed: in a session of its own
    on a pty (not root's terminal), with root's window size and its
    changes; a line typed reaches it, Ctrl-D is its end of file, Ctrl-Z
    stops it and pybpfprof with it (the shell's job; fg goes on), Ctrl-C is
    its SIGINT; its output comes before the report, and root's terminal
    gets its mode back. Then a pybpfprof killed by a second SIGTERM while it
    relays gives the terminal back as well, and the command goes with it."""
    with Terminal(rows=37, cols=111) as term:
        outer = os.readlink(f"/proc/{term.pid}/fd/0")
        before = term.mode()
        argv = [PROFILER, "-F", 99, "--", PY, TARGETS / "launch_tty_relay.py"]
        term.type(" ".join(shlex.quote(str(a)) for a in argv) + "; echo rc-$((6*7))-$?\r")
        m = term.expect(rb"session own=(\w+) tty=(\S+) isatty=(\d+) size=(\d+x\d+) pid=(\d+)")
        own, tty, bits, size, cmd = (g.decode() for g in m.groups())
        term.expect(rb"ready")
        term.type("hello relay\r")
        got = term.expect(rb"got ('.*?')\r").group(1).decode()
        term.resize(22, 99)
        winch = term.expect(rb"winch (\d+x\d+)").group(1).decode()
        term.type("one\rtwo\r\x04")
        eof = term.expect(rb"eof after (\d+) lines").group(1).decode()
        # Ctrl-Z stops the command, and pybpfprof with it: the shell's job
        term.type("\x1a")
        term.expect(rb"Stopped")
        job = term.shell_child()
        states = [state(cmd), state(job)]
        stopped = term.mode()
        term.type("fg\r")
        term.expect(rb"fg\r\n.*pybpfprof")
        # Ctrl-C once both run again: the shell echoes the job's line before
        # it gives the job the terminal, and a key typed before goes to it
        check(wait_until(lambda: "T" not in (state(cmd), state(job)), 10),
              f"after fg the command and pybpfprof are {[state(cmd), state(job)]}")
        term.type("\x03")
        sigint_at = term.expect(rb"sigint").start()
        # a job continued by fg is run alone: the rest of its line is dropped
        term.expect(re.escape(Terminal.PROMPT))
        term.type("echo rc-$((6*7))-$?\r")
        rc = int(term.expect(rb"rc-42-(\d+)").group(1))
        report_at = term.out.find(REPORT_HEADER.encode())
        after = term.mode()
        rc2, after2, cmd_gone = second_sigterm(term)
    check(own == "True", f"the command is not in a session of its own (own={own})")
    check(tty != outer and tty.startswith("/dev/pts/"),
          f"the command's terminal is {tty}, root's is {outer}")
    check(bits == "111", f"isatty of fds 0-2: {bits}")
    check(size == "111x37" and winch == "99x22", f"window {size}, then {winch}; expected "
          f"111x37, then 99x22")
    check(got == repr("hello relay\n"), f"the command read {got}")
    check(eof == "2", f"{eof} lines before Ctrl-D's end of file, expected 2")
    check(rc == 7, f"pybpfprof exited {rc}, the command's status after Ctrl-C is 7")
    check(0 <= sigint_at < report_at, f"the report (at {report_at}) is not after the "
          f"command's last line (at {sigint_at}): {term.tail()}")
    check(before == after, f"terminal mode {before} before the run, {after} after")
    check(before == stopped, f"terminal mode {before} before, {stopped} with the job stopped")
    check(states == ["T", "T"], f"after Ctrl-Z the command and pybpfprof are {states}, not "
          f"both stopped")
    check(rc2 == 128 + signal.SIGTERM, f"a second SIGTERM: exit {rc2}, expected 143")
    check(before == after2, f"terminal mode {before} before, {after2} after a second SIGTERM")
    check(cmd_gone, "the command outlived a pybpfprof ended by a second SIGTERM")
    return (f"own session, {tty} (root's {outer}), {size} then {winch}, got {got}, "
            f"EOF after {eof} lines, Ctrl-Z and fg, Ctrl-C -> exit {rc}; second SIGTERM -> "
            f"exit {rc2}; mode kept each time")


def state(pid):
    """A process's state letter (R, S, T, ...), "-" if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "-"


def second_sigterm(term):
    """pybpfprof relaying a command that ignores SIGTERM gets two: the first
    is passed on, the second ends pybpfprof at once. (exit status, the mode
    after, whether the command ended with its terminal)."""
    argv = [PROFILER, "-F", 99, "--", PY, TARGETS / "launch_tty_relay.py", "hold"]
    term.type(" ".join(shlex.quote(str(a)) for a in argv) + "; echo rc-$((6*7))-$?\r")
    cmd = int(term.expect(rb"pid (\d+)\r").group(1))
    term.expect(rb"ready")
    prof = term.shell_child()
    os.kill(prof, signal.SIGTERM)
    term.expect(rb"got SIGTERM")
    os.kill(prof, signal.SIGTERM)
    rc = int(term.expect(rb"rc-42-(\d+)").group(1))
    ident = started_from_stat(cmd, "launch_tty_relay.py")
    gone = wait_until(lambda: not alive(ident), 10)
    if not gone:  # left behind (the old code's): ended here
        os.kill(cmd, signal.SIGKILL)
    return rc, term.mode(), gone


def after_d(sig):
    """pybpfprof -d 1 -- a command that runs on: once the report is written,
    sig to pybpfprof reaches the command, and pybpfprof exits with its
    status. (exit status, command's output, seconds from sig to exit)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        prof = Profiler(["-d", 1, "-F", 99, "-o", out, "--", PY, TARGETS / "launch_after_d.py"],
                        capture=True, verbose=False)
        try:
            check(wait_until(lambda: out.exists() or not prof.running(), RUN_SLACK),
                  f"no report {RUN_SLACK} s after -d 1: {prof.stderr()[-300:]}")
            check(prof.running(), f"pybpfprof exited ({prof.rc}) before the command did")
            t = time.monotonic()
            prof.p.send_signal(sig)
            rc = prof.wait(15)
        finally:
            prof.kill()
            # a command that pybpfprof did not end (the old code's) ends here
            m = re.search(r"^pid (\d+)$", prof.stdout(), re.M)
            if m and alive(started_from_stat(int(m.group(1)), "launch_after_d.py")):
                os.kill(int(m.group(1)), signal.SIGKILL)
        rep = load_report(out)
    sanity(rep, 99)
    # the report of the first second, written while the command ran on
    check(len(rep["processes"]) == 1 and not rep["processes"][0]["exited"],
          f"the 1 s report: {[(p['pid'], p['exited']) for p in rep['processes']]}")
    hot = functions(rep["processes"][0]).get("after_spin", {}).get("self", 0)
    check(hot > 0, "no sample in after_spin in the 1 s report")
    return rc, prof.stdout(), prof.t_end - t


@test
def launch_after_duration_signal():
    """Issue 29.6: after -d the report is written and the command runs on;
    SIGTERM and SIGINT to pybpfprof are then passed to it (as before -d),
    and pybpfprof exits with its status: `timeout 60 pybpfprof -d 2 --
    python3 server.py` ends."""
    shown = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        rc, out, took = after_d(sig)
        check(f"got {int(sig)}\n" in out, f"the command never got {sig.name}: {out!r}")
        check(rc == 100 + sig, f"exit {rc}, the command's status is {100 + sig}")
        shown.append(f"{sig.name} -> exit {rc} in {took:.2f} s")
    return "; ".join(shown)


@test
def launch_no_python():
    """Issue 29.7: a command that runs no CPython is an error: one sentence
    saying so, no report, and the command's status if it failed, else 1."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rep.json"
        msg, _ = expect_error(["-o", out, "--", "bash", "-c", "sleep 0.2"],
                              ["no CPython process was seen", "the command (bash)",
                               "--subprocesses"], out=out)
        msg3, _ = expect_error(["-o", out, "--", "bash", "-c", "exit 3"],
                               ["no CPython process was seen"], out=out, rc=3)
        msg_sub, _ = expect_error(["--subprocesses", "-o", out, "--", "sh", "-c", "true"],
                                  ["no CPython process was seen",
                                   "nor any process it started"], out=out)
    return f"{msg!r}; exit 3 kept; with --subprocesses: {msg_sub[:60]!r}..."
