"""Runs on after pybpfprof's -d: spins in after_spin until SIGTERM or
SIGINT, then prints "got N" and exits 100 + N (by itself, 9 after 120 s).
Prints "pid PID" and "ready" first."""

import os
import signal
import sys
import time

got = []


def after_spin():
    end = time.monotonic() + 120
    while not got and time.monotonic() < end:
        for _ in range(10000):
            pass


def main():
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda n, _: got.append(n))
    print("pid", os.getpid(), flush=True)
    print("ready", flush=True)
    after_spin()
    if not got:
        sys.exit(9)
    print("got", got[0], flush=True)
    sys.exit(100 + got[0])


if __name__ == "__main__":
    main()
