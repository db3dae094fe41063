# A service's processes for `top` (suite_top_view): a thread named
# top31-cruncher spins in the main process (MainThread waits); on a line on
# stdin, a spawn pool and a fork pool of two workers each start, spinning
# until the main process ends (each worker then exits by itself). Prints
# "cruncher TID" and "waiting", then "spawn PID PID", "fork PID PID" and
# "ready".
import multiprocessing
import os
import sys
import threading


def top31_spin(parent):
    x = 0
    while True:
        x += 1
        if not x % 100000 and os.getppid() != parent:
            os._exit(0)  # the main process is gone: so is its pool


def top31_crunch():
    x = 0
    while True:
        x += 1


def pool_pids(ctx):
    pool = ctx.Pool(2)
    pool.map_async(top31_spin, [os.getpid()] * 2, chunksize=1)
    return pool, " ".join(str(p.pid) for p in pool._pool)


def main():
    t = threading.Thread(target=top31_crunch, name="top31-cruncher", daemon=True)
    t.start()
    print(f"cruncher {t.native_id}\nwaiting", flush=True)
    sys.stdin.readline()
    spawn, spawned = pool_pids(multiprocessing.get_context("spawn"))
    fork, forked = pool_pids(multiprocessing.get_context("fork"))
    print(f"spawn {spawned}\nfork {forked}\nready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
