# Call-heavy workload for bench/usdt.py: waits for SIGUSR1, then calls f()
# N times and prints the CPU seconds it took (user + system: the kernel work
# of the uprobes is charged there, other load on the machine is not); then
# sleeps until killed.
import signal
import sys
import time


def f(x):
    return x + 1


def main():
    n = int(sys.argv[1])
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    x, t0 = 0, time.process_time()
    for _ in range(n):
        x = f(x)
    print(f"{time.process_time() - t0:.6f}", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
