# Ground truth for off-CPU intervals still open when a run ends, where the
# kernel sent no stack: threads that block where they blocked last time.
# On SIGUSR1 (sent once the profiler is attached), 3 pool workers run one
# CPU burst each, then many tiny tasks, then idle in the pool's queue; then
# the sleeper sleeps 0.1 s, 0.1 s and 3600 s on one line, with nothing
# between that could make it leave the CPU elsewhere. Every time is the
# workload's own (time.monotonic_ns: the kernel's monotonic clock, which the
# profiler uses too). Once the long sleep has begun, the main thread prints
# one line, "truth JSON": each worker's tid and when its last task ended,
# the sleeper's tid, its finished sleeps [start, end] and the long one's
# start.
import json
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

WORKERS = 3
gathered = threading.Barrier(WORKERS)
bursting = threading.Barrier(WORKERS)
go_sleep = threading.Event()
truth = {"sleeps": []}


def gather(_):
    # holds each worker until all exist: the pool has WORKERS threads
    gathered.wait()
    return threading.get_native_id()


def burst(_):
    bursting.wait()  # one burst per worker
    end = time.thread_time() + 0.05
    while time.thread_time() < end:
        pass
    return threading.get_native_id(), time.monotonic_ns()


def tiny(_):
    return threading.get_native_id(), time.monotonic_ns()


def sleeper():
    truth["sleeper"] = threading.get_native_id()
    go_sleep.wait()
    for d in (0.1, 0.1, 3600):
        start = time.monotonic_ns()
        if d > 1:
            truth["long_start"] = start
        time.sleep(d)  # one line: every block after the first is a repeat
        truth["sleeps"].append([start, time.monotonic_ns()])


def main():
    # every thread inherits the mask: SIGUSR1 is for sigwait() alone
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    tids = set(pool.map(gather, range(WORKERS)))
    threading.Thread(target=sleeper, daemon=True).start()
    print("ready", flush=True)
    signal.sigwait({signal.SIGUSR1})
    ends = {}
    for tid, end in [*pool.map(burst, range(WORKERS)), *pool.map(tiny, range(200))]:
        ends[tid] = max(end, ends.get(tid, 0))
    truth["workers"] = {str(k): ends[k] for k in tids}
    go_sleep.set()
    # woken once the long sleep has begun, so as not to take the CPU or
    # the GIL from the sleeper between its sleeps
    time.sleep(0.5)
    while "long_start" not in truth:
        time.sleep(0.1)
    print("truth " + json.dumps(truth), flush=True)
    signal.sigwait({signal.SIGUSR1})


if __name__ == "__main__":
    main()
