# A multiprocessing pool of three workers started by METHOD (argv[1]: fork,
# spawn or forkserver), each working its own CPU for 1.2, 0.5 and 0.25 s,
# while the parent waits. For suite_report_view's process table. Prints
# "parent PID", then "child PID SECONDS" per worker once all have ended.
import multiprocessing
import os
import sys
import time

WORK = (1.2, 0.5, 0.25)


def work(secs):
    end = time.thread_time() + secs
    x = 0
    while time.thread_time() < end:
        x += 1  # WORK


def main():
    ctx = multiprocessing.get_context(sys.argv[1])
    print(f"parent {os.getpid()}", flush=True)
    procs = [ctx.Process(target=work, args=(s,)) for s in WORK]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    for p, s in zip(procs, WORK):
        print(f"child {p.pid} {s}", flush=True)


if __name__ == "__main__":
    main()
