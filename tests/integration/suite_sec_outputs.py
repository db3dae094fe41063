# Output files on a shared host (issue 11, point 2, and the disk-full fault
# test): another user may plant a link or a file where root will write, and a
# disk may fill up mid-report.

import os
import shutil
import subprocess
import tempfile

from harness import (RUN_SLACK, Skip, Workloads, check, expect_error, interpreter, load_report,
                     run_profiler, test)


PLANTER_UID = 12345


class StickyDir:
    """A world-writable sticky directory of our own under /tmp (like /tmp
    itself), where another uid can plant things; removed on exit."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="pybpfprof-sticky-", dir="/tmp")
        os.chmod(self.path, 0o1777)
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)
        return False


def victim_file(tmp, text):
    """A root-owned file outside the sticky directory, for a link to point at."""
    path = os.path.join(tmp, "victim")
    with open(path, "w") as f:
        f.write(text)
    return path


def read(path):
    with open(path) as f:
        return f.read()


@test
def sec_out_symlink_sticky():
    # A link planted by another uid in a sticky world-writable directory,
    # aimed at a root-owned file: -o through it must be refused before
    # profiling, and the file it points at left as it was.
    with Workloads() as wl, StickyDir() as sticky, tempfile.TemporaryDirectory() as tmp:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        victim = victim_file(tmp, "precious\n")
        link = os.path.join(sticky, "report.txt")
        os.symlink(victim, link)
        os.chown(link, PLANTER_UID, PLANTER_UID, follow_symlinks=False)
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", link], [link, "symbolic link"])
        check(t < 2, f"refused only after {t:.1f}s: checked after profiling")
        check(read(victim) == "precious\n", f"{victim} rewritten through the link: "
              f"{read(victim)[:80]!r}")
        check(os.readlink(link) == victim, f"{link} replaced")
        # A dangling link would make root create the file it names.
        created = os.path.join(tmp, "created-by-root")
        dangling = os.path.join(sticky, "report.json")
        os.symlink(created, dangling)
        os.chown(dangling, PLANTER_UID, PLANTER_UID, follow_symlinks=False)
        expect_error(["-p", p.pid, "-d", 5, "-o", dangling], [dangling, "symbolic link"])
        check(not os.path.lexists(created), f"{created} created through a dangling link")
    return msg


@test
def sec_out_sticky_foreign_file():
    # A regular file another uid left in a sticky directory, for root to
    # write into (the kernel's protected_regular case): refused, untouched.
    with Workloads() as wl, StickyDir() as sticky:
        p = wl.start(interpreter("debian"), "spin.py", "alpha")
        planted = os.path.join(sticky, "report.json")
        with open(planted, "w") as f:
            f.write("planted\n")
        os.chown(planted, PLANTER_UID, PLANTER_UID)
        msg, t = expect_error(["-p", p.pid, "-d", 5, "-o", planted],
                              [planted, f"uid {PLANTER_UID}", "sticky"])
        check(t < 2, f"refused only after {t:.1f}s: checked after profiling")
        st = os.stat(planted)
        check(read(planted) == "planted\n" and st.st_uid == PLANTER_UID,
              f"{planted} changed: uid {st.st_uid}, {read(planted)[:80]!r}")
        check(sorted(os.listdir(sticky)) == ["report.json"],
              f"left in {sticky}: {sorted(os.listdir(sticky))}")
    return msg


@test
def sec_out_disk_full():
    # A 64 KiB tmpfs fills up while the report (hundreds of KiB: many
    # functions with long names) is written: a clear error naming each file,
    # exit 1 as for any output that cannot be written, no partial or
    # temporary file, an existing file kept as it was, and the other outputs
    # (on a disk with room) still written.
    limit = 64 * 1024
    with Workloads() as wl, tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full")
        os.mkdir(full)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={limit}", "tmpfs", full],
                           capture_output=True, text=True, timeout=10)
        if r.returncode:
            raise Skip(f"cannot mount a tmpfs: {r.stderr.strip()}")
        try:
            p = wl.start(interpreter("debian"), "many_funcs.py")
            new = os.path.join(full, "report.json")
            old = os.path.join(full, "old.json")
            with open(old, "w") as f:
                f.write('{"old": true}\n')
            room = os.path.join(tmp, "room.json")
            r = run_profiler(["-p", p.pid, "-d", 1, "-F", 999, "-o", new, "-o", old,
                              "-o", room], timeout=1 + RUN_SLACK)
            lines = r.stderr.strip().splitlines()
            left = sorted(os.listdir(full))
            old_now = read(old)
        finally:
            subprocess.run(["umount", full], capture_output=True, timeout=10)
        check(r.returncode == 1, f"exit {r.returncode}, expected 1; stderr {r.stderr!r}")
        check(r.stdout == "", f"stdout not empty: {r.stdout[:200]!r}")
        for path in (new, old):
            said = [ln for ln in lines if path in ln]
            check(len(said) == 1 and said[0].startswith("pybpfprof: ")
                  and "no space left" in said[0].lower(),
                  f"no one-line 'No space left' error naming {path}: {lines}")
        check(left == ["old.json"], f"left on the full disk: {left}")
        check(old_now == '{"old": true}\n', f"{old} changed: {old_now[:80]!r}")
        size = os.path.getsize(room)
        check(size > 2 * limit, f"the report is only {size} bytes: the disk was not filled")
        rep = load_report(room)
        nfuncs = len(rep["processes"][0]["functions"])
    return f"{size >> 10} KiB report ({nfuncs} functions) refused by a {limit >> 10} KiB " \
           f"tmpfs, nothing left there: {lines[0]}"
