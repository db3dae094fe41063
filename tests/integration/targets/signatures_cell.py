# --signatures and a captured argument: f's x is captured by the lambda, so
# its variable holds a cell (3.11+: in its slot; 3.8-3.10: the slot is empty
# and the cell follows the locals); the report names it "cell" either way.
import sys
import time


def f(x, y):
    g = lambda: x  # noqa: E731
    t = 0
    for _ in range(20000):
        t += 1
    return g


def main():
    deadline = time.thread_time() + float(sys.argv[1])  # CPU seconds
    print("ready", flush=True)
    while time.thread_time() < deadline:
        f(1, "s")


if __name__ == "__main__":
    main()
