# An idle thread pool beside a busy one (concurrent.futures), for suite_apps'
# wall-mode test. Three "apps-idle" workers run one task each at the start
# (so that all three exist) and then wait on their pool's queue for good;
# the one "apps-busy" worker runs resize_image() jobs the main thread hands
# it one at a time, each sleeping 10-30 ms and then computing, and each
# measuring its own wall time. On SIGUSR2 the two "apps-burst" workers get
# a burst of 16 short CPU-only jobs, two at a time, and wait on their queue
# between pairs (every wait of theirs is there); after the burst they wait
# there again, where they waited before, until the end.
# Prints "tid NAME NATIVE_ID" for each worker, then "ready"; on SIGUSR1,
# "truth JOBS WALL_NS" (resize jobs done and their wall time so far); after
# a burst, "burst done".
import concurrent.futures as cf
import os
import random
import signal
import threading
import time

done = [(0, 0)]  # (jobs, wall ns), replaced whole: the signal handler reads it


def warm(barrier):
    barrier.wait()


def resize_image(ms):
    w0 = time.perf_counter_ns()
    time.sleep(ms / 1000)  # RESIZE-WAIT
    total = 0
    for i in range(20000):
        total += i * i % 7
    jobs, wall = done[0]
    done[0] = (jobs + 1, wall + time.perf_counter_ns() - w0)
    return total


def burst_job(n):
    total = 0
    for i in range(n):
        total += i * i % 11
    return total


def ask_burst(signum, frame):
    burst_wanted.set()


burst_wanted = threading.Event()


def tell(signum, frame):
    jobs, wall = done[0]
    os.write(1, f"truth {jobs} {wall}\n".encode())


def main():
    idle = cf.ThreadPoolExecutor(3, thread_name_prefix="apps-idle")
    barrier = threading.Barrier(4)
    for _ in range(3):
        idle.submit(warm, barrier)
    barrier.wait()
    busy = cf.ThreadPoolExecutor(1, thread_name_prefix="apps-busy")
    busy.submit(int).result()
    burst = cf.ThreadPoolExecutor(2, thread_name_prefix="apps-burst")
    barrier = threading.Barrier(3)
    for _ in range(2):
        burst.submit(warm, barrier)
    barrier.wait()
    for t in threading.enumerate():
        if t.name.startswith("apps-"):
            print(f"tid {t.name} {t.native_id}", flush=True)
    signal.signal(signal.SIGUSR1, tell)
    signal.signal(signal.SIGUSR2, ask_burst)
    draw = random.Random(11)
    print("ready", flush=True)
    while True:
        busy.submit(resize_image, draw.randint(10, 30)).result()
        time.sleep(0.05)
        if burst_wanted.is_set():
            burst_wanted.clear()
            for _ in range(8):  # pairs: the workers wait on their queue in between
                for f in [burst.submit(burst_job, 30000) for _ in range(2)]:
                    f.result()
                time.sleep(0.02)
            print("burst done", flush=True)


if __name__ == "__main__":
    main()
