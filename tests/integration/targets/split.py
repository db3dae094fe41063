# Ground truth for the CPU split: two functions with identical bodies; slow()
# is called with 3x the iterations of fast(), so it should get 75% of the CPU.
#
# Each iteration's time goes into sum() over a shared list, C code that runs
# the same for both callers, while the Python frame on top is still fast() or
# slow(). A body of pure bytecode (say `total += i * i`) does not keep the 3:1
# ratio: on the unoptimised pyenv build, about one process in eight runs one
# of the two identical functions 10-30% slower for its whole life (it depends
# on where the code objects land in memory), which an independent sampler
# reading /proc/PID/mem confirmed. sum() makes the split a property of the
# workload rather than of memory layout.
import sys
import time

BLOCK = list(range(1000))


def fast(n):
    total = 0
    for _ in range(n):
        total += sum(BLOCK)
    return total


def slow(n):
    total = 0
    for _ in range(n):
        total += sum(BLOCK)
    return total


def main():
    deadline = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    print("ready", flush=True)
    while deadline is None or time.time() < deadline:
        fast(500)
        slow(1500)


if __name__ == "__main__":
    main()
