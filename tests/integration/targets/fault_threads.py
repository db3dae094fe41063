# Thread churn: after SIGUSR1, starts argv[1] threads in batches of argv[2],
# each running thread_work() and ending; each batch is joined before the
# next. Prints the sum of the threads' results (known in advance) and the
# threads that ran, then idles so that the profiler may still read it.
import signal
import sys
import threading
import time


def thread_work(k, out):
    x = 0
    for i in range(30000):
        x = (x * 31 + i + k) % 1000003
    out[k] = x


def reference(k):
    x = 0
    for i in range(30000):
        x = (x * 31 + i + k) % 1000003
    return x


def main():
    n, batch = int(sys.argv[1]), int(sys.argv[2])
    go = []
    signal.signal(signal.SIGUSR1, lambda *a: go.append(1))
    print("ready", flush=True)
    while not go:
        time.sleep(0.01)
    out = {}
    for start in range(0, n, batch):
        ts = [threading.Thread(target=thread_work, args=(k, out))
              for k in range(start, min(n, start + batch))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    print(f"done {len(out)} {sum(out.values())}", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    main()
