# Ground truth for `pybpfprof diff`: slow() takes the share of the thread's
# CPU time given as the first argument (0.75: 75 %), fast() the rest.
#
# Each round gives slow() and fast() their parts of a round length in thread
# CPU time, and each spins until its part is used, so the split holds
# whatever the interpreter's speed or the machine's load. The round length
# changes at random so that the sampling clock cannot fall into step with
# it (see split.py). Both bodies are the same; the time goes into sum() over
# a shared list, C code run with slow() or fast() on top.
#
# As split.py, it adds up the thread CPU time each function took and prints
# "cpu FAST_NS SLOW_NS" on SIGUSR1 (harness.workload_split).
import random
import signal
import sys
import time

BLOCK = list(range(200))
spent = {"fast": 0, "slow": 0}


def fast(ns):
    clock = time.thread_time_ns
    end = clock() + ns
    total = 0
    while clock() < end:
        total += sum(BLOCK)
    return total


def slow(ns):
    clock = time.thread_time_ns
    end = clock() + ns
    total = 0
    while clock() < end:
        total += sum(BLOCK)
    return total


def report(signum, frame):
    print(f"cpu {spent['fast']} {spent['slow']}", flush=True)


def main():
    share = float(sys.argv[1])
    rounds = random.Random(17)
    clock = time.thread_time_ns
    signal.signal(signal.SIGUSR1, report)
    print("ready", flush=True)
    while True:
        period = rounds.randint(20_000_000, 60_000_000)
        part = int(period * share)
        t0 = clock()
        slow(part)
        t1 = clock()
        fast(period - part)
        t2 = clock()
        spent["slow"] += t1 - t0
        spent["fast"] += t2 - t1


if __name__ == "__main__":
    main()
