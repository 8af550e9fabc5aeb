"""ReplaySource pacing: a pause that arrives while a line waits for its time keeps that line
back (issue 17: `test_pause_during_alert_seek_ends_it` saw a line emitted after the pause)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from kvtui.sources.base import SourceLine, SourceNotice
from kvtui.sources.replay import ReplaySource


def write_log(path: Path, n: int) -> Path:
    path.write_text("".join(f"[2025-01-01 00:00:{i:02d}] n{i}\n" for i in range(n)))
    return path


def wait(cond: Callable[[], bool], timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def test_a_pause_during_the_wait_keeps_the_waiting_line(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.log", 5)
    items: list[object] = []
    lock = threading.Lock()
    holder: dict[str, ReplaySource] = {}
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        # Stands in for the interruptible wait before line 2: the user pauses during it.
        sleeps.append(seconds)
        if len(sleeps) == 1:
            holder["src"].pause()

    def emit(batch: list[object]) -> None:
        with lock:
            items.extend(batch)

    def lines() -> list[int]:
        with lock:
            return [i.line_no for i in items if isinstance(i, SourceLine)]

    def states() -> list[str]:
        with lock:
            return [i.state for i in items if isinstance(i, SourceNotice)]

    src = ReplaySource([str(log)], speed=1.0, max_gap=5.0, sleep=sleep)
    holder["src"] = src
    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(emit, stop), daemon=True)
    t.start()
    try:
        assert wait(lambda: "paused" in states())
        # Said "paused", so it waits: the line that was waiting for its time is not out.
        assert lines() == [1] and src.lines_emitted == 1
        src.resume()
        assert wait(lambda: lines() == [1, 2, 3, 4, 5])  # nothing lost either
    finally:
        stop.set()
        t.join(5)
    assert not t.is_alive()
