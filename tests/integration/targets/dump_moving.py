# A thread whose stack never stays the same (it recurses 40 deep and back,
# over and over) beside a sleeping main thread: the target of dump_moving in
# suite_dump.py. Prints the thread's native id, then "ready".
import sys
import threading
import time


def osc(n):
    if n:
        osc(n - 1)  # RECURSE


def churn():
    while True:
        osc(40)


t = threading.Thread(target=churn, name="churn", daemon=True)
t.start()
time.sleep(0.2)
sys.stdout.write("tid %d\n" % t.native_id)
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(600)
