# Ground truth for reading non-ASCII names: such identifiers are stored in
# compact str objects laid out differently from the ASCII ones most code uses.
# The runner also runs a copy of this file from a directory whose name is not
# ASCII and needs JSON escaping (quote, backslash, tab, newline).
# All the CPU goes to Ñandú.método_λ, called from 热点.
# (Keep the word "c-o-d-i-n-g" plus a colon out of the first two lines:
# Python would take it for an encoding declaration.)


class Ñandú:
    def método_λ(self):
        x = 0
        while True:
            x = (x * 31 + 7) % 1000003


def 热点():
    Ñandú().método_λ()


print("ready", flush=True)
热点()
