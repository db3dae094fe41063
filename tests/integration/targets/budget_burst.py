# A burst of known CPU for suite_agent_budget: waits (asleep) for SIGUSR1,
# then runs argv[2] seconds of CPU (its own clock, time.process_time) at
# argv[1] Python frames deep, says "done" with the CPU it used while
# busy, and sleeps until killed: all its work falls between two moments
# the test chooses.
import signal
import sys
import time


def burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for _ in range(2000):
            x = (x * 31 + 7) % 1000003
    return x


def nest(n, seconds):
    if n <= 1:
        return burn(seconds)
    return nest(n - 1, seconds)


def main():
    depth, seconds = int(sys.argv[1]), float(sys.argv[2])
    sys.setrecursionlimit(depth + 100)
    go = []
    signal.signal(signal.SIGUSR1, lambda *_: go.append(1))
    print("ready", flush=True)
    while not go:
        signal.pause()
    t0 = time.process_time()
    nest(depth, seconds)
    print(f"done {time.process_time() - t0:.6f}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
