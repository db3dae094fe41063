# A thread-per-connection server on loopback under its own load, every
# thread named by threading: "acceptor" accepts NCONN connections (argv[1],
# default 24), each served by its own thread "conn-I" that works 2 ms of its
# own CPU per request (the acceptor then parks); "hot_worker" spins; the
# main thread (MainThread, or argv[2] if given, set before any other thread
# starts) sends the requests, round after round, and works 10 ms of its CPU
# a round. For suite_report_view. Prints one "tid " + JSON [name, native id]
# line per thread, then "ready".
import json
import socket
import sys
import threading
import time


def spin(cpu_s):
    end = time.thread_time() + cpu_s
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


def recv_exact(conn, n):
    got = b""
    while len(got) < n:
        more = conn.recv(n - len(got))
        if not more:
            return b""
        got += more
    return got


def serve(conn):
    with conn:
        while recv_exact(conn, 1):
            spin(0.002)  # WORK
            conn.sendall(b"ok")


def hot():
    while True:
        spin(1.0)  # HOT


def accept_all(srv, n):
    for i in range(n):
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), name=f"conn-{i}", daemon=True).start()
    time.sleep(3600)  # stays, parked: every thread listed lives as long as the process


def main():
    nconn = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    if len(sys.argv) > 2:
        threading.current_thread().name = sys.argv[2]
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(nconn)
    threading.Thread(target=accept_all, args=(srv, nconn), name="acceptor", daemon=True).start()
    clients = [socket.create_connection(srv.getsockname()) for _ in range(nconn)]
    threading.Thread(target=hot, name="hot_worker", daemon=True).start()
    # a thread just started is listed before it has its native id
    while sum(t.name.startswith("conn-") and t.native_id is not None
              for t in threading.enumerate()) < nconn or \
            any(t.native_id is None for t in threading.enumerate()):
        time.sleep(0.01)
    for t in threading.enumerate():
        print("tid " + json.dumps([t.name, t.native_id]), flush=True)
    print("ready", flush=True)
    while True:
        for c in clients:
            c.sendall(b"x")
            recv_exact(c, 2)
        spin(0.01)  # LOAD


main()
