"""LocalFollower review fixes: an unexpected OSError (ESTALE, EIO, ENOTDIR) is reported once and
retried, never ends the follow; a copy-truncate keeps the unterminated line it held."""

from __future__ import annotations

import errno
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kvtui.sources.base import SourceLine

sys.path.insert(0, str(Path(__file__).parent))
from test_local_follow import append, finish, start

# a followed file's errors, over the follower's wall-clock polls:
# left to the full run (`dev.py test --fast` skips them)
pytestmark = pytest.mark.full


class Faults:
    """os.stat of one path, and reads of the follower's handle, fail while `on` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path, err: int) -> None:
        self.on = threading.Event()
        self.path = str(path)
        self.err = err
        real_stat = os.stat

        def stat(p: Any, *a: Any, **kw: Any) -> os.stat_result:
            if self.on.is_set() and os.fspath(p) == self.path:
                raise OSError(self.err, os.strerror(self.err), self.path)
            return real_stat(p, *a, **kw)

        monkeypatch.setattr(os, "stat", stat)


class FailingFile:
    def __init__(self, inner: Any, on: threading.Event, err: int) -> None:
        self.inner, self.on, self.err = inner, on, err

    def read(self, n: int = -1) -> bytes:
        if self.on.is_set():
            raise OSError(self.err, os.strerror(self.err))
        return bytes(self.inner.read(n))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def lines_of(col: Any) -> list[SourceLine]:
    with col.lock:
        return [i for i in col.items if isinstance(i, SourceLine)]


@pytest.mark.parametrize("err", [errno.ESTALE, errno.ENOTDIR, errno.EIO],
                         ids=["ESTALE", "ENOTDIR", "EIO"])
def test_stat_error_is_reported_once_and_following_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    p = tmp_path / "a.log"
    p.write_text("one\ntwo\n")
    faults = Faults(monkeypatch, p, err)
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["one", "two"] and "live" in c.states())
    faults.on.set()
    assert col.wait(lambda c: "error" in c.states())
    append(p, "three\n")
    assert not col.wait(lambda c: "three" in c.texts(), timeout=0.6)  # several wake-ups
    assert col.states().count("error") == 1  # once per episode
    assert "closed" not in col.states() and t.is_alive()
    faults.on.clear()
    assert col.wait(lambda c: c.texts()[-1:] == ["three"])
    assert col.states()[-1] == "live"
    append(p, "four\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["four"])
    got = lines_of(col)
    assert [ln.text for ln in got] == ["one", "two", "three", "four"]
    assert [ln.line_no for ln in got] == [1, 2, 3, 4]
    assert [ln.offset for ln in got] == [0, 4, 8, 14]
    # A second episode is reported again.
    faults.on.set()
    assert col.wait(lambda c: c.states().count("error") == 2)
    faults.on.clear()
    append(p, "five\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["five"])
    finish(stop, t)


def test_read_error_keeps_the_partial_line_and_loses_nothing(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("one\npar")
    src, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["one"] and "live" in c.states())
    on = threading.Event()
    on.set()
    src._fh = FailingFile(src._fh, on, errno.EIO)
    append(p, "tial\ntwo\n")
    assert col.wait(lambda c: "error" in c.states())
    assert "closed" not in col.states() and t.is_alive()
    on.clear()  # the next wake-up reopens the file (a fresh handle) where reading stopped
    assert col.wait(lambda c: c.texts()[-1:] == ["two"])
    got = lines_of(col)
    assert [ln.text for ln in got] == ["one", "partial", "two"]
    assert [ln.line_no for ln in got] == [1, 2, 3]
    assert [ln.offset for ln in got] == [0, 4, 12]
    finish(stop, t)


def test_file_replaced_while_unreadable_is_followed_from_its_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "a.log"
    p.write_text("old\nold tail")
    faults = Faults(monkeypatch, p, errno.ESTALE)
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["old"] and "live" in c.states())
    faults.on.set()
    assert col.wait(lambda c: "error" in c.states())
    os.rename(p, tmp_path / "a.log.1")
    p.write_text("new\n")
    faults.on.clear()
    assert col.wait(lambda c: c.texts()[-1:] == ["new"])
    assert col.texts() == ["old", "old tail", "new"]
    # the source says "live" again after it delivers the new file's first block: wait for it
    assert col.wait(lambda c: c.states()[-1:] == ["live"])
    assert "rotated" in col.states()
    finish(stop, t)


def test_copy_truncate_flushes_the_pending_line(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("aaaa\nbbbb\nunterminated")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["aaaa", "bbbb"] and "live" in c.states())
    with open(p, "w", encoding="utf-8") as f:  # truncate in place, same inode
        f.write("c\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["c"])
    assert col.texts() == ["aaaa", "bbbb", "unterminated", "c"]
    assert "truncated" in col.states()
    got = lines_of(col)
    assert [ln.offset for ln in got] == [0, 5, 10, 0]
    finish(stop, t)
