"""A multiprocessing pool of 4 workers, each spinning in pool_work for the
given seconds of CPU. Usage: procs_pool.py METHOD SECONDS [WAIT|LATE]
METHOD is fork, spawn or forkserver. Prints "workers: PID PID PID PID" once
every worker has started, and "ready" then; at the end "done: PID:CPU ..."
with the CPU seconds each worker spent in pool_work; with WAIT, waits for a line on
stdin before starting the work (so a profiler can attach first); with LATE,
prints "ready" and waits for that line before it even starts the pool."""

import multiprocessing as mp
import os
import sys
import time


def pool_work(seconds):
    # SECONDS of CPU, not of the clock: on a loaded machine a worker still
    # does its whole work, so it still holds most of its process's samples.
    cpu0 = time.thread_time()
    n = 0
    while time.thread_time() - cpu0 < seconds:
        for _ in range(1000):
            n += 1
    # the CPU time this call really got: the ground truth for its samples
    return f"{os.getpid()}:{time.thread_time() - cpu0:.3f}"


BARRIER = None


def init(barrier):
    global BARRIER
    BARRIER = barrier


def hello(_):
    # a worker waiting here takes no other task: each of the 4 takes one
    BARRIER.wait(timeout=60)
    return os.getpid()


def main():
    method, seconds = sys.argv[1], float(sys.argv[2])
    ctx = mp.get_context(method)
    late = sys.argv[3:] == ["LATE"]
    if late:
        print("ready", flush=True)
        sys.stdin.readline()
    with ctx.Pool(4, initializer=init, initargs=(ctx.Barrier(4),)) as pool:
        pids = sorted(set(pool.map(hello, range(4), chunksize=1)))
        print("workers:", *pids, flush=True)
        if not late:
            print("ready", flush=True)
        if sys.argv[3:] == ["WAIT"]:
            sys.stdin.readline()
        done = pool.map(pool_work, [seconds] * 4, chunksize=1)
    print("done:", *done, flush=True)


if __name__ == "__main__":
    main()
