"""The TUI shows the start-up verdict of a big file before the runtime lines are folded, with
the load's progress in the header, and ends on the full report."""

from __future__ import annotations

import threading
from pathlib import Path

from ui_helpers import settle

from kvtui.core import pipeline
from kvtui.core.pipeline import Options, Session
from kvtui.sources import readers
from kvtui.sources.replay import ReplaySource
from kvtui.ui.app import KvApp

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


async def test_the_verdict_comes_first(tmp_path: Path, monkeypatch) -> None:
    lines = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    runtime = [ln for ln in lines if "Decode batch" in ln]
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines + runtime * 200) + "\n")
    applied: list = []
    shown = threading.Event()
    real = KvApp._apply_report

    def spy(self, report, timeline):
        applied.append(report)
        if report.partial:
            shown.set()
        return real(self, report, timeline)

    real_fold = pipeline.fold_ranges

    def held_fold(*a, **kw):
        # The full fold waits until the verdict is on screen, so the order is certain; on a
        # real 2M-line log the fold itself takes seconds.
        assert shown.wait(30), "the start-up verdict never reached the screen"
        return real_fold(*a, **kw)

    monkeypatch.setattr(KvApp, "_apply_report", spy)
    monkeypatch.setattr(pipeline, "fold_ranges", held_fold)
    session = Session(Options(preview_bytes=0, min_parallel_bytes=0, workers=2))
    app = KvApp(ReplaySource([str(path)], instant=True), "big", session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert applied[0].partial is True
        assert applied[0].alerts[0].rule == "kv-fp8-unscaled"
        assert applied[-1].partial is False
        assert applied[-1].runtime.decode_batches > applied[0].runtime.decode_batches
        await pilot.press("q")


async def test_the_verdict_is_on_screen_while_the_file_is_scanned(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """The scan for later server starts runs right after the first verdict is published, on
    the ingest thread. It reads the file in pieces, so between them the event loop gets the
    GIL and draws that verdict: here the scan is held after its first piece until the verdict
    is on screen. (A search of a memory map of the whole file was one C call: it held the GIL
    to its end, so the verdict waited for a scan whose time grows with the file.)"""
    lines = (SAMPLES / "qwen35-397b-nvfp4-tp8-fp8.log").read_text().splitlines()
    runtime = [ln for ln in lines if "Decode batch" in ln]
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines + runtime * 200) + "\n")
    shown = threading.Event()
    held: list[bool] = []
    real = KvApp._apply_report

    def spy(self, report, timeline):
        if report.partial and "kv-fp8-unscaled" in [a.rule for a in report.alerts]:
            shown.set()
        return real(self, report, timeline)

    real_pieces = readers.read_pieces

    def held_pieces(path: str, start: int, end: int):
        for i, piece in enumerate(real_pieces(path, start, end)):
            if i == 1:
                held.append(shown.wait(30))
            yield piece

    monkeypatch.setattr(KvApp, "_apply_report", spy)
    monkeypatch.setattr(readers, "SCAN_PIECE", 1 << 14)
    monkeypatch.setattr(readers, "read_pieces", held_pieces, raising=False)
    session = Session(Options(preview_bytes=0, min_parallel_bytes=0, workers=2))
    app = KvApp(ReplaySource([str(path)], instant=True), "big", session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert held == [True], "the verdict did not reach the screen during the scan"
        assert app.report is not None and app.report.partial is False
        await pilot.press("q")
