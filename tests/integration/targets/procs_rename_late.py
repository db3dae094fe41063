# A thread that names itself late: at SIGUSR1 it spins CPU_S seconds of
# CPU under the name it was born with (the interpreter's), then writes its
# comm ("renamed-late") and spins as long again, then says "done TID". A
# profiler that names a thread at its first sample only shows the old name.
# The thread then sleeps a minute: it is there, renamed, when the run ends.
import signal
import sys
import threading
import time

CPU_S = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3


def spin(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        pass


go = threading.Event()


def late():
    go.wait()
    spin(CPU_S)
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as f:
        f.write("renamed-late")
    spin(CPU_S)
    print("done", threading.get_native_id(), flush=True)
    time.sleep(60)  # alive at the end of the run, under its new name


def main():
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    t = threading.Thread(target=late, daemon=True)
    t.start()
    print("ready", flush=True)
    while t.is_alive():
        t.join(0.05)


if __name__ == "__main__":
    main()
