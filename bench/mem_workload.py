# SPDX-License-Identifier: GPL-2.0-only
"""Allocation-heavy workload for bench/mem.sh.

Protocol (stdin/stdout, one line each): prints "ready"; waits for a line on
stdin; runs a fixed amount of work timed with time.perf_counter() and prints
"elapsed <seconds> cpu <seconds> checksum <n>" (cpu: the
process's own CPU time, time.process_time(), which includes the kernel work
done on its behalf: page faults, system calls, uprobe traps and the BPF
programs they run); waits for a second line (or EOF) before
exiting, so the harness can read the profiler's counters while the target is
alive.

Every iteration allocates and drops: many small objects (pymalloc arenas),
bytearrays of 4 KiB to 64 KiB (malloc from the heap), and of 256 KiB to
4 MiB (malloc through mmap: page faults on every touch, munmap on free), and
grows a dict. The result (checksum) is the same on every run.
"""
import sys
import time

ITERATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 60


def small_objects(n):
    items = [(i, str(i), [i]) for i in range(n)]
    return sum(len(s) for _, s, _ in items)


def heap_blocks(n):
    blocks = [bytearray(4096 << (i % 5)) for i in range(n)]
    return sum(len(b) for b in blocks)


def mapped_blocks(n):
    total = 0
    for i in range(n):
        b = bytearray(b"\x07") * ((256 * 1024) << (i % 5))
        total += len(b)
    return total


def dict_growth(n):
    d = {}
    for i in range(n):
        d["key%d" % i] = i
    return len(d)


def work():
    acc = 0
    for it in range(ITERATIONS):
        acc += small_objects(20000)
        acc += heap_blocks(400)
        acc += mapped_blocks(12)
        acc += dict_growth(20000)
        acc %= 1 << 61
    return acc


def main():
    print("ready", flush=True)
    sys.stdin.readline()
    t0, c0 = time.perf_counter(), time.process_time()
    acc = work()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"elapsed {elapsed:.6f} cpu {cpu:.6f} checksum {acc}", flush=True)
    sys.stdin.readline()


main()
