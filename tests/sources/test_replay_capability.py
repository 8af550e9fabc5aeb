"""The replay capability is typed: a replay offers `ReplayControls` (its status one dataclass),
a live source offers none, and the TUI asks only through `replay_controls`."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from kvtui.sources.base import ReplayControls, ReplayStatus, SourceNotice, replay_controls
from kvtui.sources.local import LocalFollower
from kvtui.sources.replay import ReplaySource
from kvtui.sources.stdin import StdinFollower

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


def test_a_replay_has_controls_and_a_status() -> None:
    src = ReplaySource([str(SAMPLE)], instant=True)
    controls = replay_controls(src)
    assert isinstance(controls, ReplayControls)
    assert controls.status() == ReplayStatus("replaying", 0.0, "instant", None)
    stop = threading.Event()
    at_end = threading.Event()

    def emit(batch: list[object]) -> None:
        if any(isinstance(i, SourceNotice) and i.state == "at_end" for i in batch):
            at_end.set()

    thread = threading.Thread(target=src.run, args=(emit, stop), daemon=True)
    thread.start()
    try:
        assert at_end.wait(30), "the replay never reached its end"  # a hang guard, not a pace
    finally:
        stop.set()
        thread.join(5)
    done = controls.status()
    assert done.state == "at_end" and done.progress == 1.0
    assert done.log_time == "2026-11-24 09:21:00"  # the last line's stamp, as logged


def test_live_sources_have_none(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    read, write = os.pipe()
    try:
        assert replay_controls(LocalFollower(str(log))) is None
        assert replay_controls(StdinFollower(read, close=False)) is None
    finally:
        os.close(read)
        os.close(write)
