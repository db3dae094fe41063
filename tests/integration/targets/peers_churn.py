# Threads that come and go: every round starts a thread that computes for a
# few milliseconds and exits, and joins it (thread ids are reused), for
# suite_peers' --native test. Prints "ready", then churns until killed.
import sys
import threading


def churn_work():
    t = 0
    for i in range(30000):
        t += i % 7
    return t


sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    th = threading.Thread(target=churn_work)
    th.start()
    th.join()
