# A thread that names itself late: at SIGUSR1 it spins CPU_S seconds of
# CPU under the name it was born with, then renames itself, spins as long
# again and says "done TID". A profiler that names a thread at its first
# sample only shows the old name.
#   comm:   it writes its comm ("renamed-late"), then sleeps a minute: it is
#           there, renamed, when the run ends.
#   python: it sets its threading name ("pyname-late"; it was born with
#           threading's default, "Thread-1 (late)"), as a server's handler
#           names its thread once it knows the connection; it sleeps LINGER_S
#           and ends, and the main thread says "gone TID" and stays: a
#           profiler that reads the name again only at the end of the run,
#           when the thread is gone, keeps the default.
import signal
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "comm"
CPU_S = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
LINGER_S = 8


def spin(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        pass


go = threading.Event()


def late():
    go.wait()
    spin(CPU_S)
    if MODE == "comm":
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as f:
            f.write("renamed-late")
    else:
        threading.current_thread().name = "pyname-late"
    spin(CPU_S)
    print("done", threading.get_native_id(), flush=True)
    time.sleep(60 if MODE == "comm" else LINGER_S)


def main():
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    t = threading.Thread(target=late, daemon=MODE == "comm")
    t.start()
    print("ready", flush=True)
    while t.is_alive():
        t.join(0.05)
    print("gone", t.native_id, flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
