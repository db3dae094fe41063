"""A short-lived process: spins in short_work for SECONDS of CPU time,
then exits. Usage: procs_short.py SECONDS

CPU time, not wall time: on a loaded machine the work still outweighs the
interpreter's start-up by the same ratio, so the share of its samples in
short_work does not depend on the load."""

import sys
import time


def short_work(seconds):
    cpu0 = time.thread_time()
    n = 0
    while time.thread_time() - cpu0 < seconds:
        for _ in range(1000):
            n += 1
    return n


short_work(float(sys.argv[1]))
