# A deep, light stack before shallow, heavy work, as a program whose imports
# nest deep before its job runs: tower() recurses DEPTH calls and spins LIGHT
# seconds of its CPU time at the top (time.thread_time: whatever the
# machine's load); then work() spins 3 x LIGHT seconds two frames deep, at
# two lines of its own (1 and 2 of the 3 parts), and the process exits. The
# busiest frame (most self samples) is work()'s second line, near the root.
import sys
import time

DEPTH = 90
LIGHT = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3


def spin(secs):
    end = time.thread_time() + secs
    x = 0
    while time.thread_time() < end:
        x = (x * 31 + 7) % 1000003
    return x


def tower(n):
    if n <= 1:
        return spin(LIGHT)  # marker: tower top
    return tower(n - 1)


def work():
    end = time.thread_time() + 3 * LIGHT
    x = 0
    while time.thread_time() < end:
        for _ in range(2000):
            x = (x * 31 + 7) % 1000003  # marker: work A
        for _ in range(4000):
            x = (x * 17 + 3) % 999983  # marker: work B
    return x


sys.setrecursionlimit(DEPTH + 100)
tower(DEPTH)
work()
