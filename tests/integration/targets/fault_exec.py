# Busy in before_exec() for argv[1] seconds after SIGUSR1, then replaces
# itself with the program argv[2:] (a non-Python image: sleep, or a shell
# loop), keeping its pid: the profiler must keep the Python image's samples
# and ignore the new image cleanly.
import os
import signal
import sys
import time


def before_exec(deadline):
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1000003


def main():
    seconds = float(sys.argv[1])
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    t0 = time.process_time()
    before_exec(time.monotonic() + seconds)
    # CPU this image used in before_exec (the ground truth for its samples)
    # and in all, from its start (what the new image's CPU is counted from)
    now = time.process_time()
    print(f"cpu {now - t0:.3f} {now:.3f}", flush=True)
    os.execv(sys.argv[2], sys.argv[2:])


if __name__ == "__main__":
    main()
