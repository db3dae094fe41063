# --signatures' bound: f() is called with instances of 20000 distinct classes
# in turn (through g(), so that both frames of a sample are new), each call a
# short loop, so that nearly every sample sees two signatures not seen
# before; past 4096 a process's frames keep their plain name.
import sys
import time


def f(x):
    for _ in range(300):
        pass


def g(x):
    f(x)


def main():
    classes = [type("K%d" % i, (), {})() for i in range(20000)]
    print("ready", flush=True)
    deadline = time.thread_time() + float(sys.argv[1])  # CPU seconds
    while time.thread_time() < deadline:
        for obj in classes:
            g(obj)


if __name__ == "__main__":
    main()
