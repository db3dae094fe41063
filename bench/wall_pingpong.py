"""A service-like workload for bench/wall.py: two Python threads of one
process bounce a byte over a socketpair, each blocking in recv() until the
other answers, so every round trip is two blocks in recv() and, as the
woken thread waits for the GIL its waker still holds, about two more; each
side does K loop iterations of Python work per message (a service's
handling, which sets the switch rate). Prints "ready", waits for a line on
stdin, does N round trips, prints
"done ELAPSED_NS VOLUNTARY_SWITCHES CPU_NS" and exits (CPU_NS: the
process's user + system time, which includes the sched_switch program's
runs in its threads' context and depends far less on other load)."""

import socket
import sys
import threading
import time


def switches():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                return int(line.split()[1])
    return 0


def total_switches():
    import os
    n = 0
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    n += int(line.split()[1])
    return n


def work(k):
    x = 0
    for _ in range(k):
        x += 1
    return x


def echo(sock, n, k, counted):
    for _ in range(n):
        c = sock.recv(1)
        work(k)
        sock.sendall(c)
    # stay until main has read this thread's switches: an exiting thread's
    # /proc entry can vanish under total_switches()
    counted.wait()


def main():
    n, k = int(sys.argv[1]), int(sys.argv[2])
    a, b = socket.socketpair()
    counted = threading.Event()
    t = threading.Thread(target=echo, args=(b, n, k, counted), daemon=True)
    t.start()
    print("ready", flush=True)
    sys.stdin.readline()
    s0 = total_switches()
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        a.sendall(b"x")
        a.recv(1)
        work(k)
    elapsed = time.perf_counter_ns() - t0
    cpu = time.process_time_ns() - c0
    sw = total_switches() - s0
    counted.set()
    print(f"done {elapsed} {sw} {cpu}", flush=True)


if __name__ == "__main__":
    main()
