"""A worker of dumpview's process trees. `dumpview_work.py GO SECONDS`:
prints "ready PID", waits for the file GO to exist, then spends SECONDS of
its own CPU in work() and prints "cpu PID SECONDS" (its CPU time in work(),
measured by itself). `dumpview_work.py --idle`: prints "ready PID" and waits
in idle() until killed."""
import os
import sys
import time


def idle():
    time.sleep(3600)  # IDLE


def work(secs):
    start = time.thread_time()
    n = 0
    while time.thread_time() - start < secs:
        n += 1  # WORK
    return time.thread_time() - start


def say(line):
    """One write per line: workers share their parent's stdout, and print()'s
    two writes (text, then newline) would interleave with theirs."""
    os.write(1, (line + "\n").encode())


def main():
    say(f"ready {os.getpid()}")
    if sys.argv[1] == "--idle":
        idle()
        return
    go, secs = sys.argv[1], float(sys.argv[2])
    while not os.path.exists(go):
        time.sleep(0.01)
    took = work(secs)
    say(f"cpu {os.getpid()} {took:.4f}")


main()
