"""LocalFollower: append, rename rotation, copy-truncate, vanish; each reported inline."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.local import LocalFollower


class Collector:
    def __init__(self) -> None:
        self.items: list[object] = []
        self.lock = threading.Lock()

    def __call__(self, batch: list[object]) -> None:
        with self.lock:
            self.items.extend(batch)

    def texts(self) -> list[str]:
        with self.lock:
            return [i.text for i in self.items if isinstance(i, SourceLine)]

    def states(self) -> list[str]:
        with self.lock:
            return [i.state for i in self.items if isinstance(i, SourceNotice)]

    def wait(self, cond, timeout: float = 8.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond(self):
                return True
            time.sleep(0.02)
        return False


def start(path: Path, **kw):
    src = LocalFollower(str(path), poll_ms=100, **kw)
    col = Collector()
    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(col, stop), daemon=True)
    t.start()
    return src, col, stop, t


def finish(stop: threading.Event, t: threading.Thread) -> None:
    stop.set()
    t.join(5)
    assert not t.is_alive()


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()


def test_from_start_then_append(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("one\ntwo\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["one", "two"] and "live" in c.states())
    append(p, "three\npart")
    assert col.wait(lambda c: c.texts()[-1:] == ["three"])
    append(p, "ial\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["partial"])
    finish(stop, t)
    lines = [i for i in col.items if isinstance(i, SourceLine)]
    assert [ln.line_no for ln in lines] == [1, 2, 3, 4]
    assert lines[2].offset == len(b"one\ntwo\n")


def test_from_end_skips_old_content(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("".join(f"old {i} " + "x" * 100 + "\n" for i in range(2000)))
    _, col, stop, t = start(p, tail_context=1024)
    assert col.wait(lambda c: "live" in c.states())
    assert 0 < len(col.texts()) < 20  # only the recent context
    append(p, "new line\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["new line"])
    finish(stop, t)


def test_rename_rotation(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("before\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["before"])
    append(p, "last of old\n")
    os.rename(p, tmp_path / "a.log.1")
    p.write_text("first of new\n")
    assert col.wait(lambda c: "first of new" in c.texts())
    assert "rotated" in col.states()
    assert col.texts() == ["before", "last of old", "first of new"]
    append(p, "more\n")
    assert col.wait(lambda c: c.texts()[-1:] == ["more"])
    finish(stop, t)


def test_copy_truncate(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("aaaaaaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbbbb\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: len(c.texts()) == 2)
    with open(p, "w", encoding="utf-8") as f:  # truncate in place, same inode
        f.write("c\n")
    assert col.wait(lambda c: "c" in c.texts())
    assert "truncated" in col.states()
    finish(stop, t)


def test_vanish_reports_error_and_recovers(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_text("x\n")
    _, col, stop, t = start(p, from_start=True)
    assert col.wait(lambda c: c.texts() == ["x"])
    p.unlink()
    assert col.wait(lambda c: "error" in c.states())
    p.write_text("back\n")
    assert col.wait(lambda c: "back" in c.texts())
    finish(stop, t)


def test_missing_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    _, col, stop, t = start(tmp_path / "nope.log")
    assert col.wait(lambda c: "error" in c.states())
    finish(stop, t)
    assert "closed" in col.states()
