# Ground truth for threads: two worker threads spin in different functions
# while the main thread blocks in join(), so the main thread should get
# (almost) no CPU samples and each worker about half of them (the GIL lets
# only one of the two run Python code at a time).
import threading


def thread_a_work():
    x = 0
    while True:
        x = (x * 31 + 7) % 1000003


def thread_b_work():
    x = 0
    while True:
        x = (x * 17 + 3) % 999983


def main():
    workers = [threading.Thread(target=f, daemon=True)
               for f in (thread_a_work, thread_b_work)]
    for t in workers:
        t.start()
    print("ready", flush=True)
    for t in workers:
        t.join()


if __name__ == "__main__":
    main()
