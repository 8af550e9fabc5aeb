"""The progress line a long headless read shows on a terminal (stderr only, never in the JSON).

Rich's progress bar when stderr is a terminal; nothing at all in a pipe, in CI or with --quiet,
so captured output stays byte-for-byte the report. The start-up verdict, known early, is shown in
the line while the rest of the file is folded.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kvtui.core.report_types import Report

# Files below this size finish before a progress line would help.
MIN_BYTES = 32 << 20


class StderrProgress:
    def __init__(self, quiet: bool = False) -> None:
        self.enabled = not quiet and sys.stderr.isatty()
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._verdict = ""

    def __enter__(self) -> StderrProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.percentage:>3.0f}%"), TransferSpeedColumn(),
                                 TimeRemainingColumn(), console=Console(stderr=True),
                                 transient=True)
            self._bar.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)

    def verdict(self, report: Report) -> None:
        """Name the start-up verdict (the most severe alert) in the line."""
        alerts = report.alerts
        self._verdict = (f" - start-up: {alerts[0].severity.upper()} {alerts[0].rule}"
                         if alerts else " - start-up: no alert")
        for name, task in self._tasks.items():
            self._bar.update(task, description=self._label(name))

    def update(self, name: str, done: int, total: int) -> None:
        if self._bar is None or total < MIN_BYTES:
            return
        task = self._tasks.get(name)
        if task is None:
            task = self._tasks[name] = self._bar.add_task(self._label(name), total=total)
        self._bar.update(task, completed=done)

    def _label(self, name: str) -> str:
        from rich.markup import escape

        from kvtui.core.text import inert

        return escape(inert(name, 60)) + escape(self._verdict)
