"""suite_select's hostile target, run by nobody: threads that name
themselves (their comm, what the profile has) with terminal escapes, a bidi
override, a newline, a bell and a UTF-8 character the kernel cuts in two at
15 bytes, each spinning until killed. Prints "tid TID HEX" per thread (HEX:
the name's bytes as the kernel keeps them), then "ready"."""

import threading
import time

NAMES = [b"\x1b[2Jsel-clear", b"sel-\xe2\x80\xaeevil", b"sel-" + "\u00e9".encode() * 6,
         b"sel-\nnewline", b"other\x07bell"]


def spin(name, started):
    tid = threading.get_native_id()
    with open(f"/proc/self/task/{tid}/comm", "wb") as f:
        f.write(name)
    with open(f"/proc/self/task/{tid}/comm", "rb") as f:
        started.append((tid, f.read().rstrip(b"\n")))
    n = 0
    while True:
        n += 1


def main():
    started = []
    for name in NAMES:
        threading.Thread(target=spin, args=(name, started), daemon=True).start()
    while len(started) < len(NAMES):
        time.sleep(0.01)
    for tid, name in started:
        print("tid", tid, name.hex(), flush=True)
    print("ready", flush=True)
    time.sleep(3600)


main()
