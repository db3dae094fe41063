# SPDX-License-Identifier: GPL-2.0-only
"""One process of bench/agent_soak.py: a light, steady load (WORK_MS of
computation every 100 ms, in one of a few functions picked by its argument)
for LIFETIME seconds, then exit. Usage: soak_worker.py LIFETIME WORK_MS N"""
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


def main():
    lifetime, work_ms, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    work = (handler_a, handler_b, handler_c)[n % 3]
    end = time.monotonic() + lifetime
    while time.monotonic() < end:
        work(time.perf_counter() + work_ms / 1000)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
