"""A burst of lines followed by silence (an idle server after start-up) still shows its verdict:
the snapshot is rebuilt on its own beat, not only when more lines arrive."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kvtui.sources.base import SourceLine
from kvtui.ui import report_view as rv
from kvtui.ui.ingest import Ingest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "qwen35-397b-nvfp4-tp8-fp8.log"


class Burst:
    """Two batches close together, then nothing until stopped (a live source gone quiet)."""

    name = "burst"

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def history(self) -> None:
        return None

    def skip_to(self, offset: int, lines: int) -> None:
        raise NotImplementedError

    def run(self, emit, stop: threading.Event) -> None:
        items = [SourceLine(self.name, i, -1, t) for i, t in enumerate(self.lines, 1)]
        emit(items[:10])
        emit(items[10:])  # right after: no rebuild is due yet when it lands
        stop.wait()


def test_the_verdict_of_a_burst_shows_while_the_source_is_quiet():
    lines = SAMPLE.read_text().splitlines()[:200]
    ingest = Ingest(Burst(lines))
    ingest.start()
    try:
        seen: list[str] = []
        end = time.monotonic() + 20
        while time.monotonic() < end:
            d = ingest.drain()
            if d.report is not None:
                seen = [a.rule for a in rv.alerts(d.report)]
                if "kv-fp8-unscaled" in seen:
                    break
            time.sleep(0.05)
        assert "kv-fp8-unscaled" in seen
    finally:
        ingest.close()
