# Work whose result the test knows: round r sums step(i, r) for i below
# 20000 and prints "round r total"; the test checks every total, before,
# during and after pybpfprof is killed. Runs until it is killed.
import sys


def step(i, r):
    return (i * i + r) % 7


def main():
    print("ready", flush=True)
    r = 0
    while True:
        total = 0
        for i in range(20000):
            total += step(i, r)
        print(f"round {r} {total}", flush=True)
        r += 1


if __name__ == "__main__":
    main()
