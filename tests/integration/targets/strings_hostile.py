# Issue 28, points 8 and 9: a process, run by nobody, every string of which a
# report shows is hostile. The test runs it from a directory whose name holds
# line breaks, an escape sequence, a bidi override and the byte 0xE9 (so its
# command line and its file names do), with arguments of the same kind, and
# with an interpreter copied under such a name (its exe and first comm).
# Here it also names itself and a thread so, calls functions compiled as
# from such files, one with such a qualname, imports a module of such a name,
# and spends its time on a source line that holds such characters. Every
# line break anywhere is followed by FORGED: a report line starting with
# FORGED is a forged line.
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# comm: 15 bytes at most; a newline, a bidi override, a byte that is not UTF-8
with open("/proc/self/comm", "wb") as f:
    f.write(b"py\nFORGED\xe2\x80\xae\xe9")


def compiled(name, path, qualname=None):
    src = f"def {name}(n):\n    while n > 0:\n        n -= 1\n"
    scope = {}
    exec(compile(src, path, "exec"), scope)
    fn = scope[name]
    if qualname and sys.version_info >= (3, 11):
        fn.__code__ = fn.__code__.replace(co_qualname=qualname)
    return fn


# Files named with the other line breaks (CR, VT, FF, NEL) and 0xE9.
spin_cr = compiled("spin_cr", os.path.join(HERE, "cr\rFORGED\x0bFORGED\x0cFORGED.py"))
spin_nel = compiled("spin_nel", os.fsdecode(b"/srv/caf\xe9/nel") + "\x85FORGED.py")
spin_q = compiled("spin_q", os.path.join(HERE, "q.py"), "spin_q\nFORGED\u2029FORGED\u202e")


def spin_src(n):
    while n > 0:
        n -= len("[2J FORGED‮")  # the hot line: ESC, U+2028, U+202E in its text


def worker():
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "wb") as f:
        f.write(b"t\nFORGED\xe2\x80\xa8\xff")
    while True:
        spin_src(100000)
        spin_nel(50000)


threading.Thread(target=worker, daemon=True).start()
print("ready", flush=True)
last = 0.0
while True:
    spin_src(100000)
    spin_cr(50000)
    spin_q(50000)
    if time.monotonic() - last > 0.5:
        last = time.monotonic()
        try:
            __import__("mod\nFORGED\u202e")  # the C import, whose probe --imports sees
        except ImportError:
            pass
