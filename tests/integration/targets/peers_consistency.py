# Three threads whose stacks change all the time, for suite_peers' check
# that no sampled stack mixes two call chains (a stack torn while read):
#   "gen"   average_readings() pulls values from the generator readings()
#           and does arithmetic on its own lines between two pulls
#   "rec"   recursion_loop() calls depth_sum(16), which recurses 16 deep
#   "route" routes_loop() calls route_a() and route_b() in turn, each of
#           which calls shared_leaf()
# Prints "tid NAME NATIVE_ID" per thread, then "ready".
import sys
import threading


def readings(n):
    value = 0
    for i in range(n):
        value = (value * 31 + i) % 1009
        yield value  # GEN-YIELD


def average_readings():
    total = 0
    for v in readings(5000):
        a = v * 3 + 1  # ARITH-1
        b = a % 17 - v  # ARITH-2
        total += a * b  # ARITH-3
    return total


def depth_sum(n):
    if n <= 1:
        return sum(range(50))  # REC-LEAF
    return n + depth_sum(n - 1)  # REC-CALL


def shared_leaf(k):
    t = 0
    for i in range(k):
        t += i % 13
    return t


def route_a():
    return shared_leaf(400)  # ROUTE-A-CALL


def route_b():
    return shared_leaf(400)  # ROUTE-B-CALL


def gen_loop():
    while True:
        average_readings()  # GEN-LOOP


def recursion_loop():
    while True:
        depth_sum(16)  # REC-LOOP


def routes_loop():
    while True:
        route_a()  # ROUTES-A
        route_b()  # ROUTES-B


def run(name, fn, started):
    sys.stdout.write("tid %s %d\n" % (name, threading.get_native_id()))
    started.set()
    fn()


for name, fn in (("gen", gen_loop), ("rec", recursion_loop), ("route", routes_loop)):
    started = threading.Event()
    threading.Thread(target=run, args=(name, fn, started), daemon=True).start()
    started.wait()
sys.stdout.write("ready\n")
sys.stdout.flush()
threading.Event().wait()
