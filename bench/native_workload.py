# SPDX-License-Identifier: GPL-2.0-only
"""Workload for bench/native.sh: half native code, half Python.

Protocol (as bench/mem_workload.py): prints "ready"; waits for a line on
stdin; runs a fixed amount of work timed with time.perf_counter() and prints
"elapsed <seconds> cpu <seconds> checksum <n>" (cpu: time.process_time(), the
process's own CPU time, in which the BPF programs run); waits for a second
line (or EOF) before exiting.

"half" (the default second argument): each iteration compresses 256 KiB of
random bytes with zlib (libz: native code, where --native copies and unwinds
stacks) and runs a Python loop of about the same length (the interpreter's
code: no stack copied from 3.11 on, where one eval call runs the whole
script; up to 3.10 each Python call is an eval call of its own, so a stack
is copied there too).

"callback": each iteration sorts 4000 ints with libc's qsort through ctypes,
its comparison a Python function: about two thirds of the samples are in
the comparison, in Python under two eval calls with qsort and libffi between
them, so each of those is copied, unwound through the interpreter and merged
(--native's most expensive case); most others build the array in bytecode.
"""
import random
import sys
import time
import zlib

ITERATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
MODE = sys.argv[2] if len(sys.argv) > 2 else "half"
DATA = random.Random(1).randbytes(1 << 18)


def python_part():
    s = 0
    for i in range(120000):
        s += i * i
    return s


def half():
    return len(zlib.compress(DATA, 6)) + python_part()


def callback_sort():
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    cmp_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                ctypes.POINTER(ctypes.c_int))

    def compare(a, b):
        x, y = a[0], b[0]
        return (x > y) - (x < y)

    callback = cmp_type(compare)
    values = random.Random(1).sample(range(4000), 4000)

    def one():
        arr = (ctypes.c_int * len(values))(*values)
        libc.qsort(arr, len(values), ctypes.sizeof(ctypes.c_int), callback)
        return arr[0] + arr[len(values) - 1] * 7
    return one


def main():
    work = callback_sort() if MODE == "callback" else half
    print("ready", flush=True)
    sys.stdin.readline()
    t0, c0 = time.perf_counter(), time.process_time()
    checksum = 0
    for _ in range(ITERATIONS):
        checksum = (checksum + work()) % 1000000007
    print(f"elapsed {time.perf_counter() - t0:.6f} cpu {time.process_time() - c0:.6f} "
          f"checksum {checksum}", flush=True)
    sys.stdin.readline()


main()
