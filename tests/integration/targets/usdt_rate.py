# Clean-detach ground truth: calls step() in a loop and prints, after every
# 0.1 s of its own CPU time, its loop rate: calls per second of that CPU time
# (user + system, where the kernel's uprobe work is charged), so other load
# on the machine does not change the figure, and probes left attached would.
import time


def step(x):
    return x + 1


def main():
    print("ready", flush=True)
    while True:
        n, x = 0, 0
        cpu0 = time.process_time()
        while time.process_time() - cpu0 < 0.1:
            for _ in range(200):
                x = step(x)
            n += 200
        print(int(n / (time.process_time() - cpu0)), flush=True)


if __name__ == "__main__":
    main()
