# Strings a dump must not pass raw to a terminal: a thread named with escape
# sequences and a newline, a local str and a class whose name carry them, in
# a file whose lines carry them too. The target of dump_hostile in
# suite_dump.py; prints "ready".
import sys
import threading
import time

Evil = type("Evil\x1b[2J\x07", (), {})


def hold(text, obj):
    time.sleep(600)  # HOLD "]0;title" (raw bytes: an OSC sequence)


t = threading.Thread(target=hold, args=("red\x1b[31m\r\nnext\x9b", Evil()),
                     name="thr\x1b[31m\nname", daemon=True)
t.start()
time.sleep(0.2)
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(600)
