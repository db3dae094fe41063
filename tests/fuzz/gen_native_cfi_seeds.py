#!/usr/bin/env python3
"""Seeds for fuzz_native_cfi: the .eh_frame (with .eh_frame_hdr) and
.debug_frame of real libraries and of the crafted ones suite_native uses,
in the fuzzer's input format (see fuzz_native_cfi.c). Run from the
repository root: python3 tests/fuzz/gen_native_cfi_seeds.py"""
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from suite_native import NATIVE_ESCAPES, NATIVE_SPIN_S  # noqa: E402

OUT = Path("tests/fuzz/corpus/native_cfi")


def sections(lib):
    """{name: (address, bytes)} of the CFI sections of lib."""
    out = {}
    text = subprocess.run(["readelf", "-SW", lib], capture_output=True, text=True).stdout
    for line in text.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] in (".eh_frame", ".eh_frame_hdr", ".debug_frame"):
            with tempfile.NamedTemporaryFile() as f:
                subprocess.run(["objcopy", f"--dump-section={parts[1]}={f.name}", lib,
                                os.devnull], check=True)
                out[parts[1]] = (int(parts[3], 16), Path(f.name).read_bytes())
    return out


def seed(name, lib):
    s = sections(lib)
    if ".eh_frame" in s:
        addr, data = s[".eh_frame"]
        haddr, hdr = s.get(".eh_frame_hdr", (0, b""))
        (OUT / f"{name}-eh").write_bytes(struct.pack("<BQQI", 3 if hdr else 1, addr, haddr,
                                                     len(hdr)) + hdr + data)
    if ".debug_frame" in s:
        addr, data = s[".debug_frame"]
        (OUT / f"{name}-debug").write_bytes(struct.pack("<BQQI", 0, addr, 0, 0) + data)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        for kind, escape in NATIVE_ESCAPES.items():
            if kind == "register":  # the others are megabytes
                src, lib = Path(d) / f"{kind}.s", Path(d) / f"{kind}.so"
                src.write_text(NATIVE_SPIN_S.format(escape=escape))
                subprocess.run(["gcc", "-shared", "-o", lib, src], check=True)
                seed(f"crafted-{kind}", lib)
        src, lib = Path(d) / "small.c", Path(d) / "small.so"
        src.write_text("int f(int x) { return x ? f(x - 1) + 1 : 0; }\n")
        subprocess.run(["gcc", "-O1", "-g", "-fno-asynchronous-unwind-tables", "-shared",
                        "-fPIC", "-o", lib, src], check=True)
        seed("debugframe", lib)
    seed("libz", os.path.realpath("/lib/x86_64-linux-gnu/libz.so.1"))


if __name__ == "__main__":
    main()
