# Call-heavy workload for bench/usdt.py: waits for SIGUSR1, then calls f()
# N times and prints the seconds it took; then sleeps until killed.
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
    x, t0 = 0, time.perf_counter()
    for _ in range(n):
        x = f(x)
    print(f"{time.perf_counter() - t0:.6f}", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
