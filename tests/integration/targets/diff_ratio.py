# Ground truth for `pybpfprof diff`: slow() takes the share of the thread's
# CPU time given as the first argument (0.75: 75 %), fast() the rest.
#
# Each round gives slow() and fast() their parts of a round length in thread
# CPU time, and each spins until its part is used, so the split holds
# whatever the interpreter's speed or the machine's load. The round length
# changes at random so that the sampling clock cannot fall into step with
# it (see split.py). Both bodies are the same; the time goes into sum() over
# a shared list, C code run with slow() or fast() on top.
import random
import sys
import time

BLOCK = list(range(200))


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


def main():
    share = float(sys.argv[1])
    rounds = random.Random(17)
    print("ready", flush=True)
    while True:
        period = rounds.randint(2_000_000, 6_000_000)
        part = int(period * share)
        slow(part)
        fast(period - part)


if __name__ == "__main__":
    main()
