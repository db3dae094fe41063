"""Launch-mode ground truth: echoes one line of stdin to stdout and "err"
to stderr, spins in exit_work for a moment and prints the CPU time it got, then exits with the code given
(or kills itself with the signal given as -SIG). Usage: procs_exit.py CODE"""

import os
import sys
import time


def exit_work(seconds):
    cpu0 = time.thread_time()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return time.thread_time() - cpu0


line = sys.stdin.readline()
print("echo:", line.strip(), flush=True)
print("err", file=sys.stderr, flush=True)
# the CPU time exit_work got: the ground truth for its samples
print(f"cpu: {exit_work(0.5):.3f}", flush=True)
code = int(sys.argv[1])
if code < 0:
    os.kill(os.getpid(), -code)
sys.exit(code)
