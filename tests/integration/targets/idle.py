# An interpreter that is alive but idle: the target for the error tests, which
# only need the profiler to inspect the process, never to sample it. Kept to
# syntax every Python under test can run, 2.7 included.
import sys
import time

sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(120)
