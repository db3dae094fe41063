# Busy for argv[1] seconds (default 1.5), then exits on its own, to check
# that the profiler notices its only target is gone and stops early. With
# argv[2] "signal" the seconds start at SIGUSR1 (once the profiler is
# attached), idle until then.
import signal
import sys
import time


def busy_until(deadline):
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1000003


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    if len(sys.argv) > 2 and sys.argv[2] == "signal":
        signal.signal(signal.SIGUSR1, lambda *_: None)
        print("ready", flush=True)
        signal.pause()
    else:
        print("ready", flush=True)
    busy_until(time.monotonic() + seconds)


if __name__ == "__main__":
    main()
