# A hostile process for `dump` (issue 28.7): it makes its own interpreter's
# thread list loop. THREADS threads (3 by default) wait on an event; then,
# through ctypes, the next pointer of the list's last thread state (the main
# thread's: the list is newest first) is set to the list's head, a ring. A
# dump that trusts the list walks it round and round (the old one listed 256
# thread states). Nothing here walks the list again while the process waits:
# it only sleeps, until it is killed (its exit would walk the ring). Prints
# "tids T1 T2 ... ring K" (the threads' native ids and the ring's length, its
# own count of the list), then "ready".
import ctypes
import sys
import threading
import time

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
NEXT = 8  # PyThreadState.next, after prev, in every CPython 3.8 to 3.15

api = ctypes.pythonapi
api.PyInterpreterState_Main.restype = ctypes.c_void_p
api.PyInterpreterState_ThreadHead.restype = ctypes.c_void_p
api.PyInterpreterState_ThreadHead.argtypes = [ctypes.c_void_p]
api.PyThreadState_Next.restype = ctypes.c_void_p
api.PyThreadState_Next.argtypes = [ctypes.c_void_p]

stop = threading.Event()
started = threading.Semaphore(0)
tids = []


def wait():
    tids.append(threading.get_native_id())
    started.release()
    stop.wait()  # RING-WAIT


threads = [threading.Thread(target=wait, daemon=True, name=f"ring-{i}") for i in range(THREADS)]
for t in threads:
    t.start()
for _ in threads:
    started.acquire()

head = api.PyInterpreterState_ThreadHead(api.PyInterpreterState_Main())
states = [head]
while True:
    nxt = api.PyThreadState_Next(states[-1])
    if not nxt:
        break
    states.append(nxt)
ctypes.c_void_p.from_address(states[-1] + NEXT).value = head
print("tids", threading.get_native_id(), *sorted(tids), "ring", len(states), flush=True)
print("ready", flush=True)
time.sleep(3600)  # RING-SLEEP
