"""A loopback stand-in for a Pyroscope server, for suite_agent.

Receiver listens on 127.0.0.1 (a free port), takes `POST /ingest?...` as
Pyroscope's ingest API does, and keeps every push: its query, its body and
when it came. It can be stopped (the port closed: connections refused) and
started again on the same port, or told to answer with an error status.
decode_pprof() reads a body the way a backend does: gunzip, then protoc
--decode against pprof's own profile.proto (tests/fixtures), into samples
per function, per label set and the header's times. A --mem push is the
multipart form Pyroscope takes for custom sample types (a `profile` file and
a `sample_type_config` JSON one), parsed by the standard library's email
package; decode_mem_pprof() reads its bytes per sample type and line.

Standard library only: this runs under Debian 12's /usr/bin/python3.
"""

import email.parser
import email.policy
import gzip
import http.server
import json
import socket
import threading
import time
import urllib.parse

from harness import ROOT, check, protoc_decode

# The project's own minimal schema, written from the specification's numbers.
OTLP_PROTO_DIR = ROOT / "tests/fixtures"
OTLP_PATH = "/v1development/profiles"
OTLP_SERVICE = "otlp_profiles.proto"
OTLP_REQUEST = "pybpfprof.otlp.ExportProfilesServiceRequest"


def parse_form(ctype, body):
    """A multipart/form-data body: {field name: bytes}."""
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    check(msg.is_multipart(), f"a {ctype} body that is not multipart")
    return {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in msg.iter_parts()}


class Push:
    def __init__(self, query, body, t, ctype=""):
        self.query = query
        self.form = parse_form(ctype, body) if ctype.startswith("multipart/form-data") else None
        self.mem = self.form is not None
        self.config = json.loads(self.form["sample_type_config"]) if self.mem else None
        self.body = self.form["profile"] if self.mem else body
        self.t = t
        self.name = query["name"]
        self.app, _, rest = self.name.partition("{")
        self.labels = dict(kv.split("=", 1) for kv in rest.rstrip("}").split(",") if kv)
        self.start = int(query["from"])
        self.until = int(query["until"])
        self._decoded = None

    def decoded(self):
        if self._decoded is None:
            self._decoded = decode_mem_pprof(self.body) if self.mem else decode_pprof(self.body)
        return self._decoded


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        rcv = self.server.receiver
        url = urllib.parse.urlsplit(self.path)
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        status = rcv.status
        if url.path == OTLP_PATH and status == 200:
            with rcv.lock:
                rcv.otlp.append((body, time.monotonic(), self.headers.get("Content-Type")))
        elif url.path != "/ingest":
            status = 404
        elif status == 200:
            q = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
            with rcv.lock:
                rcv.pushes.append(Push(q, body, time.monotonic(),
                                       self.headers.get("Content-Type", "")))
                rcv.auth.append(self.headers.get("Authorization"))
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Receiver:
    def __init__(self):
        self.pushes, self.auth, self.otlp = [], [], []
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


def decode_pprof(body):
    """A pushed body: samples in all, self samples per function, the string
    labels of the samples (key -> set of values), time and duration."""
    prof = protoc_decode(gzip.decompress(body), "perftools.profiles.Profile", errors="replace")
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


def decode_otlp(body):
    """An OTLP push, read with protoc against the specification's field
    numbers (tests/fixtures/otlp_profiles.proto), checked for what the format requires of it (the zero entry first in
    every dictionary table, indices within their tables): resource
    attributes, samples in all, self samples per function, thread
    attributes, time and duration."""
    req = protoc_decode(body, OTLP_REQUEST, OTLP_PROTO_DIR / OTLP_SERVICE, OTLP_PROTO_DIR,
                        errors="replace", what="protoc --decode (OTLP)")
    d = req["dictionary"][0]
    strings = d["string_table"]
    check(strings[0] == "", f"string_table[0] is {strings[0]!r}")
    for table in ("mapping_table", "location_table", "function_table", "attribute_table",
                  "stack_table", "link_table"):
        check(table in d, f"no {table}")
    check(d["location_table"][0] == {} and d["function_table"][0] == {} and
          d["stack_table"][0] == {} and d["attribute_table"][0] == {} and
          d["mapping_table"][0] == {}, "a dictionary table does not start with its zero value")
    funcs = d["function_table"]
    locs = d["location_table"]
    stacks = d["stack_table"]
    attrs = d["attribute_table"]

    def any_value(v):
        v = v[0]
        return v["string_value"][0] if "string_value" in v else v.get("int_value", [0])[0]

    (rp,) = req["resource_profiles"]
    resource = {kv["key"][0]: any_value(kv["value"]) for kv in rp["resource"][0]["attributes"]}
    (sp,) = rp["scope_profiles"]
    (prof,) = sp["profiles"]
    st = prof["sample_type"][0]
    kind = (strings[st["type_strindex"][0]], strings[st["unit_strindex"][0]])
    self_, total, threads = {}, 0, {}
    for s in prof.get("samples", []):
        stack = stacks[s["stack_index"][0]]
        leaf = locs[stack["location_indices"][0]]
        fn = strings[funcs[leaf["lines"][0]["function_index"][0]]["name_strindex"][0]]
        n = s["values"][0]
        self_[fn] = self_.get(fn, 0) + n
        total += n
        for i in s.get("attribute_indices", []):
            a = attrs[i]
            threads.setdefault(strings[a["key_strindex"][0]], set()).add(any_value(a["value"]))
    return dict(resource=resource, kind=kind, total=total, self=self_, threads=threads,
                time=prof["time_unix_nano"][0], duration=prof.get("duration_nano", [0])[0],
                scope=sp["scope"][0]["name"][0])


def decode_mem_pprof(body):
    """A --mem profile (gzip pprof): {sample type: {(file, line): bytes}} by
    the innermost frame, the totals per type, time and duration."""
    prof = protoc_decode(gzip.decompress(body), "perftools.profiles.Profile", errors="replace")
    strings = prof["string_table"]
    types = [strings[t["type"][0]] for t in prof["sample_type"]]
    funcs = {f["id"][0]: strings[f["filename"][0]] for f in prof.get("function", [])}
    locs = {l["id"][0]: (funcs[l["line"][0]["function_id"][0]], l["line"][0].get("line", [0])[0])
            for l in prof.get("location", [])}
    by = {t: {} for t in types}
    for smp in prof.get("sample", []):
        leaf = locs[smp["location_id"][0]]
        for t, v in zip(types, smp["value"]):
            by[t][leaf] = by[t].get(leaf, 0) + v
    return dict(types=types, lines=by, total={t: sum(by[t].values()) for t in types},
                # (field 14, default_sample_type: unknown to the fixture's older profile.proto)
                default=strings[prof.get("default_sample_type", prof.get("14", [0]))[0]],
                time=prof.get("time_nanos", [0])[0], duration=prof["duration_nanos"][0])


def decode_otlp_mem(body):
    """A --mem OTLP push: {sample type: {(file, line): bytes}} by the
    innermost frame, one Profile per type, each in bytes."""
    req = protoc_decode(body, OTLP_REQUEST, OTLP_PROTO_DIR / OTLP_SERVICE, OTLP_PROTO_DIR,
                        errors="replace", what="protoc --decode (OTLP)")
    d = req["dictionary"][0]
    strings, funcs, locs = d["string_table"], d["function_table"], d["location_table"]
    stacks = d["stack_table"]
    (rp,) = req["resource_profiles"]
    (sp,) = rp["scope_profiles"]
    out = {}
    for prof in sp["profiles"]:
        st = prof["sample_type"][0]
        kind = strings[st["type_strindex"][0]]
        check(strings[st["unit_strindex"][0]] == "bytes", f"{kind} not in bytes")
        by = out.setdefault(kind, {})
        for smp in prof.get("samples", []):
            stack = stacks[smp["stack_index"][0]]
            line = locs[stack["location_indices"][0]]["lines"][0]
            key = (strings[funcs[line["function_index"][0]]["filename_strindex"][0]],
                   line.get("line", [0])[0])
            by[key] = by.get(key, 0) + smp["values"][0]
    return out
