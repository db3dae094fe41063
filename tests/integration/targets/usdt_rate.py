# Clean-detach ground truth: calls step() in a loop and prints, every 0.2 s,
# how many calls it made in that interval (its loop rate).
import time


def step(x):
    return x + 1


def main():
    print("ready", flush=True)
    while True:
        n, x, end = 0, 0, time.monotonic() + 0.2
        while time.monotonic() < end:
            for _ in range(200):
                x = step(x)
            n += 200
        print(n, flush=True)


if __name__ == "__main__":
    main()
