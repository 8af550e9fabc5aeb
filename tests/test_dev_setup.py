"""dev.py's set-up as the README runs it: what it leaves for every later start."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_kvtui_is_compiled_where_the_environment_forbids_bytecode(monkeypatch) -> None:
    """With PYTHONDONTWRITEBYTECODE set (many container images, this project's machines) an
    editable install was never compiled: every `kvtui` start compiled all of it from source
    (0.54 s against 0.33 s for `check --stream` of a sample here). dev.py compiles it."""
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    if not dev._bin("python").exists():
        pytest.skip("no .venv (dev.py creates it)")
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("not run by the .venv's python (the .pyc names carry the interpreter's tag)")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    sources = [ROOT / "kvtui" / "core" / "units.py", ROOT / "parsers" / "kinds.py"]
    cached = [Path(importlib.util.cache_from_source(str(s))) for s in sources]
    for pyc in cached:
        pyc.unlink(missing_ok=True)
    dev.ensure_bytecode()
    assert all(pyc.exists() for pyc in cached)


def _dev():
    sys.path.insert(0, str(ROOT))
    try:
        import dev
    finally:
        sys.path.remove(str(ROOT))
    return dev


def _pytest(*args: str, tmpdir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env.update(TMPDIR=str(tmpdir), TMUX_TMPDIR=str(tmpdir), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(cwd), *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_leftovers_names_files_sockets_and_links_not_empty_folders(tmp_path) -> None:
    dev = _dev()
    (tmp_path / "pytest-of-me" / "pytest-3").mkdir(parents=True)
    assert dev.leftovers(tmp_path) == []
    (tmp_path / "pytest-of-me" / "pytest-current").symlink_to(tmp_path / "pytest-of-me" / "gone")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s"))
        found = [p.relative_to(tmp_path) for p in dev.leftovers(tmp_path)]
    finally:
        sock.close()
    assert found == [Path("pytest-of-me/pytest-current"), Path("s")]


@pytest.mark.slow  # a pytest run of its own (~8 s)
def test_a_passing_run_leaves_nothing_in_the_temporary_directory(tmp_path) -> None:
    """pytest kept every tmp_path of the last three runs (about 1.2 GB of /tmp after a full
    run); with the project's retention settings a passing run removes its own, a failing one
    keeps the failed test's folder (and the session's), not the passed ones'."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    (work / "test_inner.py").write_text(
        "import os, pytest\n"
        "@pytest.fixture(scope='session')\n"
        "def shared(tmp_path_factory):\n"
        "    d = tmp_path_factory.mktemp('shared')\n"
        "    (d / 'key').write_bytes(os.urandom(64))\n"
        "    return d\n"
        "def test_writes(tmp_path, shared):\n"
        "    (tmp_path / 'big').write_bytes(b'x' * 4096)\n"
        "def test_fails_when_asked(tmp_path):\n"
        "    (tmp_path / 'evidence').write_text('kept')\n"
        "    assert not os.environ.get('INNER_FAIL')\n", encoding="utf-8")
    passed = _pytest("test_inner.py", tmpdir=tmp, cwd=work)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert _dev().leftovers(tmp) == []
    os.environ["INNER_FAIL"] = "1"
    try:
        failed = _pytest("test_inner.py", tmpdir=tmp, cwd=work)
    finally:
        del os.environ["INNER_FAIL"]
    assert failed.returncode == 1, failed.stdout + failed.stderr
    kept = {p.name for p in _dev().leftovers(tmp) if not p.is_symlink()}
    assert "evidence" in kept and "big" not in kept, kept  # session folders stay too


@pytest.mark.slow  # collects the whole suite in a pytest of its own (~25 s)
def test_markers_follow_what_a_test_uses(tmp_path) -> None:
    """The fast loop's cut: a corpus reader is marked corpus (through corpus_dir() in its body),
    its neighbour is not; a test under tests/ssh/ is marked ssh."""
    def ids(marker: str, *paths: str) -> set[str]:
        out = _pytest("--co", "-m", marker, *paths, tmpdir=tmp_path, cwd=ROOT)
        assert out.returncode in (0, 5), out.stdout + out.stderr
        return {line for line in out.stdout.splitlines() if "::" in line}
    fold = "tests/core/test_stream_fold.py"
    assert ids("corpus", fold) == {f"{fold}::test_corpus"}
    assert f"{fold}::test_blocks_of_about_a_piece_make_a_piece_each" in ids("not corpus", fold)
    ssh = "tests/ssh/test_ssh_connect.py"
    if Path("/usr/sbin/sshd").exists():  # else tests/ssh/ skips at collection
        assert ids("ssh", ssh) and not ids("not ssh", ssh)


def test_fast_keeps_its_cut_when_a_marker_expression_is_given() -> None:
    dev = _dev()
    assert dev.fast_args(["-k", "whatif"]) == ["-m", dev.FAST, "-k", "whatif"]
    assert dev.FAST.startswith(dev.FAST_NEVER) and "not tui" in dev.FAST
    # the caller's marker or test path chooses among what the fast loop may run at all
    assert dev.fast_args(["-m", "tui", "-x"]) == ["-m", f"({dev.FAST_NEVER}) and (tui)", "-x"]
    assert dev.fast_args(["tests/ui/test_panes.py::test_help_and_palette_and_export"]) == \
        ["-m", dev.FAST_NEVER, "tests/ui/test_panes.py::test_help_and_palette_and_export"]
    assert dev.fast_args(["-k", "tests"]) == ["-m", dev.FAST, "-k", "tests"]  # a word, no path


def test_runs_are_parallel_unless_the_caller_says_otherwise() -> None:
    dev = _dev()
    assert dev.parallel_args(["-x"]) == ["-n", "auto", "--dist", "loadgroup", "-x"]
    for own in (["-n", "3"], ["-n3"], ["--numprocesses=2"], ["-p", "no:xdist"], ["--pdb"]):
        assert dev.parallel_args(own) == own


def test_ssh_and_slow_tests_share_one_serial_group(request) -> None:
    """The group that `--dist loadgroup` gives to one worker: the marks set in conftest.py."""
    for item in request.session.items:
        grouped = item.get_closest_marker("xdist_group")
        serial = any(item.get_closest_marker(m) for m in ("ssh", "slow"))
        assert (grouped is not None and grouped.args == ("serial",)) == serial, item.nodeid
