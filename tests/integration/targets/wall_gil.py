# Two threads spinning in Python, which take the GIL from each other every
# switch interval (so each waits for it about half the time), and a third
# that sleeps in one long time.sleep() and so never wants it. Each prints
# "tid NAME NATIVE_ID" before "ready".
import os
import threading
import time


def spin():
    x = 0
    while True:
        x += 1


def sleep_long():
    time.sleep(3600)


def run(name, fn):
    # one write: print() from several threads can interleave its pieces
    os.write(1, f"tid {name} {threading.get_native_id()}\n".encode())
    fn()


def main():
    for name, fn in (("spin1", spin), ("spin2", spin), ("sleeper", sleep_long)):
        threading.Thread(target=run, args=(name, fn), daemon=True).start()
    time.sleep(0.3)
    print("ready", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
