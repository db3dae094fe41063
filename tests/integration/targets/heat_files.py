# Three source files for the heatmap: this one and two modules it writes
# into the directory the test gives (argv[1]), the work split 3:2:1 between
# heat_mod_a.py, this file and heat_mod_b.py. Each hot line carries a token
# (HEAT_A, HEAT_MAIN, HEAT_B) the test searches for.
import os
import sys

BLOCK = list(range(1000))
for token in ("a", "b"):
    with open(os.path.join(sys.argv[1], f"heat_mod_{token}.py"), "w") as f:
        f.write("BLOCK = list(range(1000))\n\n\n"
                f"def work_{token}(n):\n"
                "    total = 0\n"
                "    for _ in range(n):\n"
                f"        total += sum(BLOCK)  # HEAT_{token.upper()}\n"
                "    return total\n")
sys.path.insert(0, sys.argv[1])
import heat_mod_a  # noqa: E402
import heat_mod_b  # noqa: E402


def work_main(n):
    total = 0
    for _ in range(n):
        total += sum(BLOCK)  # HEAT_MAIN
    return total


print("ready", flush=True)
while True:
    heat_mod_a.work_a(30)
    work_main(20)
    heat_mod_b.work_b(10)
