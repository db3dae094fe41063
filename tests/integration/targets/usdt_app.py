# Launch-mode --calls ground truth: a script that does its work at once, as
# `python3 -m cProfile app.py` would run it (no handshake: the profiler must
# be attached before its first call). tick() runs N times, tock() 2N, and a
# generator, recursion and exceptions give the shadow stack its hard cases.
# A second argument: seconds to linger before exiting, for the profiler to
# read the names of the functions first called just before the end (it reads
# them from the live process; a call whose function it can no longer name is
# still counted, as [unresolved]).
import sys
import time


def tick():
    return 1


def tock():
    return 2


def countdown(k):
    for i in range(k):
        yield i


def recurse(depth):
    return 0 if depth == 0 else recurse(depth - 1) + 1


def fail():
    raise ValueError("expected")


def catch():
    try:
        fail()
    except ValueError:
        return 1


def work(n):
    total = 0
    for _ in range(n):
        total += tick()
        total += tock()
        total += tock()
    total += sum(countdown(5))
    total += recurse(10)
    for _ in range(3):
        total += catch()
    return total


def main():
    print(work(int(sys.argv[1])), flush=True)
    if len(sys.argv) > 2:
        time.sleep(float(sys.argv[2]))


if __name__ == "__main__":
    main()
