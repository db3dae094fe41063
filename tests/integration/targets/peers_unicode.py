# Four functions whose names take each of CPython's string layouts: ASCII,
# Latin-1 beyond ASCII (one byte per character, not the ASCII layout), two
# bytes per character (Cyrillic) and four (a CJK ideograph outside the
# Basic Multilingual Plane), each doing the same work in turn; for
# suite_peers, which runs a copy of this file under a name with an emoji.
import sys


def ascii_rounds(n):
    t = 0
    for i in range(n):
        t += i % 7
    return t


def café_crème(n):
    t = 0
    for i in range(n):
        t += i % 7
    return t


def кириллица(n):
    t = 0
    for i in range(n):
        t += i % 7
    return t


def 𠀋𠂡(n):
    t = 0
    for i in range(n):
        t += i % 7
    return t


sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    for fn in (ascii_rounds, café_crème, кириллица,
               𠀋𠂡):
        fn(20000)
