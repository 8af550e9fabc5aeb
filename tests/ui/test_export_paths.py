"""Where `e` / `E` write (kvtui/ui/export.py): next to the local log a source declares it reads
(`LocalFiles`), else the user's data directory; the name is the log's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvtui.sources.base import LocalFiles, local_files
from kvtui.sources.local import LocalFollower
from kvtui.sources.replay import ReplaySource
from kvtui.sources.stdin import StdinFollower
from kvtui.ui.export import export_path, xdg_export_dir


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a" / "server.log", tmp_path / "b" / "older.log.gz"
    for p in (a, b):
        p.parent.mkdir()
        p.write_bytes(b"")
    return a, b


def test_a_replay_exports_next_to_its_first_file(logs):
    a, b = logs
    src = ReplaySource([str(a), str(b)], instant=True)
    assert isinstance(src, LocalFiles) and local_files(src) == (str(a), str(b))
    assert export_path(src, None, "md") == a.parent.resolve() / "kvtui-server.md"


def test_a_tail_exports_next_to_its_file(logs):
    a, _ = logs
    src = LocalFollower(str(a))
    assert local_files(src) == (str(a),)
    assert export_path(src, None, "json") == a.parent.resolve() / "kvtui-server.json"


def test_a_pipe_exports_to_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    r, w = os.pipe()
    try:
        src = StdinFollower(r, name="<stdin>", close=False)
        assert local_files(src) == ()
        assert export_path(src, None, "md") == xdg_export_dir() / "kvtui-<stdin>.md"
        assert xdg_export_dir() == tmp_path / "data" / "kvtui" / "exports"
    finally:
        os.close(r)
        os.close(w)


def test_a_vanished_file_and_export_dir(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    a, _ = logs
    src = LocalFollower(str(a))
    a.unlink()  # the log is gone: its name still names the export, in the data directory
    assert export_path(src, None, "md") == xdg_export_dir() / "kvtui-server.md"
    assert export_path(src, tmp_path / "out", "json") == (tmp_path / "out").resolve() / \
        "kvtui-server.json"
