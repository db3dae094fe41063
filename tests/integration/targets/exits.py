# Busy for argv[1] seconds (default 1.5), then exits on its own, to check
# that the profiler notices its only target is gone and stops early.
import sys
import time


def busy_until(deadline):
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1000003


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    print("ready", flush=True)
    busy_until(time.monotonic() + seconds)


if __name__ == "__main__":
    main()
