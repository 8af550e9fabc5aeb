"""Every source shows a server restart the same way (issue 34): replay, tail (from the start,
and from the end, whose history comes in blocks), stdin and a rotation whose new file begins
with the restart all give two runs and the log pane's inline marker before the restart's first
line. (A log client's restart notice: tests/ui/test_restart_loop.py.)"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from kvtui.sources.local import LocalFollower
from kvtui.sources.replay import ReplaySource
from kvtui.sources.stdin import StdinFollower
from kvtui.ui.ingest import Ingest, LogEntry

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8-then-bf16.log"
POLL = 0.02


def wait(cond: Callable[[], object], timeout: float = 30.0) -> bool:
    """Poll a condition; the timeout only guards against a hang."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL)
    return True


def halves() -> tuple[list[str], list[str]]:
    lines = PAIR.read_text().splitlines(keepends=True)
    cut = [i for i, line in enumerate(lines) if "server_args=ServerArgs(" in line][1]
    return lines[:cut], lines[cut:]


class Shown:
    """What an ingest gave the log pane so far, drained as the app's tick does."""

    def __init__(self, ingest: Ingest) -> None:
        self.ingest = ingest
        self.entries: list[LogEntry] = []

    def take(self) -> list[LogEntry]:
        self.entries.extend(self.ingest.drain().entries)
        return self.entries

    def markers(self) -> list[LogEntry]:
        return [e for e in self.take() if e.notice and "server restarted" in e.text]


def two_runs(ingest: Ingest, shown: Shown, restart_line: int) -> None:
    assert wait(lambda: len(ingest.session.state.runs) == 2 and shown.markers()), \
        "the restart was not seen"
    entries = shown.take()
    at = next(i for i, e in enumerate(entries) if e.notice and "server restarted" in e.text)
    assert entries[at].text == f"── server restarted: run 2, line {restart_line:,} ──"
    assert entries[at + 1].line_no == restart_line
    with ingest.report_lock:
        report = ingest.session.report()
    assert report.kv_cache.effective_dtype == "bf16" and len(report.runs) == 2
    assert report.runs[0].alerts[0].resolved_by is not None


def test_replay() -> None:
    ingest = Ingest(ReplaySource([str(PAIR)], instant=True), ring=5000)
    ingest.start()
    try:
        two_runs(ingest, Shown(ingest), len(halves()[0]) + 1)
    finally:
        ingest.close()


def test_tail_from_the_start(tmp_path: Path) -> None:
    fp8, bf16 = halves()
    path = tmp_path / "server.log"
    path.write_text("".join(fp8))
    ingest = Ingest(LocalFollower(str(path), from_start=True, poll_ms=50), ring=5000)
    ingest.start()
    try:
        shown = Shown(ingest)
        assert wait(lambda: ingest.lines == len(fp8))
        with path.open("a") as fh:
            fh.write("".join(bf16))
        two_runs(ingest, shown, len(fp8) + 1)
    finally:
        ingest.close()


def test_tail_from_the_end_marks_a_restart_in_its_history(tmp_path: Path) -> None:
    """The history before the end comes in blocks (folded as a stream), the pane gets its last
    lines at the load's end: the marker is placed from the run's first line."""
    fp8, bf16 = halves()
    ready = next(i for i, line in enumerate(bf16) if "fired up" in line)
    runtime = [line for line in fp8 if "Decode batch" in line] * 40  # far more than 64 KiB
    lines = fp8 + runtime + bf16[:ready + 5]
    path = tmp_path / "server.log"
    path.write_text("".join(lines))
    ingest = Ingest(LocalFollower(str(path), force_polling=True, poll_ms=50), ring=100000)
    ingest.start()
    try:
        assert wait(lambda: ingest.last_state == "live")
        two_runs(ingest, Shown(ingest), len(fp8) + len(runtime) + 1)
    finally:
        ingest.close()


def test_stdin() -> None:
    fp8, bf16 = halves()
    r, w = os.pipe()
    ingest = Ingest(StdinFollower(r, name="<stdin>"), ring=5000)
    ingest.start()
    try:
        with os.fdopen(w, "w") as fh:
            fh.write("".join(fp8 + bf16))
        two_runs(ingest, Shown(ingest), len(fp8) + 1)
    finally:
        ingest.close()


def test_a_rotation_whose_new_file_begins_with_the_restart(tmp_path: Path) -> None:
    """logrotate moved the FP8 run away; the server restarted into a new file: a new run,
    whose lines are numbered from 1 in their own file."""
    fp8, bf16 = halves()
    path = tmp_path / "server.log"
    path.write_text("".join(fp8))
    ingest = Ingest(LocalFollower(str(path), from_start=True, poll_ms=50,
                                  force_polling=True), ring=5000)
    ingest.start()
    try:
        shown = Shown(ingest)
        assert wait(lambda: ingest.lines == len(fp8))
        path.rename(tmp_path / "server.log.1")
        path.write_text("".join(bf16))
        assert wait(lambda: len(ingest.session.state.runs) == 2 and shown.markers())
        marker = shown.markers()[0]
        assert marker.text == "── server restarted: run 2, line 1 ──"
        assert any(e.notice and "rotated" in e.text for e in shown.entries)
        with ingest.report_lock:
            report = ingest.session.report()
        assert report.runs[1].start is not None and report.runs[1].start.line == 1
        assert report.runs[0].alerts[0].resolved_by is not None
    finally:
        ingest.close()
