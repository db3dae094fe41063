"""A launched command that leaves processes behind (issue 28.1), for
pybpfprof to name and end. Usage: launch_leftovers.py DIR

It spins in leftover_work for 0.3 s of CPU, then exits 3, leaving:
"stubborn", forked, in its session, ignoring SIGTERM and SIGHUP; "polite",
forked twice and in a session of its own, which writes DIR/polite.term at
SIGTERM and exits; "quick", forked, which dies with the command
(PR_SET_PDEATHSIG), as a multiprocessing helper ends when its parent does.
DIR/NAME.pid holds each one's pid and start time (field 22 of its stat),
DIR/command.end the command's CLOCK_MONOTONIC time as it exits.
"""

import ctypes
import os
import signal
import sys
import time

DIR = sys.argv[1]


def note(name):
    with open(f"/proc/{os.getpid()}/stat") as f:
        start = f.read().rsplit(")", 1)[1].split()[19]
    with open(os.path.join(DIR, f"{name}.pid"), "w") as f:
        f.write(f"{os.getpid()} {start}\n")


def stay():
    end = time.monotonic() + 60
    while time.monotonic() < end:
        time.sleep(0.05)
    os._exit(0)


def polite_term(*_):
    open(os.path.join(DIR, "polite.term"), "w").close()
    os._exit(0)


def leftover_work():
    t = time.thread_time()
    while time.thread_time() - t < 0.3:
        pass


def main():
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        note("stubborn")
        stay()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, polite_term)
            note("polite")
            stay()
        os._exit(0)
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        note("quick")
        stay()
    end = time.monotonic() + 30
    while time.monotonic() < end and not all(
            os.path.exists(os.path.join(DIR, f"{n}.pid")) for n in ("stubborn", "polite",
                                                                    "quick")):
        time.sleep(0.01)
    leftover_work()
    with open(os.path.join(DIR, "command.end"), "w") as f:
        f.write(f"{time.monotonic()}\n")
    sys.exit(3)


if __name__ == "__main__":
    main()
