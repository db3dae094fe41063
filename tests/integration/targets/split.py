# Ground truth for the CPU split: two functions with identical bodies; slow()
# is called with 3x the iterations of fast(), so it should get about 75% of
# the CPU.
#
# Each iteration's time goes into sum() over a shared list, C code that runs
# the same for both callers, while the Python frame on top is still fast() or
# slow(). A body of pure bytecode (say `total += i * i`) does not keep the 3:1
# ratio: on the unoptimised pyenv build, about one process in eight runs one
# of the two identical functions 10-30% slower for its whole life (it depends
# on where the code objects land in memory), which an independent sampler
# reading /proc/PID/mem confirmed.
#
# The block size changes at random every round. With a fixed size the round
# lasted the same few milliseconds every time and the sampling clock could
# fall into step with it: the samples then land at the same points of every
# round and over- or under-count fast(). One CI run saw 71% rather than 75%.
#
# The workload also measures its own split: it adds up the thread CPU time of
# every fast() and slow() call, and on SIGUSR1 prints "cpu FAST_NS SLOW_NS".
# The test asks before and after profiling and compares the profiler with
# that difference.
import random
import signal
import sys
import time

BLOCK = list(range(1000))
spent = {"fast": 0, "slow": 0}


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


def report(signum, frame):
    print(f"cpu {spent['fast']} {spent['slow']}", flush=True)


def main():
    deadline = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    signal.signal(signal.SIGUSR1, report)
    clock = time.thread_time_ns
    rounds = random.Random(75)
    print("ready", flush=True)
    while deadline is None or time.time() < deadline:
        n = rounds.randint(250, 750)
        t0 = clock()
        fast(n)
        t1 = clock()
        slow(3 * n)
        t2 = clock()
        spent["fast"] += t1 - t0
        spent["slow"] += t2 - t1


if __name__ == "__main__":
    main()
