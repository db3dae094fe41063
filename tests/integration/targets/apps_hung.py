# Two ways a service hangs, for suite_apps' dump --locals tests (Debian's
# python3-requests):
#
#   apps_hung.py requests URL   the main thread fetches URL with requests
#                               from a server that accepts and never answers:
#                               it waits in a socket read for good
#   apps_hung.py deadlock       a worker thread ("restocker") takes a
#                               threading.Lock it already holds, and the main
#                               thread puts a third item into a queue of two
#                               that only it would ever read
#
# Prints "tid NATIVE_ID" of the thread that hangs (the main thread's for
# requests, the restocker's for deadlock), then "ready" just before hanging.
import queue
import sys
import threading


def fetch_report(url, attempt):
    import requests
    session = requests.Session()
    session.headers["X-Attempt"] = str(attempt)
    print(f"tid {threading.get_native_id()}", flush=True)
    print("ready", flush=True)
    return session.get(url, timeout=600)  # HUNG-GET


class Inventory:
    def __init__(self):
        self._lock = threading.Lock()
        self.items = {"widget-7": 3}

    def restock(self, sku, qty):
        with self._lock:
            self.items[sku] = self.total(sku) + qty

    def total(self, sku):
        with self._lock:  # SELF-DEADLOCK
            return self.items.get(sku, 0)


def restocker(inv, started):
    print(f"tid {threading.get_native_id()}", flush=True)
    started.set()
    inv.restock("widget-7", 12)


def deadlock():
    inv = Inventory()
    started = threading.Event()
    threading.Thread(target=restocker, args=(inv, started), name="restocker",
                     daemon=True).start()
    started.wait()
    backlog = queue.Queue(maxsize=2)
    orders = ["order-1", "order-2", "order-3"]
    print("ready", flush=True)
    for order in orders:
        backlog.put(order)  # QUEUE-FULL


if __name__ == "__main__":
    if sys.argv[1] == "requests":
        fetch_report(sys.argv[2], 3)
    else:
        deadlock()
