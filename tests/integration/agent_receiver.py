"""A loopback stand-in for a Pyroscope server, for suite_agent.

Receiver listens on 127.0.0.1 (a free port), takes `POST /ingest?...` as
Pyroscope's ingest API does, and keeps every push: its query, its body and
when it came. It can be stopped (the port closed: connections refused) and
started again on the same port, or told to answer with an error status.
decode_pprof() reads a body the way a backend does: gunzip, then protoc
--decode against pprof's own profile.proto (tests/fixtures), into samples
per function, per label set and the header's times.

Standard library only: this runs under Debian 12's /usr/bin/python3.
"""

import gzip
import http.server
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse

from harness import ROOT, Skip, check

PROTO = ROOT / "tests/fixtures/profile.proto"


class Push:
    def __init__(self, query, body, t):
        self.query = query
        self.body = body
        self.t = t
        self.name = query["name"]
        self.app, _, rest = self.name.partition("{")
        self.labels = dict(kv.split("=", 1) for kv in rest.rstrip("}").split(",") if kv)
        self.start = int(query["from"])
        self.until = int(query["until"])
        self._decoded = None

    def decoded(self):
        if self._decoded is None:
            self._decoded = decode_pprof(self.body)
        return self._decoded


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        rcv = self.server.receiver
        url = urllib.parse.urlsplit(self.path)
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        status = rcv.status
        if url.path != "/ingest":
            status = 404
        if status == 200:
            q = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
            with rcv.lock:
                rcv.pushes.append(Push(q, body, time.monotonic()))
                rcv.auth.append(self.headers.get("Authorization"))
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Receiver:
    def __init__(self):
        self.pushes, self.auth = [], []
        self.lock = threading.Lock()
        self.status = 200
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.server = None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self):
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        self.server.receiver = self
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.thread.join()
            self.server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def snapshot(self):
        with self.lock:
            return list(self.pushes)


def parse_protoc_text(text):
    """protoc --decode's text format into nested dicts of lists."""
    stack = [{}]
    for raw in text.splitlines():
        s = raw.strip()
        if not s:
            continue
        if s == "}":
            stack.pop()
        elif s.endswith("{"):
            child = {}
            stack[-1].setdefault(s[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, val = s.split(":", 1)
            val = val.strip()
            if val.startswith('"'):
                val = val[1:-1].encode("latin-1").decode("unicode_escape").encode(
                    "latin-1").decode("utf-8")
            elif val in ("true", "false"):
                val = val == "true"
            else:
                val = int(val)
            stack[-1].setdefault(key, []).append(val)
    return stack[0]


def decode_pprof(body):
    """A pushed body: samples in all, self samples per function, the string
    labels of the samples (key -> set of values), time and duration."""
    if not shutil.which("protoc"):
        raise Skip("protoc not installed (Debian package protobuf-compiler)")
    data = gzip.decompress(body)
    r = subprocess.run(["protoc", f"--proto_path={PROTO.parent}",
                        "--decode=perftools.profiles.Profile", PROTO.name],
                       input=data, capture_output=True, timeout=30)
    check(r.returncode == 0, f"protoc --decode failed: {r.stderr.decode()[-300:]}")
    prof = parse_protoc_text(r.stdout.decode())
    strings = prof["string_table"]
    funcs = {f["id"][0]: strings[f["name"][0]] for f in prof.get("function", [])}
    locs = {l["id"][0]: funcs[l["line"][0]["function_id"][0]] for l in prof.get("location", [])}
    self_, total, labels, nums = {}, 0, {}, {}
    for s in prof.get("sample", []):
        fn = locs[s["location_id"][0]]
        self_[fn] = self_.get(fn, 0) + s["value"][0]
        total += s["value"][0]
        for lab in s.get("label", []):
            key = strings[lab["key"][0]]
            if "str" in lab:
                labels.setdefault(key, set()).add(strings[lab["str"][0]])
            else:
                nums.setdefault(key, set()).add(lab.get("num", [0])[0])
    return dict(total=total, self=self_, labels=labels, nums=nums,
                time=prof.get("time_nanos", [0])[0], duration=prof["duration_nanos"][0])
