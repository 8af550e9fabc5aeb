"""Reports of vLLM lines and of the bundled vLLM samples, folded the one way (a Session)."""

from __future__ import annotations

from pathlib import Path

from kvtui.core.report_types import Report
from tests.helpers import session_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def report_of(lines: list[str], name: str = "log") -> Report:
    s = session_of(lines, name)
    return s.report()


def sample_report(name: str) -> Report:
    return report_of((SAMPLES / name).read_text().splitlines(), name)
