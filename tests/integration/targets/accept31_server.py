# A thread-per-connection server (socketserver.ThreadingTCPServer on a port
# the kernel picks) and its clients: the main thread opens N connections
# (argv[1]), each served by a thread the server names accept31-conn-K; once
# every connection has its thread, one asks for HEAVY s of CPU, the others
# for LIGHT s each. For suite_accept31's first screens. Each connection's
# thread measures its own CPU (time.thread_time) and sends it back with its
# native tid and name; the main thread prints "server PID" first and
# "result JSON" of them all at the end.
import json
import os
import socket
import socketserver
import sys
import threading
import time

HEAVY, LIGHT = 1.5, 0.01


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        me = threading.current_thread()
        me.name = f"accept31-conn-{self.server.count()}"
        self.wfile.write(b"ready\n")
        secs = float(self.rfile.readline().split()[1])
        end = time.thread_time() + secs
        x = 0
        while time.thread_time() < end:
            x += 1  # accept31 serve
        done = {"tid": me.native_id, "name": me.name, "thread_cpu": time.thread_time()}
        self.wfile.write((json.dumps(done) + "\n").encode())
        self.rfile.readline()  # the client's close


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    request_queue_size = 128  # every client connects before any is served

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock, self.n = threading.Lock(), 0

    def count(self):
        with self.lock:
            self.n += 1
            return self.n


def main():
    n = int(sys.argv[1])
    print(f"server {os.getpid()}", flush=True)
    server = Server()
    threading.Thread(target=server.serve_forever, name="accept31-listener",
                     daemon=True).start()
    conns = [socket.create_connection(server.server_address) for _ in range(n)]
    files = [c.makefile("rwb") for c in conns]
    for f in files:
        assert f.readline() == b"ready\n"
    for i, f in enumerate(files):
        f.write(f"work {HEAVY if i == n // 2 else LIGHT}\n".encode())
        f.flush()
    done = [json.loads(f.readline()) for f in files]
    print("result " + json.dumps(done), flush=True)
    for f, c in zip(files, conns):
        f.close()
        c.close()
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
