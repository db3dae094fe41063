# A tree of processes for suite_peers' subprocess-discovery test:
#   parent      starts "child" (subprocess.Popen of this interpreter), which
#               starts "grandchild"; forks a child that exits at once and is
#               never waited for (a zombie); prints "pids PARENT CHILD
#               GRANDCHILD ZOMBIE" and "ready" once all run; on "late" on
#               stdin, starts a shell that sleeps, then execs "late", and
#               prints "late PID"
#   each role   spins in work_ROLE() (the parent in work_parent())
import os
import subprocess
import sys
import time


def spin(seconds):
    end = time.monotonic() + seconds
    t = 0
    while time.monotonic() < end:
        for i in range(1000):
            t += i % 7
    return t


def work_parent():
    spin(0.01)


def work_child():
    spin(3600)


def work_grandchild():
    spin(3600)


def work_late():
    spin(3600)


def start(role):
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), role],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)


def parent():
    child = start("child")
    grandchild = int(child.stdout.readline())
    zombie = os.fork()
    if zombie == 0:
        os._exit(0)
    print("pids %d %d %d %d" % (os.getpid(), child.pid, grandchild, zombie), flush=True)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "late":
            sh = subprocess.Popen(["sh", "-c", 'sleep 0.3; exec "$0" "$1" late',
                                   sys.executable, os.path.abspath(__file__)],
                                  stdin=subprocess.DEVNULL)
            print("late %d" % sh.pid, flush=True)
        work_parent()


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else "parent"
    if role == "parent":
        parent()
    elif role == "child":
        gc = start("grandchild")
        print(gc.pid, flush=True)
        work_child()
    elif role == "grandchild":
        work_grandchild()
    else:
        work_late()
