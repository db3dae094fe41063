# The harness's own interpreter discovery, so that a machine without the
# Debian release roots (or without pyenv) gets skips with their reason, never
# a crash of the harness, and a machine with them runs every build.

import os
import re
import subprocess
import tempfile

from harness import (BUILDS, CHROOTED, DEBIAN_ROOTS, HERE, PYENV_MINORS, Skip, check,
                     python_version, test)


def harness_run(env_over, *patterns):
    """run.py itself in a child, with env_over in its environment: its output."""
    env = dict(os.environ, **env_over)
    r = subprocess.run(["/usr/bin/python3", str(HERE / "run.py"), *patterns], env=env,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return r


def harness_tests(env_over):
    r = harness_run(env_over, "--help")
    check(r.returncode == 0, f"run.py --help exit {r.returncode}: {r.stderr.strip()[-300:]}")
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("Tests: ")]
    check(line, "run.py --help lists no tests")
    return line[-1].split()[1:]


@test
def harness_discovery():
    """Every build name a test asks for is one the harness knows; with no
    roots and no pyenv, the test list is the same and every test of a missing
    interpreter skips with its reason (none fails); with the roots prepared,
    every build runs and is the CPython its name says."""
    # 1. The names the tests use, read from their source: a misspelt build
    # would otherwise only show (as a failure) on a machine with the roots.
    names = set(BUILDS)
    for src in [HERE / "run.py", *sorted(HERE.glob("suite_*.py"))]:
        text = src.read_text()
        for name in re.findall(r"""["']((?:bullseye|trixie|forky|sid|pyenv)\d+)["']""", text) + \
                re.findall(r"""\b(?:interpreter|usdt_interp|available)\(\s*["'](\w+)["']""", text):
            check(name in names, f"{src.name} names interpreter {name!r}, which the "
                  f"harness does not know (builds: {', '.join(BUILDS)})")

    # 2. Nothing prepared: an empty roots directory and an empty pyenv.
    with tempfile.TemporaryDirectory() as empty:
        bare = {"PYBPFPROF_ROOTS": empty, "PYENV_ROOT": empty,
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        names_bare = harness_tests(bare)
        names_here = harness_tests({})
        check(sorted(names_bare) == sorted(names_here),
              f"the test list depends on what is installed: only without roots "
              f"{sorted(set(names_bare) - set(names_here))}, only with them "
              f"{sorted(set(names_here) - set(names_bare))}")
        missing = [*CHROOTED, "pyenv", *(f"pyenv{m.replace('.', '')}" for m in PYENV_MINORS)]
        patterns = [f"*_{b}" for b in missing if any(n.endswith(f"_{b}") for n in names_bare)]
        r = harness_run(bare, *patterns)
        lines = r.stdout.splitlines()
        ran = [ln for ln in lines[:-1] if not ln.startswith("SKIP ")]
        check(r.returncode == 0 and not ran,
              f"with no roots and no pyenv, exit {r.returncode}; not skipped: {ran[:5]} "
              f"{r.stderr.strip()[-300:]}")
        skips = [ln for ln in lines if ln.startswith("SKIP ")]
        vague = [ln for ln in skips if f"{empty}/" not in ln]
        check(skips and not vague, f"skips that do not name the missing interpreter: {vague[:3]}")
        check(re.fullmatch(rf"0 passed, 0 failed, {len(skips)} skipped", lines[-1]),
              f"summary {lines[-1]!r}")

    # 3. The roots as prepared here: every chrooted build present and right.
    prepared = [b for b in CHROOTED if (BUILDS[b].root / ".ready").exists()]
    if not prepared:
        raise Skip(f"no Debian release root in {DEBIAN_ROOTS} (tests/install-deps.sh "
                   f"prepares them); discovery without them checked: {len(skips)} skips")
    found = []
    for b in CHROOTED:
        py = BUILDS[b]
        check(py.available(), f"{b}: {py.missing()}")
        minor = re.search(r"\d+$", b).group()
        version = python_version(py)
        check(version.replace(".", "").startswith(minor) and
              version.startswith(f"{minor[0]}.{minor[1:]}."),
              f"{b} runs Python {version}, its name says {minor[0]}.{minor[1:]}")
        found.append(f"{b} {version}")
    return f"without roots: {len(skips)} skips, 0 failed; with them: {', '.join(found)}"
