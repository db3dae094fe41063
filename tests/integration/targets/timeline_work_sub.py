# Imported by timeline_work_mod.py, inside its import.
import time

stamp = time.monotonic_ns()
