# Clean-detach ground truth: calls step() in a loop and prints, about every
# 0.2 s, its loop rate: calls per second of its own CPU time (user + system,
# where the kernel's uprobe work is charged), so other load on the machine
# does not change the figure, and probes left attached would.
import time


def step(x):
    return x + 1


def main():
    print("ready", flush=True)
    while True:
        n, x = 0, 0
        cpu0, end = time.process_time(), time.monotonic() + 0.2
        while time.monotonic() < end:
            for _ in range(200):
                x = step(x)
            n += 200
        cpu = time.process_time() - cpu0
        if cpu > 0.05:
            print(int(n / cpu), flush=True)


if __name__ == "__main__":
    main()
