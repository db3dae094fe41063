# An interpreter that is alive but idle: the target for the error tests, which
# only need the profiler to inspect the process, never to sample it. Kept to
# syntax every Python 3 version under test can run.
import time

print("ready", flush=True)
time.sleep(120)
