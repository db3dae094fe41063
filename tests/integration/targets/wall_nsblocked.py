# A thread blocked in os.read() on a pipe when the profiler attaches, run in
# a pid namespace of its own by the test (unshare --pid): its ids there are
# not the host's. It prints "tid NATIVE_ID" (as its namespace numbers it)
# before "ready"; on SIGUSR1 the main thread writes the byte it waits for,
# and the reader prints "woke T" (time.monotonic_ns when os.read returned),
# then sleeps in short naps for good.
import os
import signal
import threading
import time

r, w = os.pipe()


def reader():
    os.write(1, f"tid {threading.get_native_id()}\n".encode())
    os.read(r, 1)
    woke = time.monotonic_ns()
    os.write(1, f"woke {woke}\n".encode())
    while True:
        time.sleep(0.05)


def main():
    # every thread inherits the mask: SIGUSR1 is for sigwait() alone
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    threading.Thread(target=reader, daemon=True).start()
    time.sleep(0.3)
    print("ready", flush=True)
    signal.sigwait({signal.SIGUSR1})
    os.write(w, b"x")
    signal.sigwait({signal.SIGUSR1})


if __name__ == "__main__":
    main()
