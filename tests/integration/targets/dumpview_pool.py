"""dump --subprocesses of a pool: a multiprocessing Pool of 3 forked
workers, idle, each waiting for a task in the pool's worker loop. Prints
"workers PID PID PID", then "ready", then waits to be killed."""
import multiprocessing
import time

if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    pool = multiprocessing.Pool(3)
    pids = sorted(p.pid for p in pool._pool)
    print("workers " + " ".join(map(str, pids)), flush=True)
    print("ready", flush=True)
    time.sleep(3600)  # PARENT
