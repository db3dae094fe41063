# --subprocesses --calls ground truth: the parent forks children and spawns
# others (its own interpreter, exec'd), each calling tick() a number of times
# of its own, and prints "<fork|spawn> <pid> <count>" for each; it calls
# tick() 100 times itself. As "child K DELAY" (a spawned child): sleeps
# DELAY seconds, then calls tick() K times. Every process lingers LINGER s
# after its calls, for the profiler to name tick() from its live memory.
import os
import subprocess
import sys
import time

LINGER = 0.3


def tick():
    return 1


def ticks(k):
    for _ in range(k):
        tick()


def main():
    if sys.argv[1] == "child":
        time.sleep(float(sys.argv[3]))
        ticks(int(sys.argv[2]))
        time.sleep(LINGER)
        return
    nfork, nspawn = int(sys.argv[1]), int(sys.argv[2])
    ticks(100)
    for i in range(nfork):
        k = 200 + 17 * i
        pid = os.fork()
        if pid == 0:
            ticks(k)
            time.sleep(LINGER)
            os._exit(0)
        print("fork", pid, k, flush=True)
        os.waitpid(pid, 0)
    for i in range(nspawn):
        k = 300 + 23 * i
        p = subprocess.Popen([sys.executable, __file__, "child", str(k), "0.2"])
        print("spawn", p.pid, k, flush=True)
        p.wait()
    time.sleep(LINGER)


if __name__ == "__main__":
    main()
