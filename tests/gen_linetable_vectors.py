#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Generate golden line-table vectors for tests/unit/test_linetable.c.

Run it with the interpreter whose format you want, and redirect stdout:

    python3.11 tests/gen_linetable_vectors.py > tests/unit/linetable_vectors_311.h

It collects real code objects (functions defined below, a few generated
sources with large line and offset jumps, and selected stdlib modules compiled
from source), takes the raw line table of each, and asks the running
interpreter for the truth:

    3.8, 3.9   co_lnotab     dis.findlinestarts()
    3.10       co_linetable  co_lines()
    3.11+      co_linetable  co_positions()

When ctypes is available every sampled answer is also checked against the C
function PyCode_Addr2Line() of the same interpreter, so the Python-level
helpers and the C decoder agree before anything is written.

Output is deterministic for a given interpreter build. It must run on
CPython 3.8 through 3.15, so it uses nothing newer than 3.8. For 3.14 and
3.15 it was run inside the Debian sid root of tests/debian-roots.sh.
"""

import dis
import importlib.util
import sys

MAX_CODE_OBJECTS = 40
MAX_OUTPUT_BYTES = 300 * 1024
# Code with at most this many instructions (code units) is sampled at every offset.
FULL_SAMPLE_UNITS = 256
# Larger code is sampled on a stride chosen to give about this many points, plus
# every boundary where the interpreter's answer (or position) changes.
STRIDE_POINTS = 160

VER = sys.version_info[:2]
TAG = "%d%d" % VER
PREFIX = "lt%s" % TAG


# --- Code written here so the vectors cover known shapes ---------------------


def simple_loop(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        total += i
    while total > 100:
        total //= 2
    return total


def nested_closures(xs):
    scale = 3

    def inner(x):
        def innermost(y):
            return y * scale

        return innermost(x) + 1

    return [inner(x) for x in xs if x > 0]


def comprehensions(data):
    squares = [x * x for x in data]
    evens = {x for x in data if x % 2 == 0}
    index = {k: v for k, v in enumerate(data)}
    gen = sum(x for x in data)
    return squares, evens, index, gen


def exceptions(path):
    try:
        with open(path) as f:
            data = f.read()
    except FileNotFoundError:
        data = None
    except (OSError, ValueError) as e:
        raise RuntimeError(str(e)) from e
    else:
        data = data.strip()
    finally:
        path = None
    return data


def one_long_line(a):
    # Over 255 bytes of bytecode on one line, then a new line: forces split entries.
    big = [a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a]  # noqa: E501
    return big


SCRIPT_FUNCTIONS = [simple_loop, nested_closures, comprehensions, exceptions, one_long_line]


def gap(n):
    return "\n" * n


# Sources built as text so that the line gaps are exact: forward and backward
# jumps just over 127 and 255 lines, one over 4096 (a three-group varint in the
# 3.11+ format), and a first line number far from 1.
GENERATED_SOURCES = [
    (
        "<gen_jumps>",
        gap(2)
        + "def long_jumps(n):\n"
        + "    total = 0\n"
        + gap(130)
        + "    for i in range(n):\n"
        + "        total += i\n"
        + gap(300)
        + "        if total > 10:\n"
        + gap(140)
        + "            total -= 1\n"
        + gap(260)
        + "    while total > 1000:\n"
        + "        total = total // 2\n"
        + gap(128)
        + "    return total\n",
    ),
    (
        "<gen_far>",
        gap(7000)
        + "def far_away(x):\n"
        + "    y = x + 1\n"
        + gap(5000)
        + "    try:\n"
        + "        y = y / x\n"
        + gap(200)
        + "    except ZeroDivisionError:\n"
        + "        y = 0\n"
        + "    return [y\n"
        + gap(300)
        + "            for _ in range(3)]\n",
    ),
]

# (module, selectors): "*" takes every code object of the module; otherwise a
# path is taken together with everything nested inside it.
STDLIB = [
    ("json.decoder", ["*"]),
    (
        "argparse",
        [
            "<module>",
            "ArgumentParser._parse_known_args",
            "HelpFormatter._format_usage",
            "HelpFormatter._format_actions_usage",
            "ArgumentParser._get_values",
        ],
    ),
]


# --- Collecting code objects --------------------------------------------------


def walk(code, path):
    """Yield (path, code) for code and every code object nested inside it, in order."""
    yield path, code
    for const in code.co_consts:
        if isinstance(const, type(code)):
            child = const.co_name if path == "" else path + "." + const.co_name
            yield from walk(const, child)


def module_code(name):
    spec = importlib.util.find_spec(name)
    with open(spec.origin, "rb") as f:
        src = f.read()
    return compile(src, "<%s>" % name, "exec", dont_inherit=True)


def collect():
    out = []
    for fn in SCRIPT_FUNCTIONS:
        for path, code in walk(fn.__code__, fn.__name__):
            out.append(("script:" + path, code))
    for fname, src in GENERATED_SOURCES:
        top = compile(src, fname, "exec", dont_inherit=True)
        for path, code in walk(top, ""):
            if path:
                out.append((fname + ":" + path, code))
    for mod, selectors in STDLIB:
        top = module_code(mod)
        for path, code in walk(top, "<module>"):
            rel = path[len("<module>.") :] if path != "<module>" else path
            for sel in selectors:
                if sel == "*" or rel == sel or rel.startswith(sel + "."):
                    out.append((mod + ":" + rel, code))
                    break
    return out[:MAX_CODE_OBJECTS]


# --- Ground truth from the interpreter -----------------------------------------


def raw_table(code):
    return code.co_lnotab if VER < (3, 10) else code.co_linetable


def truth_lnotab(code):
    """Line of each 2-byte instruction, plus the offsets where a line starts."""
    nunits = len(code.co_code) // 2
    starts = list(dis.findlinestarts(code))
    assert starts and starts[0][0] == 0, "findlinestarts does not start at 0"
    lines = [None] * nunits
    for i, (off, line) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else nunits * 2
        for u in range(off // 2, end // 2):
            lines[u] = line
    assert None not in lines
    return lines, [off // 2 for off, _ in starts]


def truth_lines(code):
    """3.10: co_lines() yields [start, end) byte ranges, line None for "no line"."""
    nunits = len(code.co_code) // 2
    lines = [None] * nunits
    bounds = []
    for start, end, line in code.co_lines():
        bounds += [start // 2, end // 2 - 1]
        for u in range(start // 2, end // 2):
            assert lines[u] is None, "co_lines ranges overlap"
            lines[u] = -1 if line is None else line
    assert None not in lines, "co_lines leaves a gap"
    return lines, bounds


def truth_positions(code):
    """3.11+: co_positions() yields one position per code unit, caches included."""
    pos = list(code.co_positions())
    assert len(pos) == len(code.co_code) // 2
    lines = [-1 if p[0] is None else p[0] for p in pos]
    # Entries split wherever any part of the position changes, so these are
    # (close to) the entry boundaries of the table.
    bounds = [u for u in range(len(pos)) if u == 0 or pos[u] != pos[u - 1]]
    bounds += [u - 1 for u in bounds if u > 0]
    return lines, bounds


def addr2line():
    """PyCode_Addr2Line(code, byte_offset) of this interpreter, or None without ctypes."""
    try:
        import ctypes

        fn = ctypes.pythonapi.PyCode_Addr2Line
    except (ImportError, AttributeError):
        return None
    fn.argtypes = [ctypes.py_object, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def sample(code, c_addr2line):
    if VER < (3, 10):
        lines, bounds = truth_lnotab(code)
    elif VER < (3, 11):
        lines, bounds = truth_lines(code)
    else:
        lines, bounds = truth_positions(code)
    n = len(lines)
    units = set(bounds)
    if n <= FULL_SAMPLE_UNITS:
        units.update(range(n))
    else:
        stride = (n + STRIDE_POINTS - 1) // STRIDE_POINTS
        units.update(range(0, n, stride))
        units.add(n - 1)
    # Line changes are what a wrong decoder gets wrong first.
    for u in range(1, n):
        if lines[u] != lines[u - 1]:
            units.update((u - 1, u))
    pairs = [(-2, code.co_firstlineno)]
    pairs += [(u * 2, lines[u]) for u in sorted(x for x in units if 0 <= x < n)]
    if VER >= (3, 10):
        # The table covers exactly the bytecode, so the first offset past it has no line.
        pairs.append((n * 2, -1))
    if c_addr2line is not None:
        for off, line in pairs:
            got = c_addr2line(code, off)
            assert got == line, "PyCode_Addr2Line(%s, %d) = %d, Python says %d" % (
                code.co_name,
                off,
                got,
                line,
            )
    return pairs


# --- Output ----------------------------------------------------------------------


def c_string(s):
    out = []
    for ch in s:
        if ch in '\\"':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append("\\%03o" % (ord(ch) & 0xFF))
    return '"' + "".join(out) + '"'


def wrap(items, width=100):
    """Tab-indented rows of items, each row at most width columns (tab = 8)."""
    rows, row = [], []
    for item in items:
        if row and 8 + len(" ".join(row + [item])) > width:
            rows.append("\t" + " ".join(row))
            row = []
        row.append(item)
    if row:
        rows.append("\t" + " ".join(row))
    return "\n".join(rows)


def render(vectors, checked):
    cmd = "python%d.%d tests/gen_linetable_vectors.py > tests/unit/linetable_vectors_%s.h" % (
        VER + (TAG,)
    )
    version = " ".join(sys.version.split())
    kind = "co_lnotab" if VER < (3, 10) else "co_linetable"
    truth = {(3, 8): "dis.findlinestarts()", (3, 9): "dis.findlinestarts()", (3, 10): "co_lines()"}
    out = [
        "/* SPDX-License-Identifier: GPL-2.0-only */",
        "/* Regenerate: %s */" % cmd,
        "/*",
        " * Generated; do not edit. Line-table golden vectors for CPython %d.%d." % VER,
        " * Interpreter: %s" % version,
        " * Command: %s" % cmd,
        " * Tables are raw %s bytes; expected lines come from %s"
        % (kind, truth.get(VER, "co_positions()")),
        " * (-1: no line)%s." % (", checked against PyCode_Addr2Line()" if checked else ""),
        " */",
        "#ifndef PYBPFPROF_LINETABLE_VECTORS_%s_H" % TAG,
        "#define PYBPFPROF_LINETABLE_VECTORS_%s_H" % TAG,
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "#ifndef PYBPFPROF_LINETABLE_VECTOR_TYPES",
        "#define PYBPFPROF_LINETABLE_VECTOR_TYPES",
        "struct lt_pair {",
        "\tlong byte_offset;",
        "\tint line;\t\t/* -1: no line */",
        "};",
        "",
        "struct lt_vector {",
        "\tconst char *name;",
        "\tint firstlineno;",
        "\tconst uint8_t *tab;",
        "\tsize_t len;",
        "\tconst struct lt_pair *pairs;",
        "\tsize_t npairs;",
        "};",
        "#endif",
        "",
        "#define %s_PYTHON_VERSION %s" % (PREFIX.upper(), c_string(version)),
        "",
    ]
    rows = []
    for i, (name, code, pairs) in enumerate(vectors):
        tab = raw_table(code)
        tab_ref = "NULL"
        if tab:
            tab_ref = "%s_tab_%d" % (PREFIX, i)
            out.append("static const uint8_t %s[%d] = {" % (tab_ref, len(tab)))
            out.append(wrap(["0x%02x," % b for b in bytearray(tab)], 80))
            out.append("};")
        out.append("static const struct lt_pair %s_pairs_%d[%d] = {" % (PREFIX, i, len(pairs)))
        out.append(wrap(["{%d, %d}," % p for p in pairs]))
        out.append("};")
        out.append("")
        rows.append("\t{ %s," % c_string(name))
        rows.append(
            "\t  %d, %s, %d, %s_pairs_%d, %d },"
            % (code.co_firstlineno, tab_ref, len(tab), PREFIX, i, len(pairs))
        )
    out.append("static const struct lt_vector %s_vectors[%d] = {" % (PREFIX, len(rows)))
    out += rows
    out.append("};")
    out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n"


def main():
    c_addr2line = addr2line()
    vectors = [(name, code, sample(code, c_addr2line)) for name, code in collect()]
    text = render(vectors, c_addr2line is not None)
    if len(text) > MAX_OUTPUT_BYTES:
        sys.exit("output is %d bytes, over the %d budget" % (len(text), MAX_OUTPUT_BYTES))
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
