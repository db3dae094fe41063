# Ground truth for sampling that cannot fall into step with the program: a
# loop driven by a 10 ms clock, as a server's or a game's tick is, spending
# 2.5 ms of every tick in fast() and the rest in slow(). Sampled at exactly
# 100 Hz with a fixed period, every sample lands at the same point of the
# tick and fast() gets 0% or 100% of them instead of 25%.
#
# Like split.py, it measures its own split (the thread CPU time of every
# call) and prints "cpu FAST_NS SLOW_NS" on SIGUSR1.
import signal
import sys
import time

TICK = 0.010
spent = {"fast": 0, "slow": 0}


def fast(until):
    while time.monotonic() < until:
        pass


def slow(until):
    while time.monotonic() < until:
        pass


def report(signum, frame):
    print(f"cpu {spent['fast']} {spent['slow']}", flush=True)


def main():
    signal.signal(signal.SIGUSR1, report)
    clock = time.thread_time_ns
    print("ready", flush=True)
    tick = time.monotonic()
    end = tick + float(sys.argv[1]) if len(sys.argv) > 1 else None
    while end is None or tick < end:
        t0 = clock()
        fast(tick + TICK / 4)
        t1 = clock()
        slow(tick + TICK)
        t2 = clock()
        spent["fast"] += t1 - t0
        spent["slow"] += t2 - t1
        tick += TICK


if __name__ == "__main__":
    main()
