"""A short-lived process: spins in short_work for SECONDS of wall time,
then exits. Usage: procs_short.py SECONDS"""

import sys
import time


def short_work(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


short_work(float(sys.argv[1]))
