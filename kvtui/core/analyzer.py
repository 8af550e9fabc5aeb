"""The one code path from log lines to a report, shared by `kvtui check`, the TUI and SSH.

Determinism is the point: the same lines give the same facts, alerts and what-if whether they
were replayed, tailed or checked headless, because every consumer goes through `Analyzer`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kvtui.core.state import State
from parsers import Event, parse_line


class Analyzer:
    """Parse and fold lines; build the report (facts + alerts + what-if) on demand."""

    def __init__(self, *, model: Any = None, alert_options: Any = None,
                 checkpoint: Any = None) -> None:
        self.state = State()
        self.model = model  # kvtui.core.capacity ModelSpec, or None to auto-detect from the log
        self.alert_options = alert_options
        self.checkpoint = checkpoint  # facts read from the checkpoint itself (SSH mode)
        self.lines = 0

    def feed(self, source: str, line_no: int, text: str) -> Event | None:
        self.lines += 1
        ev = parse_line(text)
        if ev is not None:
            self.state.apply(ev, source, line_no, text)
        return ev

    def feed_many(self, source: str, lines: Iterable[str], first_line_no: int = 1) -> int:
        """Feed texts numbered from first_line_no; returns the next line number."""
        apply = self.state.apply
        parse = parse_line
        n = first_line_no
        for text in lines:
            ev = parse(text)
            if ev is not None:
                apply(ev, source, n, text)
            n += 1
        count = n - first_line_no
        self.lines += count
        self.state.sources[source] = self.state.sources.get(source, 0) + count
        return n

    def feed_batches(self, source: str, batches: Iterable[list[str]],
                     first_line_no: int = 1) -> int:
        """`feed_many` over lists of lines (what `iter_batches` yields)."""
        n = first_line_no
        for batch in batches:
            n = self.feed_many(source, batch, n)
        return n

    def report(self) -> dict[str, Any]:
        from kvtui.core.report import build_report

        return build_report(self.state, model=self.model, alert_options=self.alert_options,
                            checkpoint=self.checkpoint)
