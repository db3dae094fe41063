"""dump --subprocesses of a pool: a multiprocessing Pool of 3 forked
workers, idle, each waiting for a task in the pool's worker loop. Prints
"workers PID PID PID" once each worker is inside the pool's worker()
(its initializer, which worker() calls, has written to a pipe: a worker
just forked may not have a Python frame of its own yet), then "ready",
then waits to be killed."""
import multiprocessing
import os
import time

READY_R, READY_W = os.pipe()


def in_worker():
    os.write(READY_W, b"w")


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    pool = multiprocessing.Pool(3, initializer=in_worker)
    seen = 0
    while seen < 3:
        seen += len(os.read(READY_R, 3 - seen))
    pids = sorted(p.pid for p in pool._pool)
    print("workers " + " ".join(map(str, pids)), flush=True)
    print("ready", flush=True)
    time.sleep(3600)  # PARENT
