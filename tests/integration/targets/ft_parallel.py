# Ground truth for free-threaded sampling: four threads spin at once in four
# functions with the same body. Without a GIL they run in parallel, and the
# process as a whole can use more than one CPU. Each round every thread does
# the same work, then waits at a barrier for the others, so each gets a
# quarter of the process's CPU time however the kernel schedules them (on a
# loaded machine, free-running threads got anything from 17% to 47%).
#
# Nearly all of each function's time is on its line marked "membership" (a
# scan of a list of a few hundred ints, in C): the runner checks that the
# samples of every thread land there. In 3.14t every thread but the first
# runs its own copy of the bytecode (thread-local bytecode), so that line is
# found only if the walker reads the copy's position right.
#
# Each thread measures its own CPU time (time.thread_time_ns) and SIGUSR1
# prints "cpu A B C D" in nanoseconds, as split.py does. Each thread builds
# its own list, so that reference counts stay thread-local and the four do
# not slow each other down through a shared object.
import signal
import threading
import time

spent = [[0], [0], [0], [0]]
ROUND = threading.Barrier(4)


def spin_a(mine):
    haystack = list(range(1, 801, 2))
    clock = time.thread_time_ns
    hits = 0
    while True:
        t0 = clock()
        for i in range(2000):
            if i in haystack:  # membership a
                hits += 1
        mine[0] += clock() - t0
        ROUND.wait()


def spin_b(mine):
    haystack = list(range(1, 801, 2))
    clock = time.thread_time_ns
    hits = 0
    while True:
        t0 = clock()
        for i in range(2000):
            if i in haystack:  # membership b
                hits += 1
        mine[0] += clock() - t0
        ROUND.wait()


def spin_c(mine):
    haystack = list(range(1, 801, 2))
    clock = time.thread_time_ns
    hits = 0
    while True:
        t0 = clock()
        for i in range(2000):
            if i in haystack:  # membership c
                hits += 1
        mine[0] += clock() - t0
        ROUND.wait()


def spin_d(mine):
    haystack = list(range(1, 801, 2))
    clock = time.thread_time_ns
    hits = 0
    while True:
        t0 = clock()
        for i in range(2000):
            if i in haystack:  # membership d
                hits += 1
        mine[0] += clock() - t0
        ROUND.wait()


def report(signum, frame):
    print("cpu " + " ".join(str(s[0]) for s in spent), flush=True)


def main():
    signal.signal(signal.SIGUSR1, report)
    for fn, mine in zip((spin_a, spin_b, spin_c, spin_d), spent):
        threading.Thread(target=fn, args=(mine,), daemon=True).start()
    print("ready", flush=True)
    # sleeping, not join(): the signal handler runs in this thread, promptly
    while True:
        time.sleep(0.05)


if __name__ == "__main__":
    main()
