# SPDX-License-Identifier: GPL-2.0-only
"""CPU-bound pure-Python workload for bench/overhead.sh.

Protocol (stdin/stdout, one line each):
  prints "ready", then stays on the CPU running small Python functions until a
  line arrives on stdin (so a profiler attached now gets its first sample at
  once, not only when the timed work begins);
  runs a fixed amount of work, timed with time.perf_counter(), and prints
  "elapsed <seconds> checksum <n> chunks <s>,<s>,..." (chunks: the time of
  every CHUNK iterations, for a noise-resistant second estimate);
  waits for a second line (or EOF) on stdin before exiting, so the harness can
  read the profiler's counters while the target is still alive.

The work is deterministic (same checksum every run): function calls and
recursion, loops, dict and list operations, string building, method calls on
small objects. `python3 workload.py --iterations N` changes the amount;
`--plain` skips the protocol and just runs and prints the time.
"""
import os
import select
import sys
import time

DEFAULT_ITERATIONS = 115
CHUNK = 5       # iterations per timed chunk (~85 ms)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def moved(self, dx, dy):
        return Point(self.x + dx, self.y + dy)

    def norm1(self):
        return abs(self.x) + abs(self.y)


def calls(n):
    acc = 0
    for i in range(n):
        acc += fib(12) + (i & 7)
    return acc


def dicts(n):
    d = {}
    for i in range(n):
        k = "k%d" % (i % 4096)
        d[k] = d.get(k, 0) + i
    total = 0
    for k, v in sorted(d.items()):
        total += v ^ len(k)
    return total


def lists(n):
    xs = [(i * 7919) % 10007 for i in range(n)]
    xs.sort()
    ys = [x * 2 for x in xs if x & 1]
    zs = list(reversed(ys))
    return sum(zs[::3]) + len(ys)


def objects(n):
    p = Point(0, 0)
    acc = 0
    for i in range(n):
        p = p.moved(1 if i & 1 else -2, 3 if i & 2 else -1)
        acc += p.norm1() & 0xFF
    return acc


def strings(n):
    parts = []
    for i in range(n):
        parts.append(str(i)[::-1])
    s = ",".join(parts)
    return len(s.split(",")) + s.count("7")


def one_iteration():
    return (calls(60) + dicts(20000) + lists(20000) + objects(20000)
            + strings(10000)) & 0xFFFFFFFF


def work(iterations, chunks):
    """Runs the work; appends to chunks the time of every CHUNK iterations."""
    checksum = 0
    t = time.perf_counter()
    for i in range(iterations):
        checksum = (checksum * 31 + one_iteration()) & 0xFFFFFFFF
        if i % CHUNK == CHUNK - 1:
            now = time.perf_counter()
            chunks.append(now - t)
            t = now
    return checksum


def spin_until_line():
    """Busy in Python code until stdin has a line; returns that line."""
    fd = sys.stdin.fileno()
    while True:
        for _ in range(20):
            fib(10)
        r, _, _ = select.select([fd], [], [], 0)
        if r:
            return sys.stdin.readline()


def main():
    iterations = DEFAULT_ITERATIONS
    plain = False
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--iterations":
            iterations = int(args.pop(0))
        elif a == "--plain":
            plain = True
        else:
            sys.exit("usage: workload.py [--iterations N] [--plain]")
    if not plain:
        print("ready", flush=True)
        if not spin_until_line():
            return
    chunks = []
    t0 = time.perf_counter()
    checksum = work(iterations, chunks)
    elapsed = time.perf_counter() - t0
    print("elapsed %.6f checksum %d chunks %s"
          % (elapsed, checksum, ",".join("%.6f" % c for c in chunks) or "-"), flush=True)
    if not plain:
        sys.stdin.readline()


if __name__ == "__main__":
    main()
