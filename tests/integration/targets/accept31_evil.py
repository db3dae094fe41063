# A process whose names are hostile, for suite_accept31: its one busy thread
# is named with a terminal's escape, a line break, a bidi override and what
# would end an HTML script or an XML text ("</script>", "&"); its file name
# (its role) has an escape too. The thread spins its CPU until stdin closes;
# the main thread waits. Prints "tid N" (the busy thread's native id), then
# "ready" once the thread has its name.
import sys
import threading

NAME = "accept31\x1b[2J\nFORGED\u202e</script>&"


def spin(named):
    threading.current_thread().name = NAME
    named.set()
    x = 0
    while True:
        x += 1  # accept31 evil


def main():
    named = threading.Event()
    t = threading.Thread(target=spin, args=(named,), daemon=True)
    t.start()
    named.wait()
    print(f"tid {t.native_id}", flush=True)
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes its end, or is killed


main()
