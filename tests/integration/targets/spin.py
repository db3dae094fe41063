# Two distinguishable busy loops, picked by argv[1] ("alpha" or "beta"), so
# two processes running this file have different hot functions.
import sys


def spin_alpha():
    x = 0
    while True:
        x = (x * 31 + 7) % 1000003


def spin_beta():
    x = 0
    while True:
        x = (x * 17 + 3) % 999983


def main():
    work = {"alpha": spin_alpha, "beta": spin_beta}[sys.argv[1]]
    print("ready", flush=True)
    work()


if __name__ == "__main__":
    main()
