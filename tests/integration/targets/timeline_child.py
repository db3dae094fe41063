# The child timeline_work.py forks and execs: its first and last moments
# (time.monotonic_ns()) and its thread CPU time, written to argv[1].
import json
import sys
import time

start = time.monotonic_ns()
cpu0 = time.thread_time_ns()


def child_work():
    x = 0
    for i in range(3000000):
        x += i * i  # timeline: child
    return x


child_work()
marks = {"start": start, "cpu_ns": time.thread_time_ns() - cpu0, "end": time.monotonic_ns()}
with open(sys.argv[1], "w") as f:
    json.dump(marks, f)
