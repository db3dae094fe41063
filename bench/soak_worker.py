# SPDX-License-Identifier: GPL-2.0-only
"""One process of bench/agent_soak.py: a light, steady load (WORK_MS of
computation every 100 ms, in one of a few functions picked by its argument)
for LIFETIME seconds, then exit. With a fourth argument MEM_MIB (the soak's
BENCH_MEM), each step also builds and drops a MEM_MIB MiB object (one mmap
and one munmap) and every 10th step keeps 256 KiB (one mmap kept), so that
the agent's --mem has churn and growth to follow.
Usage: soak_worker.py LIFETIME WORK_MS N [MEM_MIB]"""
import sys
import time


def handler_a(deadline):
    x = 0
    while time.perf_counter() < deadline:
        x = (x * 31 + 7) % 1000003
    return x


def handler_b(deadline):
    s = 0
    while time.perf_counter() < deadline:
        s += sum(range(50))
    return s


def handler_c(deadline):
    d = {}
    while time.perf_counter() < deadline:
        d[len(d) % 97] = str(len(d))
    return d


def churn(mib, step, kept):
    big = b"\x01" * (mib << 20)
    del big
    if step % 10 == 0:
        kept.append(b"\x02" * (256 << 10))


def main():
    lifetime, work_ms, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    mem_mib = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    work = (handler_a, handler_b, handler_c)[n % 3]
    end = time.monotonic() + lifetime
    kept, step = [], 0
    while time.monotonic() < end:
        work(time.perf_counter() + work_ms / 1000)
        if mem_mib:
            churn(mem_mib, step, kept)
        step += 1
        time.sleep(0.1)


if __name__ == "__main__":
    main()
