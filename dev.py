#!/usr/bin/env python3
"""Set-up and entry point for a fresh machine with only Python >= 3.11.

    python3 dev.py demo     # create .venv if needed, then open the TUI on a bundled sample log
    python3 dev.py check    # the same analysis headless (no TUI), on the same sample
    python3 dev.py test     # create .venv if needed (+ the tools the tests run), run all tests
    python3 dev.py test --fast  # the edit loop: no sshd, no corpus, no wheel build
    (both run in parallel, one pytest-xdist worker per core; see parallel_args)

The venv is rebuilt only when pyproject.toml changes (a stamp file records its hash), so a
second run starts at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".kvtui-install-stamp"
SAMPLE = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


def _bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_venv() -> None:
    """Create or refresh .venv. Prints one progress line; pip's own output goes to
    .venv/install.log, which is shown (its tail) only when the install fails."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs under whatever python3 is
        sys.exit(f"kvtui needs Python >= 3.11 (this is {sys.version.split()[0]})")
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == want and _bin("kvtui").exists():
        return
    fresh = not _bin("python").exists()
    log = VENV / "install.log"
    print(f"dev.py: {'creating' if fresh else 'updating'} .venv with kvtui and its test tools "
          f"(pip's output: {log.relative_to(ROOT)}) ...", end="", flush=True)
    t0 = time.monotonic()
    if fresh:
        venv.EnvBuilder(with_pip=True).create(VENV)
    steps = [[str(_bin("python")), "-m", "pip", "install", "--upgrade", "pip"],
             [str(_bin("python")), "-m", "pip", "install", "-e", ".[test]"]]
    with log.open("w", encoding="utf-8") as out:
        for step in steps:
            out.write(f"$ {' '.join(step)}\n")
            out.flush()
            rc = subprocess.call(step, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                 env=dict(os.environ, PIP_PROGRESS_BAR="off"))
            if rc != 0:
                print(" failed", flush=True)
                lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
                print("\n".join(lines[-25:]), file=sys.stderr)
                sys.exit(f"dev.py: installing into .venv failed (exit {rc}); the whole "
                         f"output is in {log}")
    STAMP.write_text(want)
    print(f" done ({time.monotonic() - t0:.0f} s)", flush=True)


def ensure_bytecode() -> None:
    """kvtui's own modules compiled, where the environment forbids Python to write bytecode as
    it imports them (PYTHONDONTWRITEBYTECODE, which many container images and this project's
    CI machines set): pip compiles an installed package, but not an editable install's source,
    so every start would compile all of kvtui again (about 0.2 s here, more than the rest of
    a `kvtui check` of a small log). Quick when they are up to date (mtimes are compared)."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # Python writes the cache itself on first import
    subprocess.call([str(_bin("python")), "-m", "compileall", "-q", "-j", "0", "kvtui",
                     "parsers"], cwd=ROOT, stdout=subprocess.DEVNULL)


# What the tests run for real, by the file that shows it is there and the Debian package that
# brings it: sshd for the SSH tests; journalctl's journal writer and the docker and kubectl
# clients for the log-client tests (which talk to stand-in servers, no daemon or cluster);
# tmux, the terminal the installed wheel's `kvtui demo` runs in (tests/test_installed_wheel.py).
TEST_TOOLS = (
    ("/usr/sbin/sshd", "openssh-server"),
    ("tmux", "tmux"),
    ("/lib/systemd/systemd-journal-remote", "systemd-journal-remote"),
    ("docker", "docker.io"),
    ("kubectl", "kubernetes-client"),
)


def ensure_test_tools() -> None:
    """Install the programs the tests use when missing (root with apt-get); else they skip."""
    missing = [pkg for probe, pkg in TEST_TOOLS
               if not (Path(probe).exists() if probe.startswith("/") else shutil.which(probe))]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        print(f"dev.py: {', '.join(missing)} missing and cannot be installed here; the tests "
              "that need them will skip", flush=True)
        return
    print(f"dev.py: installing {', '.join(missing)} (for the tests) ...", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], check=False, env=env,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
                   check=False, env=env, stdout=subprocess.DEVNULL)


# `dev.py test --fast`: the tests of the edit loop, under a minute on 2 cores. Never in it: the
# real sshd (tests/ssh/), the real-log corpus, and what takes seconds of its own (the wheel
# build, the real log clients): FAST_NEVER. By default also left to the full run: the Textual
# Pilot tests (tui: about 40% of the suite's time) and the tests written for the full run
# (full: the sweeps that fold every cut or every line of every sample or thousands of generated
# lines, and the robustness tests of real processes: lost workers, the real log clients, a
# file's errors and a replay's controls over wall-clock waits): FAST. A marker expression or
# a test path of the caller's chooses instead of those two (`--fast -m tui`, `--fast
# tests/ui/test_panes.py`). The markers are set in tests/conftest.py.
FAST_NEVER = "not ssh and not corpus and not slow"
FAST = f"{FAST_NEVER} and not tui and not full"


def fast_args(args: list[str]) -> list[str]:
    """pytest's arguments for --fast: a `-m EXPR` of the caller's is joined to FAST_NEVER
    (pytest keeps only the last -m it is given), as is a run the caller gave test paths to;
    else the default cut FAST."""
    if "-m" in args[:-1]:
        at = args.index("-m")
        return [*args[:at], "-m", f"({FAST_NEVER}) and ({args[at + 1]})", *args[at + 2:]]
    after = zip(["", *args], args, strict=False)  # (the argument before, the argument)
    paths = any(not a.startswith("-") and before not in VALUED and
                (ROOT / a.split("::")[0]).exists() for before, a in after)
    return ["-m", FAST_NEVER if paths else FAST, *args]


# pytest's options whose value is the next argument (`-k tests` names no path)
VALUED = frozenset({"-k", "-m", "-p", "-n", "-o", "-c", "-W", "-r", "--dist", "--durations",
                    "--maxfail", "--deselect", "--ignore", "--rootdir", "--basetemp", "--tb",
                    "--numprocesses", "--confcutdir", "--junitxml"})


def parallel_args(args: list[str]) -> list[str]:
    """pytest-xdist's arguments: one worker per core (`-n auto`), with `--dist loadgroup` so
    the tests tests/conftest.py puts in the "serial" group (ssh, slow) run one after
    another on one worker, as in a serial run. A caller's own `-n`/`-p no:xdist` is kept, and
    a debugging run (`--pdb`, `--trace`: a prompt needs the terminal) stays in one process."""
    own = {"-n", "--numprocesses", "--pdb", "--trace"}
    if any(a in own or a.startswith(("-n", "--numprocesses=")) for a in args) or \
            "no:xdist" in args:
        return args
    return ["-n", "auto", "--dist", "loadgroup", *args]


def leftovers(tmp: Path) -> list[Path]:
    """What a test run left in its temporary directory: every file, link or socket (empty
    folders do not count; pytest leaves its own `pytest-of-<user>` root)."""
    return sorted(p for p in tmp.rglob("*") if not p.is_dir() or p.is_symlink())


def run_tests(rest: list[str]) -> int:
    """pytest in a temporary directory of this run's own (TMPDIR and tmux's TMUX_TMPDIR), so a
    test or fixture that leaves something behind fails the run instead of filling /tmp (a full
    run used to leave about 1.2 GB there). The directory is kept, and named, when tests fail:
    the failed tests' tmp_path folders are in it."""
    fast = "--fast" in rest
    args = [a for a in rest if a != "--fast"]
    if fast:
        args = fast_args(args)
    args = parallel_args(args)
    tmp = Path(tempfile.mkdtemp(prefix="kvtui-tests-"))
    env = dict(os.environ, TMPDIR=str(tmp), TMUX_TMPDIR=str(tmp))
    if fast:  # hidden, so a test that reads the corpus without its marker shows (skips, fails)
        env["KVTUI_CORPUS"] = str(tmp / "no-corpus-in-the-fast-run")
    rc = subprocess.call([str(_bin("python")), "-m", "pytest", "-q", *args], cwd=ROOT, env=env)
    if rc != 0:
        print(f"dev.py: the run's temporary files are kept in {tmp}", flush=True)
        return rc
    left = leftovers(tmp)
    if left:
        shown = "\n  ".join(str(p.relative_to(tmp)) for p in left[:20])
        print(f"dev.py: the tests passed but left {len(left)} file(s) in {tmp} (a test or "
              f"fixture that does not clean up):\n  {shown}", file=sys.stderr, flush=True)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "demo"
    rest = argv[2:]
    ensure_venv()
    ensure_bytecode()
    if cmd == "demo":
        return subprocess.call([str(_bin("kvtui")), "demo", *rest])
    if cmd == "check":
        return subprocess.call([str(_bin("kvtui")), "check", str(SAMPLE), "--fail-on", "never",
                                *rest])
    if cmd == "test":
        ensure_test_tools()
        return run_tests(rest)
    if cmd == "lint":
        rc = subprocess.call([str(_bin("ruff")), "check", "."], cwd=ROOT)
        return rc or subprocess.call([str(_bin("mypy"))], cwd=ROOT)
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
