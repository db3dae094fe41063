# One thread per kind of wait --mode wall tells apart, each in a function of
# its own: do_sleep() sleeps, do_read() waits in os.read() on a pipe that a
# writer feeds one byte every 200 ms, do_lock() waits for a threading.Lock
# that another thread holds all the time. Each prints "tid NAME NATIVE_ID"
# before "ready".
import os
import sys
import threading
import time

lock = threading.Lock()
lock.acquire()  # held for good by the main thread, which only sleeps
r, w = os.pipe()


def tell(name):
    # one write: print() from several threads can interleave its pieces
    os.write(1, f"tid {name} {threading.get_native_id()}\n".encode())


def do_sleep():
    while True:
        time.sleep(0.05)


def do_read():
    while True:
        os.read(r, 1)


def do_lock():
    lock.acquire()


def writer():
    while True:
        time.sleep(0.2)
        os.write(w, b"x")


def run(name, fn):
    tell(name)
    fn()


def main():
    threads = [threading.Thread(target=run, args=(n, f), daemon=True)
               for n, f in (("sleep", do_sleep), ("read", do_read), ("lock", do_lock),
                            ("writer", writer))]
    for t in threads:
        t.start()
    time.sleep(0.3)
    print("ready", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
