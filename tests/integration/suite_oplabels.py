"""`pybpfprof agent`: the labels operators set in a target's environment
(issue 33, item 3).

Each target is started by `env -i` with exactly the environment the test
gives it (none of the runner's own), so what the agent reads from
/proc/PID/environ is known to the byte. The labels are read back from every
sink: the Pyroscope pushes' names (agent_receiver.py), the --output-dir
files (protoc against pprof's profile.proto, and go tool pprof -tags) and
the OTLP requests (protoc against tests/fixtures/otlp_profiles.proto).
"""

import errno
import os
import socket
import tempfile
import time
from pathlib import Path

from agent_receiver import Receiver, decode_otlp, decode_pprof
from harness import Skip, Workloads, check, run_profiler, test
from suite_agent import agent, by_pid, pprof_tags, stop_agent, token
from suite_sec_agent import AS_NOBODY, NOBODY, need_setpriv

PY = "/usr/bin/python3.11"
# the bytes a label value keeps (agent_label_value); every other becomes '_'
SAFE = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@+")
OURS = {"hostname", "service_name", "pid", "command", "python_version", "container_id",
        "cgroup", "uid", "user", "tid", "thread_name"}


def reduced(raw, cap=127):
    """A value as the agent makes it: cut to cap bytes, unsafe bytes '_'."""
    return "".join(chr(c) if c in SAFE else "_" for c in raw[:cap])


def env_target(wl, variables, prefix=()):
    """spin.py alpha with exactly these environment variables (bytes or str
    NAME=value, in order), behind prefix (setpriv)."""
    env = [os.fsdecode(v) if isinstance(v, bytes) else v for v in variables]
    return wl.start(PY, "spin.py", "alpha", prefix=(*prefix, "env", "-i", *env))


def run_until(prof, rcv, out, pids, n=2, timeout=60, during=None):
    """Until each pid has n pushes, n OTLP requests and n files (the run's
    own progress, not a time), then during() while the agent still runs, then
    SIGTERM; the OTLP resources decoded."""
    deadline = time.monotonic() + timeout
    while True:
        per = by_pid(rcv.snapshot(), pids)
        with rcv.lock:
            bodies = [b for b, _, _ in rcv.otlp]
        res = [decode_otlp(b)["resource"] for b in bodies]
        files = {pid: sorted(Path(out).glob(f"*-{pid}.pb.gz")) for pid in pids}
        if all(len(per[p]) >= n and len(files[p]) >= n and
               sum(r.get("process.pid") == p for r in res) >= n for p in pids):
            break
        check(time.monotonic() < deadline and prof.watch(0.3),
              f"not {n} pushes, OTLP requests and files per process in {timeout} s: "
              f"{ {p: len(per[p]) for p in pids} } pushes, "
              f"{ {p: len(files[p]) for p in pids} } files; {prof.stderr()[-400:]}")
    if during:
        during()
    stop_agent(prof)
    return per, res, files


def env_labels(labels):
    """Of a label dict, the ones not of ours (the environment's)."""
    return {k: v for k, v in labels.items() if k not in OURS}


def check_pprof_file(f, want_labels, what):
    """A --output-dir file: protoc's labels hold exactly want_labels' values
    (one each), and go tool pprof -tags totals each of them to the file's
    samples."""
    dec = decode_pprof(f.read_bytes())
    labs = {k: v for k, v in dec["labels"].items() if k not in OURS}
    check(labs == {k: {v} for k, v in want_labels.items()},
          f"{what} {f.name}: protoc reads labels {labs}, expected {want_labels}")
    if not dec["total"]:
        return 0
    tags = pprof_tags(f)
    for k, v in want_labels.items():
        check(tags.get(k, (0, {}))[1] == {v: dec["total"]},
              f"{what} {f.name}: go tool pprof -tags {k}: {tags.get(k)}, expected {v} on all "
              f"{dec['total']} samples")
    return dec["total"]


@test
def oplabels_env_every_sink():
    """A target whose environment sets OTEL_SERVICE_NAME,
    OTEL_RESOURCE_ATTRIBUTES (percent-encoded values, a key asked for with
    --label-env, one not asked for) and PYROSCOPE_TAGS, beside one that sets
    none, under --service-name: the first's service and labels are in its
    Pyroscope pushes, its pprof files (protoc, go tool pprof -tags) and its
    OTLP resource under the semantic-convention names; the second falls back
    to --service-name and has none of them."""
    with tempfile.TemporaryDirectory() as out:
        return every_sink(out)


def every_sink(out):
    tok = token()
    attrs = ("service.name=not-this, service.version = 1.2.3 ,deployment.environment.name="
             "prod%2Ceu,team.name=pay%40ments,k8s.pod.name=web-7f9,k8s.namespace.name=shop,"
             "other.key=left-out")
    with Workloads() as wl, Receiver() as rcv:
        a = env_target(wl, [f"OTEL_SERVICE_NAME=checkout{tok}",
                            f"OTEL_RESOURCE_ATTRIBUTES={attrs}",
                            "PYROSCOPE_TAGS=region=eu-west,zone=b"])
        b = env_target(wl, [f"TOKEN={tok}"])
        prof = agent(["-p", f"{a.pid},{b.pid}", "--interval", 1, "--push", rcv.url,
                      "--otlp", rcv.url, "--output-dir", out, "--service-name", "fallbacksvc",
                      "--label-env", "team.name"])
        try:
            prof.wait_attached()
            per, res, files = run_until(prof, rcv, out, [a.pid, b.pid])
        finally:
            prof.kill()
    service = f"checkout{tok}"
    # a decoded comma is a byte of the value (reduced), not a pair's end
    want = {"service_version": "1.2.3", "deployment_environment_name": "prod_eu",
            "team_name": "pay@ments", "k8s_pod_name": "web-7f9", "k8s_namespace_name": "shop",
            "region": "eu-west", "zone": "b"}
    want_otel = {"service.name": service, "service.version": "1.2.3",
                 "deployment.environment.name": "prod_eu", "team.name": "pay@ments",
                 "k8s.pod.name": "web-7f9", "k8s.namespace.name": "shop", "region": "eu-west",
                 "zone": "b"}
    for p in per[a.pid]:
        check(p.app == service and p.labels.get("service_name") == service,
              f"pid {a.pid}: pushed as {p.name}, expected the service {service}")
        check(env_labels(p.labels) == want, f"pid {a.pid}: Pyroscope tags {p.labels}")
    for p in per[b.pid]:
        check(p.app == "fallbacksvc" and not env_labels(p.labels),
              f"pid {b.pid} (no environment): pushed as {p.name}")
    samples = 0
    for f in files[a.pid]:
        samples += check_pprof_file(f, dict(want), f"pid {a.pid}")
        check(f"-{service}-" in f.name, f"file {f.name}: not named by the service {service}")
    for f in files[b.pid]:
        check_pprof_file(f, {}, f"pid {b.pid}")
        check("-fallbacksvc-" in f.name, f"file {f.name}: not named by --service-name")
    for r in res:
        if r.get("process.pid") == a.pid:
            got = {k: v for k, v in r.items() if k in want_otel}
            check(got == want_otel and "other.key" not in r,
                  f"pid {a.pid}: OTLP resource attributes {r}")
        elif r.get("process.pid") == b.pid:
            check(r.get("service.name") == "fallbacksvc" and
                  not set(r) & (set(want_otel) - {"service.name"}),
                  f"pid {b.pid}: OTLP resource attributes {r}")
    check(samples > 0, f"pid {a.pid}: no sample in {len(files[a.pid])} files")
    return (f"{len(per[a.pid])} pushes, {len(files[a.pid])} files ({samples} samples) and "
            f"the OTLP requests of pid {a.pid} carry its 8 labels; pid {b.pid} falls back")


def hostile_environment(fifo):
    """nobody's environment, in order: what it sets, and what the agent must make of it."""
    name = b"evil\x1b[31m\xff\xfe/../x%0a\xe2\x80\xae"
    junk = ",".join(f"junk{i}=v" for i in range(100))  # keys not asked for: left out
    attrs = (b"service.name=" + name + b",service.version=" + b"A" * 200 +
             b",k8s.pod.name=" + os.fsencode(fifo) +
             b",k8s.namespace.name=%ff%fe%0a%1b%5b2J,deployment.environment.name=\x7f\x01bell"
             b"\xc3\x28," + junk.encode() + b",bad key=1,novalue")
    tags = "uid=0,hostname=evil," + ",".join(f"k{i}=v{i}" for i in range(40))
    variables = [b"OTEL_RESOURCE_ATTRIBUTES=" + attrs, f"PYROSCOPE_TAGS={tags}",
                 "FILLER=" + "x" * 70000,  # what follows is past the 64 KiB read
                 "OTEL_SERVICE_NAME=beyond-the-cap"]
    decoded = b"evil\x1b[31m\xff\xfe/../x\n\xe2\x80\xae"
    service = reduced(decoded, 63).replace("/", "_")
    labels = {"service_version": "A" * 127, "k8s_pod_name": fifo,
              "k8s_namespace_name": "_____2J", "deployment_environment_name": "__bell__",
              "k0": "v0", "k1": "v1",
              # refused: "bad key", "novalue"; k2..k39 beyond the 8; uid and hostname ours
              "env_labels_refused": "42", "env_values_cut": "1"}
    return variables, service, labels


def no_reader(fifo):
    """No process has the FIFO open to read (the agent, had it followed the
    value as a path, would: its open would wait for a writer)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError as e:
        check(e.errno == errno.ENXIO, f"opening the FIFO to write: {e}")
        return
    check(False, "the FIFO named by a label value has a reader")


def check_safe(labels, what):
    for k, v in labels.items():
        check(len(v.encode()) <= 127 and all(ord(c) in SAFE for c in v),
              f"{what}: label {k}={v!r} is not bounded and reduced")


@test
def oplabels_env_hostile():
    """nobody's target with a hostile environment: a service name of escape
    sequences, invalid UTF-8, a bidi override and '/../'; a 200-byte value;
    control bytes percent-encoded and raw; a value that is the path of a
    FIFO; 100 keys not asked for; 42 tags (uid=0 and hostname=evil among
    them); OTEL_SERVICE_NAME past 70 KB of filler. Every sink gets the same
    bounded, reduced labels, exactly as the rules make them: 8 from the
    environment at most, the cut and refused ones counted, uid and hostname
    the agent's own (65534, this host), the FIFO never opened."""
    with tempfile.TemporaryDirectory() as out:
        return env_hostile(out)


def env_hostile(out):
    need_setpriv()
    with Workloads() as wl, Receiver() as rcv, \
            tempfile.TemporaryDirectory(prefix="pybpfprof-oplabels-") as fdir:
        fifo = os.path.join(fdir, "fifo")
        os.mkfifo(fifo)
        variables, service, want = hostile_environment(fifo)
        a = env_target(wl, variables, prefix=AS_NOBODY)
        prof = agent(["-p", a.pid, "--interval", 1, "--push", rcv.url, "--otlp", rcv.url,
                      "--output-dir", out])
        try:
            prof.wait_attached()
            per, res, files = run_until(prof, rcv, out, [a.pid], during=lambda: no_reader(fifo))
        finally:
            prof.kill()
    host = socket.gethostname()
    for p in per[a.pid]:
        check(p.app == service, f"pushed as {p.name!r}, expected the service {service!r}")
        check(p.labels.get("uid") == str(NOBODY) and p.labels.get("user") == "nobody" and
              p.labels.get("hostname") == host, f"Pyroscope tags {p.labels}")
        check(env_labels(p.labels) == want, f"Pyroscope tags {env_labels(p.labels)}, "
              f"expected {want}")
        check_safe(p.labels, "Pyroscope")
    for f in files[a.pid]:
        check_pprof_file(f, dict(want), "pprof")
        dec = decode_pprof(f.read_bytes())
        check_safe({k: v for k, vs in dec["labels"].items() for v in vs}, f"pprof {f.name}")
        check(dec["labels"].get("uid") == {str(NOBODY)}, f"pprof uid {dec['labels'].get('uid')}")
    want_otel = {"service.version": want["service_version"], "k8s.pod.name": fifo,
                 "k8s.namespace.name": "_____2J", "deployment.environment.name": "__bell__",
                 "k0": "v0", "k1": "v1", "service.name": service,
                 "process.user.id": NOBODY, "host.name": host,
                 "env_labels_refused": "42", "env_values_cut": "1"}
    mine = [r for r in res if r.get("process.pid") == a.pid]
    for r in mine:
        got = {k: r.get(k) for k in want_otel}
        check(got == want_otel, f"OTLP resource attributes {r}")
        check(not {"uid", "hostname", "k2", "junk0"} & set(r), f"OTLP resource attributes {r}")
        check_safe({k: v for k, v in r.items() if isinstance(v, str)}, "OTLP")
    return (f"{len(per[a.pid])} pushes, {len(files[a.pid])} files, {len(mine)} OTLP requests: "
            f"service {service!r}, 6 labels from the environment, 42 refused, 1 cut")


@test
def oplabels_merge_by_labels():
    """--merge keeps one profile per service, user and labels: three
    processes name the same service in their environment, two in pod p1 and
    one in pod p2. p1's profiles hold only the two p1 processes' samples
    (pprof's numeric pid labels) and p2's only the other's; a process in
    another pod is never counted under the first one's labels."""
    tok = token()
    service = f"shop{tok}"
    with Workloads() as wl, Receiver() as rcv:
        a, b, c = (env_target(wl, [f"OTEL_SERVICE_NAME={service}",
                                   f"OTEL_RESOURCE_ATTRIBUTES=k8s.pod.name={pod}"])
                   for pod in ("p1", "p2", "p1"))
        prof = agent(["-p", f"{a.pid},{b.pid},{c.pid}", "--interval", 1, "--merge",
                      "--push", rcv.url])
        try:
            prof.wait_attached()
            deadline = time.monotonic() + 60
            while True:
                pods = {}
                for p in rcv.snapshot():
                    pods.setdefault(p.labels.get("k8s_pod_name"), []).append(p)
                seen = {pod: set().union(*(p.decoded()["nums"].get("pid", set()) for p in ps))
                        for pod, ps in pods.items()}
                if seen.get("p1", set()) >= {a.pid, c.pid} and len(pods.get("p2", [])) >= 2:
                    break
                check(time.monotonic() < deadline and prof.watch(0.3),
                      f"not both p1 processes and 2 p2 profiles in 60 s: {seen}; "
                      f"{prof.stderr()[-300:]}")
            stop_agent(prof)
        finally:
            prof.kill()
    check(set(pods) == {"p1", "p2"}, f"profiles by pod: {set(pods)}")
    for pod, want in (("p1", {a.pid, c.pid}), ("p2", {b.pid})):
        for p in pods[pod]:
            check(p.app == service and "pid" not in p.labels,
                  f"pod {pod}: pushed as {p.name}")
        check(seen[pod] <= want, f"pod {pod}'s profiles hold the samples of pids {seen[pod]}, "
              f"expected only {want}")
    return (f"p1: {len(pods['p1'])} profiles of pids {sorted(seen['p1'])}; p2: "
            f"{len(pods['p2'])} of pid {sorted(seen['p2'])}")


def cgroup2_root():
    """Where the cgroup2 hierarchy is mounted (its mount point), or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.split()[:1] == ["cgroup2"]:
                return pre.split()[4]
    return None


def remove_cgroups(paths):
    """The cgroups made, deepest first (each empty once its processes are reaped)."""
    for p in reversed(paths):
        for _ in range(50):
            try:
                os.rmdir(p)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)  # its last process not yet gone from it


@test
def oplabels_k8s_pod_uid():
    """A process in a cgroup as a kubelet (systemd driver) names a pod's
    container: kubepods-besteffort-pod<uid with '_'>.slice/cri-containerd-<64
    hex digits>.scope, made under a cgroup of the test's own in the cgroup2
    hierarchy. Its profiles carry the container's id and the pod's uid (with
    '-') as k8s_pod_uid in the Pyroscope pushes and the pprof files, and as
    container.id and k8s.pod.uid in the OTLP resource."""
    root = cgroup2_root()
    if not root:
        raise Skip("no cgroup2 hierarchy mounted")
    uid = "3e6c8f6e-1a2b-4c3d-8e9f-" + os.urandom(6).hex()
    cid = os.urandom(32).hex()
    base = tempfile.mkdtemp(prefix="pybpfprof-oplabels-", dir=root)
    made = [base]
    try:
        for name in ("kubepods.slice", "kubepods-besteffort.slice",
                     f"kubepods-besteffort-pod{uid.replace('-', '_')}.slice",
                     f"cri-containerd-{cid}.scope"):
            made.append(os.path.join(made[-1], name))
            os.mkdir(made[-1])
        with tempfile.TemporaryDirectory() as out:
            with Workloads() as wl, Receiver() as rcv:
                a = env_target(wl, [])
                Path(made[-1], "cgroup.procs").write_text(f"{a.pid}\n")
                prof = agent(["-p", a.pid, "--interval", 1, "--push", rcv.url, "--otlp",
                              rcv.url, "--output-dir", out])
                try:
                    prof.wait_attached()
                    per, res, files = run_until(prof, rcv, out, [a.pid])
                finally:
                    prof.kill()
            want = {"container_id": cid, "k8s_pod_uid": uid}
            for p in per[a.pid]:
                got = {k: p.labels.get(k) for k in want}
                check(got == want, f"Pyroscope tags {p.labels}, expected {want}")
            for f in files[a.pid]:
                labs = decode_pprof(f.read_bytes())["labels"]
                check({k: labs.get(k) for k in want} == {k: {v} for k, v in want.items()},
                      f"pprof {f.name}: labels {labs}")
        mine = [r for r in res if r.get("process.pid") == a.pid]
        for r in mine:
            check(r.get("container.id") == cid and r.get("k8s.pod.uid") == uid,
                  f"OTLP resource attributes {r}")
        return (f"{len(per[a.pid])} pushes, {len(files[a.pid])} files, {len(mine)} OTLP "
                f"requests: pod {uid}, container {cid[:12]}...")
    finally:
        remove_cgroups(made)


@test
def oplabels_label_env_refused():
    """--label-env takes an attribute name only, 8 at most: anything else is
    one sentence saying what to give, exit 2, and no file in --output-dir."""
    with tempfile.TemporaryDirectory() as tmp:
        eight = [a for i in range(8) for a in ("--label-env", f"k{i}")]
        for args, want in ((["--label-env", "1team"], "--label-env '1team': not an attribute "
                            "name; give a letter, then letters, digits"),
                           (["--label-env", "team name"], "--label-env 'team name': not an"),
                           (["--label-env", "a" * 48], "not an attribute name"),
                           (["--label-env", ""], "--label-env '': not an attribute name"),
                           ([*eight, "--label-env", "k8"], "--label-env takes at most 8 keys")):
            r = run_profiler(["agent", "--output-dir", tmp, *args], timeout=15)
            check(r.returncode == 2 and r.stderr.startswith("pybpfprof agent: ") and
                  want in r.stderr.splitlines()[0], f"{args[-2:]}: exit {r.returncode}, "
                  f"{r.stderr!r}")
            check(not os.listdir(tmp), f"{args[-2:]}: files left {os.listdir(tmp)}")
        r = run_profiler(["agent", "--output-dir", tmp, *eight[:-2], "--label-env",
                          "k8s.cluster-name_x", "--help"], timeout=15)
        check(r.returncode == 0, f"8 valid keys refused: {r.stderr!r}")
    return "5 refusals, 8 keys taken"
