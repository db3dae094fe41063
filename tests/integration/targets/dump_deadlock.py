# Two threads deadlocked on two locks, each holding an int and a str in its
# locals, and a third that keeps writing a heartbeat to the file named by
# argv[1]: the target of suite_dump.py. Prints the three threads' native ids
# ("tids A B HEARTBEAT"), then "ready" once both are about to block at their
# inner `with` (each has passed the barrier holding its lock).
import sys
import threading
import time

lock_a = threading.Lock()
lock_b = threading.Lock()
barrier = threading.Barrier(3)


def take_a_then_b(count, label):
    with lock_a:
        barrier.wait()
        with lock_b:  # BLOCKED-A
            return count, label


def take_b_then_a(count, label):
    with lock_b:
        barrier.wait()
        with lock_a:  # BLOCKED-B
            return count, label


def heartbeat(path):
    beats = 0
    while True:
        beats += 1
        with open(path, "w") as f:
            f.write(str(beats))
        time.sleep(0.05)


threads = [
    threading.Thread(target=take_a_then_b, args=(4242, "alpha-label"), name="locker-a",
                     daemon=True),
    threading.Thread(target=take_b_then_a, args=(-77, "beta \u00e9\n"), name="locker-b",
                     daemon=True),
    threading.Thread(target=heartbeat, args=(sys.argv[1],), name="heartbeat", daemon=True),
]
for t in threads:
    t.start()
barrier.wait()
time.sleep(0.2)
sys.stdout.write("tids %s\n" % " ".join(str(t.native_id) for t in threads))
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(600)
