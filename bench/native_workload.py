# SPDX-License-Identifier: GPL-2.0-only
"""Workload for bench/native.sh: half native code, half Python.

Protocol (as bench/mem_workload.py): prints "ready"; waits for a line on
stdin; runs a fixed amount of work timed with time.perf_counter() and prints
"elapsed <seconds> cpu <seconds> checksum <n>" (cpu: time.process_time(), the
process's own CPU time, in which the BPF programs run); waits for a second
line (or EOF) before exiting.

Each iteration compresses 256 KiB of random bytes with zlib (libz: native
code, where --native copies and unwinds stacks) and runs a Python loop of
about the same length (the interpreter's code: no stack copied).
"""
import random
import sys
import time
import zlib

ITERATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
DATA = random.Random(1).randbytes(1 << 18)


def python_part():
    s = 0
    for i in range(120000):
        s += i * i
    return s


def main():
    print("ready", flush=True)
    sys.stdin.readline()
    t0, c0 = time.perf_counter(), time.process_time()
    checksum = 0
    for _ in range(ITERATIONS):
        checksum = (checksum + len(zlib.compress(DATA, 6)) + python_part()) % 1000000007
    print(f"elapsed {time.perf_counter() - t0:.6f} cpu {time.process_time() - c0:.6f} "
          f"checksum {checksum}", flush=True)
    sys.stdin.readline()


main()
