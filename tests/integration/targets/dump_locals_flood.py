# A hostile process for `dump --locals` (issue 28.7): THREADS idle threads
# (256 by default), each DEPTH frames deep (130: past the 128 a dump reads),
# each frame with 64 locals that all name one list whose text fills the 512
# bytes a value may take. Cheap for the process (one list, shared), as
# costly as can be to dump: 256 x 128 x 64 values of 512 bytes, about 1 GB
# of text in the old code. Prints "threads T depth D locals L" (its own
# counts), then "ready" once every thread waits at its deepest frame.
import sys
import threading

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 256
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 130
LOCALS = 64

BIG = ["x" * 1000, "y" * 1000, "z" * 1000, "w" * 1000, "v" * 1000, "u" * 1000]

# def deep(depth, ev): v0 = BIG; ... v63 = BIG; recurses, then waits
src = ["def deep(depth, ev, arrived):"]
src += [f"    v{i} = BIG" for i in range(LOCALS)]
src += ["    if depth > 1:",
        "        return deep(depth - 1, ev, arrived)",
        "    arrived.release()",
        "    ev.wait()  # FLOOD-WAIT"]
exec("\n".join(src), globals())

stop = threading.Event()
arrived = threading.Semaphore(0)
threads = [threading.Thread(target=deep, args=(DEPTH, stop, arrived), daemon=True)
           for _ in range(THREADS)]
for t in threads:
    t.start()
for _ in threads:
    arrived.acquire()
print(f"threads {THREADS} depth {DEPTH} locals {LOCALS}", flush=True)
print("ready", flush=True)
stop.wait()
