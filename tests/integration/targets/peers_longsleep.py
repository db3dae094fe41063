# A process whose only thread sleeps for an hour, for suite_peers' long
# sleep test: "ready", then nap().
import sys
import time


def nap():
    time.sleep(3600)  # LONG-NAP


sys.stdout.write("ready\n")
sys.stdout.flush()
nap()  # CALL-NAP
