# 400 threads wait on an event while the main thread spins in busy(). CPython
# puts each new thread state at the head of the interpreter's list, so the
# main thread's is the last of 401: a thread-list walk bounded below that
# never finds it, and every tick of busy() is lost as "no Python frame".
import threading

stop = threading.Event()
waiters = [threading.Thread(target=stop.wait, daemon=True) for _ in range(400)]
for t in waiters:
    t.start()


def busy():
    n = 0
    while True:
        n += 1


print("ready", flush=True)
busy()
