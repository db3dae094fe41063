# A hostile target for the heatmap (run as nobody): a source file whose name
# is HTML markup with a terminal escape, written into the directory the test
# gives (argv[1]), whose hot line closes the page's script and opens one, and
# a function whose qualname is markup too. A page that let any of it in as
# markup would run it: its title would change, an <img> would appear.
import os
import sys

ESC = "\x1b"
path = os.path.join(sys.argv[1], "<img src=x onerror=document.title=1>" + ESC + "[31m.py")
with open(path, "w") as f:
    f.write("def spin(n):\n"
            "    while n:\n"
            "        n -= len('</script><script>document.title=\"pwned\"</script>"
            + ESC + "]0;t" + chr(7) + "')\n")
code = compile(open(path).read(), path, "exec")
exec(code)
spin.__code__ = spin.__code__.replace(co_qualname="<b id=pwned>spin</b>" + ESC + "[2J")
print("ready", flush=True)
while True:
    spin(200000)
