"""Launched in a terminal under pybpfprof: what its terminal is, and what
passes through it. Usage: launch_tty_relay.py [hold]

Prints "session own=BOOL tty=NAME isatty=B0B1B2 size=COLSxROWS pid=PID", then
"ready"; reads a line and prints "got REPR"; waits for SIGWINCH and prints
"winch COLSxROWS"; reads lines until end of file and prints "eof after N
lines"; then spins in relay_spin until SIGINT, prints "sigint" and exits 7.

With hold: prints "pid PID" and "ready", then prints "got SIGTERM" at each
SIGTERM and goes on sleeping (at most 60 s), printing a line every
millisecond after the first.
"""

import os
import shutil
import signal
import sys
import time

flags = {"winch": False, "int": False}


def size():
    s = shutil.get_terminal_size((0, 0))
    return f"{s.columns}x{s.lines}"


def relay_spin():
    while not flags["int"]:
        for _ in range(10000):
            pass


def hold():
    def on_term(*_):
        print("got SIGTERM", flush=True)
        flags["int"] = True

    signal.signal(signal.SIGTERM, on_term)
    print("pid", os.getpid(), flush=True)
    print("ready", flush=True)
    end = time.monotonic() + 60
    n = 0
    while time.monotonic() < end:
        # after the first SIGTERM a line every millisecond: the relay is busy when the
        # second one ends pybpfprof (its thread then put raw mode back after the restore)
        if flags["int"]:
            n += 1
            print(f"tick {n}", flush=True)
        time.sleep(0.001 if flags["int"] else 0.05)


def main():
    if sys.argv[1:] == ["hold"]:
        return hold()
    signal.signal(signal.SIGWINCH, lambda *_: flags.update(winch=True))
    signal.signal(signal.SIGINT, lambda *_: flags.update(int=True))
    tty = os.ttyname(0) if os.isatty(0) else "-"
    bits = "".join(str(int(os.isatty(fd))) for fd in (0, 1, 2))
    print(f"session own={os.getsid(0) == os.getpid()} tty={tty} isatty={bits} size={size()} "
          f"pid={os.getpid()}", flush=True)
    print("ready", flush=True)
    print("got", repr(sys.stdin.readline()), flush=True)
    end = time.monotonic() + 30
    while not flags["winch"] and time.monotonic() < end:
        time.sleep(0.01)
    print("winch", size(), flush=True)
    n = 0
    while sys.stdin.readline():
        n += 1
    print(f"eof after {n} lines", flush=True)
    relay_spin()
    print("sigint", flush=True)
    sys.exit(7)


if __name__ == "__main__":
    main()
