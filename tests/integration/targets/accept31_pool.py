# A multiprocessing pool (argv[1]: spawn or fork) of three workers and three
# tasks: one spins HEAVY s of its CPU, the others LIGHT s, each in a thread it
# names (accept31-heavy, accept31-light-N). For suite_accept31's first
# screens. Each task measures itself: its thread's CPU (time.thread_time, in
# the thread) and its worker's CPU so far (time.process_time); the parent
# prints "parent PID" first and, once the pool has ended, "result JSON"
# with every task's pid, tid (native), name and both figures.
import json
import multiprocessing
import os
import sys
import threading
import time

HEAVY, LIGHT = 1.5, 0.15


def spin(secs, out):
    end = time.thread_time() + secs
    x = 0
    while time.thread_time() < end:
        x += 1  # accept31 spin
    out.append(time.thread_time())


def task(job):
    name, secs = job
    out = []
    t = threading.Thread(target=spin, args=(secs, out), name=name)
    t.start()
    t.join()
    return {"pid": os.getpid(), "tid": t.native_id, "name": name, "thread_cpu": out[0],
            "process_cpu": time.process_time()}


def main():
    ctx = multiprocessing.get_context(sys.argv[1])
    print(f"parent {os.getpid()}", flush=True)
    jobs = [("accept31-heavy", HEAVY)] + [(f"accept31-light-{i}", LIGHT) for i in (1, 2)]
    with ctx.Pool(3) as pool:
        done = pool.map(task, jobs, chunksize=1)
        pool.close()
        pool.join()
    print("result " + json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
