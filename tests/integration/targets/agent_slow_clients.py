# A local user's slow clients of the agent's --metrics port: N connections
# held open, each sending its request one byte a second (an idle timeout
# never fires on them), each one the server closes opened again 0.2 s later.
# Usage: agent_slow_clients.py PORT N. Prints "ready" once all N are open,
# then "held K reopened R" every second: how many were open then, how many
# had been closed by the server and opened again in all.
import select
import socket
import sys
import time

PORT, N = int(sys.argv[1]), int(sys.argv[2])
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
DRIP, PAUSE = 1.0, 0.2


def connect():
    s = socket.create_connection(("127.0.0.1", PORT))
    s.setblocking(False)
    return s


conns = {connect(): 0 for _ in range(N)}  # socket -> bytes of REQUEST sent
print("ready", flush=True)
closed, reopened = 0, 0
next_drip = next_report = time.monotonic()
reopen_at = None
while True:
    r, _, _ = select.select(list(conns), [], [], 0.05)
    for s in r:
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:  # closed by the server (EOF or reset)
            del conns[s]
            s.close()
            closed += 1
            reopen_at = reopen_at or time.monotonic() + PAUSE
    now = time.monotonic()
    if reopen_at and now >= reopen_at:
        for _ in range(closed):
            try:
                conns[connect()] = 0
                reopened += 1
            except OSError:
                pass
        closed, reopen_at = 0, None
    if now >= next_drip:
        next_drip = now + DRIP
        for s, sent in list(conns.items()):
            try:
                s.send(REQUEST[sent:sent + 1])
                conns[s] = min(sent + 1, len(REQUEST) - 1)
            except OSError:
                pass
    if now >= next_report:
        next_report = now + 1.0
        print(f"held {len(conns)} reopened {reopened}", flush=True)
