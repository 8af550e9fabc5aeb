"""Replay times and seeks logs in every head form the parsers read (one timestamp grammar)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kvtui.sources.base import SourceLine
from kvtui.sources.replay import ReplaySource
from parsers.prefix import line_timestamp, message_start, parse_prefix, ts_seconds

# Each form renders second `s` of 2026-01-01 10:00 with a message; the rank is TP0 where the
# form carries one.
FORMS = {
    "native": lambda s: f"[2026-01-01 10:00:{s:02d} TP0] n{s}",
    "native-ms": lambda s: f"[2026-01-01 10:00:{s:02d}.250 TP0] n{s}",
    "no-rank": lambda s: f"[2026-01-01 10:00:{s:02d}] n{s}",
    "time-only": lambda s: f"[10:00:{s:02d} TP0] n{s}",
    "lost-bracket": lambda s: f"2026-01-01 10:00:{s:02d} TP0] n{s}",
    "logging-config": lambda s: f"2026-01-01 10:00:{s:02d} INFO 123 [TP0 scheduler.py:12] n{s}",
    "iso-comma-ms": lambda s: f"[2026-01-01T10:00:{s:02d},250 TP0] n{s}",
}


def replay(path: Path, seek: str | None) -> list[SourceLine]:
    """Every line of an instant replay; with `seek`, the lines up to where the seek paused."""
    items: list[object] = []
    lock = threading.Lock()

    def emit(batch: list[object]) -> None:
        with lock:
            items.extend(batch)

    src = ReplaySource([str(path)], start_paused=seek is not None, speed=1e6)
    stop = threading.Event()
    t = threading.Thread(target=src.run, args=(emit, stop), daemon=True)
    t.start()
    end = time.monotonic() + 10
    if seek is not None:
        assert src.seek_time(seek)
        while time.monotonic() < end and not (src.paused and src.lines_emitted):
            time.sleep(0.01)
    else:
        while time.monotonic() < end and src.state != "at_end":
            time.sleep(0.01)
    stop.set()
    t.join(5)
    with lock:
        return [i for i in items if isinstance(i, SourceLine)]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_parsers_and_the_replay_read_the_same_timestamp(form: str) -> None:
    line = FORMS[form](7)
    ts, rank = parse_prefix(line, message_start(line))
    assert ts is not None and line_timestamp(line) == ts
    assert rank == (None if form == "no-rank" else "TP0")
    later = ts_seconds(line_timestamp(FORMS[form](9)) or "")
    assert later is not None and later - (ts_seconds(ts) or 0) == 2


@pytest.mark.parametrize("form", sorted(FORMS))
def test_replay_times_and_seeks_every_form(tmp_path: Path, form: str) -> None:
    path = tmp_path / f"{form}.log"
    body = []
    for s in range(10):
        body.append(FORMS[form](s))
        body.append(f"Traceback line after n{s}")  # untimed: keeps the time before it
    path.write_text("\n".join(body) + "\n")
    got = replay(path, None)
    assert len(got) == 20
    assert all(ln.ts is not None for ln in got)
    assert got[3].ts == got[2].ts == line_timestamp(FORMS[form](1))
    sought = replay(path, "10:00:06")
    assert sought[-1].text.endswith("n6") and len(sought) == 13
