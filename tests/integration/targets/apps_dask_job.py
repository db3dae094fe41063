# A dask.distributed job on a LocalCluster of worker processes (Debian's
# python3-distributed): the target of suite_apps' apps_dask test.
#
# Prints "workers PID PID" (the worker processes, as the workers themselves
# report their pids) and "ready", then waits for "go" on stdin. It then maps
# two kinds of task over the cluster, tally_words and score_rows, about 70:30
# in CPU time (each task's size is drawn at random, so that no rhythm forms), and
# every task measures its own thread CPU time. When all are done it prints
# "truth " and JSON: per worker pid, the CPU ns each kind spent there. On
# "quit" (or end of input) it closes the cluster, which stops the workers.
import json
import os
import random
import sys
import time

from dask.distributed import Client, LocalCluster

WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")


def tally_words(n):
    t0 = time.thread_time_ns()
    counts = {}
    for i in range(n):
        w = WORDS[(i * 7 + n) % 8]
        counts[w] = counts.get(w, 0) + 1  # TALLY-HOT
    return os.getpid(), "tally_words", time.thread_time_ns() - t0


def score_rows(n):
    t0 = time.thread_time_ns()
    total = 0
    for i in range(n):
        total += (i * i) % 97  # SCORE-HOT
    return os.getpid(), "score_rows", time.thread_time_ns() - t0


def worker_pid():
    return os.getpid()


def main():
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", scheduler_port=0, dashboard_address=None)
    client = Client(cluster)
    pids = sorted(client.run(worker_pid).values())
    print("workers " + " ".join(map(str, pids)), flush=True)
    print("ready", flush=True)
    if sys.stdin.readline().strip() == "go":
        draw = random.Random(2029)
        futures = []
        for i in range(tasks):
            n = draw.randint(100000, 300000)
            # two tally_words for one score_rows of twice the rows: about 70:30
            if i % 3 == 2:
                futures.append(client.submit(score_rows, 2 * n, pure=False))
            else:
                futures.append(client.submit(tally_words, n, pure=False))
        truth = {}
        for pid, kind, ns in client.gather(futures):
            per = truth.setdefault(str(pid), {"tally_words": 0, "score_rows": 0})
            per[kind] += ns
        print("truth " + json.dumps(truth), flush=True)
        sys.stdin.readline()
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
