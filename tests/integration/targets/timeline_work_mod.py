# Imported by timeline_work.py: a module body that imports another module
# (nested in its import on the timeline) and computes a little; its own
# marks say when its body ran.
import time

marks = {"body_start": time.monotonic_ns()}
import timeline_work_sub  # noqa: E402  (timeline: nested import)

x = sum(i * i for i in range(200000))
marks["body_end"] = time.monotonic_ns()
marks["sub"] = timeline_work_sub.stamp
