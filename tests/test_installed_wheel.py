"""kvtui as a user installs it: the wheel, in a fresh virtual environment (issue 36.9).

Installed with `pip install .` (or pipx), `kvtui demo` used to fail ("the bundled samples are
missing"): the wheel did not carry the samples. They are package data now (pyproject.toml,
read with importlib.resources), and this test holds it: it builds the wheel from the checkout,
installs it into a new venv and runs the installed `kvtui check` on a bundled sample and
`kvtui demo` in a terminal (tmux), from a folder that is not the checkout.

Nothing is downloaded: the wheel is built without build isolation (setuptools and wheel come
with the test extras), installed with `--no-deps --no-index`, and the venv reaches kvtui's
dependencies through a `.pth` line naming this interpreter's site-packages (a venv made from a
venv does not see the parent's packages, even `--system-site-packages`; a path named in a
`.pth` is only added to sys.path, so the editable install's own finder there is not loaded).
Slow (a build and an install): marked `slow`, which CI's full run includes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# Every wait polls a condition; the guard only turns a hang into a failure.
GUARD = 120.0


def _env() -> dict[str, str]:
    """The environment of an installed kvtui: no PYTHONPATH pointing into the checkout."""
    # COLUMNS/LINES too: a pytest-xdist worker has COLUMNS=80 LINES=24, which the demo in tmux
    # took over the 160x45 terminal it is given (a program's size is its terminal's).
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "COLUMNS", "LINES")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(*cmd: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with kvtui installed from its wheel; its bin folder."""
    tmp = tmp_path_factory.mktemp("installed")
    dist = tmp / "dist"
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                 "--no-index", "-q", "-w", dist, ROOT, cwd=tmp)
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = list(dist.glob("kvtui-*.whl"))
    assert len(wheels) == 1, wheels
    venv = tmp / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv,
                cwd=tmp)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                     cwd=tmp).stdout.strip())
    (site / "kvtui_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
                "--no-index", "-q", wheels[0], cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / "bin"


def test_the_installed_package_is_the_wheels(installed: Path, tmp_path: Path) -> None:
    out = _run(installed / "python", "-c", "import kvtui; print(kvtui.__file__)", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).is_relative_to(installed.parent), out.stdout


def _bundled(installed: Path, cwd: Path, name: str) -> Path:
    out = _run(installed / "python", "-c", "from kvtui.commands.demo import sample_dir; "
               f"print(sample_dir() / {name!r})", cwd=cwd)
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip())
    assert path.is_relative_to(installed.parent) and path.is_file(), path
    return path


def test_kvtui_check_on_a_bundled_sample(installed: Path, tmp_path: Path) -> None:
    clean = _run(installed / "kvtui", "check", _bundled(installed, tmp_path, "llama31-70b-tp8.log"),
                 cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "KV cache   configured auto -> effective bf16" in clean.stdout
    fp8 = _run(installed / "kvtui", "check", "--json",
               _bundled(installed, tmp_path, "qwen35-397b-nvfp4-tp8-fp8.log"), cwd=tmp_path)
    assert fp8.returncode == 1, fp8.stdout + fp8.stderr  # the gate fails on its critical alert
    assert '"rule": "kv-fp8-unscaled"' in fp8.stdout


def test_the_installed_ssh_follower_sends_its_own_source(installed: Path,
                                                          tmp_path: Path) -> None:
    """`kvtui ssh` sends the module remote_follower.py itself to the host: the wheel ships it,
    and the installed kvtui reads it from there (importlib.resources), byte for byte."""
    out = _run(installed / "python", "-c", "import base64, zlib\n"
               "from kvtui.sources.ssh import remote_follower\n"
               "from kvtui.sources.ssh.follow import boot\n"
               "sent = zlib.decompress(base64.b64decode(boot().split(\"'\")[1]))\n"
               "print(remote_follower.__file__)\n"
               "print(sent == open(remote_follower.__file__, 'rb').read())", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    where, same = out.stdout.split()
    assert Path(where).is_relative_to(installed.parent) and same == "True", out.stdout


def test_kvtui_demo_in_a_terminal(installed: Path, tmp_path: Path) -> None:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed (dev.py installs it for the tests)")
    # A server of this test's own, its socket in tmp_path: `-L name` put it in /tmp/tmux-<uid>/,
    # where it stayed after the server ended (one per run).
    base = [tmux, "-S", str(tmp_path / "tmux.sock"), "-f", "/dev/null"]
    env = _env()
    env["TERM"] = "xterm-256color"
    env["HOME"] = str(tmp_path)  # exports and settings go to a folder of the test's own
    command = f"{installed / 'kvtui'} demo --instant"
    subprocess.run([*base, "new-session", "-d", "-x", "160", "-y", "45", "-s", "demo",
                    command], cwd=tmp_path, env=env, check=True, timeout=30)
    try:
        screen = ""
        deadline = time.monotonic() + GUARD
        while " at end " not in screen and "no bundled sample" not in screen:
            if time.monotonic() > deadline:
                raise AssertionError(f"the demo never reached the end of its log:\n{screen}")
            time.sleep(0.2)
            shot = subprocess.run([*base, "capture-pane", "-p", "-t", "demo"], env=env,
                                  capture_output=True, text=True, timeout=30)
            screen = shot.stdout if shot.returncode == 0 else screen
        assert "samples are missing" not in screen and "no bundled sample" not in screen
        assert "demo: qwen35-397b-nvfp4-tp8-fp8.log" in screen
        assert "KV fp8_e4m3 -> fp8_e4m3 (no scales)" in screen
        assert "CRITICAL FP8 KV cache running with scaling" in screen
        subprocess.run([*base, "send-keys", "-t", "demo", "q"], env=env, check=True, timeout=30)
        deadline = time.monotonic() + GUARD
        while subprocess.run([*base, "has-session", "-t", "demo"], env=env,
                             capture_output=True, timeout=30).returncode == 0:
            if time.monotonic() > deadline:
                raise AssertionError("the demo did not quit on q")
            time.sleep(0.2)
    finally:
        subprocess.run([*base, "kill-server"], env=env, capture_output=True, timeout=30)
