# Threads whose threading names are hostile, for suite_report_view: one with
# a terminal's escape, a line break and a bidi override; one of 100 "é"
# (200 bytes in UTF-8, past what pybpfprof keeps); one that renames itself
# from "impostor" to "MainThread". Each works its own CPU all the time. Prints
# one "tid " + JSON [name, native id] line per thread (its last name), then
# "ready".
import json
import sys
import threading
import time

NAMES = ["evil\x1b[2J\nFORGED\u202e", "\u00e9" * 100, "impostor"]


def spin(renamed):
    if threading.current_thread().name == "impostor":
        threading.current_thread().name = "MainThread"
    renamed.set()
    x = 0
    while True:
        x += 1  # SPIN


def main():
    threads = []
    for name in NAMES:
        renamed = threading.Event()
        t = threading.Thread(target=spin, args=(renamed,), name=name, daemon=True)
        t.start()
        renamed.wait()
        threads.append(t)
    for t in threads:
        print("tid " + json.dumps([t.name, t.native_id]), flush=True)
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes its end, or is killed


main()
