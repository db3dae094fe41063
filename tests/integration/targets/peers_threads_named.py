# Ten threads with names of their own (threading's, some not ASCII), all
# parked in one sleep, for suite_peers' thread-name test. Prints one
# "tid " + JSON [name, native id] line per thread, then "ready".
import json
import threading
import time

NAMES = ["worker-%d" % i for i in range(8)] + ["\u00fcn\u00efc\u00f8d\u00e9-8",
                                              "\u5f88\u957f\u7684\u7ebf\u7a0b\u540d-9"]


def park(started):
    started.set()
    time.sleep(3600)  # PARK


def main():
    threads = []
    for name in NAMES:
        started = threading.Event()
        t = threading.Thread(target=park, args=(started,), name=name, daemon=True)
        t.start()
        started.wait()
        threads.append(t)
    for t in threads:
        print("tid " + json.dumps([t.name, t.native_id]), flush=True)
    print("ready", flush=True)
    time.sleep(3600)


main()
