#!/usr/bin/python3
"""`make check-layout`: the source tree keeps the shape the README describes.

1. Layers. The folders of src/ (and their interface headers under include/)
   are ranked, lowest first. A file may include headers of its own folder or
   of a folder below it; never from a folder above. A header named without a
   folder must sit next to the file (a folder's private header), or be one of
   the headers both sides share (the BPF ABI, the generated skeleton).
2. No cycles. Between the objects of src/, taken from the symbols they
   define and use (nm): if a.o uses a symbol of b.o, a depends on b. Calls
   into a higher folder and any cycle between objects are errors.
3. Short functions. No function in src/ or bpf/ is longer than 80 lines and
   main at most 60 (universal-ctags gives each function's first and last line;
   data tables are not functions and are not counted).

Usage: check-layout.py OBJECT...   (the objects of src/, for rule 2)
Prints each violation on its own line and exits 1 if there is any.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Lowest first: a folder may depend only on itself and the folders before it.
LAYERS = ["util", "proc", "cpython", "profile", "report", "saved", "session", "dump", "agent", "cli"]
SHARED = {"bpf_abi.h", "pybpfprof.skel.h",
          # the BPF stack walk, compiled as host C for dump's userspace walk
          "../../bpf/stackwalk.h",
          # --mode wall's off-CPU classes, the same table on both sides
          "../../bpf/offcpu_class.h"}
MAX_LINES = 80
MAX_MAIN = 60

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    rel = path.relative_to(ROOT)
    if rel.parts[0] in ("src", "include") and len(rel.parts) == 3:
        return rel.parts[1]
    return None


def check_includes(errors):
    files = sorted(ROOT.glob("src/*/*.[ch]")) + sorted(ROOT.glob("include/*/*.h"))
    for f in files:
        own = folder_of(f)
        if own not in LAYERS:
            errors.append(f"{f.relative_to(ROOT)}: folder {own!r} is not one of the layers "
                          f"({', '.join(LAYERS)}); add it to tests/check-layout.py")
            continue
        for m in INCLUDE.finditer(f.read_text()):
            name = m.group(1)
            if name in SHARED:
                continue
            where = f"{f.relative_to(ROOT)}: #include \"{name}\""
            if "/" not in name:
                if name not in SHARED and not (f.parent / name).exists():
                    errors.append(f"{where}: a header without a folder must be next to "
                                  f"the file or shared ({', '.join(sorted(SHARED))})")
                continue
            other = name.split("/", 1)[0]
            if other not in LAYERS:
                errors.append(f"{where}: unknown folder {other!r}")
            elif LAYERS.index(other) > LAYERS.index(own):
                errors.append(f"{where}: {own}/ may not depend on {other}/ above it "
                              f"(layers, lowest first: {' < '.join(LAYERS)})")
            elif not ((ROOT / "include" / name).exists() or (ROOT / "src" / name).exists()):
                errors.append(f"{where}: no such header")


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True,
                         text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "--undefined-only", "-g", obj], capture_output=True,
                         text=True, check=True).stdout
    used = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, used


def module_name(obj):
    # .output/src/FOLDER/NAME.o -> FOLDER/NAME
    p = Path(obj)
    return f"{p.parent.name}/{p.stem}"


def check_objects(objs, errors):
    owner, uses = {}, {}
    for o in objs:
        d, u = symbols(o)
        m = module_name(o)
        uses[m] = u
        for s in d:
            owner[s] = m
    deps = {m: sorted({owner[s] for s in u if s in owner and owner[s] != m})
            for m, u in uses.items()}
    for m, ds in sorted(deps.items()):
        for d in ds:
            a, b = m.split("/")[0], d.split("/")[0]
            if a in LAYERS and b in LAYERS and LAYERS.index(b) > LAYERS.index(a):
                why = sorted(s for s in uses[m] if owner.get(s) == d)[:3]
                errors.append(f"{m}.o calls up into {d}.o ({', '.join(why)})")
    for comp in strongly_connected(deps):
        if len(comp) > 1:
            errors.append("dependency cycle between " + ", ".join(sorted(comp)))


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the graph's strongly connected components."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    comps.append(comp)
            elif w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(graph.get(w, ()))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return comps


def check_lengths(errors):
    files = sorted(ROOT.glob("src/*/*.c")) + sorted(ROOT.glob("src/*/*.h")) + \
        sorted(ROOT.glob("bpf/*.c")) + sorted(ROOT.glob("bpf/*.h"))
    out = subprocess.run(["ctags", "-x", "--c-kinds=f", "--fields=+ne", "--_xformat=%N %n %e %F",
                          "--language-force=C"] + [str(f) for f in files],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[1].isdigit() or not parts[2].isdigit():
            continue
        name, start, end, path = parts[0], int(parts[1]), int(parts[2]), parts[3]
        n = end - start + 1
        limit = MAX_MAIN if name == "main" else MAX_LINES
        if n > limit:
            rel = Path(path).resolve().relative_to(ROOT)
            errors.append(f"{rel}:{start}: {name}() is {n} lines (at most {limit})")


def main():
    errors = []
    check_includes(errors)
    objs = [o for o in sys.argv[1:] if o.endswith(".o")]
    if objs:
        check_objects(objs, errors)
    check_lengths(errors)
    for e in errors:
        print(e)
    print(f"layout: {len(errors)} problem{'s' if len(errors) != 1 else ''}"
          + ("" if objs else " (no objects given: dependency cycles not checked)"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
