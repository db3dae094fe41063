# A hostile target for the profiler's memory budget: pure Python that never
# stops creating fresh code objects (a new name each, so the fingerprint is
# new), every one carrying the same 1 MiB line table, and calls them in a
# chain so that each sample holds DEPTH of them. They are all kept alive, so
# each one has an address of its own: a few hundred bytes to the target, a
# whole line table to a profiler that copies them.
#
# The tables start with the genuine one (lines stay right for the code that
# runs), then a tail the interpreter never looks at, padded to exactly 1 MiB:
#   fill:   5000 line changes, a decoded table well under any sane cap, so
#           that cached entries are big and the budget fills up
#   refuse: 200000 line changes, more than a profiler should decode and keep
#   pad:    nothing but "no location" entries
# mixed (the default) alternates fill and refuse along the chain.
# With VARY=vary each generation also moves co_firstlineno, so that no two
# code objects decode to the same lines: every one costs a whole decoding.
#
# usage: sec_code_flood.py [DEPTH [MODE [SPIN_MS [VARY]]]]
# CPython 3.11+ (location tables, co_qualname).
import sys
import time

MIB = 1 << 20
DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 8
MODE = sys.argv[2] if len(sys.argv) > 2 else "mixed"
SPIN = (float(sys.argv[3]) if len(sys.argv) > 3 else 10.0) / 1000
VARY = len(sys.argv) > 4 and sys.argv[4] == "vary"

# Location-table entries of one code unit each (Objects/locations.md):
# 0xd8 col col = "one line form", line + 1; 0xe8 0x03 = "no columns",
# line - 1; 0xf8 = no location.
UP_DOWN = bytes([0xd8, 0, 0, 0xe8, 0x03])
NO_LOCATION = b"\xf8"


def big_table(code, changes):
    tail = UP_DOWN * (changes // 2)
    head = code.co_linetable + tail
    return head + NO_LOCATION * (MIB - len(head))


def flood_leaf(chain, i):
    x = 0
    end = time.perf_counter() + SPIN
    while time.perf_counter() < end:
        x = (x * 31 + 7) % 1000003  # leaf-body
    return x


def flood_link(chain, i):
    return chain[i](chain, i + 1)  # link-call


def main():
    tables = {
        "fill": (big_table(flood_link.__code__, 5000), big_table(flood_leaf.__code__, 5000)),
        "refuse": (big_table(flood_link.__code__, 200000),
                   big_table(flood_leaf.__code__, 200000)),
        "pad": (big_table(flood_link.__code__, 0), big_table(flood_leaf.__code__, 0)),
    }
    if MODE == "mixed":
        kinds = ["fill", "refuse"]
    else:
        kinds = [MODE]
    for t in tables.values():
        assert len(t[0]) == MIB and len(t[1]) == MIB
    fn_type = type(flood_link)
    g = globals()
    print("ready", flush=True)
    gen = 0
    keep = []
    while True:
        gen += 1
        chain = []
        shift = {"co_firstlineno": 1000 + gen} if VARY else {}
        for k in range(DEPTH):
            kind = kinds[k % len(kinds)]
            name = "flood_link_%s_%d_%d" % (kind, gen, k)
            code = flood_link.__code__.replace(co_name=name, co_qualname=name,
                                               co_linetable=tables[kind][0], **shift)
            chain.append(fn_type(code, g, name))
        name = "flood_leaf_%d" % gen
        code = flood_leaf.__code__.replace(co_name=name, co_qualname=name,
                                           co_linetable=tables[kinds[0]][1], **shift)
        chain.append(fn_type(code, g, name))
        keep.append(chain)
        chain[0](chain, 1)


if __name__ == "__main__":
    main()
