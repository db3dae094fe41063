"""suite_select's workload: one process per role, each thread named and
spinning in a function of its own for a given number of CPU seconds.

Usage: select_work.py SECONDS
The parent's threads sel-alpha (alpha_work, SECONDS) and sel-beta (beta_work,
2 x SECONDS) are named by threading and by their comm; a fork child spins in
fork_work and a spawn child in spawn_work, SECONDS each. Prints "pids: PARENT
FORK SPAWN" once both children run, and at the end one "cpu: FUNC PID TID
SECONDS" line per function with the CPU it really got (its samples' ground
truth)."""

import multiprocessing as mp
import os
import sys
import threading
import time


def name_self(name):
    # the comm of this thread, the name the kernel (and the profile) has now
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as f:
        f.write(name)


def spin(seconds):
    # SECONDS of CPU, not of the clock: on a loaded machine the work is still
    # all done, so each function's share of samples does not move with load
    cpu0 = time.thread_time()
    n = 0
    while time.thread_time() - cpu0 < seconds:
        for _ in range(1000):
            n += 1
    return time.thread_time() - cpu0


def report(func, seconds):
    # one write of the whole line: three processes share the pipe, and print's
    # text and newline are two writes between which another thread's flush
    # can send the text alone (a fresh run read "...0.8000cpu: spawn_work ...")
    line = f"cpu: {func} {os.getpid()} {threading.get_native_id()} {seconds:.4f}\n"
    os.write(sys.stdout.fileno(), line.encode())


def alpha_work(seconds):
    report("alpha_work", spin(seconds))


def beta_work(seconds):
    report("beta_work", spin(seconds))


def fork_work(seconds, go):
    go.wait()
    report("fork_work", spin(seconds))


def spawn_work(seconds, go):
    go.wait()
    report("spawn_work", spin(seconds))


def named(name, func, seconds):
    name_self(name)
    func(seconds)


def main():
    seconds = float(sys.argv[1])
    go_fork, go_spawn = mp.get_context("fork").Event(), mp.get_context("spawn").Event()
    kids = [mp.get_context("fork").Process(target=fork_work, args=(seconds, go_fork)),
            mp.get_context("spawn").Process(target=spawn_work, args=(seconds, go_spawn))]
    for k in kids:
        k.start()
    print("pids:", os.getpid(), *(k.pid for k in kids), flush=True)
    go_fork.set()
    go_spawn.set()
    threads = [threading.Thread(target=named, name="sel-alpha",
                                args=("sel-alpha", alpha_work, seconds)),
               threading.Thread(target=named, name="sel-beta",
                                args=("sel-beta", beta_work, 2 * seconds))]
    # A thread is born with its creator's comm: each is started under its
    # own name, so that even its first sample has it.
    own = open(f"/proc/self/task/{threading.get_native_id()}/comm").read().strip()
    for t in threads:
        name_self(t.name)
        t.start()
    name_self(own)
    for t in threads:
        t.join()
    for k in kids:
        k.join()
    sys.exit(max(k.exitcode for k in kids))


if __name__ == "__main__":
    main()
