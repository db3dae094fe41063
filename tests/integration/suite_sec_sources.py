"""Source files are read with the target's rights (issue 11, points 1 and 6).

co_filename is whatever the target says. A process of an unprivileged user
(setpriv to nobody) names files it could not read itself: a file only root
may read, magic links (/proc/self/root/..., /proc/1/root/...) leading to it,
a FIFO, and a file on a FUSE mount whose read never returns. The text report
must show none of their text, say why each cannot be read, and come in time.
"""

import ctypes
import ctypes.util
import errno
import os
import shutil
import struct
import tempfile
import threading
import time
import uuid

from pathlib import Path

from harness import (Fail, Profiler, RUN_SLACK, Skip, Workloads, check, interpreter,
                     line_table, run_profiler, test)


SEC_SRC_DROP = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")

# The target: one function per (name, path), compiled so that its code object
# claims to come from path; all of them called in turn, forever. A path
# "fifo:P" is a FIFO the target makes itself first.
SEC_SRC_TARGET = r'''
import os, sys, time
funcs = []
exec_at = None
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    if name == "exec":          # exec=SECONDS:PROGRAM: becomes PROGRAM after that long
        secs, prog = path.split(":", 1)
        exec_at = (time.monotonic() + float(secs), prog)
        continue
    if path.startswith("fifo:"):
        path = path[5:]
        os.mkfifo(path)
    src = ("def %s():\n    n = 0\n    for i in range(20000):\n        n += i\n"
           "    return n\n" % name)
    ns = {}
    exec(compile(src, path, "exec"), ns)
    funcs.append(ns[name])
print("ready", flush=True)
while True:
    for f in funcs:
        f()
    if exec_at and time.monotonic() > exec_at[0]:
        os.execv(exec_at[1], [exec_at[1], "60"])
'''

# Lines 1-5 of a function above, and more: whatever line a sample lands on.
SEC_SRC_LINES = 8


def sec_src_setup(tmp, token):
    """A root-only secret file, a world-readable one, the target script, and a
    directory nobody may write to (for its FIFO)."""
    os.chmod(tmp, 0o755)
    secret = Path(tmp) / "secret.py"
    secret.write_text("".join(f"x = '{token} line {i}'\n" for i in range(1, SEC_SRC_LINES + 1)))
    os.chmod(secret, 0o600)
    public = Path(tmp) / "public.py"
    public.write_text("".join(f"y = 'public line {i}'\n" for i in range(1, SEC_SRC_LINES + 1)))
    os.chmod(public, 0o644)
    script = Path(tmp) / "sec_src_target.py"
    script.write_text(SEC_SRC_TARGET)
    os.chmod(script, 0o644)
    writable = Path(tmp) / "w"
    writable.mkdir()
    os.chmod(writable, 0o777)
    return secret, public, script, writable


def sec_src_notes(text, func):
    """The "source: ..." notes of func's line-by-line table, and its rows."""
    rows, notes = line_table(text, func)
    return notes, rows


def sec_src_run(pid, duration=2):
    r = run_profiler(["-p", pid, "-d", duration, "-F", 199, "--line-report=5"],
                     timeout=duration + RUN_SLACK)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}")
    return r


@test
def sec_src_root_only_file():
    """A process of nobody names a file only root may read: no line of it in
    the report, "Permission denied" instead; its readable file still shows."""
    token = f"SECRET_{uuid.uuid4().hex[:12]}"
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        secret, public, script, _ = sec_src_setup(tmp, token)
        p = wl.start(interpreter("debian"), script, f"spin_secret={secret}",
                     f"spin_public={public}", prefix=SEC_SRC_DROP)
        r = sec_src_run(p.pid)
    out = r.stdout + r.stderr
    check(token not in out, f"the secret is in the report: "
          f"{[ln for ln in out.splitlines() if token in ln][:3]}")
    notes, _ = sec_src_notes(r.stdout, "spin_secret")
    want = f"source: cannot read {secret}: Permission denied"
    check(notes == [want], f"notes of spin_secret {notes}, expected [{want!r}]")
    notes, rows = sec_src_notes(r.stdout, "spin_public")
    check(not notes, f"notes on the readable file: {notes}")
    shown = {row[0]: row[3] for row in rows}
    check(shown.get("4") == "y = 'public line 4'",
          f"spin_public's line 4 shows {shown.get('4')!r}: {rows}")
    return f"{want!r}; the public file's lines shown ({len(rows)} rows)"


@test
def sec_src_fifo_and_magic_links():
    """A FIFO the target made, and magic links to the root-only file
    (/proc/self/root/..., /proc/1/root/...): not read, a reason each, no
    secret, and the report comes at once."""
    token = f"SECRET_{uuid.uuid4().hex[:12]}"
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        secret, _, script, writable = sec_src_setup(tmp, token)
        fifo = writable / "fifo.py"
        magic_self = f"/proc/self/root{secret}"
        magic_init = f"/proc/1/root{secret}"
        p = wl.start(interpreter("debian"), script, f"spin_fifo=fifo:{fifo}",
                     f"spin_magic_self={magic_self}", f"spin_magic_init={magic_init}",
                     prefix=SEC_SRC_DROP)
        r = sec_src_run(p.pid, 2)
    out = r.stdout + r.stderr
    check(token not in out, f"the secret is in the report: "
          f"{[ln for ln in out.splitlines() if token in ln][:3]}")
    want = {"spin_fifo": f"source: cannot read {fifo}: not a regular file",
            "spin_magic_self": f"source: cannot read {magic_self}: a link not followed "
                               "(a /proc magic link, or too many levels of links)",
            # nobody may not even look into pid 1's /proc directory
            "spin_magic_init": f"source: cannot read {magic_init}: Permission denied"}
    for func, note in want.items():
        notes, _ = sec_src_notes(r.stdout, func)
        check(notes == [note], f"notes of {func}: {notes}, expected [{note!r}]")
    # -d 2: the sampling ends after 2 s; start-up and the report add little
    check(r.elapsed < 2 + 3, f"the run took {r.elapsed:.1f} s for -d 2")
    return f"3 reasons given, no secret; run {r.elapsed:.2f} s for -d 2"


@test
def sec_src_setuid_exec():
    """A process of nobody names the root-only file, is sampled, then execs a
    set-user-ID root program (a copy of sleep) and is root when the report
    is written: its files are still read with no more than nobody's rights
    (every user it was seen as must be able to read them)."""
    token = f"SECRET_{uuid.uuid4().hex[:12]}"
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        secret, _, script, _ = sec_src_setup(tmp, token)
        suid = Path(tmp) / "suid_sleep"
        shutil.copy("/bin/sleep", suid)
        os.chown(suid, 0, 0)
        os.chmod(suid, 0o4755)
        p = wl.start(interpreter("debian"), script, f"spin_secret={secret}", "exec=1.5:"
                     f"{suid}", prefix=SEC_SRC_DROP)
        r = sec_src_run(p.pid, 3)
        status = Path(f"/proc/{p.pid}/status").read_text()
    uids = [ln.split()[1:] for ln in status.splitlines() if ln.startswith("Uid:")][0]
    check(uids[3] == "0", f"the target is not root at the end (Uid: {uids}): the test "
          "shows nothing")
    out = r.stdout + r.stderr
    check(token not in out, f"the secret is in the report: "
          f"{[ln for ln in out.splitlines() if token in ln][:3]}")
    notes, _ = sec_src_notes(r.stdout, "spin_secret")
    want = f"source: cannot read {secret}: Permission denied"
    check(notes == [want], f"notes of spin_secret {notes}, expected [{want!r}]")
    return f"root at the end (Uid: {' '.join(uids)}), yet {want!r}"


# ------------------------------------------------------------------ FUSE

FUSE_LOOKUP, FUSE_FORGET, FUSE_GETATTR, FUSE_OPEN, FUSE_READ = 1, 2, 3, 14, 15
FUSE_RELEASE, FUSE_FLUSH, FUSE_INIT, FUSE_INTERRUPT, FUSE_BATCH_FORGET = 18, 25, 26, 36, 42
FUSE_DESTROY = 38


class StuckFuse:
    """A FUSE file system (the kernel protocol spoken directly over /dev/fuse,
    mounted with mount(2) as root, allow_other) with one file, /slow.py,
    whose reads are never answered until release(): what a target that
    controls a FUSE mount can do to whoever reads its file."""

    def __init__(self, mnt):
        self.mnt = str(mnt)
        self.pending = []       # READ requests held
        self.reads = 0
        self.lock = threading.Lock()
        self.fd = os.open("/dev/fuse", os.O_RDWR)
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        opts = f"fd={self.fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
        if libc.mount(b"pybpfprof-test", self.mnt.encode(), b"fuse", 6, opts) != 0:
            e = ctypes.get_errno()
            os.close(self.fd)
            raise Skip(f"cannot mount a FUSE file system here: {os.strerror(e)}")
        self.libc = libc
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @staticmethod
    def attr(ino, mode, size):
        # struct fuse_attr: ino size blocks atime mtime ctime, 3 nsec, mode nlink
        # uid gid rdev blksize flags
        return struct.pack("<QQQQQQIIIIIIIIII", ino, size, 0, 0, 0, 0, 0, 0, 0, mode,
                           1, 0, 0, 0, 4096, 0)

    def reply(self, unique, error=0, body=b""):
        try:
            os.write(self.fd, struct.pack("<IiQ", 16 + len(body), error, unique) + body)
        except OSError:
            pass

    def serve(self):
        while True:
            try:
                req = os.read(self.fd, 1 << 17)
            except OSError:
                return          # unmounted or aborted
            length, op, unique, node = struct.unpack_from("<IIQQ", req)
            arg = req[40:length]
            if op == FUSE_INIT:
                major, minor = struct.unpack_from("<II", arg)
                body = struct.pack("<IIIIHHIIHHI", 7, 31, 0, 0, 16, 12, 65536, 1, 32, 0, 0)
                self.reply(unique, 0, body.ljust(64, b"\0"))
            elif op == FUSE_LOOKUP:
                name = arg.split(b"\0")[0]
                if node == 1 and name == b"slow.py":
                    entry = struct.pack("<QQQQII", 2, 0, 0, 0, 0, 0)
                    self.reply(unique, 0, entry + self.attr(2, 0o100644, 4096))
                else:
                    self.reply(unique, -errno.ENOENT)
            elif op == FUSE_GETATTR:
                attr = self.attr(1, 0o40755, 0) if node == 1 else self.attr(2, 0o100644, 4096)
                self.reply(unique, 0, struct.pack("<QII", 0, 0, 0) + attr)
            elif op == FUSE_OPEN:
                self.reply(unique, 0, struct.pack("<QIi", 0, 1, 0))    # FOPEN_DIRECT_IO
            elif op == FUSE_READ:
                with self.lock:
                    self.pending.append(unique)
                    self.reads += 1
            elif op in (FUSE_FORGET, FUSE_BATCH_FORGET, FUSE_INTERRUPT):
                pass            # no answer expected (an interrupted read stays stuck)
            elif op in (FUSE_RELEASE, FUSE_FLUSH, FUSE_DESTROY):
                self.reply(unique)
            else:
                self.reply(unique, -errno.ENOSYS)

    def release(self):
        """Answers the held reads (EIO), so their readers can end; unmounts."""
        if self.fd < 0:
            return
        with self.lock:
            held, self.pending = self.pending, []
        for unique in held:
            self.reply(unique, -errno.EIO)
        time.sleep(0.2)
        self.libc.umount2(self.mnt.encode(), 2)     # MNT_DETACH
        os.close(self.fd)
        self.fd = -1
        self.thread.join(timeout=5)


@test
def sec_src_fuse_read_blocks():
    """A source file on a FUSE mount whose read never returns: the report
    still comes within the 2 s the helper has, the file "timed out"."""
    if not os.path.exists("/dev/fuse"):
        raise Skip("no /dev/fuse")
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        _, _, script, _ = sec_src_setup(tmp, "unused")
        mnt = Path(tmp) / "mnt"
        mnt.mkdir()
        os.chmod(mnt, 0o755)
        fuse = StuckFuse(mnt)
        try:
            slow = mnt / "slow.py"
            p = wl.start(interpreter("debian"), script, f"spin_fuse={slow}",
                         prefix=SEC_SRC_DROP)
            prof = Profiler(["-p", p.pid, "-d", 1, "-F", 199, "--line-report=5"],
                            verbose=False, capture=True)
            if prof.watch(1 + 12):
                took = time.monotonic() - prof.t_start
                # stuck in the FUSE read: answer it, or the kill cannot finish
                fuse.release()
                prof.kill()
                raise Fail(f"no report {took:.1f} s after the start of -d 1 "
                           f"({fuse.reads} FUSE reads held)")
            took = prof.t_end - prof.t_start
            reads = fuse.reads
        finally:
            fuse.release()
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()}")
    check(reads >= 1, "nothing read the FUSE file: the test shows nothing")
    notes, _ = sec_src_notes(prof.stdout(), "spin_fuse")
    want = (f"source: cannot read {slow}: timed out (opening or reading it did not finish "
            "in time)")
    check(notes == [want], f"notes of spin_fuse: {notes}, expected [{want!r}]")
    # -d 1, then at most 2 s waiting for the helper; start-up and the rest well under 2 s
    check(took < 1 + 2 + 2, f"the run took {took:.1f} s for -d 1")
    return f"report after {took:.2f} s for -d 1 ({reads} FUSE read held): {want!r}"


@test
def sec_src_fuse_many_processes():
    """Six processes whose source file is on that FUSE mount: 2 s each at most,
    10 s for all of them together; the sixth is not read at all, so a user
    starting many such processes cannot hold the report for long."""
    if not os.path.exists("/dev/fuse"):
        raise Skip("no /dev/fuse")
    nproc = 6
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        _, _, script, _ = sec_src_setup(tmp, "unused")
        mnt = Path(tmp) / "mnt"
        mnt.mkdir()
        os.chmod(mnt, 0o755)
        fuse = StuckFuse(mnt)
        try:
            slow = mnt / "slow.py"
            pids = [wl.start(interpreter("debian"), script, f"spin_fuse={slow}",
                             prefix=SEC_SRC_DROP).pid for _ in range(nproc)]
            prof = Profiler([*[a for pid in pids for a in ("-p", pid)], "-d", 1, "-F", 99,
                             "--line-report=1"], verbose=False, capture=True)
            if prof.watch(1 + 10 + 15):
                took = time.monotonic() - prof.t_start
                fuse.release()
                prof.kill()
                raise Fail(f"no report {took:.1f} s after the start of -d 1 "
                           f"({fuse.reads} FUSE reads held)")
            took = prof.t_end - prof.t_start
        finally:
            fuse.release()
    check(prof.rc == 0, f"exit {prof.rc}: {prof.stderr().strip()}")
    notes = [ln.strip() for ln in prof.stdout().splitlines()
             if ln.strip().startswith("source:")]
    timed = f"source: cannot read {slow}: timed out (opening or reading it did not finish in time)"
    spent = f"source: cannot read {slow}: not read: the time for reading source files was spent"
    check(notes == [timed] * (nproc - 1) + [spent],
          f"notes {notes}, expected {nproc - 1} x {timed!r} then {spent!r}")
    # -d 1, then 5 x 2 s of waiting; start-up and the rest within 4 s
    check(took < 1 + 10 + 4, f"the run took {took:.1f} s for -d 1")
    return f"report after {took:.2f} s for -d 1: {nproc - 1} timed out, the last not read"
