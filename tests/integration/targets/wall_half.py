# Ground truth for --mode wall: a loop that computes about half the time and
# sleeps the other half, in two functions. It measures the wall time of
# every compute() and pause() call itself (time.perf_counter_ns) and on
# SIGUSR1 prints "wall COMPUTE_NS PAUSE_NS"; the test asks before and after
# profiling and compares the profiler's split with that difference. The
# lengths change at random every round, so no sampling clock falls into
# step with the loop.
import random
import signal
import sys
import time

spent = {"compute": 0, "pause": 0}


def compute(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def pause(seconds):
    time.sleep(seconds)


def report(signum, frame):
    print(f"wall {spent['compute']} {spent['pause']}", flush=True)


def main():
    signal.signal(signal.SIGUSR1, report)
    clock = time.perf_counter_ns
    rounds = random.Random(50)
    print("ready", flush=True)
    while True:
        t0 = clock()
        compute(rounds.uniform(0.01, 0.03))
        t1 = clock()
        pause(rounds.uniform(0.01, 0.03))
        t2 = clock()
        spent["compute"] += t1 - t0
        spent["pause"] += t2 - t1


if __name__ == "__main__":
    main()
