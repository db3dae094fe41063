# A thread that takes its Python name late: at SIGUSR1 it spins CPU_S
# seconds of CPU under threading's default name ("Thread-1 (late)"), then
# names itself "pyname-late" (as a server's handler names its thread once it
# knows the connection), spins as long again and says "done TID"; it sleeps
# LINGER_S more and ends, and the main thread says "gone TID" and stays. A
# profiler that reads a thread's Python name only at its first sample, or
# again only at the end of the run, when this thread is gone, keeps the
# default name.
import signal
import sys
import threading
import time

CPU_S = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
LINGER_S = 8


def spin(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        pass


go = threading.Event()


def late():
    go.wait()
    spin(CPU_S)
    threading.current_thread().name = "pyname-late"
    spin(CPU_S)
    print("done", threading.get_native_id(), flush=True)
    time.sleep(LINGER_S)


def main():
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    t = threading.Thread(target=late)
    t.start()
    print("ready", flush=True)
    while t.is_alive():
        t.join(0.05)
    print("gone", t.native_id, flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
