# Ground truth for the CPU split: two functions with identical bodies; slow()
# is called with 3x the iterations of fast(), so it should get 75% of the CPU.
import sys
import time


def fast(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def slow(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def main():
    deadline = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    print("ready", flush=True)
    while deadline is None or time.time() < deadline:
        fast(20000)
        slow(60000)


if __name__ == "__main__":
    main()
