# One function's time over three lines of its own in known proportions:
# spread() runs rounds of three loops of 1000, 2000 and 3000 steps (1:2:3),
# each on a line of its own, until its thread has had SECS of CPU time
# (time.thread_time: whatever the machine's load), then the process exits.
import sys
import time

SECS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5


def spread():  # marker: spread def
    end = time.thread_time() + SECS
    x = 0
    while time.thread_time() < end:
        for _ in range(1000):
            x = (x * 31 + 7) % 1000003  # marker: spread 1
        for _ in range(2000):
            x = (x * 17 + 3) % 999983  # marker: spread 2
        for _ in range(3000):
            x = (x * 13 + 5) % 999979  # marker: spread 3
    return x


spread()
